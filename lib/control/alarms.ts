import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { Metrics } from '../core/metrics/contract';
import { Checker } from '../core/validation/checker';
import { type Problem, throwIfInvalid } from '../core/validation/error';
import { OBSERVABILITY_RULES } from '../core/validation/rules';
import { routingTarget } from '../core/reconciler/targets';
import { servingPropProblem } from '../core/validation/serving';
import { durationSeconds } from '../util/duration';
import { encryptedAlarmTopic, notifyOnAlarmAndOk } from './alarm-topic';
import { metricId, observedClasses, serviceObservabilityProblems, ServiceMetrics, type ServiceObservabilityProps } from './service-metrics';

/** Common shape of every alarm's options. */
export interface AlarmToggle {
  /**
   * Whether the alarm is created.
   * @default true
   */
  readonly enabled?: boolean;
}

/** Fallback share above a threshold for a while: the preferred class is not carrying the load. */
export interface FallbackShareAlarmOptions extends AlarmToggle {
  /** @default 50 - half the load on fallback classes */
  readonly thresholdPercent?: number;
  /**
   * How long the share must stay above the threshold (every period of it).
   * @default Duration.minutes(15) - longer than a scale-out of the preferred class, shorter than an on-call's patience
   */
  readonly duration?: Duration;
  /**
   * Which share: LLM load is token-shaped (a long answer costs more than a short one), so tokens is the default.
   * @default 'tokens'
   */
  readonly basis?: 'tokens' | 'requests';
}

/**
 * Requests shed to protect the deadline, as a share of arriving requests: what every class's server rejected with its
 * engine's rejection status (its admission limit is sized from the deadline), over the requests that reached the classes.
 */
export interface DeadlineExhaustionAlarmOptions extends AlarmToggle {
  /** @default 1 - one request in a hundred was shed */
  readonly thresholdPercent?: number;
  /** @default Duration.minutes(5) */
  readonly duration?: Duration;
  /**
   * Periods with fewer arriving requests than this count as 0% (one unlucky request in a quiet minute is not an incident).
   * @default 20
   */
  readonly minRequestsPerPeriod?: number;
}

/** Capacity errors (insufficient capacity, quota exceeded, launch error) on the preferred class. */
export interface CapacityErrorAlarmOptions extends AlarmToggle {
  /** @default 1 - any capacity error; the reconciler must react at once */
  readonly threshold?: number;
  /** @default Duration.minutes(1) */
  readonly duration?: Duration;
}

/** A routed class (ALB target group, SageMaker variant) with desired > ready replicas for too long. */
export interface ReplicaShortageAlarmOptions extends AlarmToggle {
  /**
   * @default Duration.minutes(5) - the policy's default provisioning grace (and the shortest SageMaker instance
   * provisioning timeout). The reconciler's own grace rule reads a window that ends a metric delay ago, so it may fire
   * a run or two later than this alarm. On SageMaker a refused scale-out rolls back at the provisioning timeout (300 s
   * by default) and a run can sample desired = ready between two attempts; such a minute counts as short through the
   * refusal the reconciler publishes (`RefusedScaleOuts`), so a steady shortage holds the alarm. A rollback target
   * tracking re-asked before the run samples it is not seen, but then desired > ready anyway. On SageMaker the
   * shortage is the reconciler's `PendingScaleOut` (desired - ready as one run saw them).
   */
  readonly duration?: Duration;
}

/** The reconciler itself failing or not running: no decision metric for a while. */
export interface ReconcilerHeartbeatAlarmOptions extends AlarmToggle {
  /** @default Duration.minutes(10) - ten missed one-minute ticks; one late EMF batch does not page anyone */
  readonly duration?: Duration;
}

export interface InferenceAlarmOptions {
  /**
   * Where every alarm sends its ALARM and OK notifications. Its policy must let `cloudwatch.amazonaws.com` publish
   * (a topic policy, such as the one `enforceSSL` writes, replaces SNS's default one that let same-account alarms
   * publish) and, if it is encrypted, its key must let CloudWatch use it; this construct changes neither.
   * @default - a new SNS topic encrypted with a new customer managed KMS key (rotation on; CloudWatch may use it) that
   * accepts only TLS publishers and lets the alarms of this account and region publish
   */
  readonly alarmTopic?: sns.ITopic;
  /** @default - enabled with the defaults of `FallbackShareAlarmOptions` */
  readonly fallbackShare?: FallbackShareAlarmOptions;
  /**
   * Reads what the platform counts for every class: requests its server shed (SageMaker Invocation4XX/5XXErrors, ALB
   * HTTPCode_Target_4XX/5XX_Count, by the class's rejection status) over requests that reached it (Invocations,
   * RequestCount). Two metrics per class: at most 5 classes.
   * @default - enabled with the defaults of `DeadlineExhaustionAlarmOptions`
   */
  readonly deadlineExhaustion?: DeadlineExhaustionAlarmOptions;
  /**
   * @default - enabled with the defaults of `CapacityErrorAlarmOptions` when the serving platform produces capacity
   * errors for a preferred class (EKS: the Karpenter log metric filter); not created otherwise
   */
  readonly preferredCapacityErrors?: CapacityErrorAlarmOptions;
  /** @default - enabled with the defaults of `ReplicaShortageAlarmOptions`, one alarm per routed class */
  readonly replicaShortage?: ReplicaShortageAlarmOptions;
  /** @default - enabled with the defaults of `ReconcilerHeartbeatAlarmOptions` */
  readonly reconcilerHeartbeat?: ReconcilerHeartbeatAlarmOptions;
  /**
   * How often the Reconciler runs (its `policy.period`, whole minutes): the replica shortage and heartbeat alarms read
   * what each run publishes, one datapoint per run, so they are evaluated at this period, whatever `period` (their
   * durations whole multiples of it). At a shorter period, runs further apart leave periods empty: the shortage alarm
   * (missing data not breaching) could never fill its window, and the heartbeat (missing data breaching) would fire
   * between runs; at a longer one the shortage would pair one run's desired count with another's ready count. The
   * Reconciler refuses `capacityAlarms` made for another period. The two alarms' default durations are
   * rounded up to whole periods, and the heartbeat's to two at least.
   * @default - one minute, the Reconciler's default `policy.period`
   */
  readonly reconcilerPeriod?: Duration;
}

/**
 * The Reconciler period an alarm of `InferenceAlarms` was made for, where it reads the Reconciler's own metrics
 * (replica shortages): `Reconciler` checks its `capacityAlarms` against its own period with it.
 */
export function reconcilerPeriodOfAlarm(alarm: cloudwatch.IAlarm): Duration | undefined {
  return RECONCILER_PERIOD_OF.get(alarm);
}
const RECONCILER_PERIOD_OF = new WeakMap<cloudwatch.IAlarm, Duration>();

/** The Reconciler's default `policy.period`. */
const DEFAULT_RECONCILER_PERIOD = Duration.minutes(1);

export interface InferenceAlarmsProps extends ServiceObservabilityProps, InferenceAlarmOptions {}

/** Alarm options once the defaults are filled in: every field but `enabled` is set. */
type WithDefaults<T extends { readonly enabled?: boolean }> = Required<Omit<T, 'enabled'>> & Pick<T, 'enabled'>;

/** The documented defaults, in one place (docs/observability.md and the tests read them from here). */
export const ALARM_DEFAULTS = {
  fallbackShare: { thresholdPercent: 50, duration: Duration.minutes(15), basis: 'tokens' as const },
  deadlineExhaustion: { thresholdPercent: 1, duration: Duration.minutes(5), minRequestsPerPeriod: 20 },
  preferredCapacityErrors: { threshold: 1, duration: Duration.minutes(1) },
  replicaShortage: { duration: Duration.minutes(5) },
  reconcilerHeartbeat: { duration: Duration.minutes(10) },
} as const;

/**
 * The alarms of one inference service: fallback share, deadline exhaustion rate, capacity errors on the preferred
 * class, replica shortage per class, and the reconciler's heartbeat. Every alarm notifies `topic` on ALARM and OK.
 *
 * `capacityAlarms` (capacity errors and replica shortages) are the ones that should trigger the reconciler at once:
 * pass them to the reconciler construct (`new Reconciler(scope, id, { ..., capacityAlarms: alarms.capacityAlarms })`).
 */
export class InferenceAlarms extends Construct {
  /** The topic every alarm notifies. */
  readonly topic: sns.ITopic;
  /** The key of the topic, when this construct created it. */
  readonly topicKey?: kms.IKey;
  readonly fallbackShareAlarm?: cloudwatch.Alarm;
  readonly deadlineExhaustionAlarm?: cloudwatch.Alarm;
  readonly preferredCapacityErrorsAlarm?: cloudwatch.Alarm;
  /** One per routed class (ALB target group or SageMaker variant), in preference order. */
  readonly replicaShortageAlarms: readonly cloudwatch.Alarm[];
  readonly reconcilerHeartbeatAlarm?: cloudwatch.Alarm;
  /** The alarms that signal a capacity problem: the reconciler subscribes to their state changes. */
  readonly capacityAlarms: cloudwatch.IAlarm[];
  /** Every alarm this construct made. */
  readonly alarms: cloudwatch.IAlarm[];
  /** The metrics the alarms read (shared with the dashboard). */
  readonly metrics: ServiceMetrics;

  constructor(scope: Construct, id: string, props: InferenceAlarmsProps) {
    super(scope, id);
    throwIfInvalid('InferenceAlarms', this.node.path, [...serviceObservabilityProblems(props), ...alarmOptionProblems(props)]);
    const m = new ServiceMetrics(props.serving.servingDescription(), props.period);
    this.metrics = m;
    // The alarms that read one datapoint per reconciler run, at its period: a longer one would compare the Maximum and
    // Minimum of several runs' counts, a shorter one would have periods without a run.
    const runs = new ServiceMetrics(props.serving.servingDescription(), props.reconcilerPeriod ?? DEFAULT_RECONCILER_PERIOD);

    if (props.alarmTopic) {
      this.topic = props.alarmTopic;
    } else {
      const created = encryptedAlarmTopic(this, 'Topic', m.service);
      this.topic = created.topic;
      this.topicKey = created.key;
    }

    const o = this.options(props, runs.period);
    this.fallbackShareAlarm = this.fallbackShare(m, o.fallback);
    this.deadlineExhaustionAlarm = this.deadlineExhaustion(m, o.deadline);
    this.preferredCapacityErrorsAlarm = this.preferredCapacityErrors(m, o.capacity);
    this.replicaShortageAlarms = this.replicaShortages(runs, o.shortage);
    for (const a of this.replicaShortageAlarms) RECONCILER_PERIOD_OF.set(a, runs.period);
    const capacityAlarms = [...(this.preferredCapacityErrorsAlarm ? [this.preferredCapacityErrorsAlarm] : []), ...this.replicaShortageAlarms];
    this.reconcilerHeartbeatAlarm = this.reconcilerHeartbeat(runs, o.heartbeat);

    this.capacityAlarms = capacityAlarms;
    this.alarms = [this.fallbackShareAlarm, this.deadlineExhaustionAlarm, ...capacityAlarms, this.reconcilerHeartbeatAlarm]
      .filter((a): a is cloudwatch.Alarm => a !== undefined);
    notifyOnAlarmAndOk(this.topic, this.alarms as cloudwatch.Alarm[]);
  }

  /** Each alarm's options: the defaults (those of the run-fed alarms in whole reconciler periods), then the user's. */
  private options(props: InferenceAlarmsProps, runPeriod: Duration) {
    const runs = (d: Duration, atLeast = 1) =>
      Duration.seconds(Math.max(atLeast, Math.ceil(d.toSeconds() / runPeriod.toSeconds())) * runPeriod.toSeconds());
    return {
      fallback: { ...ALARM_DEFAULTS.fallbackShare, ...props.fallbackShare },
      deadline: { ...ALARM_DEFAULTS.deadlineExhaustion, ...props.deadlineExhaustion },
      capacity: { ...ALARM_DEFAULTS.preferredCapacityErrors, ...props.preferredCapacityErrors },
      shortage: { duration: runs(ALARM_DEFAULTS.replicaShortage.duration), ...props.replicaShortage },
      heartbeat: { duration: runs(ALARM_DEFAULTS.reconcilerHeartbeat.duration, 2), ...props.reconcilerHeartbeat },
    };
  }

  private static periods(m: ServiceMetrics, d: Duration): number {
    return Math.round(durationSeconds(d)! / m.period.toSeconds());
  }

  private fallbackShare(m: ServiceMetrics, fallback: WithDefaults<FallbackShareAlarmOptions>): cloudwatch.Alarm | undefined {
    // A service without fallback classes has no fallback share to watch.
    if (fallback.enabled !== false && m.fallback.length > 0) {
      return new cloudwatch.Alarm(this, 'FallbackShare', {
        metric: m.fallbackShare(fallback.basis, 'fs'),
        threshold: fallback.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: InferenceAlarms.periods(m, fallback.duration),
        datapointsToAlarm: InferenceAlarms.periods(m, fallback.duration),
        // No datapoint means no traffic in the period: nothing is on fallback.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: more than ${fallback.thresholdPercent}% of the load (by ${fallback.basis}) has been served by fallback classes `
          + `for ${fallback.duration.toHumanString()}. The preferred class is short of capacity or unhealthy. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), FallbackShare.',
      });
    }
    return undefined;
  }

  private deadlineExhaustion(m: ServiceMetrics, deadline: WithDefaults<DeadlineExhaustionAlarmOptions>): cloudwatch.Alarm | undefined {
    // The producer is the platform: each class's server sheds what its deadline-sized admission limit cannot serve in
    // time, with its engine's status, and SageMaker or the ALB counts it (ServiceMetrics.shedRequests).
    if (deadline.enabled !== false) {
      const using: Record<string, cloudwatch.IMetric> = {};
      for (const c of m.classes) {
        using[metricId('sh', c.index)] = m.shedRequests(c);
        using[metricId('rq', c.index)] = m.requests(c);
      }
      const sum = (prefix: string) => m.classes.map((c) => `FILL(${metricId(prefix, c.index)}, 0)`).join(' + ');
      return new cloudwatch.Alarm(this, 'DeadlineExhaustion', {
        metric: new cloudwatch.MathExpression({
          expression: `IF((${sum('rq')}) >= ${deadline.minRequestsPerPeriod}, 100 * (${sum('sh')}) / (${sum('rq')}), 0)`,
          usingMetrics: using,
          label: 'requests shed to protect the deadline (% of arriving requests)',
          period: m.period,
        }),
        threshold: deadline.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: InferenceAlarms.periods(m, deadline.duration),
        datapointsToAlarm: InferenceAlarms.periods(m, deadline.duration),
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: the model servers shed more than ${deadline.thresholdPercent}% of arriving requests to protect the deadline for ${deadline.duration.toHumanString()}. `
          + 'No class can meet the contract for the current load: the service is shedding. Runbook: docs/observability.md (cdk-capacity-aware-inference), DeadlineExhaustion.',
      });
    }
    return undefined;
  }

  private preferredCapacityErrors(m: ServiceMetrics, capacity: WithDefaults<CapacityErrorAlarmOptions>): cloudwatch.Alarm | undefined {
    // Only classes whose platform produces capacity errors (EKS: Karpenter's log line); SageMaker shortages show as
    // replica shortages.
    const producing = m.preferred.filter((c) => m.capacityErrors(c) !== undefined);
    if (capacity.enabled !== false && producing.length > 0) {
      const using: Record<string, cloudwatch.IMetric> = Object.fromEntries(producing.map((c) => [metricId('ce', c.index), m.capacityErrors(c)!]));
      const names = producing.map((c) => c.facts.name).join(', ');
      return new cloudwatch.Alarm(this, 'PreferredCapacityErrors', {
        metric: new cloudwatch.MathExpression({
          // FILL: a period without a matching log line has no datapoint.
          expression: Object.keys(using).map((id) => `FILL(${id}, 0)`).join(' + '),
          usingMetrics: using,
          label: `capacity errors on ${names}`,
          period: m.period,
        }),
        threshold: capacity.threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: InferenceAlarms.periods(m, capacity.duration),
        datapointsToAlarm: InferenceAlarms.periods(m, capacity.duration),
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: the preferred class (${names}) reported capacity errors (Karpenter could not launch a node: insufficient capacity). `
          + 'The reconciler is triggered to move load to fallback classes. Runbook: docs/observability.md (cdk-capacity-aware-inference), PreferredCapacityErrors.',
      });
    }
    return undefined;
  }

  private replicaShortages(m: ServiceMetrics, shortage: WithDefaults<ReplicaShortageAlarmOptions>): cloudwatch.Alarm[] {
    const shortages: cloudwatch.Alarm[] = [];
    if (shortage.enabled !== false) {
      // Where a refused scale-out is rolled back (SageMaker), the run that samples the rollback sees desired = ready and
      // one minute would read as no shortage, so the alarm flipped once per attempt during a steady shortage: a
      // minute with a refusal the reconciler saw (`RefusedScaleOuts`) counts as short. There the shortage is the
      // `PendingScaleOut` each run publishes, the reading the reconciler's own refusal check uses: `DesiredReplicas`
      // (Maximum) - `ReadyReplicas` (Minimum) of two runs in one minute can pair counts no run saw together.
      const refusals = routingTarget(m.facts).scaleOutsRollBack;
      for (const route of m.routes) {
        const d = metricId('d', route.index);
        const r = metricId('r', route.index);
        const p = metricId('p', route.index);
        const f = metricId('f', route.index);
        const what = route.classes.map((c) => `${c.facts.name} on ${c.facts.instanceType}`).join(', ');
        shortages.push(new cloudwatch.Alarm(this, `ReplicaShortage${route.index}`, {
          metric: new cloudwatch.MathExpression({
            // A sum, not a max: the threshold is 1, so a minute short on either count breaches (FILL: a run may be missing;
            // metric math arithmetic and FILL: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
            expression: refusals ? `${p} + FILL(${f}, 0)` : `${d} - ${r}`,
            usingMetrics: refusals
              ? { [p]: m.perRoute(Metrics.pendingScaleOut, route), [f]: m.perRoute(Metrics.refusedScaleOuts, route) }
              : { [d]: m.perRoute(Metrics.desiredReplicas, route), [r]: m.perRoute(Metrics.readyReplicas, route) },
            label: refusals ? `${route.name} pending instances (+1 in a minute with a refused scale-out)` : `${route.name} desired - ready replicas`,
            period: m.period,
          }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: InferenceAlarms.periods(m, shortage.duration),
          datapointsToAlarm: InferenceAlarms.periods(m, shortage.duration),
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription: `${m.service}: ${route.name} (${what}) has wanted more replicas than are ready for `
            + `${shortage.duration.toHumanString()}${refusals ? ' (or had a scale-out rolled back without new instances)' : ''}: capacity is not arriving. Runbook: docs/observability.md (cdk-capacity-aware-inference), ReplicaShortage.`,
        }));
      }
    }
    return shortages;
  }

  private reconcilerHeartbeat(m: ServiceMetrics, heartbeat: WithDefaults<ReconcilerHeartbeatAlarmOptions>): cloudwatch.Alarm | undefined {
    if (heartbeat.enabled !== false) {
      return new cloudwatch.Alarm(this, 'ReconcilerHeartbeat', {
        metric: m.perService(Metrics.decisions, { statistic: 'SampleCount' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: InferenceAlarms.periods(m, heartbeat.duration),
        datapointsToAlarm: InferenceAlarms.periods(m, heartbeat.duration),
        // No datapoint is the symptom: the reconciler did not run, or failed before it decided.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        alarmDescription: `${m.service}: the reconciler has recorded no decision for ${heartbeat.duration.toHumanString()}; weights are frozen. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), ReconcilerHeartbeat.',
      });
    }
    return undefined;
  }
}

/** Every problem of the alarm options. */
export function alarmOptionProblems(props: InferenceAlarmOptions & Partial<ServiceObservabilityProps>): Problem[] {
  const c = new Checker(OBSERVABILITY_RULES);
  const facts = servingPropProblem(props) ? undefined : props.serving!.servingDescription().routing;
  if (facts && props.fallbackShare?.enabled !== false) {
    const n = observedClasses(facts).length;
    c.cross('alarm.metrics', { metrics: n, what: `the fallback share alarm: one per capacity class, ${n} classes`, toggle: 'fallbackShare.enabled' }, 'serving');
  }
  if (facts && props.deadlineExhaustion?.enabled !== false) {
    const n = observedClasses(facts).length;
    c.cross('alarm.metrics', {
      metrics: 2 * n, what: `the deadline exhaustion alarm: shed and arriving requests per capacity class, ${n} classes`, toggle: 'deadlineExhaustion.enabled',
    }, 'serving');
  }
  if (facts && props.preferredCapacityErrors?.enabled !== false) {
    const ranks = observedClasses(facts).map((cls) => cls.facts.preferenceRank);
    const best = ranks.filter((r) => r === Math.min(...ranks)).length;
    c.cross('alarm.metrics', {
      metrics: best, what: `the preferred-class capacity error alarm: one per class of the best preference rank, ${best} classes`,
      toggle: 'preferredCapacityErrors.enabled',
    }, 'serving');
  }
  // A period that breaks its own rule (a token included) is reported by the shared checks; durations are then
  // measured against the default, never against a token's encoding.
  const given = durationSeconds(props.period);
  const period = given !== undefined && OBSERVABILITY_RULES.period.check(given) === undefined ? given : 60;
  const reconciler = durationSeconds(props.reconcilerPeriod);
  const runPeriod = reconciler !== undefined && c.cross('alarm.reconcilerPeriod', reconciler, 'reconcilerPeriod') ? reconciler : DEFAULT_RECONCILER_PERIOD.toSeconds();
  const duration = (prop: string, d: Duration | undefined, periodSeconds = period) => {
    if (d === undefined) return;
    const seconds = durationSeconds(d)!;
    c.cross('alarm.duration', { seconds, human: d.isUnresolved() ? 'a CDK token' : d.toHumanString(), periodSeconds }, prop);
  };
  c.optional('fallbackShare.thresholdPercent', props.fallbackShare?.thresholdPercent);
  duration('fallbackShare.duration', props.fallbackShare?.duration);
  c.cross('fallbackShare.basis', props.fallbackShare?.basis);
  c.optional('deadlineExhaustion.thresholdPercent', props.deadlineExhaustion?.thresholdPercent);
  duration('deadlineExhaustion.duration', props.deadlineExhaustion?.duration);
  c.optional('deadlineExhaustion.minRequestsPerPeriod', props.deadlineExhaustion?.minRequestsPerPeriod);
  c.optional('preferredCapacityErrors.threshold', props.preferredCapacityErrors?.threshold);
  duration('preferredCapacityErrors.duration', props.preferredCapacityErrors?.duration);
  duration('replicaShortage.duration', props.replicaShortage?.duration, runPeriod);
  duration('reconcilerHeartbeat.duration', props.reconcilerHeartbeat?.duration, runPeriod);
  return c.problems;
}
