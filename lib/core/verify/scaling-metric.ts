/**
 * The customized metric of each target-tracking policy in a deployed template (a SageMaker variant's per-pool policy,
 * `scaling.perPoolTargets`), and the check that CloudWatch accepts its metric math and answers it with data. Offline
 * the library can only read what the documents say about missing series and statistics (lib/core/metrics/
 * aws-published.ts `perPoolConcurrencyQueries`); GetMetricData on the policy's own queries settles it in the account.
 * Pure: bin/verify.ts makes the call.
 */
import { type CfnTemplate } from '../metrics/template-check';
import { CUSTOMIZED_METRIC_PERIOD_SECONDS } from '../platform/control-loop';
import { type CheckResult } from './result';

type Json = unknown;

/** One query of a policy's customized metric as GetMetricData takes it (`MetricDataQuery`). */
export interface ScalingQuery {
  readonly Id: string;
  readonly Label?: string;
  readonly Expression?: string;
  readonly MetricStat?: {
    readonly Metric: {
      readonly Namespace: string;
      readonly MetricName: string;
      readonly Dimensions: ReadonlyArray<{ readonly Name: string; readonly Value: string }>;
    };
    readonly Stat: string;
    readonly Period: number;
  };
  readonly ReturnData: boolean;
}

export interface ScalingMetricPolicy {
  readonly logicalId: string;
  /** The policy's queries, each metric at the period target tracking reads it at; undefined when a value is not a literal. */
  readonly queries?: readonly ScalingQuery[];
}


const str = (v: Json): string | undefined => (typeof v === 'string' ? v : undefined);

function query(raw: Json): ScalingQuery | undefined {
  // Anything but a plain object (null, an intrinsic function) is not read: the policy is then SKIP, never a crash.
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const q = raw as Record<string, Json>;
  const id = str(q.Id);
  if (id === undefined) return undefined;
  const base = { Id: id, ReturnData: q.ReturnData !== false, ...(str(q.Label) !== undefined ? { Label: str(q.Label) } : {}) };
  if (q.Expression !== undefined) return str(q.Expression) === undefined ? undefined : { ...base, Expression: str(q.Expression) };
  const stat = q.MetricStat as Record<string, Json> | undefined;
  const metric = stat?.Metric as Record<string, Json> | undefined;
  if (metric?.Dimensions !== undefined && !Array.isArray(metric.Dimensions)) return undefined;
  const dims = ((metric?.Dimensions as Json[] | undefined) ?? [])
    .map((d) => (d !== null && typeof d === 'object' ? { Name: str((d as Record<string, Json>).Name), Value: str((d as Record<string, Json>).Value) } : {}));
  const [namespace, name, s] = [str(metric?.Namespace), str(metric?.MetricName), str(stat?.Stat)];
  if (namespace === undefined || name === undefined || s === undefined) return undefined;
  if (dims.some((d) => d.Name === undefined || d.Value === undefined)) return undefined;
  return {
    ...base,
    MetricStat: {
      Metric: { Namespace: namespace, MetricName: name, Dimensions: dims as Array<{ Name: string; Value: string }> },
      Stat: s,
      Period: CUSTOMIZED_METRIC_PERIOD_SECONDS,
    },
  };
}

/** Every target-tracking policy of the template with a customized metric of several queries (metric math). */
export function scalingMetricPolicies(template: CfnTemplate): ScalingMetricPolicy[] {
  const out: ScalingMetricPolicy[] = [];
  for (const [logicalId, r] of Object.entries(template.Resources ?? {})) {
    if (r.Type !== 'AWS::ApplicationAutoScaling::ScalingPolicy') continue;
    const config = r.Properties?.TargetTrackingScalingPolicyConfiguration as Record<string, Json> | undefined;
    const metrics = (config?.CustomizedMetricSpecification as Record<string, Json> | undefined)?.Metrics;
    if (!Array.isArray(metrics)) continue;
    const queries = (metrics as Json[]).map(query);
    out.push({ logicalId, queries: queries.every((q) => q !== undefined) ? (queries as ScalingQuery[]) : undefined });
  }
  return out;
}

/** What GetMetricData answered for a policy's queries (by query id, with any messages it attached), or the error it raised. */
export type ScalingMetricAnswer =
  | { readonly results: ReadonlyArray<{ readonly id: string; readonly values: readonly number[] }>; readonly messages?: readonly string[] }
  | { readonly error: string };

/**
 * Pass when CloudWatch accepts the queries and the returned series has datapoints in the window; fail on an error (the
 * expression or a statistic is refused: the policy's alarms cannot evaluate) or no datapoints (its alarms sit in
 * INSUFFICIENT_DATA: that policy neither scales out nor, as scale-in needs every policy, lets the target scale in).
 */
export function scalingMetricCheck(policy: ScalingMetricPolicy, answer: ScalingMetricAnswer | undefined, windowHours: number): CheckResult {
  const id = `scaling-metric:${policy.logicalId}`;
  const settles = `the customized metric of scaling policy ${policy.logicalId} is accepted by CloudWatch and has data`;
  if (!policy.queries || answer === undefined) {
    return { id, status: 'skip', settles, detail: 'a value of its queries is a CloudFormation token in the template: not queried' };
  }
  if ('error' in answer) {
    return { id, status: 'fail', settles, detail: `GetMetricData failed (a ValidationError means CloudWatch does not accept the queries): ${answer.error}` };
  }
  const returned = policy.queries.find((q) => q.ReturnData)?.Id;
  const values = answer.results.find((r) => r.id === returned)?.values ?? [];
  const counts = policy.queries.filter((q) => q.MetricStat)
    .map((q) => ({ label: q.Label ?? q.Id, n: answer.results.find((r) => r.id === q.Id)?.values.length ?? 0 }));
  const messages = answer.messages && answer.messages.length > 0 ? `; CloudWatch says: ${answer.messages.join('; ')}` : '';
  const perMetric = counts.map((c) => `${c.label}: ${c.n}`).join('; ') + messages;
  // A pool with no datapoints is expected while it has no instances; had it instances, the policy could not see them.
  const silent = counts.filter((c) => c.n === 0).map((c) => c.label);
  const caveat = silent.length > 0
    ? `. No datapoints for ${silent.join(', ')}: expected if those pools had no instances in the window (else the policy cannot see them; `
      + 'DescribeEndpoint lists the instances per type)'
    : '';
  if (values.length === 0) {
    return {
      id, status: 'fail', settles,
      detail: `no datapoints of '${returned}' in the last ${windowHours} h (datapoints per metric: ${perMetric}): its alarms have no data, so `
        + 'this policy cannot scale out and the target cannot scale in (traffic-driven metrics need traffic)',
    };
  }
  return {
    id, status: 'pass', settles,
    detail: `${values.length} datapoints of '${returned}' in the last ${windowHours} h, newest ${values[0]} (datapoints per metric: ${perMetric})${caveat}`,
  };
}
