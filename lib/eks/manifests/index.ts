export * from './types';
export * from './karpenter';
export * from './workload';
export * from './keda';
export * from './load-balancer-controller';
