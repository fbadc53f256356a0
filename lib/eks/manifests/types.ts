/**
 * Typed shapes of the Kubernetes objects the EKS path synthesizes: the subset of each API that the builders set,
 * with the real field names (validated against the real schemas in the tests).
 */

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Any Kubernetes object: what `KubernetesManifest` applies. */
export interface KubernetesObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
}

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface Toleration {
  readonly key: string;
  readonly operator: 'Exists' | 'Equal';
  readonly value?: string;
  readonly effect?: Taint['effect'];
}

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  readonly values?: readonly string[];
}

// ---------------------------------------------------------------------------------------------------------------
// core/v1, apps/v1, policy/v1, scheduling.k8s.io/v1
// ---------------------------------------------------------------------------------------------------------------

export interface Namespace extends KubernetesObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Namespace';
}

export interface ServiceAccount extends KubernetesObject {
  readonly apiVersion: 'v1';
  readonly kind: 'ServiceAccount';
  readonly automountServiceAccountToken: boolean;
}

export interface PriorityClass extends KubernetesObject {
  readonly apiVersion: 'scheduling.k8s.io/v1';
  readonly kind: 'PriorityClass';
  readonly value: number;
  readonly preemptionPolicy: 'Never' | 'PreemptLowerPriority';
  readonly globalDefault: false;
  readonly description: string;
}

export interface HttpGetAction {
  readonly path: string;
  readonly port: string | number;
}

export interface Probe {
  readonly httpGet: HttpGetAction;
  readonly initialDelaySeconds?: number;
  readonly periodSeconds: number;
  readonly timeoutSeconds: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
}

export interface EnvVar {
  readonly name: string;
  readonly value: string;
}

export interface ResourceRequirements {
  readonly requests: Readonly<Record<string, string>>;
  readonly limits: Readonly<Record<string, string>>;
}

export interface ContainerSecurityContext {
  readonly allowPrivilegeEscalation: false;
  readonly readOnlyRootFilesystem: boolean;
  readonly runAsNonRoot: true;
  readonly runAsUser: number;
  readonly runAsGroup: number;
  readonly capabilities: { readonly drop: readonly ['ALL'] };
  readonly seccompProfile: { readonly type: 'RuntimeDefault' };
}

export interface VolumeMount {
  readonly name: string;
  readonly mountPath: string;
  readonly readOnly?: boolean;
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly imagePullPolicy: 'IfNotPresent';
  readonly args?: readonly string[];
  readonly env: readonly EnvVar[];
  readonly ports: ReadonlyArray<{ readonly name: string; readonly containerPort: number; readonly protocol: 'TCP' }>;
  readonly resources: ResourceRequirements;
  readonly startupProbe: Probe;
  readonly readinessProbe: Probe;
  readonly livenessProbe: Probe;
  /** Absent when there is nothing to sleep for (a deregistration delay of 0). */
  readonly lifecycle?: { readonly preStop: { readonly sleep: { readonly seconds: number } } };
  readonly securityContext: ContainerSecurityContext;
  readonly volumeMounts: readonly VolumeMount[];
}

/** An init container: runs to completion before the server starts; a non-zero exit keeps the pod un-Ready. */
export interface InitContainer {
  readonly name: string;
  readonly image: string;
  readonly imagePullPolicy: 'IfNotPresent';
  readonly command: readonly string[];
  readonly env: readonly EnvVar[];
  readonly resources: ResourceRequirements;
  readonly securityContext: ContainerSecurityContext;
  readonly volumeMounts: readonly VolumeMount[];
}

export interface Volume {
  readonly name: string;
  readonly emptyDir: { readonly medium?: 'Memory'; readonly sizeLimit?: string };
}

export interface TopologySpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'ScheduleAnyway' | 'DoNotSchedule';
  readonly labelSelector: { readonly matchLabels: Readonly<Record<string, string>> };
}

export interface PodSpec {
  readonly serviceAccountName: string;
  readonly automountServiceAccountToken: false;
  readonly priorityClassName: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly topologySpreadConstraints: readonly TopologySpreadConstraint[];
  readonly terminationGracePeriodSeconds: number;
  readonly securityContext: { readonly runAsNonRoot: true; readonly fsGroup: number; readonly seccompProfile: { readonly type: 'RuntimeDefault' } };
  readonly initContainers?: readonly InitContainer[];
  readonly containers: readonly Container[];
  readonly volumes: readonly Volume[];
}

export interface Deployment extends KubernetesObject {
  readonly apiVersion: 'apps/v1';
  readonly kind: 'Deployment';
  readonly spec: {
    /** Omitted on purpose: KEDA owns the replica count; a value here would fight the HPA on every apply. */
    readonly replicas?: never;
    readonly revisionHistoryLimit: number;
    readonly progressDeadlineSeconds: number;
    readonly selector: { readonly matchLabels: Readonly<Record<string, string>> };
    readonly strategy: { readonly type: 'RollingUpdate'; readonly rollingUpdate: { readonly maxSurge: number; readonly maxUnavailable: number } };
    readonly template: {
      readonly metadata: { readonly labels: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
      readonly spec: PodSpec;
    };
  };
}

export interface Service extends KubernetesObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Service';
  readonly spec: {
    readonly type: 'ClusterIP';
    readonly selector: Readonly<Record<string, string>>;
    readonly ports: ReadonlyArray<{ readonly name: string; readonly port: number; readonly targetPort: string; readonly protocol: 'TCP' }>;
  };
}

export interface PodDisruptionBudget extends KubernetesObject {
  readonly apiVersion: 'policy/v1';
  readonly kind: 'PodDisruptionBudget';
  readonly spec: {
    readonly maxUnavailable: number;
    readonly selector: { readonly matchLabels: Readonly<Record<string, string>> };
    readonly unhealthyPodEvictionPolicy: 'AlwaysAllow' | 'IfHealthyBudget';
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Karpenter v1
// ---------------------------------------------------------------------------------------------------------------

export interface DisruptionBudget {
  readonly nodes: string;
  readonly reasons?: ReadonlyArray<'Underutilized' | 'Empty' | 'Drifted'>;
  readonly schedule?: string;
  readonly duration?: string;
}

export interface NodePool extends KubernetesObject {
  readonly apiVersion: 'karpenter.sh/v1';
  readonly kind: 'NodePool';
  readonly spec: {
    readonly weight?: number;
    readonly limits: Readonly<Record<string, string>>;
    readonly disruption: {
      readonly consolidationPolicy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized';
      readonly consolidateAfter: string;
      readonly budgets: readonly DisruptionBudget[];
    };
    readonly template: {
      readonly metadata: { readonly labels: Readonly<Record<string, string>> };
      readonly spec: {
        readonly nodeClassRef: { readonly group: 'karpenter.k8s.aws'; readonly kind: 'EC2NodeClass'; readonly name: string };
        readonly requirements: readonly NodeSelectorRequirement[];
        readonly taints: readonly Taint[];
        readonly expireAfter: string;
        readonly terminationGracePeriod: string;
      };
    };
  };
}

export interface SelectorTerm {
  readonly tags?: Readonly<Record<string, string>>;
  readonly id?: string;
}

export interface EC2NodeClass extends KubernetesObject {
  readonly apiVersion: 'karpenter.k8s.aws/v1';
  readonly kind: 'EC2NodeClass';
  readonly spec: {
    readonly role: string;
    readonly amiSelectorTerms: ReadonlyArray<{ readonly alias: string }>;
    readonly subnetSelectorTerms: readonly SelectorTerm[];
    readonly securityGroupSelectorTerms: readonly SelectorTerm[];
    readonly metadataOptions: {
      readonly httpEndpoint: 'enabled';
      readonly httpProtocolIPv6: 'disabled';
      readonly httpPutResponseHopLimit: 1;
      readonly httpTokens: 'required';
    };
    readonly blockDeviceMappings: ReadonlyArray<{
      readonly deviceName: string;
      readonly ebs: { readonly volumeSize: string; readonly volumeType: 'gp3'; readonly encrypted: true; readonly deleteOnTermination: true; readonly throughput?: number; readonly iops?: number };
    }>;
    readonly tags: Readonly<Record<string, string>>;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// KEDA v1alpha1
// ---------------------------------------------------------------------------------------------------------------

export interface HpaScalingPolicy {
  readonly type: 'Pods' | 'Percent';
  readonly value: number;
  readonly periodSeconds: number;
}

export interface HpaScalingRules {
  readonly stabilizationWindowSeconds: number;
  readonly selectPolicy: 'Max' | 'Min' | 'Disabled';
  readonly policies: readonly HpaScalingPolicy[];
}

/** Metadata of KEDA's `aws-cloudwatch` scaler (every value is a string, as KEDA reads them). */
export interface AwsCloudWatchTriggerMetadata {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensionName: string;
  readonly dimensionValue: string;
  readonly metricStat: string;
  readonly metricStatPeriod: string;
  readonly metricCollectionTime: string;
  readonly metricEndTimeOffset: string;
  readonly targetMetricValue: string;
  readonly activationTargetMetricValue: string;
  readonly minMetricValue: string;
  readonly awsRegion: string;
}

export interface ScaledObject extends KubernetesObject {
  readonly apiVersion: 'keda.sh/v1alpha1';
  readonly kind: 'ScaledObject';
  readonly spec: {
    readonly scaleTargetRef: { readonly apiVersion: 'apps/v1'; readonly kind: 'Deployment'; readonly name: string };
    readonly pollingInterval: number;
    readonly cooldownPeriod: number;
    readonly minReplicaCount: number;
    readonly maxReplicaCount: number;
    readonly fallback: { readonly failureThreshold: number; readonly replicas: number; readonly behavior: 'static' | 'currentReplicasIfHigher' };
    readonly advanced: {
      readonly restoreToOriginalReplicaCount: false;
      readonly horizontalPodAutoscalerConfig: { readonly behavior: { readonly scaleUp: HpaScalingRules; readonly scaleDown: HpaScalingRules } };
    };
    readonly triggers: ReadonlyArray<{
      readonly type: 'aws-cloudwatch';
      readonly name: string;
      readonly metricType: 'Value' | 'AverageValue';
      readonly metadata: AwsCloudWatchTriggerMetadata;
      readonly authenticationRef: { readonly kind: 'TriggerAuthentication'; readonly name: string };
    }>;
  };
}

export interface TriggerAuthentication extends KubernetesObject {
  readonly apiVersion: 'keda.sh/v1alpha1';
  readonly kind: 'TriggerAuthentication';
  readonly spec: { readonly podIdentity: { readonly provider: 'aws'; readonly identityOwner: 'keda' } };
}

// ---------------------------------------------------------------------------------------------------------------
// AWS Load Balancer Controller v1beta1
// ---------------------------------------------------------------------------------------------------------------

export interface TargetGroupBinding extends KubernetesObject {
  readonly apiVersion: 'elbv2.k8s.aws/v1beta1';
  readonly kind: 'TargetGroupBinding';
  readonly spec: {
    readonly targetGroupARN: string;
    readonly targetType: 'ip';
    readonly serviceRef: { readonly name: string; readonly port: number };
    readonly vpcID?: string;
  };
}
