/**
 * What a run triggered by a capacity alarm learns from the event that triggered it. The run's signal windows end
 * `metricDelaySeconds` ago, so the datapoint that just put the alarm in ALARM lies past them; the event itself is the
 * evidence. EventBridge's "CloudWatch Alarm State Change" event (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
 * cloudwatch-and-eventbridge.html, "Single Metric Alarm") carries the alarm's new state (`detail.state.value`) and the
 * metric it watches (`detail.configuration.metrics[].metricStat.metric`: `namespace`, `name`, `dimensions` as a
 * name-to-value map), and what it evaluated (`detail.state.reasonData`, a JSON string whose `recentDatapoints` are the
 * values that crossed the threshold). The Reconciler construct creates one alarm per capacity-error metric a class reads
 * (`Reconciler.capacityErrorAlarms`), so the metric names the class; an alarm on any other metric (a user's
 * `capacityAlarms`, a metric-math alarm) runs the reconciler without naming a class. CloudWatch evaluates a one-minute
 * alarm every minute and acts on state transitions (AlarmThatSendsEmail.html), so a shortage that persists triggers
 * one run, and the scheduled runs read its datapoints from then on; a duplicate event is one more run, and the runs make
 * at most one write of each kind per period.
 */
import { resolvePolicyConfig } from '../policy/defaults';
import { type ReconcilerConfig } from './config';
import { signalPlan } from './signal-sources';

/** The part of a "CloudWatch Alarm State Change" event a run reads; every field optional (a manual run has none). */
export interface AlarmStateChangeEvent {
  readonly 'detail-type'?: string;
  readonly detail?: {
    readonly state?: { readonly value?: string; readonly reasonData?: string };
    readonly configuration?: {
      readonly metrics?: ReadonlyArray<{
        readonly metricStat?: {
          readonly metric?: { readonly namespace?: string; readonly name?: string; readonly dimensions?: Readonly<Record<string, string>> };
        };
      }>;
    };
  };
}

export const ALARM_STATE_CHANGE = 'CloudWatch Alarm State Change';

/**
 * The routed classes whose capacity-error metric the triggering alarm watches, when the event says the alarm has just
 * gone to ALARM on a datapoint with at least one error (OK and INSUFFICIENT_DATA are no evidence, and neither is an
 * ALARM without such a datapoint: an alarm on the same metric with another comparison, or one set by hand with
 * `set-alarm-state` to test the wiring). Empty for any other trigger.
 */
export function alarmedClasses(config: ReconcilerConfig, event: AlarmStateChangeEvent | undefined): string[] {
  if (event?.['detail-type'] !== ALARM_STATE_CHANGE || event.detail?.state?.value !== 'ALARM') return [];
  // A single-metric alarm only: a metric-math alarm over several classes' errors (InferenceObservability's
  // PreferredCapacityErrors) does not say which of them fired; its run reads their datapoints instead.
  const metrics = event.detail.configuration?.metrics ?? [];
  const watched = metrics.length === 1 ? metrics[0]?.metricStat?.metric : undefined;
  if (!watched || !sawErrors(event.detail.state.reasonData)) return [];
  const classes = signalPlan(config, resolvePolicyConfig(config.policy).periodSeconds).classes;
  return Object.entries(classes).filter(([, sources]) => {
    const source = sources.capacityErrors;
    if (!source || !('metric' in source)) return false;
    const { namespace, metricName, dimensions } = source.metric;
    return watched.namespace === namespace && watched.name === metricName && sameDimensions(watched.dimensions ?? {}, dimensions);
  }).map(([name]) => name);
}

/** Whether the alarm's evaluated datapoints (`reasonData.recentDatapoints`) hold a count above 0. */
function sawErrors(reasonData: string | undefined): boolean {
  try {
    const recent: unknown = (JSON.parse(reasonData ?? '{}') as { recentDatapoints?: unknown }).recentDatapoints;
    return Array.isArray(recent) && recent.some((v) => typeof v === 'number' && v > 0);
  } catch {
    return false;
  }
}

function sameDimensions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
