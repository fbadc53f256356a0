/**
 * The control loop's parameters as each serving construct deploys them by default: how the platform's autoscaler
 * reads load and how fast it may change replicas, how the reconciler's signals are cut, and how routing and capacity
 * writes are sequenced. One source of truth: the constructs render these values, the simulator's platform models run
 * them, and test/sim/platform-defaults.test.ts fails when a construct's rendered default and the model disagree.
 * Pure data (no aws-cdk-lib): the constructs turn the seconds into `Duration`s.
 */

/** Defaults of an EKS class's KEDA ScaledObject (its HPA behaviour and its CloudWatch load trigger). */
export const EKS_SCALING_DEFAULTS = {
  /** CloudWatch period of the load metric (ALB RequestCount, Sum per period). */
  metricPeriodSeconds: 60,
  /** KEDA reads datapoints this many periods back (metricCollectionTime). */
  metricCollectionPeriods: 3,
  /**
   * The window ends one period before KEDA's query time, itself rounded down to the period (kedacore/keda@v2.20.2
   * pkg/scalers/aws_cloudwatch_scaler.go:186; review R203): the newest closed period is skipped too, since CloudWatch
   * may not have all of its datapoints yet and a partial Sum would read as a drop in load.
   */
  metricEndTimeOffsetPeriods: 1,
  /** The recommendation must stay lower this long before pods are removed (HPA scaleDown stabilization window). */
  scaleDownStabilizationSeconds: 600,
  /** Most pods added per scale-up period: one alarm must not start a stampede of cold model containers. */
  maxScaleUpPods: 2,
  scaleUpPeriodSeconds: 120,
  /** Most pods removed per scale-down period. */
  maxScaleDownPods: 1,
  scaleDownPeriodSeconds: 120,
  /**
   * KEDA's polling interval, seconds: how often it checks activation. It does not delay a floor: the HPA's metric
   * requests (every 15 s) query CloudWatch directly, as no trigger here sets `useCachedMetrics` (kedacore/keda@v2.20.2
   * pkg/scaling/scale_handler.go:682; review R203).
   */
  pollingIntervalSeconds: 30,
} as const;

/**
 * An EKS class's NodePool disruption: `WhenEmpty` consolidation after `consolidateAfterSeconds`. Karpenter waits that
 * long "after a pod schedules or is removed from the node before considering the node consolidatable"
 * (aws/karpenter-provider-aws website/content/en/docs/concepts/disruption.md), so a node outlives its last pod by it.
 * lib/eks/class-unit.ts renders '10m'; test/sim/platform-defaults.test.ts pins the two together.
 */
export const EKS_NODE_DEFAULTS = {
  consolidateAfterSeconds: 600,
  /**
   * The longest terminationGracePeriod of a NodePool that may run spot: inside the two-minute interruption notice (EC2
   * user guide, spot-instance-termination-notices), with room for the notice's way to Karpenter (EventBridge, SQS).
   */
  spotNodeGraceSeconds: 105,
} as const;

/** An EKS class's target group: how long the ALB lets a deregistered pod finish (`deregistrationDelay` default). */
export const EKS_TARGET_GROUP_DEFAULTS = {
  deregistrationDelaySeconds: 30,
} as const;

/**
 * The longest deregistration delay an ALB target group takes: "The range is 0-3600 seconds"
 * (awsdocs/elb-application-load-balancers-user-guide@fb24293 doc_source/load-balancer-target-groups.md:133-134,
 * `deregistration_delay.timeout_seconds`).
 */
export const ALB_MAX_DEREGISTRATION_DELAY_SECONDS = 3600;

/**
 * The deregistration delay an EKS class's target group gets when the user sets none: EKS_TARGET_GROUP_DEFAULTS' 30 s,
 * or the request deadline (`deadlineSeconds`, rounded up) where that is longer, at most the ALB's 3600 s. The ALB stops
 * sending a deregistering target new requests and waits the delay, which "can help in-flight requests to the target to
 * complete"; "If a deregistering target terminates the connection before the deregistration delay elapses, the client
 * receives a 500-level error response"
 * (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-target-group-attributes.html#deregistration-delay;
 * awsdocs/elb-application-load-balancers-user-guide@fb24293 doc_source/load-balancer-target-groups.md:226-234). What
 * the ALB does with a request still in flight when the delay ends is not documented for an ALB (the Classic Load
 * Balancer's page says it "forcibly closes connections"), so a request admitted just before the pod is deregistered
 * must be answered inside the delay: the delay covers the deadline. The pod's preStop sleeps the delay and its grace
 * adds the deadline after it (lib/eks/manifests/workload.ts `podTerminationGraceSeconds`).
 */
export function defaultDeregistrationDelaySeconds(deadlineSeconds: number): number {
  return Math.min(ALB_MAX_DEREGISTRATION_DELAY_SECONDS, Math.max(EKS_TARGET_GROUP_DEFAULTS.deregistrationDelaySeconds, Math.ceil(deadlineSeconds)));
}

/**
 * The terminationGracePeriod of a NodePool that may run spot, for pods whose own grace is `podGraceSeconds` (the target
 * group's deregistration delay, then the deadline of the requests in service): the pod's grace and a minute, at most
 * `spotNodeGraceSeconds`, so every pod is gone within the notice.
 */
export function spotNodeGraceSeconds(podGraceSeconds: number): number {
  return Math.min(podGraceSeconds + 60, EKS_NODE_DEFAULTS.spotNodeGraceSeconds);
}

/**
 * How long after a NodeClaim's deletion (the interruption controller's, on a notice; or `kubectl delete nodeclaim`)
 * Karpenter deletes the pods the PodDisruptionBudget (one pod at a time) holds: it evicts through the Eviction API,
 * which the budget refuses while a pod is unavailable, and at the node's grace expiry minus each pod's own grace
 * deletes the rest, bypassing the budget (kubernetes-sigs/karpenter@v1.14.1
 * pkg/controllers/node/termination/terminator/terminator.go:140-177, eviction.go:171-207; the node's grace counted
 * from the NodeClaim's deletionTimestamp, pkg/controllers/nodeclaim/lifecycle/controller.go:297-300; the interruption
 * controller deletes it on the notice: aws/karpenter-provider-aws@v1.14.1 pkg/controllers/interruption/utils.go). The
 * first pod goes at once. `nodeGraceSeconds`: the NodeClaim's terminationGracePeriod, by default what a NodePool that
 * may run spot gets (`spotNodeGraceSeconds`).
 */
export function interruptionHoldSeconds(podGraceSeconds: number, nodeGraceSeconds = spotNodeGraceSeconds(podGraceSeconds)): number {
  return Math.max(0, nodeGraceSeconds - podGraceSeconds);
}

/**
 * How long Karpenter holds an offering (instance type, zone, capacity type) unavailable, launching nothing on it:
 * `UnavailableOfferingsTTL = 3 * time.Minute` (aws/karpenter-provider-aws@v1.14.1 pkg/cache/cache.go:31, the version
 * KARPENTER_CHART pins in lib/eks/versions.ts). It marks one so on a launch refused for insufficient capacity
 * (pkg/providers/instance/instance.go:612-641, `IsUnfulfillableCapacity`) and on a spot interruption warning
 * (pkg/controllers/interruption/utils.go:141). The Reconciler's capacity-error lookback and the simulator's EKS model
 * both take it from here.
 */
export const KARPENTER_UNAVAILABLE_OFFERING_SECONDS = 180;

/**
 * The replica-floor trigger a Reconciler adds to each ScaledObject: the newest `ReplicaFloor` datapoint (Maximum per
 * 60 s) within `collectionPeriods` reconciler periods (at least a minute each), target 1 per replica; no datapoint
 * reads as 0 (no floor).
 */
export const REPLICA_FLOOR_TRIGGER = {
  periodSeconds: 60,
  collectionPeriods: 3,
  endTimeOffsetSeconds: 0,
  target: 1,
} as const;

/**
 * The Kubernetes HPA controller's own defaults, which the ScaledObject does not set (EKS does not let a user change
 * them on a managed control plane): a recommendation within 10% of the current replicas changes nothing, and each HPA
 * is evaluated every 15 s. kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go
 * (GetExternalPerPodMetricReplicas: usageRatio = value / (target x replicas), changed only beyond the tolerance);
 * kube-controller-manager --horizontal-pod-autoscaler-tolerance=0.1, --horizontal-pod-autoscaler-sync-period=15s
 * (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/).
 */
export const HPA_CONTROLLER_DEFAULTS = {
  tolerance: 0.1,
  syncPeriodSeconds: 15,
} as const;

/** Defaults of a SageMaker variant's target-tracking policy (Application Auto Scaling). */
export const SAGEMAKER_SCALING_DEFAULTS = {
  /**
   * The predefined metric: in-flight requests per model container, 10 s resolution. The endpoint publishes enhanced
   * metrics every 10 s by default so that their interval cannot slow it (`EndpointMetricsOptions.publishFrequency`).
   */
  predefinedMetric: 'SageMakerVariantConcurrentRequestsPerModelHighResolution',
  /** Short, so that a burst gets capacity fast. */
  scaleOutCooldownSeconds: 60,
  /** Long, so that a lull does not drop warm capacity. */
  scaleInCooldownSeconds: 900,
  /**
   * `VariantInstanceProvisionTimeoutInSeconds` when the endpoint sets none: how long a scale-out short of capacity keeps
   * the endpoint Updating. On insufficient capacity SageMaker "retries with the next instance pool (if configured) or
   * waits until the timeout expires" (300-3600 s; AWS documents no default of its own), then the endpoint is
   * `RollingBack` "to its previous configuration" (DescribeEndpoint EndpointStatus). An endpoint that is not InService
   * takes no write from the Reconciler (lambda/reconciler/targets/sagemaker.ts), and AWS documents that autoscaling
   * waits for an update too. Not settled by AWS: the instance-pools guide also stops the search when "all pools are
   * exhausted", which would end the wait sooner. 300 s, the minimum: a shorter freeze of the routing per refused
   * scale-out. Measured on the simulator, which takes the longer reading (SageMaker, 10 seeds): against 900 s, the
   * library +0.06 to +0.6 pt of requests within the SLO in the shortage scenarios (P1 +6.3 pt, noisy); BENCHMARKS.md.
   * A variant with several pools may need longer to find one that has capacity: set `provisionTimeout` then.
   */
  provisionTimeoutSeconds: 300,
} as const;

/**
 * The period at which target tracking reads a customized metric (a variant's per-pool policy): "Target tracking will
 * evaluate metrics aggregated at a one-minute granularity for all predefined metrics and custom metrics" (Application
 * Auto Scaling user guide, target tracking); the high-resolution predefined metric is the exception SageMaker documents.
 */
export const CUSTOMIZED_METRIC_PERIOD_SECONDS = 60;

/** What a variant's default scaling is sized from, per pool: its class's planned range and target concurrency. */
export interface PoolScalingPlan {
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly targetConcurrencyPerReplica: number;
}

/**
 * A SageMaker variant's default scaling from its pools' plans: the largest minimum and maximum (the preferred class's
 * steady fleet or the standby; replicas for planned peak on the slowest pool type), and its target-tracking policies.
 *
 * By default one policy on the predefined high-resolution `ConcurrentRequestsPerModel` at the smallest target of its
 * pools: least-outstanding-requests routing gives every instance of the variant about the same concurrency, so the
 * slowest type sets the safe level, which holds the faster types at a fraction of theirs (BENCHMARKS.md, H9: about
 * twice the L40S instances the steady load needs).
 *
 * `perPool` (a variant with several pools): two policies (`poolTargets`):
 * - the predefined high-resolution one at the priority-1 pool's target: the steady fleet (scale-in releases the
 *   lowest-priority pool first) sized right, scale-out within about 30 s;
 * - a per-pool one (`perPoolConcurrencyQueries`, lib/core/metrics/aws-published.ts): each instance type's
 *   `ConcurrentRequestsPerModel` over its own pool's target, the largest of these ratios, target 1, so a slower type
 *   present in the variant holds every instance to its level; a type with no instances has no datapoints (inferred)
 *   and drops out. AWS's instance-pools guide shows metric math over the per-`InstanceType` series for instance types
 *   "with different compute capacities" (sagemaker/latest/dg/realtime-endpoints-heterogeneous.html, "Use weighted
 *   custom metrics for mixed fleets"; its example is a weighted average); a customized metric is evaluated at
 *   one-minute granularity (Application Auto Scaling guide), so this policy scales out more slowly than the
 *   predefined one.
 * Application Auto Scaling "will scale out the scalable target if any of the target tracking policies are ready for
 * scale out, but will scale in only if all of the target tracking policies ... are ready to scale in", to "the policy
 * that provides the largest capacity" (autoscaling/application/userguide/target-tracking-scaling-policy-overview.html,
 * "Multiple scaling policies"): the per-pool policy bounds both directions whenever a slower pool has instances.
 * Not the default: the lean steady fleet has no spare instances when the priority-1 type's running instances are
 * lost (H9: 91.0% of requests within the SLO at $0.852 per 1M against 98.8% at $1.057 by default; without the loss
 * 99.3% at $0.822 against 99.9% at $1.094; docs/sagemaker-endpoint.md).
 */
export function variantScalingDefaults(pools: readonly PoolScalingPlan[], perPool = false): {
  readonly minInstances: number;
  readonly maxInstances: number;
  /** Target of the predefined high-resolution policy. */
  readonly targetConcurrencyPerInstance: number;
  /** `perPool` with several pools: each pool's own target (priority order) for the per-pool policy. */
  readonly poolTargets?: readonly number[];
} {
  const targets = pools.map((p) => p.targetConcurrencyPerReplica);
  const twoPolicies = perPool && pools.length > 1;
  return {
    minInstances: Math.max(...pools.map((p) => p.minReplicas)),
    maxInstances: Math.max(...pools.map((p) => p.maxReplicas)),
    targetConcurrencyPerInstance: twoPolicies ? targets[0] : Math.min(...targets),
    ...(twoPolicies ? { poolTargets: targets } : {}),
  };
}

/** Defaults of the Reconciler's timing. The period is the policy's (`DEFAULT_POLICY_CONFIG.periodSeconds`). */
export const RECONCILER_TIMING_DEFAULTS = {
  /** CloudWatch publishes a period late: the newest period read ends at least this long ago. */
  metricDelaySeconds: 120,
  /**
   * SageMaker: how long runs may find the endpoint InService (writable) on another endpoint configuration than the
   * routing facts describe before a run fails (`target-mismatch`, which pages) instead of deferring. A deploy leaves it
   * so only between the new configuration's creation and the start of CloudFormation's UpdateEndpoint (the function and
   * the endpoint are updated in no fixed order), or for the old function's last runs after the update: seconds, a few
   * minutes at most; while the update runs the endpoint is Updating, which is not counted (`configurationMismatchClock`).
   * Longer than that, the endpoint was updated outside the stack or its update failed while it stayed InService, and
   * the weights would stay frozen with the heartbeat beating. 15 minutes (15 periods at the default 60 s period)
   * leaves a slow deploy room and pages within the failure alarm's 2-of-3 periods after it.
   */
  configurationMismatchSeconds: 900,
} as const;
