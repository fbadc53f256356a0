import { periodsOutlastingScaleOut } from '../policy/defaults';

/**
 * An alarm's M of N when one of its metrics may publish its newest period late: the one computation of that margin,
 * for the alarms (lib/control/alarms.ts, the Reconciler's missing-data alarm) and for the rule that bounds their
 * durations (OBSERVABILITY_RULES 'alarm.duration', lib/core/validation/rules.ts). Pure: no aws-cdk-lib.
 *
 * An alarm "is evaluated every minute and the evaluation is based on the window of time defined by the Period and
 * Evaluation Periods", so a period not yet published is in the window; without FILL, CloudWatch reads a wider
 * *evaluation range* and judges "the most recent real data points", so a late datapoint only waits, but a FILLed one
 * reads as the fill value and the real one is judged only while it is still among the last N (CloudWatch user guide,
 * "Evaluating an alarm" and "How alarm state is evaluated when data is missing",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html;
 * awsdocs/amazon-cloudwatch-user-guide@b355497 doc_source/AlarmThatSendsEmail.md:39, :90-95, :189). `metricDelaySeconds`
 * is no default: it is what the user declared (InferenceAlarms' and the Reconciler's `metricDelay`, one rule, the
 * Reconciler refusing a longer one than its alarms': RECONCILER_RULES 'metricDelay@alarms').
 */
import { maxAlarmEvaluationSeconds } from '../platform/limits';

/** An alarm's M of N: `datapointsToAlarm` breaching periods within the last `evaluationPeriods`. */
export interface AlarmWindow {
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
}

/** The periods N exceeds M by: those of `metricDelaySeconds`, at least one (the newest period may always be unpublished). */
export function latePeriods(periodSeconds: number, metricDelaySeconds: number): number {
  return Math.max(1, Math.ceil(metricDelaySeconds / periodSeconds));
}

/**
 * `datapointsToAlarm` (M) out of M + `latePeriods` (N). N x period must be within `maxAlarmEvaluationSeconds`: the
 * durations that would not fit are refused at synth ('alarm.duration'), never fitted by shrinking the margin, which
 * would leave an alarm that FILLs no room for a late datapoint. A window that does not fit here is a bug of the caller.
 */
export function lateTolerantWindow(datapointsToAlarm: number, periodSeconds: number, metricDelaySeconds: number): AlarmWindow {
  const evaluationPeriods = datapointsToAlarm + latePeriods(periodSeconds, metricDelaySeconds);
  if (evaluationPeriods * periodSeconds > maxAlarmEvaluationSeconds(periodSeconds)) {
    throw new Error(`an M of N alarm of ${datapointsToAlarm} + ${evaluationPeriods - datapointsToAlarm} periods of ${periodSeconds} s exceeds `
      + `the ${maxAlarmEvaluationSeconds(periodSeconds)} s CloudWatch evaluates: its duration should have been refused at synth (alarm.duration)`);
  }
  return { datapointsToAlarm, evaluationPeriods };
}

/**
 * The default duration, in seconds, of a routed class's replica-shortage alarm (InferenceAlarms' `replicaShortage`) at
 * `periodSeconds`, the reconciler's period (one datapoint per run): `leastSeconds` (its 5 minutes, the policy's default
 * provisioning grace) in whole periods, and where the class declares its measured p95 replica-ready time
 * (`envelope.replicaReadyTimeP95Seconds`; a SageMaker variant its slowest pool: `graceClassesFromFacts`), enough periods
 * that a scale-out ending within that time never breaches them all: the time's periods rounded up, plus two.
 *
 * The Reconciler's grace follows the same declaration (`defaultProvisioningGraceSeconds`, lib/core/policy/defaults.ts),
 * and its shortest safe grace where its window is all published periods (EKS) is this same count
 * (`periodsOutlastingScaleOut`). No metric delay in the alarm: each of its datapoints holds two counts one run read
 * together (on EKS the same published period of both series, the newest one, `metricDelay` back: `observations`,
 * lib/core/reconciler/targets/alb.ts; on SageMaker one DescribeEndpoint, `PendingScaleOut`). A late publication moves
 * when a shortage shows, not how many datapoints it covers; a datapoint that lands late is what N's extra periods wait
 * for (`lateTolerantWindow`), not M.
 * Two periods, not a rounding: a datapoint breaches if any part of the shortage is in its period (EKS reads the period's
 * Maximum desired and Minimum ready, "the highest/lowest value observed during the specified period", aws-cdk-lib
 * 2.269.0 aws-cloudwatch/lib/stats.d.ts:19-24; SageMaker the Maximum `PendingScaleOut` of the runs in it, runs a
 * capacity alarm triggers coming between the scheduled ones). At one-minute periods a 420 s scale-out can breach 8, and
 * 7 (420 s rounded up) would page on every scale-out that takes its p95 time.
 * With the declared time within its rule (at most 10,800 s) and the reconciler period within its own (at most 6 hours),
 * the window, the late periods of a 900 s `metricDelay` included, stays within what CloudWatch evaluates
 * (`maxAlarmEvaluationSeconds`): at most 10,800 s + 4 periods + 900 s.
 */
export function defaultReplicaShortageSeconds(readyTimeSeconds: number | undefined, periodSeconds: number, leastSeconds: number): number {
  const least = Math.max(1, Math.ceil(leastSeconds / periodSeconds));
  const periods = readyTimeSeconds === undefined ? least : Math.max(least, periodsOutlastingScaleOut(readyTimeSeconds, periodSeconds));
  return periods * periodSeconds;
}
