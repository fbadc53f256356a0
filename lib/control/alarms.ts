import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { Metrics } from '../core/metrics/contract';
import { numberProblem } from '../core/validation/checker';
import { OBSERVABILITY_RULES } from '../core/validation/rules';
import { durationSeconds } from '../util/duration';
import { encryptedAlarmTopic, notifyOnAlarmAndOk } from './alarm-topic';

/** CloudWatch: a metric-math alarm reads at most 10 metrics. */
const MAX_ALARM_METRICS = 10;
import { metricId, observedClasses, serviceObservabilityProblems, ServiceMetrics, type ServiceObservabilityProps, throwIfProblems } from './service-metrics';

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
   * provisioning timeout); the reconciler reads the same condition when this alarm triggers it
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
   * Where every alarm sends its ALARM and OK notifications.
   * @default - a new SNS topic encrypted with a new customer managed KMS key (rotation on; CloudWatch may use it) that
   * accepts only TLS publishers
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
}

export interface InferenceAlarmsProps extends ServiceObservabilityProps, InferenceAlarmOptions {}

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
    throwIfProblems('InferenceAlarms', this.node.path, [...serviceObservabilityProblems(props), ...alarmOptionProblems(props)]);
    const m = new ServiceMetrics(props.serving.servingDescription(), props.period);
    this.metrics = m;
    const svc = m.service;

    if (props.alarmTopic) {
      this.topic = props.alarmTopic;
    } else {
      const created = encryptedAlarmTopic(this, 'Topic', svc);
      this.topic = created.topic;
      this.topicKey = created.key;
    }

    const fallback = { ...ALARM_DEFAULTS.fallbackShare, ...props.fallbackShare };
    const deadline = { ...ALARM_DEFAULTS.deadlineExhaustion, ...props.deadlineExhaustion };
    const capacity = { ...ALARM_DEFAULTS.preferredCapacityErrors, ...props.preferredCapacityErrors };
    const shortage = { ...ALARM_DEFAULTS.replicaShortage, ...props.replicaShortage };
    const heartbeat = { ...ALARM_DEFAULTS.reconcilerHeartbeat, ...props.reconcilerHeartbeat };
    const periods = (d: Duration) => Math.round(durationSeconds(d)! / m.period.toSeconds());

    // A service without fallback classes has no fallback share to watch.
    if (fallback.enabled !== false && m.fallback.length > 0) {
      this.fallbackShareAlarm = new cloudwatch.Alarm(this, 'FallbackShare', {
        metric: m.fallbackShare(fallback.basis, 'fs'),
        threshold: fallback.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods(fallback.duration),
        datapointsToAlarm: periods(fallback.duration),
        // No datapoint means no traffic in the period: nothing is on fallback.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${svc}: more than ${fallback.thresholdPercent}% of the load (by ${fallback.basis}) has been served by fallback classes `
          + `for ${fallback.duration.toHumanString()}. The preferred class is short of capacity or unhealthy. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), FallbackShare.',
      });
    }

    // The producer is the platform: each class's server sheds what its deadline-sized admission limit cannot serve in
    // time, with its engine's status, and SageMaker or the ALB counts it (ServiceMetrics.shedRequests).
    if (deadline.enabled !== false) {
      const using: Record<string, cloudwatch.IMetric> = {};
      for (const c of m.classes) {
        using[metricId('sh', c.index)] = m.shedRequests(c);
        using[metricId('rq', c.index)] = m.requests(c);
      }
      const sum = (prefix: string) => m.classes.map((c) => `FILL(${metricId(prefix, c.index)}, 0)`).join(' + ');
      this.deadlineExhaustionAlarm = new cloudwatch.Alarm(this, 'DeadlineExhaustion', {
        metric: new cloudwatch.MathExpression({
          expression: `IF((${sum('rq')}) >= ${deadline.minRequestsPerPeriod}, 100 * (${sum('sh')}) / (${sum('rq')}), 0)`,
          usingMetrics: using,
          label: 'requests shed to protect the deadline (% of arriving requests)',
          period: m.period,
        }),
        threshold: deadline.thresholdPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods(deadline.duration),
        datapointsToAlarm: periods(deadline.duration),
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${svc}: the model servers shed more than ${deadline.thresholdPercent}% of arriving requests to protect the deadline for ${deadline.duration.toHumanString()}. `
          + 'No class can meet the contract for the current load: the service is shedding. Runbook: docs/observability.md (cdk-capacity-aware-inference), DeadlineExhaustion.',
      });
    }

    const capacityAlarms: cloudwatch.Alarm[] = [];
    // Only classes whose platform produces capacity errors (EKS: Karpenter's log line); SageMaker shortages show as
    // replica shortages.
    const producing = m.preferred.filter((c) => m.capacityErrors(c) !== undefined);
    if (capacity.enabled !== false && producing.length > 0) {
      const using: Record<string, cloudwatch.IMetric> = Object.fromEntries(producing.map((c) => [metricId('ce', c.index), m.capacityErrors(c)!]));
      const names = producing.map((c) => c.facts.name).join(', ');
      this.preferredCapacityErrorsAlarm = new cloudwatch.Alarm(this, 'PreferredCapacityErrors', {
        metric: new cloudwatch.MathExpression({
          // FILL: a period without a matching log line has no datapoint.
          expression: Object.keys(using).map((id) => `FILL(${id}, 0)`).join(' + '),
          usingMetrics: using,
          label: `capacity errors on ${names}`,
          period: m.period,
        }),
        threshold: capacity.threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: periods(capacity.duration),
        datapointsToAlarm: periods(capacity.duration),
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${svc}: the preferred class (${names}) reported capacity errors (Karpenter could not launch a node: insufficient capacity). `
          + 'The reconciler is triggered to move load to fallback classes. Runbook: docs/observability.md (cdk-capacity-aware-inference), PreferredCapacityErrors.',
      });
      capacityAlarms.push(this.preferredCapacityErrorsAlarm);
    }

    const shortages: cloudwatch.Alarm[] = [];
    if (shortage.enabled !== false) {
      for (const route of m.routes) {
        const d = metricId('d', route.index);
        const r = metricId('r', route.index);
        const what = route.classes.map((c) => `${c.facts.name} on ${c.facts.instanceType}`).join(', ');
        shortages.push(new cloudwatch.Alarm(this, `ReplicaShortage${route.index}`, {
          metric: new cloudwatch.MathExpression({
            expression: `${d} - ${r}`,
            usingMetrics: { [d]: m.perRoute(Metrics.desiredReplicas, route), [r]: m.perRoute(Metrics.readyReplicas, route) },
            label: `${route.name} desired - ready replicas`,
            period: m.period,
          }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: periods(shortage.duration),
          datapointsToAlarm: periods(shortage.duration),
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription: `${svc}: ${route.name} (${what}) has wanted more replicas than are ready for `
            + `${shortage.duration.toHumanString()}: capacity is not arriving. Runbook: docs/observability.md (cdk-capacity-aware-inference), ReplicaShortage.`,
        }));
      }
      capacityAlarms.push(...shortages);
    }
    this.replicaShortageAlarms = shortages;

    if (heartbeat.enabled !== false) {
      this.reconcilerHeartbeatAlarm = new cloudwatch.Alarm(this, 'ReconcilerHeartbeat', {
        metric: m.perService(Metrics.decisions, { statistic: 'SampleCount' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: periods(heartbeat.duration),
        datapointsToAlarm: periods(heartbeat.duration),
        // No datapoint is the symptom: the reconciler did not run, or failed before it decided.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        alarmDescription: `${svc}: the reconciler has recorded no decision for ${heartbeat.duration.toHumanString()}; weights are frozen. `
          + 'Runbook: docs/observability.md (cdk-capacity-aware-inference), ReconcilerHeartbeat.',
      });
    }

    this.capacityAlarms = capacityAlarms;
    this.alarms = [this.fallbackShareAlarm, this.deadlineExhaustionAlarm, ...capacityAlarms, this.reconcilerHeartbeatAlarm]
      .filter((a): a is cloudwatch.Alarm => a !== undefined);
    notifyOnAlarmAndOk(this.topic, this.alarms as cloudwatch.Alarm[]);
  }
}

/** Every problem of the alarm options. */
export function alarmOptionProblems(props: InferenceAlarmOptions & Partial<ServiceObservabilityProps>): string[] {
  const problems: string[] = [];
  const facts = props.serving?.servingDescription().routing;
  if (facts && props.fallbackShare?.enabled !== false) {
    const n = observedClasses(facts).length;
    if (n > MAX_ALARM_METRICS) {
      problems.push(`prop serving: ${n} capacity classes; the fallback share alarm reads one metric per class and an alarm at most `
        + `${MAX_ALARM_METRICS}; allowed: at most ${MAX_ALARM_METRICS} classes, or fallbackShare.enabled: false`);
    }
  }
  if (facts && props.deadlineExhaustion?.enabled !== false) {
    const n = observedClasses(facts).length;
    if (2 * n > MAX_ALARM_METRICS) {
      problems.push(`prop serving: ${n} capacity classes; the deadline exhaustion alarm reads two metrics per class (shed and arriving requests) `
        + `and an alarm at most ${MAX_ALARM_METRICS}; allowed: at most ${MAX_ALARM_METRICS / 2} classes, or deadlineExhaustion.enabled: false`);
    }
  }
  if (facts && props.preferredCapacityErrors?.enabled !== false) {
    const ranks = observedClasses(facts).map((c) => c.facts.preferenceRank);
    const best = ranks.filter((r) => r === Math.min(...ranks)).length;
    // One metric per preferred class; a CloudWatch metric-math alarm reads at most 10 metrics.
    if (best > MAX_ALARM_METRICS) {
      problems.push(`prop serving: ${best} classes share the best preference rank; the preferred-class capacity error alarm reads `
        + `one metric per class and an alarm at most ${MAX_ALARM_METRICS}; allowed: at most ${MAX_ALARM_METRICS} classes of the best rank, `
        + 'or preferredCapacityErrors.enabled: false');
    }
  }
  const period = durationSeconds(props.period) ?? 60;
  const duration = (prop: string, d: Duration | undefined) => {
    if (d === undefined) return;
    const s = durationSeconds(d)!;
    if (!(Number.isFinite(s) && s >= period && s % period === 0 && s <= 86400)) {
      const got = d.isUnresolved() ? 'a CDK token' : d.toHumanString();
      problems.push(`prop ${prop}: got ${got}; allowed: ${OBSERVABILITY_RULES['alarm.duration'].allowed.replace('periods', `periods (${period} s)`)}`);
    }
  };
  const numeric = (prop: keyof typeof OBSERVABILITY_RULES & ('fallbackShare.thresholdPercent' | 'deadlineExhaustion.thresholdPercent'
    | 'deadlineExhaustion.minRequestsPerPeriod' | 'preferredCapacityErrors.threshold'), v: number | undefined) => {
    const problem = v === undefined ? undefined : numberProblem(OBSERVABILITY_RULES[prop], v);
    if (problem) problems.push(`prop ${prop}: ${problem}`);
  };
  const percent = numeric;
  percent('fallbackShare.thresholdPercent', props.fallbackShare?.thresholdPercent);
  duration('fallbackShare.duration', props.fallbackShare?.duration);
  const basis = props.fallbackShare?.basis;
  if (basis !== undefined && basis !== 'tokens' && basis !== 'requests') {
    problems.push(`prop fallbackShare.basis: got '${basis}'; allowed: 'tokens' or 'requests'`);
  }
  percent('deadlineExhaustion.thresholdPercent', props.deadlineExhaustion?.thresholdPercent);
  duration('deadlineExhaustion.duration', props.deadlineExhaustion?.duration);
  numeric('deadlineExhaustion.minRequestsPerPeriod', props.deadlineExhaustion?.minRequestsPerPeriod);
  numeric('preferredCapacityErrors.threshold', props.preferredCapacityErrors?.threshold);
  duration('preferredCapacityErrors.duration', props.preferredCapacityErrors?.duration);
  duration('replicaShortage.duration', props.replicaShortage?.duration);
  duration('reconcilerHeartbeat.duration', props.reconcilerHeartbeat?.duration);
  return problems;
}
