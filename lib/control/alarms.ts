import { Annotations, Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct, type IConstruct } from 'constructs';
import { type AlarmWindow, defaultReplicaShortageSeconds, lateTolerantWindow } from '../core/metrics/alarm-window';
import { Metrics } from '../core/metrics/contract';
import { RECONCILER_TIMING_DEFAULTS } from '../core/platform/control-loop';
import { Checker, ruleProblem } from '../core/validation/checker';
import { type Problem, throwIfInvalid } from '../core/validation/error';
import { OBSERVABILITY_RULES } from '../core/validation/rules';
import { graceClassesFromFacts } from '../core/reconciler/from-facts';
import { routingTarget } from '../core/reconciler/targets';
import { servingDescriptionProblems, servingPropProblem } from '../core/validation/serving';
import { durationSeconds } from '../util/duration';
import { encryptedAlarmTopic, notifyOnAlarmAndOk } from './alarm-topic';
import { metricId, percentOfRequests, serviceObservabilityProblems, ServiceMetrics, type ServiceObservabilityProps } from './service-metrics';
import { DEFAULT_POLICY_CONFIG } from '../core/policy/defaults';

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
   * How long the share must stay above the threshold (every period of it; where it reads a preferred SageMaker variant's
   * fallback instance pools, which it FILLs, that many periods out of the periods of `metricDelay` more).
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

/**
 * 5XX the serving's load balancer answered itself, as a share of its requests (EKS: the ALB's HTTPCode_ELB_5XX_Count
 * over its RequestCount plus those 5XX). A 503 the ALB generates because a class's target group has no registered
 * target (with only unhealthy ones it "fails open" and routes to them all: ALB guide, target-group-health-checks) is
 * in no class's metrics: RequestCount is counted only where a target was chosen, and HTTPCode_Target_5XX_Count only a
 * target's own answers (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html),
 * so DeadlineExhaustion cannot see it. A 502 or 504 the ALB answers after choosing a target is in both counts, so such
 * minutes read below their true share (review R243). The count has no TargetGroup dimension: it is the load balancer's, and it counts
 * the answers to every service routed through it.
 */
export interface LoadBalancerErrorsAlarmOptions {
  /**
   * Whether the alarm is created.
   * @default - true where the service has a load balancer of its own; false on a shared listener (`listenerRule`), where
   * the load balancer's count cannot be told apart by service (the listener's owner alarms on it); `true` there
   * creates it on the whole load balancer's share
   */
  readonly enabled?: boolean;
  /** @default 1 - one request in a hundred answered by the load balancer itself */
  readonly thresholdPercent?: number;
  /** @default Duration.minutes(5) */
  readonly duration?: Duration;
  /**
   * Periods with fewer requests than this (the load balancer's, its own 5XX included) count as 0%. Lower than the
   * deadline alarm's: a class that lost every pod is a total outage, which at low traffic is a few requests a minute.
   * @default 5
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
   * How long desired must stay above ready, for every routed class (every period of it; on SageMaker that many periods
   * out of the periods of `metricDelay` more). Set below what a class's declared replica-ready time calls for, synth
   * warns (`cdk-capacity-aware-inference:replica-shortage-below-ready-time`).
   * @default - 5 minutes (the policy's default provisioning grace, and the shortest SageMaker instance provisioning
   * timeout) in whole reconciler periods; for a routed class that declares its measured replica-ready time
   * (`envelope.replicaReadyTimeP95Seconds`; a SageMaker variant its slowest pool), that time in whole periods plus two
   * periods if longer (420 s at one-minute periods: 9 minutes), so that a scale-out ending within it does not page.
   * The reconciler's own grace rule reads a window of published periods ending a metric delay ago (on SageMaker then
   * the live count), and its default grace is at least this long, so it may fire a run or two later than this alarm.
   * On SageMaker a refused scale-out rolls back at the provisioning timeout (300 s by default) and a run can sample
   * desired = ready between two attempts; such a minute counts as short through the refusal the reconciler publishes
   * (`RefusedScaleOuts`), so a steady shortage holds the alarm. A rollback target tracking
   * re-asked before the run samples it is not seen, but then desired > ready anyway. On SageMaker the shortage is the
   * reconciler's `PendingScaleOut` (desired - ready as one run saw them).
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
   * Reads what the platform counts for every routed class (an ALB target group, a SageMaker variant with all its
   * instance pools): requests its servers shed (SageMaker Invocation4XX/5XXErrors, ALB HTTPCode_Target_4XX/5XX_Count, by
   * its classes' rejection status, both where they differ) over requests that reached it (Invocations, RequestCount).
   * Two metrics per routed class, three where its pools shed in both: at most 5 routed classes.
   * @default - enabled with the defaults of `DeadlineExhaustionAlarmOptions`
   */
  readonly deadlineExhaustion?: DeadlineExhaustionAlarmOptions;
  /**
   * Only where the serving produces capacity errors for a preferred class (EKS: the Karpenter log metric filter). A
   * SageMaker endpoint publishes none (its shortages alarm through `replicaShortage`): there any setting but
   * `{ enabled: false }` fails at construction, since the alarm it asks for would not exist.
   * @default - enabled with the defaults of `CapacityErrorAlarmOptions` when the serving platform produces capacity
   * errors for a preferred class; not created otherwise
   */
  readonly preferredCapacityErrors?: CapacityErrorAlarmOptions;
  /**
   * On a serving behind a load balancer (EKS: its ALB) only: SageMaker has none, and any setting but
   * `{ enabled: false }` fails at construction there.
   * @default - the defaults of `LoadBalancerErrorsAlarmOptions`: created where the service has a load balancer of its
   * own, not on a shared listener
   */
  readonly loadBalancerErrors?: LoadBalancerErrorsAlarmOptions;
  /** @default - enabled with the defaults of `ReplicaShortageAlarmOptions`, one alarm per routed class */
  readonly replicaShortage?: ReplicaShortageAlarmOptions;
  /** @default - enabled with the defaults of `ReconcilerHeartbeatAlarmOptions` */
  readonly reconcilerHeartbeat?: ReconcilerHeartbeatAlarmOptions;
  /**
   * How often the Reconciler runs (its `policy.period`, same rule: whole minutes, 1 minute to 6 hours): the replica
   * shortage and heartbeat alarms read what each run publishes, one datapoint per run, so they are evaluated at this
   * period, whatever `period` (their durations whole multiples of it). At a shorter period, runs further apart leave
   * periods empty: the shortage alarm (missing data not breaching) could never fill its window, and the heartbeat
   * (missing data breaching) would fire between runs; at a longer one the shortage would pair one run's desired count
   * with another's ready count. The Reconciler of the same serving fails synth when this differs from its
   * `policy.period` (and refuses `capacityAlarms` made for another period). The two alarms' default durations are
   * rounded up to whole periods, and the heartbeat's to two at least.
   * @default - one minute, the Reconciler's default `policy.period`
   */
  readonly reconcilerPeriod?: Duration;
  /**
   * How late CloudWatch publishes a period of the metrics these alarms read: the Reconciler's `metricDelay`, same rule
   * (whole seconds, 0 to 900). The alarms that FILL a period without a datapoint (deadline exhaustion, preferred-class
   * capacity errors, the SageMaker replica shortage, the fallback share over a preferred variant's fallback instance
   * pools) read a period not yet published as 0, so each breaches in M of N periods, N = M + the periods of this delay
   * (at least one). The Reconciler of the same serving fails synth when its own `metricDelay` is longer (and refuses
   * `capacityAlarms` made for a shorter one). N x period must fit what CloudWatch evaluates (one day at periods under an
   * hour, 7 days otherwise): a duration that leaves no room for these periods fails synth.
   * @default Duration.minutes(2) - the Reconciler's default `metricDelay`
   */
  readonly metricDelay?: Duration;
}

/** The Reconciler's default `policy.period`. */
const DEFAULT_RECONCILER_PERIOD = Duration.seconds(DEFAULT_POLICY_CONFIG.periodSeconds);

/**
 * What the Reconciler checks at synth of an `InferenceAlarms` that reads its runs: the one record of the fact that its
 * run-fed alarms (replica shortages, heartbeat) are made for one reconciler period, and its M of N alarms for one
 * metric delay, reached from the serving (`inferenceAlarmsOf`) or from one of the run-fed alarms
 * (`inferenceAlarmsOfAlarm`, for the Reconciler's `capacityAlarms`). The Reconciler holds both ways to the same rules
 * (RECONCILER_RULES 'policy.period@alarms', 'metricDelay@alarms').
 */
export interface AlarmsOfServing {
  readonly alarms: InferenceAlarms;
  /** The reconciler period its run-fed alarms (replica shortages, heartbeat) are evaluated at. */
  readonly reconcilerPeriod: Duration;
  /** Whether any alarm reads one datapoint per reconciler run: only then does the period matter. */
  readonly readsRuns: boolean;
  /** Whether it has the heartbeat alarm, the one that pages when runs stop. */
  readonly heartbeat: boolean;
  /** How late a datapoint its M of N alarms leave room for (its `metricDelay`). */
  readonly metricDelay: Duration;
  /** Whether any alarm has that M of N window: only then does the delay matter. */
  readonly readsLate: boolean;
}
const ALARMS_OF = new WeakMap<object, AlarmsOfServing[]>();
const RECORD_OF_RUN_ALARM = new WeakMap<cloudwatch.IAlarm, AlarmsOfServing>();

/**
 * The `InferenceAlarms` on `serving` in the construct tree of `root`. Either construct may be created first, so the
 * Reconciler reads this at synth (a validation), when both exist.
 */
export function inferenceAlarmsOf(serving: object, root: IConstruct): AlarmsOfServing[] {
  return (ALARMS_OF.get(serving) ?? []).filter((a) => a.alarms.node.root === root);
}

/**
 * The `InferenceAlarms` record of an alarm that reads one datapoint per reconciler run (a replica shortage or the
 * heartbeat); undefined for any other alarm, whose period is no Reconciler's business.
 */
export function inferenceAlarmsOfAlarm(alarm: cloudwatch.IAlarm): AlarmsOfServing | undefined {
  return RECORD_OF_RUN_ALARM.get(alarm);
}

/** The heartbeat alarm's default duration at a reconciler period: 10 minutes in whole runs, 2 runs at least. */
function defaultHeartbeatDuration(reconcilerPeriod: Duration): Duration {
  return wholePeriods(ALARM_DEFAULTS.reconcilerHeartbeat.duration, reconcilerPeriod, 2);
}

/** Periods of the heartbeat alarm with its default duration at a reconciler period (what the Reconciler's warning quotes). */
export function defaultHeartbeatPeriods(reconcilerPeriod: Duration): number {
  return defaultHeartbeatDuration(reconcilerPeriod).toSeconds() / reconcilerPeriod.toSeconds();
}

export interface InferenceAlarmsProps extends ServiceObservabilityProps, InferenceAlarmOptions {}

/** Alarm options once the defaults are filled in: every field but `enabled` is set. */
type WithDefaults<T extends { readonly enabled?: boolean }> = Required<Omit<T, 'enabled'>> & Pick<T, 'enabled'>;

/** The documented defaults, in one place (docs/observability.md and the tests read them from here). */
export const ALARM_DEFAULTS = {
  fallbackShare: { thresholdPercent: 50, duration: Duration.minutes(15), basis: 'tokens' as const },
  deadlineExhaustion: { thresholdPercent: 1, duration: Duration.minutes(5), minRequestsPerPeriod: 20 },
  loadBalancerErrors: { thresholdPercent: 1, duration: Duration.minutes(5), minRequestsPerPeriod: 5 },
  preferredCapacityErrors: { threshold: 1, duration: Duration.minutes(1) },
  replicaShortage: { duration: Duration.minutes(5) },
  reconcilerHeartbeat: { duration: Duration.minutes(10) },
} as const;

/**
 * The alarms of one inference service: fallback share, deadline exhaustion rate, the load balancer's own 5XX share,
 * capacity errors on the preferred class, replica shortage per class, and the reconciler's heartbeat. Every alarm notifies `topic` on ALARM and OK.
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
  /** The share of requests the serving's load balancer answered itself with a 5XX (`loadBalancerErrors`). */
  readonly loadBalancerErrorsAlarm?: cloudwatch.Alarm;
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
  /** The `metricDelay` the M of N alarms leave room for. */
  private readonly metricDelaySeconds: number;
  /** Whether an alarm was given that room (`lateTolerant`). */
  private readsLate = false;

  constructor(scope: Construct, id: string, props: InferenceAlarmsProps) {
    super(scope, id);
    throwIfInvalid('InferenceAlarms', this.node.path, [...serviceObservabilityProblems(props), ...alarmOptionProblems(props)]);
    const m = new ServiceMetrics(props.serving.servingDescription(), props.period);
    this.metrics = m;
    this.metricDelaySeconds = durationSeconds(props.metricDelay) ?? RECONCILER_TIMING_DEFAULTS.metricDelaySeconds;
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

    const o = this.options(props, m.period, runs.period);
    this.fallbackShareAlarm = this.fallbackShare(m, o.fallback);
    this.deadlineExhaustionAlarm = this.deadlineExhaustion(m, o.deadline);
    this.loadBalancerErrorsAlarm = this.loadBalancerErrors(m, o.loadBalancer);
    this.preferredCapacityErrorsAlarm = this.preferredCapacityErrors(m, o.capacity);
    this.replicaShortageAlarms = this.replicaShortages(runs, props.replicaShortage);
    const capacityAlarms = [...(this.preferredCapacityErrorsAlarm ? [this.preferredCapacityErrorsAlarm] : []), ...this.replicaShortageAlarms];
    this.reconcilerHeartbeatAlarm = this.reconcilerHeartbeat(runs, o.heartbeat);

    this.capacityAlarms = capacityAlarms;
    this.alarms = [
      this.fallbackShareAlarm, this.deadlineExhaustionAlarm, this.loadBalancerErrorsAlarm, ...capacityAlarms, this.reconcilerHeartbeatAlarm,
    ]
      .filter((a): a is cloudwatch.Alarm => a !== undefined);
    notifyOnAlarmAndOk(this.topic, this.alarms as cloudwatch.Alarm[]);
    const runAlarms = [...this.replicaShortageAlarms, ...(this.reconcilerHeartbeatAlarm ? [this.reconcilerHeartbeatAlarm] : [])];
    const record: AlarmsOfServing = {
      alarms: this, reconcilerPeriod: runs.period, readsRuns: runAlarms.length > 0, heartbeat: this.reconcilerHeartbeatAlarm !== undefined,
      metricDelay: Duration.seconds(this.metricDelaySeconds), readsLate: this.readsLate,
    };
    ALARMS_OF.set(props.serving, [...(ALARMS_OF.get(props.serving) ?? []), record]);
    for (const a of runAlarms) RECORD_OF_RUN_ALARM.set(a, record);
  }

  /**
   * Each alarm's options: the defaults, each rounded up to whole periods of its alarm (the heartbeat's to whole
   * reconciler periods; the replica shortages' are each routed class's own: `shortageDurations`), then the user's,
   * which the validation holds to whole periods. A default shorter than the period would otherwise give 0 evaluation
   * periods, which PutMetricAlarm refuses (EvaluationPeriods: minimum 1,
   * https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html), and one between two
   * multiples would be cut short.
   */
  private options(props: InferenceAlarmsProps, period: Duration, runPeriod: Duration) {
    const D = ALARM_DEFAULTS;
    const whole = <T extends { readonly duration: Duration }>(defaults: T) => ({ ...defaults, duration: wholePeriods(defaults.duration, period) });
    return {
      fallback: given(whole(D.fallbackShare), props.fallbackShare),
      deadline: given(whole(D.deadlineExhaustion), props.deadlineExhaustion),
      loadBalancer: given(whole(D.loadBalancerErrors), props.loadBalancerErrors),
      capacity: given(whole(D.preferredCapacityErrors), props.preferredCapacityErrors),
      heartbeat: given({ ...D.reconcilerHeartbeat, duration: defaultHeartbeatDuration(runPeriod) }, props.reconcilerHeartbeat),
    };
  }

  /** A duration's evaluation periods: a whole number of periods, at least one (see `options`). */
  private static periods(m: ServiceMetrics, d: Duration): number {
    return Math.round(durationSeconds(d)! / m.period.toSeconds());
  }

  /**
   * M of N for an alarm whose expression FILLs missing datapoints: `d` in periods must breach (M, as before), out of
   * the periods of this construct's `metricDelay` more (N, `lateTolerantWindow`). FILL turns a newest period not yet
   * published into the fill value, and "the latest data point for the metric to always be the FILL value ... can result
   * in the alarm being stuck in either OK state or ALARM state. You can work around this by using a M out of N alarm"
   * (CloudWatch user guide, metric math, FILL:
   * awsdocs/amazon-cloudwatch-user-guide@cc40332 doc_source/using-metric-math.md:111). N x period within CloudWatch's
   * bound is what 'alarm.duration' holds the durations to, margin included: a duration too long for it is refused at
   * synth rather than losing its margin.
   */
  private lateTolerant(m: ServiceMetrics, d: Duration): AlarmWindow {
    this.readsLate = true;
    return lateTolerantWindow(InferenceAlarms.periods(m, d), m.period.toSeconds(), this.metricDelaySeconds);
  }

  /** Every period of `d` must breach (M = N): the alarms whose metric has no FILL. */
  private static consecutive(m: ServiceMetrics, d: Duration): AlarmWindow {
    const periods = InferenceAlarms.periods(m, d);
    return { evaluationPeriods: periods, datapointsToAlarm: periods };
  }

  /** How an M-of-N alarm's description says its window: "for" a duration would promise consecutive periods. */
  private static inPeriods(m: ServiceMetrics, window: AlarmWindow): string {
    return `in ${window.datapointsToAlarm} of ${window.evaluationPeriods} periods of ${m.period.toHumanString()}`;
  }

  private fallbackShare(m: ServiceMetrics, fallback: WithDefaults<FallbackShareAlarmOptions>): cloudwatch.Alarm | undefined {
    // A service without fallback classes has no fallback share to watch.
    if (fallback.enabled !== false && m.fallback.length > 0) {
      // A preferred variant's fallback pools are FILLed (ServiceMetrics.fallbackShare): then M of N.
      const fills = m.fallbackPools.length > 0;
      const window = fills ? this.lateTolerant(m, fallback.duration) : InferenceAlarms.consecutive(m, fallback.duration);
      return new cloudwatch.Alarm(this, 'FallbackShare', {
        metric: fallbackShareMetric(m, fallback.basis),
        threshold: fallback.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        ...window,
        // No datapoint means no traffic in the period: nothing is on fallback.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: more than ${fallback.thresholdPercent}% of the load (by ${fallback.basis}) has been served by fallback classes `
          + `${fills ? InferenceAlarms.inPeriods(m, window) : `for ${fallback.duration.toHumanString()}`}. The preferred class is short of capacity or unhealthy. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), FallbackShare.',
      });
    }
    return undefined;
  }

  private deadlineExhaustion(m: ServiceMetrics, deadline: WithDefaults<DeadlineExhaustionAlarmOptions>): cloudwatch.Alarm | undefined {
    // The producer is the platform: each class's server sheds what its deadline-sized admission limit cannot serve in
    // time, with its engine's status, and SageMaker or the ALB counts it (ServiceMetrics.shedRequests).
    if (deadline.enabled !== false) {
      // FILL(...) over every class: M of N.
      const window = this.lateTolerant(m, deadline.duration);
      return new cloudwatch.Alarm(this, 'DeadlineExhaustion', {
        metric: deadlineExhaustionMetric(m, deadline.minRequestsPerPeriod),
        threshold: deadline.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        ...window,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: the model servers shed more than ${deadline.thresholdPercent}% of arriving requests to protect the deadline ${InferenceAlarms.inPeriods(m, window)}. `
          + 'No class can meet the contract for the current load: the service is shedding. Runbook: docs/observability.md (cdk-capacity-aware-inference), DeadlineExhaustion.',
      });
    }
    return undefined;
  }

  /**
   * The load balancer's own 5XX share: on by default where the load balancer is the service's own; on a shared
   * listener only when asked (`enabled: true`), and then described as the load balancer's, every service's on it. The
   * threshold and window follow DeadlineExhaustion (1% in 5 of N one-minute periods, M of N for FILL): both are
   * requests the clients lost. A service's own ALB can carry other services' rules (`listenerRule` on its listener):
   * their load balancer answers count here too.
   */
  private loadBalancerErrors(m: ServiceMetrics, lb: WithDefaults<LoadBalancerErrorsAlarmOptions>): cloudwatch.Alarm | undefined {
    const balancer = m.loadBalancer;
    if (!balancer || !(lb.enabled ?? !balancer.sharedListener)) return undefined;
    const window = this.lateTolerant(m, lb.duration);
    const whose = balancer.sharedListener
      ? 'The shared load balancer it is routed through (by a listener rule) answered'
      : 'Its load balancer answered';
    return new cloudwatch.Alarm(this, 'LoadBalancerErrors', {
      metric: m.loadBalancerErrorShare(lb.minRequestsPerPeriod)!,
      threshold: lb.thresholdPercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...window,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${m.service}: ${whose} more than ${lb.thresholdPercent}% of its requests itself with a 5XX `
        + InferenceAlarms.inPeriods(m, window)
        + (balancer.sharedListener ? ' (every service routed through it counts: not necessarily this one\'s)' : '')
        + ': no registered target in a class\'s target group, a target closing connections or answering too late; these requests are in no class\'s '
        + 'metrics. Runbook: docs/observability.md (cdk-capacity-aware-inference), LoadBalancerErrors.',
    });
  }

  private preferredCapacityErrors(m: ServiceMetrics, capacity: WithDefaults<CapacityErrorAlarmOptions>): cloudwatch.Alarm | undefined {
    // Only classes whose platform produces capacity errors (EKS: Karpenter's log line); SageMaker shortages show as
    // replica shortages.
    const metric = preferredCapacityErrorsMetric(m);
    if (capacity.enabled !== false && metric) {
      const names = m.preferred.filter((c) => m.capacityErrors(c) !== undefined).map((c) => c.facts.name).join(', ');
      return new cloudwatch.Alarm(this, 'PreferredCapacityErrors', {
        metric,
        threshold: capacity.threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // FILL(...) over the classes: M of N, so an error whose datapoint lands late (stamped with its log line's time) is
        // still evaluated.
        ...this.lateTolerant(m, capacity.duration),
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${m.service}: the preferred class (${names}) reported capacity errors (Karpenter could not launch a node: insufficient capacity). `
          + 'The reconciler is triggered to move load to fallback classes. Runbook: docs/observability.md (cdk-capacity-aware-inference), PreferredCapacityErrors.',
      });
    }
    return undefined;
  }

  /**
   * Each routed class's replica-shortage duration at the reconciler period `m.period`: the one set, or the default its
   * declared replica-ready time calls for (`defaultReplicaShortageSeconds`). A duration set below that default for a
   * class that declares one warns: every routine scale-out of it that takes its declared time could page.
   */
  private shortageDurations(m: ServiceMetrics, set: Duration | undefined): Map<string, Duration> {
    const period = m.period.toSeconds();
    const readyTimes = new Map(graceClassesFromFacts(m.facts).map((c) => [c.name, c.replicaReadyTimeP95Seconds]));
    const durations = new Map<string, Duration>();
    const below: string[] = [];
    let calledFor = 0;
    for (const route of m.routes) {
      const ready = readyTimes.get(route.name);
      const byDefault = defaultReplicaShortageSeconds(ready, period, ALARM_DEFAULTS.replicaShortage.duration.toSeconds());
      durations.set(route.name, set ?? Duration.seconds(byDefault));
      // Judged on what the ready time calls for alone, not the default's 5-minute floor: a set duration a class that
      // declares nothing may use without a warning is no worse for a class that declares a short time (review R254).
      const needed = defaultReplicaShortageSeconds(ready, period, 0);
      if (set !== undefined && ready !== undefined && set.toSeconds() < needed) {
        below.push(`'${route.name}' (p95 ${ready} s: ${needed} s)`);
        calledFor = Math.max(calledFor, needed);
      }
    }
    if (below.length > 0) {
      Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:replica-shortage-below-ready-time',
        `replicaShortage.duration is ${set!.toSeconds()} s, below what the replica-ready time declared (envelope.replicaReadyTimeP95Seconds) `
        + `calls for at a reconciler period of ${period} s: ${below.join(', ')}. A scale-out that ends within its declared time can show desired `
        + 'above ready in every period of the duration, which pages as a replica shortage and runs the Reconciler. Leave replicaShortage.duration '
        + `unset (each routed class's default follows its declared time), set at least Duration.seconds(${calledFor}), or acknowledge this `
        + 'warning on the stack.');
    }
    return durations;
  }

  private replicaShortages(m: ServiceMetrics, shortage: ReplicaShortageAlarmOptions = {}): cloudwatch.Alarm[] {
    const shortages: cloudwatch.Alarm[] = [];
    if (shortage.enabled !== false) {
      const durations = this.shortageDurations(m, shortage.duration);
      // Where a refused scale-out is rolled back (SageMaker), the run that samples the rollback sees desired = ready and
      // one minute would read as no shortage, so the alarm flipped once per attempt during a steady shortage: a
      // minute with a refusal the reconciler saw (`RefusedScaleOuts`) counts as short. There the shortage is the
      // `PendingScaleOut` each run publishes, the reading the reconciler's own refusal check uses: `DesiredReplicas`
      // (Maximum) - `ReadyReplicas` (Minimum) of two runs in one minute can pair counts no run saw together.
      const refusals = routingTarget(m.facts).scaleOutsRollBack;
      for (const route of m.routes) {
        const duration = durations.get(route.name)!;
        // With the refusal term the expression FILLs: M of N.
        const window = refusals ? this.lateTolerant(m, duration) : InferenceAlarms.consecutive(m, duration);
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
          ...window,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription: `${m.service}: ${route.name} (${what}) has wanted more replicas than are ready `
            + (refusals ? `${InferenceAlarms.inPeriods(m, window)} (or had a scale-out rolled back without new instances)` : `for ${duration.toHumanString()}`)
            + ': capacity is not arriving. Runbook: docs/observability.md (cdk-capacity-aware-inference), ReplicaShortage.',
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
        ...InferenceAlarms.consecutive(m, heartbeat.duration),
        // No datapoint is the symptom: the reconciler did not run, or failed before it decided.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        alarmDescription: `${m.service}: the reconciler has recorded no decision for ${heartbeat.duration.toHumanString()}; weights are frozen. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), ReconcilerHeartbeat.',
      });
    }
    return undefined;
  }
}

// ----- the metric-math alarms' expressions: built here once, for the alarms and for counting their queries -----------

/** The observed fallback share (%). */
function fallbackShareMetric(m: ServiceMetrics, basis: 'tokens' | 'requests'): cloudwatch.MathExpression {
  return m.fallbackShare(basis, 'fs');
}

/**
 * Requests every routed class shed (%) of the requests that reached them; 0 in a period with fewer than `minRequests`.
 * Each routed class is read on its own series (`ServiceMetrics.routeRequests`, `routeShedRequests`), never its pools':
 * a SageMaker variant's variant-level series counts every pool, while a missing per-InstanceType series would have
 * left its sheds out. Ids: `rq<route>`, and `sh<route>`, or `sh<route>_4xx` and `sh<route>_5xx` where its pools shed in both.
 */
function deadlineExhaustionMetric(m: ServiceMetrics, minRequests: number): cloudwatch.MathExpression {
  const using: Record<string, cloudwatch.IMetric> = {};
  const shed: string[] = [];
  const requests: string[] = [];
  for (const route of m.routes) {
    const sheds = m.routeShedRequests(route);
    for (const { status, metric } of sheds) {
      const id = sheds.length > 1 ? `${metricId('sh', route.index)}_${status}` : metricId('sh', route.index);
      using[id] = metric;
      shed.push(`FILL(${id}, 0)`);
    }
    using[metricId('rq', route.index)] = m.routeRequests(route);
    requests.push(`FILL(${metricId('rq', route.index)}, 0)`);
  }
  return new cloudwatch.MathExpression({
    expression: percentOfRequests(`(${shed.join(' + ')})`, `(${requests.join(' + ')})`, minRequests),
    usingMetrics: using,
    label: 'requests shed to protect the deadline (% of arriving requests)',
    period: m.period,
  });
}

/** Capacity errors of the preferred classes whose platform produces them; undefined when none does. */
function preferredCapacityErrorsMetric(m: ServiceMetrics): cloudwatch.MathExpression | undefined {
  const producing = m.preferred.filter((c) => m.capacityErrors(c) !== undefined);
  if (producing.length === 0) return undefined;
  const using: Record<string, cloudwatch.IMetric> = Object.fromEntries(producing.map((c) => [metricId('ce', c.index), m.capacityErrors(c)!]));
  return new cloudwatch.MathExpression({
    // FILL: a period without a matching log line has no datapoint.
    expression: Object.keys(using).map((id) => `FILL(${id}, 0)`).join(' + '),
    usingMetrics: using,
    label: `capacity errors on ${producing.map((c) => c.facts.name).join(', ')}`,
    period: m.period,
  });
}

/**
 * The queries a metric-math alarm on `expression` sends PutMetricAlarm: the metrics it reads and its math expressions,
 * nested ones included (each is one more query), every id once, as CDK renders them.
 */
function alarmQueries(expression: cloudwatch.MathExpression): { metrics: number; expressions: number } {
  const seen = new Map<string, cloudwatch.IMetric>();
  const walk = (e: cloudwatch.MathExpression) => {
    for (const [id, q] of Object.entries(e.usingMetrics)) {
      if (seen.has(id)) continue;
      seen.set(id, q);
      if (q instanceof cloudwatch.MathExpression) walk(q);
    }
  };
  walk(expression);
  const nested = [...seen.values()].filter((q) => q instanceof cloudwatch.MathExpression).length;
  return { metrics: seen.size - nested, expressions: 1 + nested };
}

/** `d` rounded up to a whole number of `period`s, `atLeast` of them. */
function wholePeriods(d: Duration, period: Duration, atLeast = 1): Duration {
  return Duration.seconds(Math.max(atLeast, Math.ceil(d.toSeconds() / period.toSeconds())) * period.toSeconds());
}

/** The defaults, with every option the user set (an option set to `undefined` keeps its default). */
function given<D extends object, U extends object>(defaults: D, user: U | undefined): D & U {
  const set = Object.entries(user ?? {}).filter(([, v]) => v !== undefined);
  return { ...defaults, ...Object.fromEntries(set) } as D & U;
}

/** Every problem of the alarm options. */
export function alarmOptionProblems(props: InferenceAlarmOptions & Partial<ServiceObservabilityProps>): Problem[] {
  const c = new Checker(OBSERVABILITY_RULES);
  // A period that breaks its own rule (a token included) is reported by the shared checks; durations are then
  // measured against the default, never against a token's encoding.
  const givenPeriod = durationSeconds(props.period);
  const period = givenPeriod !== undefined && OBSERVABILITY_RULES.period.check(givenPeriod) === undefined ? givenPeriod : 60;
  // The alarms' queries are counted on the expressions the alarms are built from, over valid facts only (the serving
  // description's own problems are reported by the shared checks).
  const description = servingPropProblem(props) ? undefined : props.serving!.servingDescription();
  const valid = description && servingDescriptionProblems(description).length === 0 ? description : undefined;
  const m = valid && new ServiceMetrics(valid, Duration.seconds(period));
  const queries = (alarm: cloudwatch.MathExpression, what: string, fix: string) => c.cross('alarm.metrics', { ...alarmQueries(alarm), what, fix }, 'serving');
  const n = m ? `${m.routes.length} routed classes${m.routes.length === m.classes.length ? '' : ` of ${m.classes.length} classes`}` : '';
  if (m && props.fallbackShare?.enabled !== false && m.fallback.length > 0) {
    // An invalid basis is reported by its own rule; the alarm's queries are then those of the default.
    const set = props.fallbackShare?.basis;
    const basis = set === 'tokens' || set === 'requests' ? set : ALARM_DEFAULTS.fallbackShare.basis;
    const alarm = fallbackShareMetric(m, basis);
    const perClass = alarmQueries(alarm).expressions - 1;
    queries(
      alarm,
      `the fallback share alarm by ${basis}: one metric per routed class and per fallback pool of a routed class that holds a preferred one${perClass > 0
        ? `, and one expression, requests x tokensPerRequest, for each of the ${perClass} series without a token counter` : ''}, ${n}`,
      `${perClass > 0 ? "set fallbackShare.basis: 'requests' or " : ''}disable it with fallbackShare.enabled: false`,
    );
  }
  if (m && props.deadlineExhaustion?.enabled !== false) {
    queries(
      deadlineExhaustionMetric(m, ALARM_DEFAULTS.deadlineExhaustion.minRequestsPerPeriod),
      `the deadline exhaustion alarm: shed (in each status class its classes shed in) and arriving requests per routed class, ${n}`,
      'disable it with deadlineExhaustion.enabled: false',
    );
  }
  const lbOptions = props.loadBalancerErrors;
  if (m && !m.loadBalancer && lbOptions && lbOptions.enabled !== false) {
    const set = Object.entries(lbOptions).filter(([, v]) => v !== undefined).map(([k, v]) => (k === 'enabled' ? `enabled: ${v}` : k));
    if (set.length > 0) {
      c.add('loadBalancerErrors', `sets ${set.join(', ')}, but ${routingTarget(m.facts).describeTarget(m.facts)} has no load balancer whose own `
        + '5XX answers could be counted; allowed: unset, or { enabled: false }');
    }
  }
  const capacityErrors = m && preferredCapacityErrorsMetric(m);
  const capacityOptions = props.preferredCapacityErrors;
  if (m && capacityOptions && capacityOptions.enabled !== false) {
    const set = [
      ...(capacityOptions.enabled === true ? ['enabled: true'] : []),
      ...(['threshold', 'duration'] as const).filter((k) => capacityOptions[k] !== undefined),
    ];
    c.cross('preferredCapacityErrors@producers', {
      set, preferred: m.preferred.map((cls) => cls.facts.name), produced: capacityErrors !== undefined,
      target: routingTarget(m.facts).describeTarget(m.facts),
    }, 'preferredCapacityErrors');
  }
  if (capacityErrors && capacityOptions?.enabled !== false) {
    queries(
      capacityErrors,
      'the preferred-class capacity error alarm: one per class of the best preference rank whose platform produces them',
      'disable it with preferredCapacityErrors.enabled: false',
    );
  }
  const reconciler = durationSeconds(props.reconcilerPeriod);
  const runPeriod = reconciler !== undefined && c.check('alarm.reconcilerPeriod', reconciler, 'reconcilerPeriod')
    ? reconciler : DEFAULT_RECONCILER_PERIOD.toSeconds();
  // The alarms that FILL (lateTolerant) evaluate the periods of metricDelay more; one that breaks its rule is reported
  // by it, and the durations are then measured with the default.
  const givenDelay = durationSeconds(props.metricDelay);
  const delay = givenDelay !== undefined && ruleProblem(OBSERVABILITY_RULES.metricDelay, givenDelay) === undefined
    ? givenDelay : RECONCILER_TIMING_DEFAULTS.metricDelaySeconds;
  const duration = (prop: string, d: Duration | undefined, fills: boolean, periodSeconds = period) => {
    if (d === undefined) return;
    const seconds = durationSeconds(d)!;
    c.cross('alarm.duration', {
      seconds, human: d.isUnresolved() ? 'a CDK token' : d.toHumanString(), periodSeconds, metricDelaySeconds: fills ? delay : undefined,
    }, prop);
  };
  c.optional('fallbackShare.thresholdPercent', props.fallbackShare?.thresholdPercent);
  duration('fallbackShare.duration', props.fallbackShare?.duration, m !== undefined && m.fallbackPools.length > 0);
  c.cross('fallbackShare.basis', props.fallbackShare?.basis);
  c.optional('deadlineExhaustion.thresholdPercent', props.deadlineExhaustion?.thresholdPercent);
  duration('deadlineExhaustion.duration', props.deadlineExhaustion?.duration, true);
  c.optional('deadlineExhaustion.minRequestsPerPeriod', props.deadlineExhaustion?.minRequestsPerPeriod);
  // The same bounds as the deadline alarm's share and floor (a percentage, a whole number of requests).
  c.optional('deadlineExhaustion.thresholdPercent', props.loadBalancerErrors?.thresholdPercent, 'loadBalancerErrors.thresholdPercent');
  duration('loadBalancerErrors.duration', props.loadBalancerErrors?.duration, true);
  c.optional('deadlineExhaustion.minRequestsPerPeriod', props.loadBalancerErrors?.minRequestsPerPeriod, 'loadBalancerErrors.minRequestsPerPeriod');
  c.optional('preferredCapacityErrors.threshold', props.preferredCapacityErrors?.threshold);
  c.optional('metricDelay', givenDelay);
  duration('preferredCapacityErrors.duration', props.preferredCapacityErrors?.duration, true);
  // FILLs where a refused scale-out is rolled back (replicaShortages); with facts that fail their own checks, as not.
  duration('replicaShortage.duration', props.replicaShortage?.duration, m !== undefined && routingTarget(m.facts).scaleOutsRollBack, runPeriod);
  duration('reconcilerHeartbeat.duration', props.reconcilerHeartbeat?.duration, false, runPeriod);
  return c.problems;
}
