export * from './gate';
export * from './artifact-trust';
export * from './admission-policy';
