export * from './reconciler';
export * from './observability';
export * from './serving';
