// The metric contract, the AWS-published metrics the library reads, the Karpenter capacity-error filter and the check
// that every metric a synthesized template reads has a producer.
export * from './contract';
export * from './aws-published';
export * from './karpenter-capacity';
export * from './template-check';
export * from './filter-pattern';
