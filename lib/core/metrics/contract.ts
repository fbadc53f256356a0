/**
 * The metric contract: every metric name, namespace, dimension and unit that the reconciler, the model servers,
 * the dashboards and the alarms use. Nothing else in the library spells a metric name by hand (a test scans
 * lib/ and lambda/ for string literals equal to a name defined here).
 *
 * Pure TypeScript (no aws-cdk-lib): the reconciler Lambda and model-server sidecars import it to emit, the
 * constructs import it to read.
 */
import { duplicates } from '../validation/names';

/** CloudWatch units used by the contract. */
export type MetricUnit = 'Count' | 'Seconds' | 'Milliseconds' | 'Percent' | 'None' | 'Count/Second';

/**
 * Who publishes a metric.
 * - `reconciler`: the reconciler Lambda, once per run, through EMF in its log group.
 * - `model-server`: every replica (the serving container or its sidecar), through EMF (CloudWatch agent or
 *   Fluent Bit on EKS, the container log stream on SageMaker).
 * - `provisioning`: whatever observes capacity requests: on SageMaker the reconciler (instance-pool counts and
 *   endpoint failure reasons from DescribeEndpoint), on EKS the capacity observer of Karpenter NodeClaim launches.
 */
export type MetricEmitter = 'reconciler' | 'model-server' | 'provisioning';

/** One metric of the contract. */
export interface MetricSpec {
  readonly namespace: string;
  readonly name: string;
  readonly unit: MetricUnit;
  /** Dimension names, in the order they are emitted. */
  readonly dimensions: readonly string[];
  /**
   * Further dimension sets the emitter publishes the same value under (EMF `Dimensions` holds all of them), so
   * that alarms can read a service-wide total without summing an open set of dimension values.
   */
  readonly rollups: ReadonlyArray<readonly string[]>;
  /** The statistic that makes sense for it on a dashboard or alarm. */
  readonly statistic: 'Sum' | 'Average' | 'Maximum' | 'Minimum' | 'p95' | 'p99';
  readonly emittedBy: MetricEmitter;
  readonly description: string;
  /**
   * Why the metric may be missing from CloudWatch although its emitter runs and the service serves traffic: `verify`
   * names it as the cause when ListMetrics lists no such metric.
   * @default - the metric follows traffic ("traffic-driven metrics need traffic")
   */
  readonly whyAbsent?: string;
}

/** Namespace of the library's own metrics. */
export const METRIC_NAMESPACE = 'CapacityAwareInference';

/**
 * Dimension names. `CapacityClass` holds a capacity class name, or for the reconciler's per-weight metrics
 * (RouteWeight, DesiredReplicas, ReadyReplicas, HealthyTargets) the name of the routed class the weight points at: the capacity class
 * behind an ALB target group, or a SageMaker production variant (whose instance pools are classes). A variant may bear
 * a class name only when that class is its only pool, so one value never means two sets of replicas.
 */
export const Dim = {
  SERVICE: 'Service',
  CLASS: 'CapacityClass',
  OUTCOME: 'Outcome',
  DECISION: 'Decision',
  REASON: 'Reason',
} as const;

/** Values of the `Outcome` dimension of capacity attempts. */
export const CAPACITY_OUTCOMES = ['launched', 'insufficient-capacity', 'quota-exceeded', 'error'] as const;
export type CapacityOutcome = (typeof CAPACITY_OUTCOMES)[number];
/** The outcomes that count as capacity errors (every outcome but `launched`). */
export const CAPACITY_ERROR_OUTCOMES: readonly CapacityOutcome[] = CAPACITY_OUTCOMES.filter((o) => o !== 'launched');

/** Values of the `Decision` dimension of admissions. */
export const ADMISSION_DECISIONS = ['admitted', 'rejected-deadline', 'rejected-queue-full'] as const;
export type AdmissionDecision = (typeof ADMISSION_DECISIONS)[number];
/** The decisions that turn a request away. */
export const ADMISSION_REJECTIONS: readonly AdmissionDecision[] = ADMISSION_DECISIONS.filter((d) => d !== 'admitted');

/** Values of the PolicyMode metric. */
export const POLICY_MODE_VALUE = { cost: 0, capacity: 1 } as const;

/** Seconds between the reconciler's runs and the period of every dashboard widget and alarm by default. */
export const METRIC_PERIOD_SECONDS = 60;

const own = (
  name: string,
  unit: MetricUnit,
  dimensions: readonly string[],
  statistic: MetricSpec['statistic'],
  emittedBy: MetricEmitter,
  description: string,
  rollups: ReadonlyArray<readonly string[]> = [],
  more: Pick<MetricSpec, 'whyAbsent'> = {},
): MetricSpec => ({ namespace: METRIC_NAMESPACE, name, unit, dimensions, rollups, statistic, emittedBy, description, ...more });

const S = Dim.SERVICE;
const C = Dim.CLASS;

/** The library's own metrics (emitted through EMF; see `MetricSpec.emittedBy`). */
export const Metrics = {
  capacityAttempts: own('CapacityAttempts', 'Count', [S, C, Dim.OUTCOME], 'Sum', 'provisioning',
    'Attempts to add capacity (an instance or node) to a class, by outcome'),
  replicaReadyTime: own('ReplicaReadyTime', 'Seconds', [S, C], 'p95', 'model-server',
    'Time from replica scheduled to model loaded and warm (reported once, when the replica turns ready)'),
  admissions: own('Admissions', 'Count', [S, C, Dim.DECISION], 'Sum', 'model-server',
    'Requests arriving at a class, by admission decision', [[S, Dim.DECISION]]),
  queueWait: own('QueueWait', 'Milliseconds', [S, C], 'p95', 'model-server',
    'Time a request waited in the server queue before its first decode step'),
  tokensPerSecond: own('TokensPerSecond', 'Count/Second', [S, C], 'Average', 'model-server',
    'Output tokens per second one replica generated over its last emission interval (compare with the envelope)'),
  generatedTokens: own('GeneratedTokens', 'Count', [S, C], 'Sum', 'model-server',
    'Output tokens generated (Sum over a period / period seconds = class tokens per second, however many replicas emit)',
    [[S]]),
  readyReplicas: own('ReadyReplicas', 'Count', [S, C], 'Minimum', 'reconciler',
    // A one-class SageMaker variant lists no InstancePools (rendered with a plain InstanceType): its class is counted
    // from the variant's CurrentInstanceCount (instancesByType, lib/core/reconciler/targets/sagemaker-instances.ts).
    'Replicas with the model loaded and passing readiness, per routed class; on SageMaker also per instance pool (class) '
    + 'from DescribeEndpoint InstancePools[].CurrentInstanceCount, which cost per class needs'),
  healthyTargets: own('HealthyTargets', 'Count', [S, C], 'Minimum', 'reconciler',
    'EKS: the healthy targets of the class\'s target group as one reconciler run counted them (DescribeTargetHealth); read '
    + 'back for the periods HealthyHostCount has no datapoint (ALB publishes none for a target group with no target left)', [],
    // A role that may not make the read (a hand-written serving's grant) never publishes it, whatever the traffic.
    { whyAbsent: 'the reconciler publishes it from each run\'s DescribeTargetHealth read: a role without '
      + 'elasticloadbalancing:DescribeTargetHealth never does, see its probe' }),
  desiredReplicas: own('DesiredReplicas', 'Count', [S, C], 'Maximum', 'reconciler', 'Replicas the autoscaler wants, per routed class'),
  refusedScaleOuts: own('RefusedScaleOuts', 'Count', [S, C], 'Maximum', 'reconciler',
    'SageMaker: a flag, 1 when a run\'s live counts show the scale-out of the newest published period (about three minutes back, '
    + 'the metric delay) rolled back without new instances, which the reconciler reads as a capacity error; 0 otherwise. One '
    + 'rollback shows on up to three runs; one target tracking re-asked before a run samples it is not seen'),
  pendingScaleOut: own('PendingScaleOut', 'Count', [S, C], 'Maximum', 'reconciler',
    'SageMaker: instances a variant asked for and did not have (desired minus ready, at least 0) as one run saw them. '
    + 'Published per run so that a period shows a pending scale-out only if one run saw it: ReadyReplicas (Minimum) and '
    + 'DesiredReplicas (Maximum) of two runs in one period can pair counts no run saw together'),
  replicaFloor: own('ReplicaFloor', 'Count', [S, C], 'Maximum', 'reconciler',
    'Replicas the policy asks a routed class to run at least (capacity mode: its part of the deficit; 0: no floor). '
    + 'On EKS the class\'s ScaledObject scales on it as a second trigger; on SageMaker the reconciler raises the variant\'s '
    + 'desired instance count to it'),
  fallbackShareRequests: own('FallbackShareRequests', 'Percent', [S], 'Average', 'reconciler',
    'Planned share (0..100) of requests the weights send to routed classes other than the preferred one'),
  fallbackShareTokens: own('FallbackShareTokens', 'Percent', [S], 'Average', 'reconciler',
    'Planned share (0..100) of routed token capacity (weight x envelope tokens/s) on routed classes other than the preferred one'),
  deadlineExhaustions: own('DeadlineExhaustions', 'Count', [S, C], 'Sum', 'model-server',
    'Requests rejected or cut because their deadline ran out', [[S]]),
  // Scraped from the model server's Prometheus endpoint by the CloudWatch agent (lib/core/runtime/engine-metrics.ts).
  requestsRunning: own('RequestsRunning', 'Count', [S, C], 'Average', 'model-server',
    'Requests the engine is decoding now (a gauge; one datapoint per replica per scrape)'),
  requestsWaiting: own('RequestsWaiting', 'Count', [S, C], 'Average', 'model-server',
    'Requests waiting in the engine queue (a gauge; one datapoint per replica per scrape)'),
  kvCacheUsage: own('KvCacheUsage', 'None', [S, C], 'Maximum', 'model-server',
    'Share (0..1) of the KV cache in use (a gauge; one datapoint per replica per scrape)'),
  promptTokens: own('PromptTokens', 'Count', [S, C], 'Sum', 'model-server',
    'Prompt tokens processed (per-scrape deltas of the engine counter)', [[S]]),
  policyMode: own('PolicyMode', 'None', [S], 'Maximum', 'reconciler', 'Routing policy mode: 0 = cost, 1 = capacity'),
  policyRamping: own('PolicyRamping', 'None', [S], 'Maximum', 'reconciler',
    '1 while the weights ramp back toward the cost plan, else 0 (read back by the reconciler to rebuild its state)'),
  capacityEventEntries: own('CapacityEventEntries', 'Count', [S], 'Maximum', 'reconciler',
    'Capacity-mode entries the policy counts in the capacity event under way (0: no event), after the run\'s decision; read back '
    + 'by the reconciler so a cold start keeps an event that outlasts its PolicyMode window'),
  routeWeight: own('RouteWeight', 'Percent', [S, C], 'Average', 'reconciler',
    'Share (0..100) of traffic the router sends to a routed class (weights normalized to their sum)'),
  decisions: own('Decisions', 'Count', [S, Dim.REASON], 'Sum', 'reconciler',
    'Reconciler decisions, by reason (the [Service] rollup counts every run: its absence means the reconciler is not running)',
    [[S]]),
  weightChanges: own('WeightChanges', 'Count', [S], 'Sum', 'reconciler', 'Reconciler runs that changed the weights'),
  writesDeferred: own('WritesDeferred', 'Count', [S], 'Sum', 'reconciler',
    'Reconciler runs whose planned write waited for a later run: the routing target took no write (a SageMaker endpoint not InService), or one write was already made in the period'),
  degradedReads: own('DegradedReads', 'Count', [S], 'Sum', 'reconciler',
    'Reconciler runs that went on without a read they use: SageMaker DescribeScalableTargets (weights written, no capacity write that run); EKS '
    + 'DescribeTargetHealth (a class whose target group lost every pod, and so has no ReadyReplicas datapoint, stays unknown and the run holds '
    + 'the weights). The audit line says which read and why'),
  reconcilerFailures: own('ReconcilerFailures', 'Count', [S, Dim.REASON], 'Sum', 'reconciler',
    'Reconciler runs that failed (weights left unchanged), by reason: aws-error, timeout, invalid-config, target-mismatch, target-unavailable, internal-error',
    [[S]]),
} as const satisfies Record<string, MetricSpec>;

/** Dimension names of the AWS-owned metrics. */
export const AwsDim = {
  ENDPOINT_NAME: 'EndpointName',
  VARIANT_NAME: 'VariantName',
  INSTANCE_TYPE: 'InstanceType',
  LOAD_BALANCER: 'LoadBalancer',
  TARGET_GROUP: 'TargetGroup',
  CLUSTER_NAME: 'ClusterName',
  NAMESPACE: 'Namespace',
  POD_NAME: 'PodName',
  FUNCTION_NAME: 'FunctionName',
} as const;

/** AWS-owned metrics the library reads (names as AWS publishes them). */
export const AwsMetrics = {
  sageMaker: {
    namespace: 'AWS/SageMaker',
    /** Dimensions: EndpointName, VariantName (and InstanceType with instance pools). */
    invocations: 'Invocations',
    invocationsPerInstance: 'InvocationsPerInstance',
    concurrentRequestsPerModel: 'ConcurrentRequestsPerModel',
    /** Microseconds. */
    modelLatency: 'ModelLatency',
    /** Microseconds. */
    overheadLatency: 'OverheadLatency',
    invocation4xxErrors: 'Invocation4XXErrors',
    invocation5xxErrors: 'Invocation5XXErrors',
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
    /** Seconds. */
    targetResponseTime: 'TargetResponseTime',
    target4xx: 'HTTPCode_Target_4XX_Count',
    target5xx: 'HTTPCode_Target_5XX_Count',
    elb5xx: 'HTTPCode_ELB_5XX_Count',
  },
  containerInsights: {
    namespace: 'ContainerInsights',
    /**
     * Deployment metrics of Container Insights with enhanced observability (the amazon-cloudwatch-observability add-on);
     * dimensions ClusterName, Namespace, PodName (PodName holds the Deployment's name). See lib/core/metrics/aws-published.ts.
     */
    replicasDesired: 'replicas_desired',
    replicasReady: 'replicas_ready',
  },
  lambda: {
    namespace: 'AWS/Lambda',
    /** Dimension: FunctionName. Invocations that failed (a thrown error, a timeout, a crash); the reconciler's errors alarm reads it. */
    errors: 'Errors',
  },
} as const;

/** Multiply an AWS latency statistic by this to get milliseconds. */
export const AWS_LATENCY_TO_MS = {
  /** SageMaker ModelLatency and OverheadLatency are in microseconds. */
  sageMaker: 0.001,
  /** ALB TargetResponseTime is in seconds. */
  alb: 1000,
} as const;

/** Every metric of the library's own namespace, for tests and documentation. */
export const ALL_METRICS: readonly MetricSpec[] = Object.values(Metrics);

/** Every metric name of the contract: the library's own and the AWS-owned ones it reads. */
export const ALL_METRIC_NAMES: readonly string[] = [
  ...ALL_METRICS.map((m) => m.name),
  ...Object.values(AwsMetrics).flatMap((group) =>
    Object.entries(group)
      .filter(([key]) => key !== 'namespace')
      .map(([, name]) => name),
  ),
];

/** Thrown when a metric is addressed with dimensions the contract does not define for it. */
export class MetricContractError extends Error {
  constructor(public readonly problems: readonly string[]) {
    super(`Metric contract violated (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'MetricContractError';
  }
}

/** The dimension sets a metric is published under: its full dimensions first, then its rollups. */
export function dimensionSets(spec: MetricSpec): ReadonlyArray<readonly string[]> {
  return [spec.dimensions, ...spec.rollups];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d) => b.includes(d));
}

/** Why `values` does not address `spec` (empty when it does): keys must be exactly one of its dimension sets. */
export function dimensionProblems(spec: MetricSpec, values: Readonly<Record<string, string>>): string[] {
  const keys = Object.keys(values);
  const problems: string[] = [];
  if (!dimensionSets(spec).some((set) => sameSet(set, keys))) {
    const allowed = dimensionSets(spec).map((s) => `[${s.join(', ')}]`).join(' or ');
    problems.push(`${spec.name}: dimensions [${keys.join(', ')}] are not a dimension set of this metric; allowed: ${allowed}`);
  }
  for (const [key, value] of Object.entries(values)) {
    if (typeof value !== 'string' || value.length === 0) problems.push(`${spec.name}: dimension ${key} is empty; a non-empty value is required`);
    else if (value.length > 1024) problems.push(`${spec.name}: dimension ${key} is ${value.length} characters long; CloudWatch allows 1024`);
  }
  return problems;
}

/**
 * The dimension map of one metric, in the contract's order. Throws `MetricContractError` when the keys are not
 * exactly one of the metric's dimension sets, so a misspelt or missing dimension fails where it is built.
 */
export function dimensionMap(spec: MetricSpec, values: Readonly<Record<string, string>>): Record<string, string> {
  const problems = dimensionProblems(spec, values);
  if (problems.length > 0) throw new MetricContractError(problems);
  const set = dimensionSets(spec).find((s) => sameSet(s, Object.keys(values))) ?? spec.dimensions;
  return Object.fromEntries(set.map((d) => [d, values[d]]));
}

/** Dimensions of a per-class metric. */
export function classDimensions(service: string, className: string): Record<string, string> {
  return { [Dim.SERVICE]: service, [Dim.CLASS]: className };
}

/** Dimensions of a per-service metric. */
export function serviceDimensions(service: string): Record<string, string> {
  return { [Dim.SERVICE]: service };
}

/** One value to emit. */
export interface MetricValue {
  readonly spec: MetricSpec;
  readonly value: number;
}

/**
 * An Embedded Metric Format record (one JSON log line) that publishes `values` under `dimensions` and every rollup
 * of each metric. All metrics of one record must share the same full dimension set; dimension values and metric
 * values become top-level members, as EMF requires.
 * See https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */
export function emfRecord(
  timestampMs: number,
  dimensions: Readonly<Record<string, string>>,
  values: readonly MetricValue[],
  properties: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const problems: string[] = [];
  for (const { spec, value } of values) {
    if (!sameSet(spec.dimensions, Object.keys(dimensions))) {
      problems.push(`${spec.name}: emitted with dimensions [${Object.keys(dimensions).join(', ')}]; its dimensions are [${spec.dimensions.join(', ')}]`);
    }
    problems.push(...dimensionProblems(spec, dimensions).filter((p) => !p.includes('not a dimension set')));
    if (!Number.isFinite(value)) problems.push(`${spec.name}: value ${value} is not a finite number`);
  }
  for (const name of duplicates(values.map((v) => v.spec.name))) problems.push(`${name}: appears more than once; an EMF record holds one value per metric`);
  if (values.length === 0) problems.push('an EMF record needs at least one metric');
  if (values.length > 100) problems.push(`an EMF record holds at most 100 metrics; got ${values.length}`);
  if (problems.length > 0) throw new MetricContractError([...new Set(problems)]);

  // One directive per distinct set of dimension sets: metrics with different rollups cannot share one.
  const directives = new Map<string, { Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: MetricUnit }> }>();
  for (const { spec } of values) {
    const sets = dimensionSets(spec).map((s) => [...s]);
    const key = `${spec.namespace}|${JSON.stringify(sets)}`;
    const directive = directives.get(key) ?? { Namespace: spec.namespace, Dimensions: sets, Metrics: [] };
    directive.Metrics.push({ Name: spec.name, Unit: spec.unit });
    directives.set(key, directive);
  }
  return {
    ...properties,
    _aws: { Timestamp: timestampMs, CloudWatchMetrics: [...directives.values()] },
    ...dimensions,
    ...Object.fromEntries(values.map(({ spec, value }) => [spec.name, value])),
  };
}

/** The metrics a given emitter publishes (for documentation and emitter tests). */
export function metricsEmittedBy(emitter: MetricEmitter): MetricSpec[] {
  return ALL_METRICS.filter((m) => m.emittedBy === emitter);
}
