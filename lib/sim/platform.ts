import {
  CUSTOMIZED_METRIC_PERIOD_SECONDS, defaultDeregistrationDelaySeconds, EKS_NODE_DEFAULTS, EKS_SCALING_DEFAULTS, HPA_CONTROLLER_DEFAULTS,
  KARPENTER_UNAVAILABLE_OFFERING_SECONDS, RECONCILER_TIMING_DEFAULTS, REPLICA_FLOOR_TRIGGER, SAGEMAKER_SCALING_DEFAULTS,
} from '../core/platform/control-loop';
import { DEFAULT_POLICY_CONFIG } from '../core/policy/defaults';
import { type RunSeries } from './run-series';

/** The serving platform a scenario runs on: what its construct deploys by default. */
export type PlatformKind = 'eks' | 'sagemaker';

export const PLATFORMS: readonly PlatformKind[] = ['eks', 'sagemaker'];

/**
 * EKS: the HPA behind a class's KEDA ScaledObject. Every `syncSeconds` it reads the class's ALB RequestCount (Sum of
 * the newest period older than `endTimeOffsetSeconds` that has a datapoint, within `collectionSeconds`; a minute in
 * which no request reached the class has none; no datapoint in the window reads as 0) and the
 * Reconciler's replica floor, takes the higher per-pod recommendation (each unchanged within `tolerance` of the
 * current replicas), keeps the highest recommendation of the scale-down window, and changes replicas at most by the
 * rate policies.
 */
export interface HpaModel {
  readonly kind: 'hpa';
  readonly syncSeconds: number;
  readonly tolerance: number;
  readonly metricPeriodSeconds: number;
  readonly collectionSeconds: number;
  readonly endTimeOffsetSeconds: number;
  readonly scaleUpPods: number;
  readonly scaleUpPeriodSeconds: number;
  readonly scaleDownStabilizationSeconds: number;
  readonly scaleDownPods: number;
  readonly scaleDownPeriodSeconds: number;
  readonly floor: { readonly collectionSeconds: number; readonly endTimeOffsetSeconds: number; readonly target: number };
}

/**
 * SageMaker: Application Auto Scaling target tracking on ConcurrentRequestsPerModel (in-flight requests per instance in
 * service, as a mean over each datapoint's period: the statistic the predefined metric uses is not published), with its
 * cooldowns; it cannot change an endpoint that is Updating. Each policy's alarms read one datapoint per period of its
 * metric (the predefined high-resolution one every `highResolutionPeriodSeconds`, a customized one every
 * `customPeriodSeconds`), at the variant's own phase (`PlatformModel.endpointUpdate`). The high alarm is in ALARM after
 * `scaleOutDatapoints` consecutive datapoints above the target, the low alarm after every datapoint of
 * `scaleInAlarmSeconds` below `scaleInThresholdShare` of it; an alarm invokes its scaling when it enters ALARM and again
 * every `actionRepeatSeconds` while it stays there.
 */
export interface TargetTrackingModel {
  readonly kind: 'target-tracking';
  /**
   * The construct's ScaleOutCooldown, kept to pin the model to what it renders: within it only a larger scale-out
   * proceeds, which is every scale-out the model makes (`TargetTracking.evaluate`), so it changes no evaluation.
   */
  readonly scaleOutCooldownSeconds: number;
  readonly scaleInCooldownSeconds: number;
  readonly scaleInThresholdShare: number;
  readonly scaleInAlarmSeconds: number;
  /** The predefined high-resolution metric's period: one datapoint, and one evaluation of its alarms, every so often. */
  readonly highResolutionPeriodSeconds: number;
  /** From the end of a high-resolution period until its datapoint can be read by the alarm (assumed). */
  readonly highResolutionPublicationSeconds: number;
  /** Consecutive datapoints above the target before a high alarm is in ALARM. */
  readonly scaleOutDatapoints: number;
  /** A customized metric's period (the per-pool policy's), evaluated at one-minute granularity. */
  readonly customPeriodSeconds: number;
  /** How often an alarm that stays in ALARM invokes its scaling again. */
  readonly actionRepeatSeconds: number;
}

/**
 * The alarms Application Auto Scaling creates for a target tracking policy (not configurable; AWS documents that they
 * exist, not their settings). For the high-resolution ConcurrentRequestsPerModel metric, AWS's faster-autoscaling
 * example (aws/amazon-sagemaker-examples, inference/generativeai/huggingfacetgi/meta-llama/llama3-8b/faster-autoscaling/
 * realtime-endpoints/FasterAutoscaling-SME-Llama3-8B-AppAutoScaling.ipynb) states: scale-out after "ConcurrentRequestsPerModel
 * >5 for 3 datapoints within 30 seconds", scale-in after "ConcurrentRequestsPerModel < 4.5 for 90 datapoints within
 * 15 minutes" (target 5): 10 s datapoints, as the SageMaker guide says these metrics "emit data every 10 seconds"
 * (endpoint-auto-scaling-add-code-define.html, high-resolution metrics); it scales out "much more quickly" but "scales
 * in at the same speed as it would for standard metrics". The Application Auto Scaling guide: it removes capacity "only
 * when utilization passes a threshold that is far enough below the target value (usually more than 10% lower)". Not
 * confirmed: whether an idle variant publishes zeros (the model counts an idle period as low, as the SageMaker guide
 * says traffic of zero scales in to the minimum) and how much one scale-in removes (the model removes what the metric
 * implies). Research: docs/simulator.md.
 */
export const TARGET_TRACKING_ALARMS = {
  scaleInThresholdShare: 0.9,
  scaleInAlarmSeconds: 900,
  highResolutionPeriodSeconds: 10,
  /**
   * Not published: the example says the metrics reach CloudWatch "at sub-minute intervals (10s intervals to CW + any
   * additional jitter + delays)", with no figure. One period assumed, on the slow side: a datapoint read the instant
   * its period ends would scale out sooner than AWS can.
   */
  highResolutionPublicationSeconds: 10,
  scaleOutDatapoints: 3,
  /**
   * A customized metric (the per-pool policy of a variant with instance pools), read at one-minute granularity
   * (`CUSTOMIZED_METRIC_PERIOD_SECONDS`); its high alarm takes `scaleOutDatapoints` too: the condition AWS's consoles
   * show for one-minute metrics ("for 3 datapoints within 3 minutes"), which AWS does not document (an assumption,
   * docs/simulator.md); its low alarm 15 one-minute datapoints.
   */
  customPeriodSeconds: CUSTOMIZED_METRIC_PERIOD_SECONDS,
  /**
   * "For Auto Scaling actions, the alarm continues to invoke the action once per minute that the alarm remains in the
   * new state" (CloudWatch user guide, AlarmThatSendsEmail.html).
   */
  actionRepeatSeconds: 60,
} as const;

export interface PlatformModel {
  readonly kind: PlatformKind;
  /**
   * The Reconciler's period and how far back its newest period ends (its `metricDelay`). `phaseSeconds`: the second of
   * the minute at which its scheduled runs fire (an EventBridge `rate(1 minute)` schedule starts at a second nobody
   * chooses); undefined: drawn from the run's seed for the whole run, the same for every policy on a seed.
   */
  readonly reconciler: { readonly periodSeconds: number; readonly metricDelaySeconds: number; readonly phaseSeconds?: number };
  /** Whether the preferred class reports capacity errors by default (EKS: the Karpenter log metric filter per NodePool). */
  readonly capacityErrorSignal: boolean;
  /** Whether the newest ready and desired counts are read live from the target (SageMaker DescribeEndpoint). */
  readonly liveReplicaCounts: boolean;
  /**
   * EKS: ready counts are the ALB's HealthyHostCount, which is not published for a target group with no healthy target
   * (modelled on the one report found, cds-snc/forms-terraform#918, for every minute that ends with none ready), and
   * the Reconciler reads each target group's healthy targets live (DescribeTargetHealth, `TargetState.healthyTargets`).
   */
  readonly targetGroupHealth: boolean;
  /**
   * Whether a class's served tokens are its engine's own counter where the engine keeps one (`SimClass.countsGeneratedTokens`).
   * EKS: the observability add-on scrapes every class's model server by default and the InferenceService hands the
   * Reconciler the GeneratedTokens metric of each class whose engine counts tokens (`servingDescription`). SageMaker: no
   * scrape, so demand is Invocations x the declared mean tokens.
   */
  readonly engineTokenCounters: boolean;
  readonly autoscaler: HpaModel | TargetTrackingModel;
  /**
   * How replica floors reach the platform. `metric`: the Reconciler publishes them, the HPA reads them like load.
   * `capacity-write`: the Reconciler raises one variant's desired count per run, only on runs whose weights did not
   * change, never while the endpoint is Updating.
   */
  readonly floors: 'metric' | 'capacity-write';
  /**
   * After a launch short of capacity (a capacity error), how long until the replicas it could not get are launched
   * again. EKS: Karpenter holds the offering unavailable for `KARPENTER_UNAVAILABLE_OFFERING_SECONDS` after the
   * insufficient-capacity error (lib/core/platform/control-loop.ts), so its pods wait that long. SageMaker: how often a
   * scale-out waiting for capacity launches what capacity allows, which AWS does not publish: 180 s, assumed
   * (docs/simulator.md).
   */
  readonly capacityRetrySeconds: number;
  /**
   * SageMaker only: how long an update leaves the endpoint Updating (no further write accepted). A weight update for
   * `weightsSeconds` (30 s by default, a platform parameter), at whose end the written weights take effect (traffic
   * keeps the current ones until then, while DescribeEndpoint shows the written ones as DesiredWeight), a scale-in
   * for `scaleInSeconds` (assumed values, not published by AWS; docs/simulator.md); a
   * scale-out until its instances are in service or, short of capacity, until the variant's provisioning timeout
   * (`provisionTimeoutSeconds`, the construct's default), when it rolls back (documented: "waits until the timeout
   * expires", then `RollingBack` "to its previous configuration"; `SAGEMAKER_SCALING_DEFAULTS.provisionTimeoutSeconds`).
   * Who writes first once an update is over:
   * - Target tracking asks when its alarm is evaluated. A high-resolution alarm (period 10 s) "is evaluated every 10
   *   seconds" (CloudWatch user guide, AlarmThatSendsEmail, as quoted in repost.aws/questions/QUGIWUPlEYQWaCBm9x2WfnWA);
   *   CloudWatch repeats an Auto Scaling action "once per minute that the alarm remains in the new state" (same guide:
   *   "The exception is for alarms with Auto Scaling actions"), and SageMaker blocks auto scaling "while the update
   *   operation is in progress" (endpoint-scaling-update.html). The model's assumptions, which AWS does not publish:
   *   each variant's alarms are evaluated at a phase of their own, drawn from the run's seed for the whole run (the
   *   same for every policy on a seed), or `alarmPhaseSeconds` for every variant when given: the second of the minute
   *   of its one-minute evaluations (the per-pool policy's), its high-resolution alarms at that second of every 10 s;
   *   an alarm's repeats follow its entry into ALARM, which may be any 10 s of a minute; and a scaling the endpoint
   *   refuses is asked again at the alarm's next repeat, a minute later (that a blocked activity fails rather than
   *   waits is inferred, not documented).
   * - `rollbackSeconds`: the mean time `RollingBack` keeps the endpoint from writes after a provisioning timeout (not
   *   published; 10 s assumed). Each rollback's is drawn from the seed, uniform on (0, 2 x the mean): with a fixed
   *   value every wait begun at an alarm's evaluation would end at the same second of the minute, a lock of the model's
   *   own; with 0 the wait ends exactly at that alarm's evaluation five minutes later (the timeout is a whole number of
   *   minutes), a tie the heap's order would decide. A rollback of r seconds leaves the endpoint writable for 60 - r
   *   seconds before that alarm asks again, in which the Reconciler's `WritableAgain` run comes first when r +
   *   `writableRunSeconds` < 60 (another variant's alarm may still come between).
   * - `writableRunSeconds`: from the end of an update to the write of the Reconciler run its `WritableAgain` rule
   *   triggers (the "SageMaker Endpoint State Change" event to IN_SERVICE, delivered "in near real time"; a warm
   *   function's reads before its write): 5 s, assumed. Such a run is made only by a policy that `runsWhenWritable`.
   */
  readonly endpointUpdate?: {
    readonly weightsSeconds: number;
    readonly scaleInSeconds: number;
    readonly provisionTimeoutSeconds: number;
    readonly rollbackSeconds: number;
    readonly writableRunSeconds: number;
    /** Every variant's alarm phase in the minute; undefined: each variant's drawn from the run's seed. */
    readonly alarmPhaseSeconds?: number;
  };
  /** Seconds from a Reconciler run until its published floor datapoint can be read (EMF ingestion). Assumed. */
  readonly floorPublicationSeconds: number;
  /**
   * EKS: a node outlives its last pod by the NodePool's `consolidateAfter` (`WhenEmpty`), billed, and a pod launched
   * meanwhile takes it: no capacity check, no node boot, its image cached (a node whose pod was removed while pending
   * is still booting: `IdleNode`, lib/sim/class-state.ts). `warmStartShare`: the share of a replica's
   * provisioning time such a start takes (weight load and warm-up; the node's boot and the image pull are the rest):
   * 0.4, assumed (the model's provisioning times are one figure per class, not broken down).
   */
  readonly nodes?: { readonly consolidateAfterSeconds: number; readonly warmStartShare: number };
  /**
   * EKS: an interruption notice drains the pods of the nodes it names. The construct gives Karpenter its interruption
   * queue (`settings.interruptionQueue`, lib/eks/karpenter.ts); on a spot interruption warning Karpenter deletes the
   * NodeClaim at once and launches a replacement ("taints, drains, and terminates the node(s) ahead of the interruption
   * event", "will start a new node as soon as it sees the Spot interruption warning": aws/karpenter-provider-aws@v1.14.1
   * website/content/en/docs/concepts/disruption.md). Its pods are evicted through the PodDisruptionBudget (one at a
   * time: lib/eks/manifests/workload.ts): the first at the notice, the others deleted when the node's grace less their
   * own has passed (`interruptionHoldSeconds`, lib/core/platform/control-loop.ts: 45 s with the defaults). A draining
   * pod takes no new request (a terminating endpoint is never ready, and the load balancer controller deregisters it)
   * and finishes what it serves; what it still serves at the reclaim is lost. Absent on SageMaker: no notice reaches
   * anyone, and its instances serve until lost. `deregistrationDelaySeconds`: the target groups' delay for the
   * service's deadline, as the construct renders it (at least the deadline since stop 60), and the pods' grace is it
   * plus the deadline. `offeringUnavailableSeconds`: how long Karpenter then launches nothing of a pool whose NodePool
   * allows that one offering only (`SimClass.singleOffering`).
   * On the warning Karpenter marks the interrupted node's offering (instance type, zone, spot) unavailable in its
   * unavailable-offerings cache (aws/karpenter-provider-aws@v1.14.1 pkg/controllers/interruption/utils.go:114,
   * 133-143), for `UnavailableOfferingsTTL`, 3 minutes (`KARPENTER_UNAVAILABLE_OFFERING_SECONDS`,
   * lib/core/platform/control-loop.ts; pkg/cache/unavailableofferings.go@v1.14.1:145). An unavailable offering is
   * marked not `Available` (pkg/providers/instancetype/offering/base_resolver.go@v1.14.1:106, 135) and the scheduler
   * fits pods to available offerings only (kubernetes-sigs/karpenter@6e7eab7a0f48, the commit v1.14.1's go.mod pins:
   * pkg/cloudprovider/types.go:214, pkg/controllers/provisioning/scheduling/nodeclaim.go:624-637), so a NodePool whose
   * requirements allow that offering alone creates no NodeClaim meanwhile: its pods stay pending, logged "could not
   * schedule pod" (scheduling/scheduler.go:302), not the "failed launching nodeclaim" insufficient-capacity line the
   * capacity-error metric filter counts (`karpenterCapacityErrorPattern`). The model knows one offering per pool (its
   * availability is one count, with no zones or capacity types), so it models that case: a pool launches no new node
   * for the TTL from each notice, and no capacity error is counted for it. A NodePool that allows other zones or
   * instance types would launch on those at once (not modelled).
   */
  readonly interruptionDrain?: {
    readonly deregistrationDelaySeconds: (deadlineSeconds: number) => number;
    readonly offeringUnavailableSeconds: number;
  };
  /**
   * SageMaker: an instance a scale-in removes gets SIGTERM as it leaves service and SIGKILL 30 s later (fact
   * sagemaker.behaviour.container-stop, lib/core/runtime/shutdown.ts); its server serves what it holds for as long as
   * its drain setting allows (`servesAfterSigtermSeconds`: vLLM's rendered --shutdown-timeout, 25 s with a 30 s
   * deadline) and what it still holds then is lost. Whether SageMaker stops routing to it before SIGTERM is not
   * documented: routing stops at once here (the kinder reading). Absent on EKS: a pod's grace is its preStop sleep plus
   * the deadline, longer than any admitted request may take.
   */
  readonly stopsRemovedInstances?: boolean;
}

/**
 * Whether the Reconciler reads a class's served demand from its engine's token counter on this platform
 * (`SimClass.countsGeneratedTokens`).
 */
export function readsEngineTokens(platform: PlatformModel, c: { readonly countsGeneratedTokens?: boolean }): boolean {
  return platform.engineTokenCounters && c.countsGeneratedTokens === true;
}

/**
 * One class's demand in one minute as the deployed Reconciler reads it, tokens: `served` from the engine's counter
 * where it reads one (`readsEngineTokens`), else from the platform's request count x `tokensPerRequest` (ALB
 * RequestCount counts every request a target answered, SageMaker Invocations every request sent to the model, rejections
 * included in both: `servedIncludesRejected`); `rejected` the server's rejections x `tokensPerRequest`. The simulated
 * Reconciler answers its queries from it and the baselines sum it (`demandOf`), so both read demand alike.
 */
export interface DemandReading {
  readonly served: number;
  readonly rejected: number;
  readonly servedIncludesRejected: boolean;
}

/**
 * One class's minute as the platform's metrics count it: requests that reached a replica (the load balancer's count),
 * those a server rejected or dropped, those lost in service with their replica, and the output tokens the engines'
 * counters published (`RunSeries.publishedTokens`: the CloudWatch agent drops each replica's first sample, and a
 * replica that goes away takes its unscraped tokens with it).
 */
export interface MeasuredMinute {
  readonly targetedRequests: number;
  readonly serverRejected: number;
  /** @default 0 */
  readonly lostWithReplica?: number;
  /** Requests whose connection the load balancer closed while they were queued (`RunSeries.closedByBalancer`). @default 0 */
  readonly closedByBalancer?: number;
  readonly servedTokens: number;
}

/** A closed minute of a run's series as the platform measured it (the Reconciler's queries and the baselines alike). */
export function measuredMinute(s: RunSeries, cell: number): MeasuredMinute {
  return {
    targetedRequests: s.routedRequests[cell] - s.unroutable[cell],
    serverRejected: s.rejected[cell] - s.unroutable[cell],
    lostWithReplica: s.lostWithReplica[cell],
    closedByBalancer: s.closedByBalancer[cell],
    servedTokens: s.publishedTokens[cell],
  };
}

export function demandReading(
  platform: PlatformModel,
  c: { readonly countsGeneratedTokens?: boolean },
  minute: MeasuredMinute,
  tokensPerRequest: number,
): DemandReading {
  // EKS: a request in service on a pod that is lost is answered by the ALB itself (a 502 or 504 it generates, counted
  // in HTTPCode_ELB_5XX_Count, not a target's: repost.aws/knowledge-center/elb-alb-troubleshoot-502-errors; review
  // R29); that RequestCount still counts it (a target was chosen) is assumed. SageMaker: what an instance lost
  // mid-request counts as is not documented; the model keeps it a server error. A queued request whose connection the
  // ALB closed at its idle timeout is the ALB's answer too (a 504), not the server's (review R259).
  const lost = platform.kind === 'eks' ? (minute.lostWithReplica ?? 0) + (minute.closedByBalancer ?? 0) : 0;
  const rejected = (minute.serverRejected - lost) * tokensPerRequest;
  if (readsEngineTokens(platform, c)) return { served: minute.servedTokens, rejected, servedIncludesRejected: false };
  return { served: minute.targetedRequests * tokensPerRequest, rejected, servedIncludesRejected: true };
}

/** The demand of one reading: served plus rejected, each counted once (`demandWindow`, lib/core/reconciler/faults.ts). */
export function demandOf(r: DemandReading): number {
  return r.served + (r.servedIncludesRejected ? 0 : r.rejected);
}

/**
 * The timing assumptions a run may change (`--platform-param`), to see what a result owes to them: AWS publishes none.
 * Each a whole number of seconds in its range: a phase is within the minute; an event run of a minute or more would
 * come no sooner than the next tick. `reconcilerPhaseSeconds` applies on both platforms, the others to SageMaker's
 * endpoint updates (`SAGEMAKER_ONLY_OVERRIDES`).
 */
export type PlatformOverrides = Partial<Record<PlatformOverrideKey, number>>;
const PLATFORM_OVERRIDE_RANGES = {
  alarmPhaseSeconds: [0, 59],
  // A mean of 25 s draws rollbacks up to 50 s, which with a 5 s event run still leave the Reconciler its run.
  rollbackSeconds: [0, 25],
  writableRunSeconds: [0, 60],
  // Up to two Reconciler periods: a run may find the endpoint still Updating from the previous run's write. AWS
  // publishes no figure, and only policies that write weights pay it (review R233: at 120 s instead of 30 the library
  // lost 3.9 pt summed over the 20 SageMaker scenarios, docs/simulator.md).
  weightsSeconds: [0, 120],
  // A scale-in (target tracking's, or a capacity write that lowers a count) holds the endpoint Updating for this long:
  // AWS publishes no figure (review R207: at 240 s instead of 60 the library lost 0.1-0.6 pt on six seeds of S5, H3,
  // H7 and S1, and its lead over static weights on S5 and H3), so a run can see what the results owe to it.
  scaleInSeconds: [0, 600],
  reconcilerPhaseSeconds: [0, 59],
} as const;
type PlatformOverrideKey = keyof typeof PLATFORM_OVERRIDE_RANGES;
export const PLATFORM_OVERRIDE_KEYS = Object.keys(PLATFORM_OVERRIDE_RANGES) as PlatformOverrideKey[];
/** The overrides an EKS run has nothing to apply to. */
export const SAGEMAKER_ONLY_OVERRIDES: readonly string[] = PLATFORM_OVERRIDE_KEYS.filter((k) => k !== 'reconcilerPhaseSeconds');

/** What is wrong with these overrides (empty: nothing), each naming the key, the value and what is allowed. */
export function platformOverrideProblems(overrides: Readonly<Record<string, number>>): string[] {
  return Object.entries(overrides).flatMap(([key, value]) => {
    if (!(key in PLATFORM_OVERRIDE_RANGES)) {
      return [`platform parameter '${key}' is not known; allowed: ${PLATFORM_OVERRIDE_KEYS.join(', ')}`];
    }
    const [min, max] = PLATFORM_OVERRIDE_RANGES[key as PlatformOverrideKey];
    return Number.isInteger(value) && value >= min && value <= max
      ? [] : [`platform parameter ${key} is ${value}; allowed: a whole number of seconds from ${min} to ${max}`];
  });
}

/**
 * How long one rollback keeps the endpoint Updating: uniform on (0, 2 x `mean`) in steps of 1/1024 s (times stay exact
 * sums), 0 when the mean is 0.
 */
export function rollbackDuration(rng: { next(): number }, mean: number): number {
  if (mean <= 0) return 0;
  const steps = 2 * mean * 1024;
  return (1 + Math.floor(rng.next() * (steps - 1))) / 1024;
}

/** SageMaker: how often a scale-out waiting for capacity launches what capacity allows (`capacityRetrySeconds`); assumed. */
const SAGEMAKER_CAPACITY_RETRY_SECONDS = 180;

/** The platform a scenario runs on (EKS unless it says otherwise), with the timings it overrides. */
export function scenarioPlatform(scenario: { readonly platform?: PlatformKind; readonly platformOverrides?: PlatformOverrides }): PlatformModel {
  return platformModel(scenario.platform ?? 'eks', scenario.platformOverrides);
}

/** A scenario's CloudWatch publication delay of a 60 s datapoint (`ScenarioInstance.metricDelaySeconds`), seconds. */
export function publicationDelaySeconds(scenario: { readonly metricDelaySeconds?: number }): number {
  return scenario.metricDelaySeconds ?? 60;
}

/**
 * How long before a run the newest period the Reconciler reads ends: its own `metricDelay` (the platform model's) or
 * CloudWatch's publication delay, whichever is later.
 */
export function reconcilerReadDelaySeconds(scenario: Parameters<typeof scenarioPlatform>[0] & { readonly metricDelaySeconds?: number }): number {
  return Math.max(publicationDelaySeconds(scenario), scenarioPlatform(scenario).reconciler.metricDelaySeconds);
}

/**
 * What the named construct deploys by default, from the same constants the constructs render; `overrides` change
 * assumed timings (EKS has no endpoint updates, and ignores SageMaker's).
 */
export function platformModel(kind: PlatformKind, allOverrides: PlatformOverrides = {}): PlatformModel {
  const problems = platformOverrideProblems(allOverrides);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const { reconcilerPhaseSeconds, ...overrides } = allOverrides;
  const reconciler = {
    periodSeconds: DEFAULT_POLICY_CONFIG.periodSeconds,
    metricDelaySeconds: RECONCILER_TIMING_DEFAULTS.metricDelaySeconds,
    ...(reconcilerPhaseSeconds !== undefined ? { phaseSeconds: reconcilerPhaseSeconds } : {}),
  };
  if (kind === 'eks') {
    const k = EKS_SCALING_DEFAULTS;
    return {
      kind,
      reconciler,
      capacityErrorSignal: true,
      liveReplicaCounts: false,
      targetGroupHealth: true,
      engineTokenCounters: true,
      autoscaler: {
        kind: 'hpa',
        syncSeconds: HPA_CONTROLLER_DEFAULTS.syncPeriodSeconds,
        tolerance: HPA_CONTROLLER_DEFAULTS.tolerance,
        metricPeriodSeconds: k.metricPeriodSeconds,
        collectionSeconds: k.metricCollectionPeriods * k.metricPeriodSeconds,
        endTimeOffsetSeconds: k.metricEndTimeOffsetPeriods * k.metricPeriodSeconds,
        scaleUpPods: k.maxScaleUpPods,
        scaleUpPeriodSeconds: k.scaleUpPeriodSeconds,
        scaleDownStabilizationSeconds: k.scaleDownStabilizationSeconds,
        scaleDownPods: k.maxScaleDownPods,
        scaleDownPeriodSeconds: k.scaleDownPeriodSeconds,
        floor: {
          collectionSeconds: REPLICA_FLOOR_TRIGGER.collectionPeriods * Math.max(60, reconciler.periodSeconds),
          endTimeOffsetSeconds: REPLICA_FLOOR_TRIGGER.endTimeOffsetSeconds,
          target: REPLICA_FLOOR_TRIGGER.target,
        },
      },
      floors: 'metric',
      capacityRetrySeconds: KARPENTER_UNAVAILABLE_OFFERING_SECONDS,
      floorPublicationSeconds: 60,
      nodes: { consolidateAfterSeconds: EKS_NODE_DEFAULTS.consolidateAfterSeconds, warmStartShare: 0.4 },
      interruptionDrain: {
        deregistrationDelaySeconds: defaultDeregistrationDelaySeconds,
        offeringUnavailableSeconds: KARPENTER_UNAVAILABLE_OFFERING_SECONDS,
      },
    };
  }
  return {
    kind,
    reconciler,
    capacityErrorSignal: false,
    liveReplicaCounts: true,
    targetGroupHealth: false,
    engineTokenCounters: false,
    autoscaler: {
      kind: 'target-tracking',
      scaleOutCooldownSeconds: SAGEMAKER_SCALING_DEFAULTS.scaleOutCooldownSeconds,
      scaleInCooldownSeconds: SAGEMAKER_SCALING_DEFAULTS.scaleInCooldownSeconds,
      ...TARGET_TRACKING_ALARMS,
    },
    floors: 'capacity-write',
    capacityRetrySeconds: SAGEMAKER_CAPACITY_RETRY_SECONDS,
    stopsRemovedInstances: true,
    endpointUpdate: {
      weightsSeconds: 30,
      scaleInSeconds: 60,
      provisionTimeoutSeconds: SAGEMAKER_SCALING_DEFAULTS.provisionTimeoutSeconds,
      rollbackSeconds: 10,
      writableRunSeconds: 5,
      ...overrides,
    },
    floorPublicationSeconds: 60,
  };
}
