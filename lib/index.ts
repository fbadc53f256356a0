/**
 * AWS CDK constructs that serve one model on several kinds of accelerators and keep its latency contract when the
 * preferred kind runs out. The simulator and its scenarios are a separate entry point,
 * `cdk-capacity-aware-inference/sim`; the pure domain logic (no aws-cdk-lib) is also `cdk-capacity-aware-inference/core`.
 *
 * @packageDocumentation
 * @module cdk-capacity-aware-inference
 */
export * from './core';
export * from './trust';
export * from './control';
export * from './sagemaker';
export * from './eks';
export { newLogGroupKey } from './util/log-encryption';
