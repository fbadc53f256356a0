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
  /** Its metric's period: one datapoint, and one evaluation of its alarms, every so many seconds. */
  readonly periodSeconds: number;
  /** Consecutive datapoints above the target before its high alarm is in ALARM. */
  readonly scaleOutDatapoints: number;
}

/** What one evaluation of a policy's alarms reads: the variant's mean in-flight requests over the datapoint's period. */
export interface TrackingDatapoint {
  readonly inFlight: number;
  /** The instances in service at the period's end (the metric's denominator). */
  readonly inService: number;
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
  const policies: TrackingPolicy[] = [{ target, periodSeconds: model.highResolutionPeriodSeconds, scaleOutDatapoints: model.scaleOutDatapoints }];
  if (poolTargets) {
    const present = poolTargets.filter((_, i) => pools[i].servedSince(since));
    if (present.length > 0) {
      policies.push({ target: Math.min(...present), periodSeconds: model.customPeriodSeconds, scaleOutDatapoints: model.scaleOutDatapoints });
    }
  }
  return policies;
}

/** One CloudWatch alarm of a policy: its run of breaching datapoints, and when it next invokes its scaling. */
interface Alarm {
  run: number;
  inAlarm: boolean;
  nextAction: number;
}

/**
 * Target tracking of one SageMaker variant: capacity for the measured in-flight requests at the target per instance, a
 * scale-out whenever it asks for more than the desired count (inside the scale-out cooldown only a larger one proceeds,
 * which every scale-out here is), a scale-in only once the low alarm holds (every datapoint of its window below the
 * scale-in threshold) and the scale-in cooldown has passed since the last scale-in completed ("The amount of time, in
 * seconds, after a scale-in activity completes before another scale-in activity can start",
 * https://docs.aws.amazon.com/autoscaling/application/APIReference/API_TargetTrackingScalingPolicyConfiguration.html,
 * ScaleInCooldown; a scale-out does not start it: review R247). A variant's scale-in completes when the endpoint is
 * InService again, `scaleInActivitySeconds` after it starts (review R257; before, the cooldown ran from its start).
 * Each alarm invokes its scaling when it enters ALARM and again every `actionRepeatSeconds` while it stays there; an
 * invocation the endpoint refuses (Updating) or the cooldown blocks waits for the next. With several policies (a
 * variant with instance pools) Application Auto Scaling "will scale out the scalable target if any of the target
 * tracking policies are ready for scale out, but will scale in only if all of the target tracking policies ... are
 * ready to scale in", to the largest capacity the policies give (target-tracking-scaling-policy-overview.html,
 * "Multiple scaling policies"); the cooldowns are the scalable target's (every policy the construct renders has the
 * same ones).
 */
export class TargetTracking {
  /** When the last scale-in activity completed (or will): the scale-in cooldown runs from there. */
  private lastScaleIn = -Infinity;
  /** Per policy (its index in the variant's list): its high and low alarms, and the count its newest datapoint asks for. */
  private readonly high: Alarm[] = [];
  private readonly low: Alarm[] = [];
  private readonly wanted: Array<number | undefined> = [];

  /**
   * `scaleInActivitySeconds`: how long a scale-in keeps the endpoint Updating
   * (`PlatformModel.endpointUpdate.scaleInSeconds`).
   */
  constructor(private readonly model: TargetTrackingModel, private readonly scaleInActivitySeconds = 0) {}

  /**
   * The desired count after one evaluation at `now`. `datapoints[i]`: what policy i's alarms read now; undefined: they
   * are not evaluated now (another policy's period) and keep their state. With `canScale` false (the endpoint is
   * Updating) the alarms still see their datapoints, and an invocation due now is spent, but nothing changes.
   * ConcurrentRequestsPerModel is reported by each model container ("the number of concurrent requests being received
   * by a model container", SageMaker guide, endpoint-auto-scaling-add-code-define; valid statistics Min and Max, and
   * which one the predefined metric aggregates is not published), so an instance asked for and not in service
   * (being provisioned, or refused for lack of capacity) reports nothing and cannot lower it. The model takes the mean
   * over the instances in service, and sizes from them too (`wanted`, in-flight / target: the in-service count x
   * metric / target), as AWS would once a scale-out that fails for capacity rolls back (`RollingBack`,
   * docs/simulator.md) to what the variant runs; the simulator rolls back too, at the provisioning timeout
   * (`provision`, lib/sim/simulator.ts), and sizes from the instances in service meanwhile. With none in service (or
   * `null`) there is no datapoint: the policy's runs of low and high datapoints start again and its alarms leave ALARM
   * (an assumption: how these alarms treat missing data is not published). Before, the low alarm judged the in-flight
   * requests per desired instance: a variant short of capacity (9 desired, 5 in service at their target) looked idle
   * and was scaled in to what its 5 carried the moment capacity came back.
   */
  evaluate(
    now: number, datapoints: ReadonlyArray<TrackingDatapoint | null | undefined>, policies: readonly TrackingPolicy[], b: ScaleBounds,
    canScale = true,
  ): number {
    const m = this.model;
    const bounded = (n: number) => Math.min(b.max, Math.max(b.min, n));
    const held = bounded(b.current);
    policies.forEach((p, i) => {
      const d = datapoints[i];
      if (d === undefined) return;
      const high = (this.high[i] ??= { run: 0, inAlarm: false, nextAction: Infinity });
      const low = (this.low[i] ??= { run: 0, inAlarm: false, nextAction: Infinity });
      if (d === null || d.inService <= 0) {
        for (const a of [high, low]) Object.assign(a, { run: 0, inAlarm: false });
        this.wanted[i] = undefined;
        return;
      }
      this.wanted[i] = bounded(Math.ceil(d.inFlight / p.target - 1e-9));
      // The high alarm is on the metric, not on the desired count: it stays in ALARM through a wait for capacity.
      this.observe(high, d.inFlight > p.target * d.inService, p.scaleOutDatapoints, now);
      this.observe(low, d.inFlight < m.scaleInThresholdShare * p.target * d.inService, Math.round(m.scaleInAlarmSeconds / p.periodSeconds), now);
    });
    const due = (a: Alarm | undefined): boolean => {
      if (!a?.inAlarm || now < a.nextAction) return false;
      a.nextAction = now + m.actionRepeatSeconds;
      return true;
    };
    // Every alarm due now invokes its action (each spends it, whichever scales).
    const outDue = policies.map((_, i) => due(this.high[i])).some(Boolean);
    const inDue = policies.map((_, i) => due(this.low[i])).some(Boolean);
    if (!canScale) return held;
    if (outDue) {
      let out = b.current;
      policies.forEach((_, i) => {
        if (this.high[i]?.inAlarm) out = Math.max(out, this.wanted[i] ?? out);
      });
      // No cooldown test: during the scale-out cooldown "the capacity that has been added by the previous scale out event
      // that initiated the cooldown is calculated as part of the desired capacity for the next scale out", and the
      // policy "won't increase the desired capacity again unless either a larger scale out is triggered or the cooldown
      // period ends" (Application Auto Scaling API reference, TargetTrackingScalingPolicyConfiguration.ScaleOutCooldown):
      // a count above the desired one, the one test here, is such a larger scale-out (review R241; before, every
      // scale-out within 60 s of the last was refused).
      if (out > b.current) {
        return out;
      }
    }
    const cooldown = m.scaleInCooldownSeconds;
    const everyLow = policies.every((_, i) => this.low[i]?.inAlarm === true);
    if (inDue && everyLow && now - this.lastScaleIn >= cooldown) {
      const to = Math.max(...policies.map((_, i) => this.wanted[i]!));
      if (to < b.current) {
        this.lastScaleIn = now + this.scaleInActivitySeconds;
        return to;
      }
    }
    return held;
  }

  /** One datapoint for an alarm that needs `datapoints` consecutive breaching ones: it acts at once on entering ALARM. */
  private observe(a: Alarm, breaching: boolean, datapoints: number, now: number): void {
    a.run = breaching ? a.run + 1 : 0;
    const was = a.inAlarm;
    a.inAlarm = a.run >= datapoints;
    if (a.inAlarm && !was) a.nextAction = now;
  }
}
