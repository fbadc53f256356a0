// The routing policy: decide() and its types and defaults. plan.ts and evidence.ts stay internal: their helper names
// are generic and the public surface is decide() and its types.
export * from './types';
export * from './defaults';
export * from './decide';
