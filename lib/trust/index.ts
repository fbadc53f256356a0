export * from './gate';
export * from './artifact-trust';
