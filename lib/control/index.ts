export * from './reconciler';
export * from './observability';
