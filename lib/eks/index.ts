export {
  KARPENTER_CHART, KEDA_CHART, LOAD_BALANCER_CONTROLLER_CHART, NEURON_DEVICE_PLUGIN_CHART, NEURON_DEVICE_PLUGIN_INSTANCE_TYPES, type ChartSpec,
} from './versions';
export type { EksClassOptions } from './class-options';
export type { ScalingOptions } from './scaling-options';
export { PodIdentityRole, type PodIdentityRoleProps } from './pod-identity';
export { Karpenter, type KarpenterProps, KARPENTER_NAMESPACE } from './karpenter';
export { KARPENTER_SERVICE_ACCOUNT, KEDA_OPERATOR_SERVICE_ACCOUNT } from '../core/platform/service-accounts';
export * from './keda';
export * from './load-balancer-controller';
export { NeuronDevicePlugin, type NeuronDevicePluginProps, NEURON_DEVICE_PLUGIN_NAMESPACE } from './neuron-device-plugin';
export {
  EksInferenceCluster,
  type EksInferenceClusterProps,
  type ExistingControllers,
  type ExistingKarpenter,
  type ExistingLoadBalancerController,
  type ClusterTenant,
  type ClusterAttachment,
  type ChartVersions,
  type ClusterSettings,
  type NewClusterOptions,
  DISCOVERY_TAG as KARPENTER_DISCOVERY_TAG,
} from './cluster';
export {
  EksInferenceService,
  type EksInferenceServiceProps,
  type EksClassUnit,
  CLASS_LABEL as EKS_CLASS_LABEL,
} from './inference-service';
export { type ListenerRuleOptions, type LoadBalancerOptions } from './routing';
export {
  EksObservability, type EksObservabilityProps, type ObservabilityOptions, type ObservabilityClass, type ExistingObservabilityAddon,
  OBSERVABILITY_ADDON_VERSION, OBSERVABILITY_NAMESPACE, OBSERVABILITY_SERVICE_ACCOUNT,
} from './observability-addon';
export { acknowledgeVpcFindings } from './cluster-vpc';
export { type IsolatedSubnetEndpoints } from './isolated-subnets';
export { ISOLATED_NODE_SUBNET_ENDPOINTS, type NodeSubnetEndpoint, type EndpointNeed } from '../core/platform/isolated-node-endpoints';
