import { type HpaModel, type TargetTrackingModel } from './platform';

/** What an autoscaler may do this evaluation: its bounds and the replicas it runs now (the Deployment's or variant's count). */
export interface ScaleBounds {
  readonly current: number;
  readonly min: number;
  readonly max: number;
}

/**
 * The HPA of one class (kubernetes pkg/controller/podautoscaler, behaviour API): per-pod recommendations of an
 * AverageValue external metric with the controller's tolerance, the highest over the metrics, the scale-down
 * stabilization window, then the Pods rate policies of each direction.
 */
export class HpaAutoscaler {
  private readonly recommendations: Array<{ at: number; value: number }> = [];
  private readonly events: Array<{ at: number; delta: number }> = [];

  /** `steady`: the replicas of the steady state the run starts in (the recommendation of the window before time 0). */
  constructor(private readonly model: HpaModel, steady: number) {
    this.recommendations.push({ at: -1, value: steady });
  }

  /** GetExternalPerPodMetricReplicas: unchanged within the tolerance, else ceil(value / target). */
  perPod(value: number, target: number, current: number): number {
    if (current > 0 && Math.abs(1 - value / (target * current)) <= this.model.tolerance) return current;
    return Math.ceil(value / target - 1e-9);
  }

  /** One sync: the replicas the HPA sets, from each metric's value and per-replica target. */
  evaluate(now: number, metrics: ReadonlyArray<{ readonly value: number; readonly target: number }>, b: ScaleBounds): number {
    const m = this.model;
    const recommendation = Math.max(...metrics.map((x) => this.perPod(x.value, x.target, b.current)));
    this.recommendations.push({ at: now, value: recommendation });
    while (this.recommendations.length > 0 && this.recommendations[0].at <= now - m.scaleDownStabilizationSeconds) this.recommendations.shift();
    // Scale-up window 0: the newest recommendation; scale-down: the highest of the window.
    const down = Math.max(...this.recommendations.map((r) => r.value));
    let stabilized = b.current;
    if (stabilized < recommendation) stabilized = recommendation;
    if (stabilized > down) stabilized = down;
    while (this.events.length > 0 && this.events[0].at <= now - Math.max(m.scaleUpPeriodSeconds, m.scaleDownPeriodSeconds)) this.events.shift();
    // Replicas at the start of a rate period: the current count minus the net change of the period's events.
    const periodStart = (period: number) => b.current - this.events.filter((e) => e.at > now - period).reduce((s, e) => s + e.delta, 0);
    let desired: number;
    if (stabilized > b.current) {
      const limit = Math.max(b.current, periodStart(m.scaleUpPeriodSeconds) + m.scaleUpPods);
      desired = Math.min(stabilized, limit, b.max);
    } else if (stabilized < b.current) {
      const limit = Math.min(b.current, periodStart(m.scaleDownPeriodSeconds) - m.scaleDownPods);
      desired = Math.max(stabilized, limit, b.min);
    } else {
      desired = Math.min(b.max, Math.max(b.min, stabilized));
    }
    if (desired !== b.current) this.events.push({ at: now, delta: desired - b.current });
    return desired;
  }
}

/** One target-tracking policy of a variant, as one evaluation sees it. */
export interface TrackingPolicy {
  /** In-flight requests per instance in service it aims for. */
  readonly target: number;
  /** How long its metric must ask for more instances before its alarm scales out. */
  readonly scaleOutAlarmSeconds: number;
}

/**
 * A variant's target-tracking policies as the construct renders them (`variantScalingDefaults`): the predefined
 * high-resolution one at `target` and, with `poolTargets`, the per-pool one. That one reads each instance type's
 * concurrency over its own pool's target, the largest ratio; least-outstanding-requests routing gives every instance
 * about the same concurrency, so the model reads the variant's concurrency over the smallest target of the pools that
 * had an instance in service since `since` (the start of the minute judged; a pool without one publishes nothing, by
 * the documents' silence an inference, and drops out).
 */
export function variantTrackingPolicies(
  model: TargetTrackingModel, target: number, poolTargets: readonly number[] | undefined,
  pools: ReadonlyArray<{ servedSince(since: number): boolean }>, since: number,
): TrackingPolicy[] {
  const policies: TrackingPolicy[] = [{ target, scaleOutAlarmSeconds: model.scaleOutAlarmSeconds }];
  if (poolTargets) {
    const present = poolTargets.filter((_, i) => pools[i].servedSince(since));
    if (present.length > 0) policies.push({ target: Math.min(...present), scaleOutAlarmSeconds: model.customScaleOutAlarmSeconds });
  }
  return policies;
}

/**
 * Target tracking of one SageMaker variant: capacity for the measured in-flight requests at the target per instance,
 * a scale-out at most once per scale-out cooldown, a scale-in only once the low alarm holds (every evaluation of its
 * window below the scale-in threshold) and after the scale-in cooldown since the last scaling. With several policies
 * (a variant with instance pools) Application Auto Scaling "will scale out the scalable target if any of the target
 * tracking policies are ready for scale out, but will scale in only if all of the target tracking policies ... are
 * ready to scale in", to the largest capacity the policies give (target-tracking-scaling-policy-overview.html,
 * "Multiple scaling policies"); the cooldowns are the scalable target's (every policy the construct renders has the
 * same ones).
 */
export class TargetTracking {
  private lastScaleOut = -Infinity;
  private lastScaleIn = -Infinity;
  /**
   * Per policy, the start of the current run of evaluations below its scale-in threshold (low) and of those that ask
   * above the target per instance in service (high); null: the last one was not.
   */
  private lowSince: Array<number | null> = [];
  private highSince: Array<number | null> = [];

  constructor(private readonly model: TargetTrackingModel) {}

  /**
   * The desired count after one evaluation; `inFlight` is the variant's mean in-flight requests over the newest minute.
   * With `canScale` false (the endpoint is Updating) the alarms still see the datapoint, but nothing changes.
   * `inService`: the instances serving in that minute. ConcurrentRequestsPerModel is reported by each model container
   * ("the number of concurrent requests being received by a model container", SageMaker guide,
   * endpoint-auto-scaling-add-code-define; valid statistics Min and Max, and which one the predefined metric
   * aggregates is not published), so an instance asked for and not in service (being provisioned, or refused for
   * lack of capacity) reports nothing and cannot lower it. The model takes the mean over the instances in service, and
   * sizes from them too (`wanted`, in-flight / target: the in-service count x metric / target), as AWS would once a
   * scale-out that fails for capacity rolls back (`RollingBack`, docs/simulator.md) to what the variant runs; the
   * simulator rolls back too, at the provisioning timeout (`provision`, lib/sim/simulator.ts), and sizes from the
   * instances in service meanwhile. With none in service there is no datapoint: no scaling, and the runs of low and
   * high datapoints start again (an assumption: how these alarms treat missing data is not published). Before, the low
   * alarm judged the in-flight requests per desired instance: a variant short of capacity (9 desired, 5 in service at
   * their target) looked idle and was scaled in to what its 5 carried the moment capacity came back.
   */
  evaluate(
    now: number, inFlight: number, policies: readonly TrackingPolicy[], b: ScaleBounds, canScale = true, inService = b.current,
  ): number {
    const held = Math.min(b.max, Math.max(b.min, b.current));
    if (inService <= 0) {
      this.lowSince = [];
      this.highSince = [];
      return held;
    }
    const wanted = policies.map((p) => Math.min(b.max, Math.max(b.min, Math.ceil(inFlight / p.target - 1e-9))));
    policies.forEach((p, i) => {
      const low = inFlight < this.model.scaleInThresholdShare * p.target * inService;
      this.lowSince[i] = low ? (this.lowSince[i] ?? now) : null;
      // The high alarm is on the metric, not on the desired count: it stays in ALARM through a wait for capacity.
      this.highSince[i] = inFlight > p.target * inService ? (this.highSince[i] ?? now) : null;
    });
    if (!canScale) return held;
    // An alarm needs every datapoint of its window: the evaluation that starts the run is its first datapoint.
    const alarmed = (since: number | null | undefined, seconds: number) =>
      since !== null && since !== undefined && now - since + this.model.evaluationSeconds >= seconds;
    let out = b.current;
    policies.forEach((p, i) => {
      if (alarmed(this.highSince[i], p.scaleOutAlarmSeconds)) out = Math.max(out, wanted[i]);
    });
    if (out > b.current && now - this.lastScaleOut >= this.model.scaleOutCooldownSeconds) {
      this.lastScaleOut = now;
      return out;
    }
    const cooldown = this.model.scaleInCooldownSeconds;
    const to = Math.max(...wanted);
    const everyLow = policies.every((_, i) => alarmed(this.lowSince[i], this.model.scaleInAlarmSeconds));
    if (to < b.current && everyLow && now - this.lastScaleIn >= cooldown && now - this.lastScaleOut >= cooldown) {
      this.lastScaleIn = now;
      return to;
    }
    return held;
  }
}
