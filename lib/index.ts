// The construct library. The simulator and its scenarios are a separate entry point,
// `cdk-capacity-aware-inference/sim`, and the pure domain logic (no aws-cdk-lib) is also `cdk-capacity-aware-inference/core`.
export * from './core';
export * from './trust';
export * from './control';
export * from './sagemaker';
export * from './eks';
