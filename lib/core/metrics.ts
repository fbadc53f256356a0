/**
 * The metric contract: every metric name, namespace, dimension and unit that the reconciler, the model servers,
 * the dashboards and the alarms use. Nothing else in the library spells a metric name by hand.
 */

/** CloudWatch units used by the contract. */
export type MetricUnit = 'Count' | 'Seconds' | 'Milliseconds' | 'Percent' | 'None' | 'Count/Second';

/** One metric of the contract. */
export interface MetricSpec {
  readonly namespace: string;
  readonly name: string;
  readonly unit: MetricUnit;
  /** Dimension names, in the order they are emitted. */
  readonly dimensions: readonly string[];
  /** The statistic that makes sense for it on a dashboard or alarm. */
  readonly statistic: 'Sum' | 'Average' | 'Maximum' | 'Minimum' | 'p95' | 'p99';
  readonly description: string;
}

/** Namespace of the library's own metrics. */
export const METRIC_NAMESPACE = 'CapacityAwareInference';

/** Dimension names. */
export const Dim = {
  SERVICE: 'Service',
  CLASS: 'CapacityClass',
  OUTCOME: 'Outcome',
  DECISION: 'Decision',
  REASON: 'Reason',
} as const;

/** Values of the `Outcome` dimension of capacity attempts. */
export const CAPACITY_OUTCOMES = ['launched', 'insufficient-capacity', 'quota-exceeded', 'error'] as const;
/** Values of the `Decision` dimension of admissions. */
export const ADMISSION_DECISIONS = ['admitted', 'rejected-deadline', 'rejected-queue-full'] as const;
/** Values of the PolicyMode metric. */
export const POLICY_MODE_VALUE = { cost: 0, capacity: 1 } as const;

const own = (
  name: string,
  unit: MetricUnit,
  dimensions: readonly string[],
  statistic: MetricSpec['statistic'],
  description: string,
): MetricSpec => ({ namespace: METRIC_NAMESPACE, name, unit, dimensions, statistic, description });

const S = Dim.SERVICE;
const C = Dim.CLASS;

/** The library's own metrics (emitted by the reconciler and by model servers through EMF). */
export const Metrics = {
  capacityAttempts: own('CapacityAttempts', 'Count', [S, C, Dim.OUTCOME], 'Sum', 'Attempts to add capacity to a class, by outcome'),
  replicaReadyTime: own('ReplicaReadyTime', 'Seconds', [S, C], 'p95', 'Time from replica scheduled to model loaded and warm'),
  admissions: own('Admissions', 'Count', [S, C, Dim.DECISION], 'Sum', 'Requests arriving at a class, by admission decision'),
  queueWait: own('QueueWait', 'Milliseconds', [S, C], 'p95', 'Time a request waited in the server queue before decoding'),
  tokensPerSecond: own('TokensPerSecond', 'Count/Second', [S, C], 'Average', 'Generated tokens per second served by a class'),
  readyReplicas: own('ReadyReplicas', 'Count', [S, C], 'Minimum', 'Replicas with the model loaded and passing readiness'),
  desiredReplicas: own('DesiredReplicas', 'Count', [S, C], 'Maximum', 'Replicas the autoscaler wants'),
  fallbackShareRequests: own('FallbackShareRequests', 'Percent', [S], 'Average', 'Share of routed requests going to non-preferred classes'),
  fallbackShareTokens: own('FallbackShareTokens', 'Percent', [S], 'Average', 'Share of routed token capacity on non-preferred classes'),
  deadlineExhaustions: own('DeadlineExhaustions', 'Count', [S, C], 'Sum', 'Requests rejected or cut because their deadline ran out'),
  policyMode: own('PolicyMode', 'None', [S], 'Maximum', 'Routing policy mode: 0 = cost, 1 = capacity'),
  routeWeight: own('RouteWeight', 'Percent', [S, C], 'Average', 'Share of traffic the router sends to a class'),
  decisions: own('Decisions', 'Count', [S, Dim.REASON], 'Sum', 'Reconciler decisions, by reason'),
  weightChanges: own('WeightChanges', 'Count', [S], 'Sum', 'Reconciler runs that changed the weights'),
} as const satisfies Record<string, MetricSpec>;

/** AWS-owned metrics the library reads (names as AWS publishes them). */
export const AwsMetrics = {
  sageMaker: {
    namespace: 'AWS/SageMaker',
    /** Dimensions: EndpointName, VariantName (and InstanceType with instance pools). */
    invocations: 'Invocations',
    invocationsPerInstance: 'InvocationsPerInstance',
    concurrentRequestsPerModel: 'ConcurrentRequestsPerModel',
    modelLatency: 'ModelLatency',
    overheadLatency: 'OverheadLatency',
    invocation4xxErrors: 'Invocation4XXErrors',
    invocation5xxErrors: 'Invocation5XXErrors',
    modelSetupTime: 'ModelSetupTime',
  },
  sageMakerEndpointInstances: {
    namespace: '/aws/sagemaker/Endpoints',
    gpuUtilization: 'GPUUtilization',
    gpuMemoryUtilization: 'GPUMemoryUtilization',
  },
  alb: {
    namespace: 'AWS/ApplicationELB',
    /** Dimensions: LoadBalancer, TargetGroup. */
    requestCount: 'RequestCount',
    requestCountPerTarget: 'RequestCountPerTarget',
    healthyHostCount: 'HealthyHostCount',
    unhealthyHostCount: 'UnHealthyHostCount',
    targetResponseTime: 'TargetResponseTime',
    target5xx: 'HTTPCode_Target_5XX_Count',
    elb5xx: 'HTTPCode_ELB_5XX_Count',
  },
  containerInsights: {
    namespace: 'ContainerInsights',
    /** Dimensions: ClusterName, Namespace, Deployment (EKS enhanced observability). */
    deploymentReplicasAvailable: 'kube_deployment_status_replicas_available',
    deploymentSpecReplicas: 'kube_deployment_spec_replicas',
  },
} as const;

/** Every metric of the library's own namespace, for tests and documentation. */
export const ALL_METRICS: readonly MetricSpec[] = Object.values(Metrics);
