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
  EksInferenceCluster,
  type EksInferenceClusterProps,
  type ExistingControllers,
  type ExistingKarpenter,
  type ExistingLoadBalancerController,
  type ClusterTenant,
  type ClusterAttachment,
  type ChartVersions,
  type NewClusterOptions,
  DISCOVERY_TAG as KARPENTER_DISCOVERY_TAG,
} from './cluster';
export {
  EksInferenceService,
  type EksInferenceServiceProps,
  type EksClassUnit,
  CLASS_LABEL as EKS_CLASS_LABEL,
} from './inference-service';
export { type LoadBalancerOptions } from './routing';
export * from './observability-addon';
