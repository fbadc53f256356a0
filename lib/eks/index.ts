export * from './versions';
/** Typed Kubernetes manifest builders (NodePool, EC2NodeClass, Deployment, ScaledObject, TargetGroupBinding, ...). */
export * as eksManifests from './manifests';
export type { EksClassOptions } from './class-options';
export type { ScalingOptions } from './scaling-options';
export { eksProblems, type EksCheckInput } from './checks';
export { PodIdentityRole, type PodIdentityRoleProps } from './pod-identity';
export * from './karpenter';
export * from './keda';
export * from './load-balancer-controller';
export {
  EksInferenceService,
  type EksInferenceServiceProps,
  type EksClassUnit,
  type ChartVersions,
  type NewClusterOptions,
  type LoadBalancerOptions,
  DISCOVERY_TAG as KARPENTER_DISCOVERY_TAG,
  CLASS_LABEL as EKS_CLASS_LABEL,
} from './inference-service';
export * from './observability-addon';
