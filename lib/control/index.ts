export * from './reconciler';
