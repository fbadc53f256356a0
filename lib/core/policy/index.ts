// plan.ts and signals.ts stay internal: their helper names are generic and the public surface is decide() and its types.
export * from './types';
export * from './defaults';
export * from './decide';
export * from './from-facts';
export * from './reconciler-config';
export * from './signal-sources';
export * from './reconcile-io';
