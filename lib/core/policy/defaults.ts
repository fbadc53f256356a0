import { KARPENTER_UNAVAILABLE_OFFERING_SECONDS } from '../platform/control-loop';
import { DEFAULT_HEADROOM } from '../service/contract';
import { byPreference } from './plan';
import { type PolicyClass, type PolicyConfig } from './types';

/**
 * Defaults of the routing policy, each chosen from the behavior of the systems around it.
 */
export const DEFAULT_POLICY_CONFIG: PolicyConfig = {
  /**
   * 60 s: CloudWatch's standard-resolution period. SageMaker, ALB and Container Insights metrics all arrive at
   * 1-minute granularity, so a faster tick would only re-read the same datapoint.
   */
  periodSeconds: 60,
  /**
   * The contract's default, 20% (`DEFAULT_HEADROOM`, lib/core/service/contract.ts, says why). The Reconciler takes the
   * serving's headroom (`ServingDescription.headroom`), so this applies only where a serving gives none.
   */
  headroom: DEFAULT_HEADROOM,
  /**
   * 5 periods: at least one scale-out's provisioning time (4-6 minutes for a GPU replica), so the plan neither chases a
   * noisy minute nor forgets a burst before the capacity it called for is ready.
   */
  demandWindowPeriods: 5,
  /**
   * 0.9: the plan follows a rise within a period or two (the high quantile of 5 points sits near their maximum) and
   * lets one quiet minute pass; a median would plan for the typical minute and under-provision every burst.
   */
  demandQuantile: 0.9,
  /**
   * 2%: every compatible ready class keeps a trickle of real traffic so its path (image, model, load balancer
   * target) is proven warm before it is needed, at a cost bounded by 2% of requests per class.
   */
  warmFloorShare: 0.02,
  /**
   * 100: weights read as percentages. ALB forward actions accept 0..999 per target group; SageMaker accepts any
   * non-negative variant weight. 100 gives 1% resolution, finer than the warm floor.
   */
  weightTotal: 100,
  /**
   * 180 s: Karpenter holds an offering unavailable for 3 minutes after a launch refused for insufficient capacity
   * (`KARPENTER_UNAVAILABLE_OFFERING_SECONDS`, lib/core/platform/control-loop.ts), so a single capacity-error datapoint
   * means "short" for the next three periods.
   */
  capacityErrorLookbackSeconds: KARPENTER_UNAVAILABLE_OFFERING_SECONDS,
  /**
   * 300 s: the shortest SageMaker instance provisioning timeout (VariantInstanceProvisionTimeoutInSeconds minimum).
   * Desired above ready in every period of the last 5 minutes is a shortage, not a scale-out in progress. A class that
   * declares a longer measured replica-ready time gets a longer one (`defaultProvisioningGraceSeconds`).
   */
  provisioningGraceSeconds: 300,
  latencySloP95Ms: undefined,
  /**
   * 3 periods: the common CloudWatch alarm shape (3 of 3 datapoints); one slow minute is noise, three are a trend.
   */
  latencyBreachPeriods: 3,
  /**
   * 600 s: more than three of Karpenter's 3-minute capacity-error retry cycles pass without an error. The fallback
   * replicas that absorbed the shortage are still up if the preferred class relapses during the return: on EKS each
   * class's HPA removes none until its recommendation has been lower for the scale-down stabilization window the
   * construct renders (600 s, `EKS_SCALING_DEFAULTS.scaleDownStabilizationSeconds`; unset, it would be 300 s: Kubernetes
   * API autoscaling/v2, HorizontalPodAutoscalerBehavior.scaleDown), as long as the return's 10-minute ramp
   * (`rampStepShare`). Also bounds mode changes to at most 2 x 60 / 10 = 12 per hour.
   */
  stabilizationWindowSeconds: 600,
  /**
   * 7200 s: a capacity shortage that comes back within two hours after the last return to cost mode is the same event
   * (flapping availability, sparse capacity errors); each re-entry of it doubles the return hold, and two hours of cost
   * mode end the event and reset the hold. A class whose newest capacity loss is two hours old, and which never got
   * back what it was refused, is no longer held short: its need fell away. An accelerator shortage outlasts an hour
   * (the suite's last 30-90 minutes, its flapping two hours): with an hour's memory a refusal 84 minutes after a return
   * was a fresh event, entered at once with the hold reset (traced on H4 EKS seed 8). Measured on the simulator against
   * 3600 s (library only, seeds 1-10 and 11-30, both platforms): mode changes per capacity event lower or equal in every
   * scenario (H4 EKS 2.2 -> 1.9 on seeds 1-10), SLO within 0.05 pt and cost per SLO token within 0.5%
   * (docs/benchmarks-history.md, stop 65). The run reads twice the history (124 periods at the defaults).
   */
  reentryMemorySeconds: 7200,
  /**
   * 2400 s: four stabilization windows. With the hold doubling per re-entry (10, 20, 40 minutes), a source that
   * flaps for an hour costs at most four mode changes, and a class that really recovered is back in cost mode within
   * 40 minutes.
   */
  maxReturnHoldSeconds: 2400,
  /**
   * 10% per tick: a full swing back to the preferred class takes 10 minutes, about the time a cold replica takes to
   * fill its KV cache and batch, and no class sees more than a 10-point jump in one minute (no return storm).
   */
  rampStepShare: 0.1,
  /**
   * 3%: in steady cost mode, demand noise moves the plan by a point or two every minute; rewriting weights for that
   * costs an API write per minute and churns connections. Safety changes (a class losing its ready replicas) ignore
   * this dead band.
   */
  minWeightChangeShare: 0.03,
  /**
   * True: both serving constructs apply them (SageMaker: desired instance counts; EKS: a ScaledObject trigger on the
   * published floor), and the simulator models that. A custom serving without `enableReplicaFloors` turns it off.
   */
  replicaFloorsApplied: true,
};

/** A routed class as the default provisioning grace reads it (`defaultProvisioningGraceSeconds`). */
export interface GraceClass extends Pick<PolicyClass, 'name' | 'preferenceRank' | 'placementAllowed'> {
  /** Its measured p95 replica-ready time, seconds (`PerformanceEnvelope.replicaReadyTimeP95Seconds`). */
  readonly replicaReadyTimeP95Seconds?: number;
}

/**
 * The class the provisioning grace is sized on: the preferred class as `decide()` picks it (the most preferred one the
 * placement allows). Its desired above ready for the whole grace window is the `replicas-not-ready` evidence that
 * enters capacity mode, and a capacity loss a return to cost mode waits out (`shortageEvidence`, `flapStability`), so a
 * routine scale-out of it must end within the window. Fallbacks are read with the same window only to judge whether
 * they can grow.
 */
export function graceWatchedClass<C extends GraceClass>(classes: readonly C[]): C | undefined {
  return classes.filter((c) => c.placementAllowed).sort(byPreference)[0];
}

/**
 * How a route's replica-count window reaches the policy (`observe`, lib/core/reconciler/observe.ts), which decides how
 * long a routine scale-out shows desired above ready in it:
 * - `published`: every period is a published datapoint, the newest ending a metric delay ago (ALB: HealthyHostCount's
 *   Minimum and Container Insights' desired count). A scale-out of R seconds spans up to ceil(R / P) + 1 periods. R runs
 *   until the replica takes traffic: on EKS after the target group's health check passes (2 checks 10 s apart,
 *   lib/eks/routing.ts), which a declared ready time must include.
 * - `live-newest`: the newest period is the count the run reads from the target now, the older ones the reconciler's own
 *   samples ending a metric delay ago (SageMaker DescribeEndpoint). The samples and the delay are time a scale-out has
 *   before the window is all behind.
 */
export type ReplicaWindow = 'published' | 'live-newest';

/**
 * The fewest whole periods of published datapoints a scale-out ending within `readySeconds` cannot breach all of: it
 * touches up to ceil(R / P) + 1 periods (any part of it in a period shows there), so one more. The published form of the
 * provisioning grace and the replica-shortage alarm's default duration (`defaultReplicaShortageSeconds`) are both this.
 */
export function periodsOutlastingScaleOut(readySeconds: number, periodSeconds: number): number {
  return Math.ceil(readySeconds / periodSeconds) + 2;
}

/**
 * The provisioning grace the Reconciler construct deploys, and the simulator runs, unless the user sets one: the watched
 * class's (`graceWatchedClass`) declared ready time R plus the reconciler's metric delay, in whole periods, never below
 * the shortest safe grace for the route's window (`shortestSafeGraceSeconds`) nor the 300 s default, which it stays at
 * when the class declares none; in whole periods, as `windowDefaultsForPeriod` rounds the 300 s default.
 * The delay is margin above the safe window, which is shorter or equal wherever the delay is at least a period:
 * - SageMaker (`live-newest`): 2 periods shorter at the defaults. Measured in the simulator's SageMaker model (stop 62,
 *   run r154) the safe grace moved time to fallback by at most 105 s in 2 of 18 scenarios and doubled mode changes per
 *   capacity event where the preferred class flaps (H4: 1.6 to 2.8, above the target of 2): the grace is also how long
 *   desired above ready must last to count as a lost period in the flap memory (`flapStability`), so a shorter one
 *   enters and returns on shorter losses.
 * - EKS (`published`): equal at one-minute periods and the default 120 s delay; at longer delays the margin is kept
 *   until a shorter grace is measured (review R258).
 */
export function defaultProvisioningGraceSeconds(
  classes: readonly GraceClass[], window: ReplicaWindow, metricDelaySeconds: number,
  periodSeconds: number = DEFAULT_POLICY_CONFIG.periodSeconds,
): number {
  return graceSecondsForReadyTime(graceWatchedClass(classes)?.replicaReadyTimeP95Seconds, window, metricDelaySeconds, periodSeconds);
}

/** `defaultProvisioningGraceSeconds` for one class's declared ready time (undefined: none declared). */
function graceSecondsForReadyTime(ready: number | undefined, window: ReplicaWindow, metricDelaySeconds: number, periodSeconds: number): number {
  const least = DEFAULT_POLICY_CONFIG.provisioningGraceSeconds;
  const safe = safeGraceForReadyTime(ready, window, metricDelaySeconds, periodSeconds) ?? 0;
  const withDelay = ready === undefined ? 0 : Math.ceil((ready + metricDelaySeconds) / periodSeconds) * periodSeconds;
  return Math.ceil(Math.max(least, safe, withDelay) / periodSeconds) * periodSeconds;
}

/**
 * The grace each class other than the watched one (`graceWatchedClass`) is judged on when it declares a replica-ready
 * time: the one `defaultProvisioningGraceSeconds` would give it were it watched (`PolicyClass.provisioningGraceSeconds`).
 * The policy reads a fallback's replica counts only to judge whether it can grow (`decide`): judged on the preferred
 * class's grace, a fallback that starts slower (an Inferentia2 class compiling its model, a larger download) shows
 * desired above ready for that whole window in the middle of a routine scale-out, reads as unable to grow, and the
 * replica floor that was growing it is withdrawn. A class that declares no ready time keeps the policy's grace, as
 * before, and one the placement forbids needs none (it is never routed or floored); the user's `provisioningGrace`
 * stays the watched class's.
 */
export function fallbackProvisioningGraces(
  classes: readonly GraceClass[], window: ReplicaWindow, metricDelaySeconds: number, periodSeconds: number,
): Record<string, number> {
  const watched = graceWatchedClass(classes);
  return Object.fromEntries(classes.flatMap((c) => (c === watched || !c.placementAllowed || c.replicaReadyTimeP95Seconds === undefined ? []
    : [[c.name, graceSecondsForReadyTime(c.replicaReadyTimeP95Seconds, window, metricDelaySeconds, periodSeconds)]])));
}

/**
 * The shortest grace, in whole periods, that a scale-out of the watched class ending within its declared ready time R
 * cannot fill, as the route's window reads it; undefined when the class declares none. A grace below it reads routine
 * scale-outs as shortages (the Reconciler construct warns).
 * - `published`: `periodsOutlastingScaleOut`, ceil(R / P) + 2 periods.
 * - `live-newest`: ceil((R - delay) / P) + 2 periods, at least 2. The window is the published samples, the newest
 *   ending a delay back, then the live count; runs other than the scheduled ones (an alarm's, the endpoint turning
 *   InService, a throttled event retried late) can sample anywhere in a period, so the oldest sample may come late in
 *   its period, and the samples only cover (n - 2) periods plus the delay before the live read (review R258's brute
 *   force over periods and delays). A window of the live count alone would read every scale-out as stuck.
 */
export function shortestSafeGraceSeconds(
  classes: readonly GraceClass[], window: ReplicaWindow, metricDelaySeconds: number, periodSeconds: number,
): number | undefined {
  return safeGraceForReadyTime(graceWatchedClass(classes)?.replicaReadyTimeP95Seconds, window, metricDelaySeconds, periodSeconds);
}

function safeGraceForReadyTime(
  ready: number | undefined, window: ReplicaWindow, metricDelaySeconds: number, periodSeconds: number,
): number | undefined {
  if (ready === undefined) return undefined;
  const periods = window === 'published'
    ? periodsOutlastingScaleOut(ready, periodSeconds)
    : Math.max(2, Math.ceil((ready - metricDelaySeconds) / periodSeconds) + 2);
  return periods * periodSeconds;
}

/** Merges overrides onto the defaults; undefined fields keep the default. */
export function resolvePolicyConfig(overrides?: Partial<PolicyConfig>): PolicyConfig {
  const merged: Record<string, unknown> = { ...DEFAULT_POLICY_CONFIG };
  for (const [key, value] of Object.entries(overrides ?? {})) if (value !== undefined) merged[key] = value;
  return merged as unknown as PolicyConfig;
}

/** The fields of PolicyConfig that hold a number: all but `replicaFloorsApplied`, which the serving construct sets. */
export type NumericPolicyField = Exclude<keyof PolicyConfig, 'replicaFloorsApplied'>;

/**
 * Each numeric field of PolicyConfig with the Reconciler option (`RoutingPolicyOptions`) it comes from; its rule is
 * `policy.<option>` of RECONCILER_RULES (lib/core/validation/policy-config.ts checks each field against it). Here, not
 * beside that check: the simulator's `--library-config` takes these fields, and that check, with the Reconciler's rule
 * table, is no part of the benchmark's import closure (lib/sim/source-hash.ts).
 */
export const POLICY_OPTION_OF: Readonly<Record<NumericPolicyField, string>> = {
  periodSeconds: 'period',
  headroom: 'headroom',
  warmFloorShare: 'warmFloorShare',
  weightTotal: 'weightTotal',
  capacityErrorLookbackSeconds: 'capacityErrorLookback',
  provisioningGraceSeconds: 'provisioningGrace',
  stabilizationWindowSeconds: 'stabilizationWindow',
  latencySloP95Ms: 'latencySloP95',
  latencyBreachPeriods: 'latencyBreachPeriods',
  rampStepShare: 'rampStepShare',
  minWeightChangeShare: 'minWeightChangeShare',
  demandWindowPeriods: 'demandWindowPeriods',
  demandQuantile: 'demandQuantile',
  reentryMemorySeconds: 'reentryMemory',
  maxReturnHoldSeconds: 'maxReturnHold',
};

/** Every problem with a set of classes. Empty when valid. */
export function policyClassProblems(classes: readonly PolicyClass[]): string[] {
  const problems: string[] = [];
  if (classes.length === 0) problems.push('classes: none (at least one routed class is required)');
  const seen = new Set<string>();
  for (const c of classes) {
    if (seen.has(c.name)) problems.push(`classes: '${c.name}' appears twice (names must be unique)`);
    seen.add(c.name);
    if (!(c.tokensPerSecondPerReplica > 0)) {
      problems.push(`classes['${c.name}'].tokensPerSecondPerReplica: ${c.tokensPerSecondPerReplica} (must be > 0, from the measured envelope)`);
    }
    if (!(c.usdPerReplicaHour >= 0)) problems.push(`classes['${c.name}'].usdPerReplicaHour: ${c.usdPerReplicaHour} (must be >= 0)`);
    if (c.maxReplicas !== undefined && !(Number.isInteger(c.maxReplicas) && c.maxReplicas >= 1)) {
      problems.push(`classes['${c.name}'].maxReplicas: ${c.maxReplicas} (a whole number, at least 1, or absent for no bound)`);
    }
    if (c.provisioningGraceSeconds !== undefined && !(Number.isFinite(c.provisioningGraceSeconds) && c.provisioningGraceSeconds > 0)) {
      problems.push(`classes['${c.name}'].provisioningGraceSeconds: ${c.provisioningGraceSeconds} (must be > 0 seconds, or absent for the policy's)`);
    }
  }
  if (classes.length > 0 && !classes.some((c) => c.placementAllowed)) {
    problems.push('classes: every class is forbidden by the placement policy (at least one must be allowed)');
  }
  return problems;
}

/**
 * Minimum number of datapoints per window that lets every rule of `config` see its full history, and each fallback's
 * own grace, seconds (`PolicyClass.provisioningGraceSeconds`; a declared ready time of at most 3 hours keeps it far
 * within the history a run may read).
 */
export function policyWindowPeriods(config: PolicyConfig, classGraceSeconds: readonly number[] = []): number {
  const periods = (seconds: number) => Math.ceil(seconds / config.periodSeconds);
  return Math.max(
    ...classGraceSeconds.map(periods),
    periods(config.stabilizationWindowSeconds),
    periods(config.provisioningGraceSeconds),
    periods(config.capacityErrorLookbackSeconds),
    config.latencyBreachPeriods,
    config.demandWindowPeriods,
    // The capacity-loss memory judges each of its periods on the grace window ending there (`lostPeriods`), so its
    // oldest period needs grace - 1 periods of replica counts before it.
    periods(config.reentryMemorySeconds) + periods(config.provisioningGraceSeconds) - 1,
  );
}
