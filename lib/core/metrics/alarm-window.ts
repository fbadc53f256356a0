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
