/**
 * The customized metric of each target-tracking policy in a deployed template (a SageMaker variant's per-pool policy,
 * `scaling.perPoolTargets`), and the check that CloudWatch accepts its metric math and answers it with data. Offline
 * the library can only read what the documents say about missing series and statistics (lib/core/metrics/
 * aws-published.ts `perPoolConcurrencyQueries`); GetMetricData on the policy's own queries settles it in the account.
 * The queries are the live policy's (Application Auto Scaling DescribeScalingPolicies, matched by the ARN the stack
 * lists as the policy's physical id), whose values are resolved; the template's are used only when no live policy was
 * read, and hold a CloudFormation token wherever the template does (an endpoint name given as a token). Pure:
 * bin/verify.ts makes the calls.
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

/**
 * The filters of a DescribeScalingPolicies request that narrow the answer to the policy: its service namespace (the
 * policy's or its scalable target's, `sagemaker` when the template gives neither as a literal), and its resource id
 * and name when the template gives them as literals. The policy is then matched by its ARN.
 */
export interface ScalingPolicyLookup {
  readonly ServiceNamespace: string;
  readonly ResourceId?: string;
  readonly PolicyNames?: readonly string[];
}

export interface ScalingMetricPolicy {
  readonly logicalId: string;
  /** Where Application Auto Scaling lists the live policy. */
  readonly lookup: ScalingPolicyLookup;
  /** The template's queries, each metric at the period target tracking reads it at; undefined when a value is not a literal. */
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

const field = (v: Json, key: string): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Json>)[key] : undefined);

/**
 * The queries of a TargetTrackingScalingPolicyConfiguration's customized metric: `metrics: false` when it has no
 * `Metrics` list (not metric math), `queries` undefined when an entry is not read. The template's property and
 * Application Auto Scaling's `ScalingPolicy` carry the same shape: `TargetTrackingMetricDataQuery` (Id, Label,
 * Expression, MetricStat, ReturnData) whose `TargetTrackingMetricStat` is Metric (Namespace, MetricName, Dimensions
 * of Name and Value), Stat and Unit, with no Period: target tracking reads a customized metric at one minute, so each
 * metric is queried at CUSTOMIZED_METRIC_PERIOD_SECONDS (@aws-sdk/client-application-auto-scaling@3.1141.0
 * dist-types/models/models_0.d.ts:2544-2670 and CustomizedMetricSpecification.Metrics at :2732).
 */
function configQueries(config: Json): { readonly metrics: boolean; readonly queries?: ScalingQuery[] } {
  const metrics = field(field(config, 'CustomizedMetricSpecification'), 'Metrics');
  if (!Array.isArray(metrics)) return { metrics: false };
  const queries = (metrics as Json[]).map(query);
  return { metrics: true, queries: queries.every((q) => q !== undefined) ? (queries as ScalingQuery[]) : undefined };
}

/** Every target-tracking policy of the template with a customized metric of several queries (metric math). */
export function scalingMetricPolicies(template: CfnTemplate): ScalingMetricPolicy[] {
  const out: ScalingMetricPolicy[] = [];
  const resources = template.Resources ?? {};
  for (const [logicalId, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::ApplicationAutoScaling::ScalingPolicy') continue;
    const read = configQueries(r.Properties?.TargetTrackingScalingPolicyConfiguration);
    if (!read.metrics) continue;
    // The policy names its scalable target either by its own ResourceId and ServiceNamespace or by ScalingTargetId.
    const targetId = str(field(r.Properties?.ScalingTargetId, 'Ref'));
    const target = targetId !== undefined ? resources[targetId]?.Properties : undefined;
    const namespace = str(r.Properties?.ServiceNamespace) ?? str(target?.ServiceNamespace) ?? 'sagemaker';
    const resourceId = str(r.Properties?.ResourceId) ?? str(target?.ResourceId);
    const policyName = str(r.Properties?.PolicyName);
    const lookup: ScalingPolicyLookup = {
      ServiceNamespace: namespace,
      ...(resourceId !== undefined ? { ResourceId: resourceId } : {}),
      ...(policyName !== undefined ? { PolicyNames: [policyName] } : {}),
    };
    out.push({ logicalId, lookup, queries: read.queries });
  }
  return out;
}

/**
 * The policy ARN in a ScalingPolicy's physical id (ListStackResources), or undefined when it holds none. CloudFormation
 * documents `Ref` of AWS::ApplicationAutoScaling::ScalingPolicy as the policy's ARN
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-applicationautoscaling-scalingpolicy.html,
 * "Return values"); the resource's registry schema names `[Arn, ScalableDimension]` its primary identifier, and
 * aws-cdk-lib 2.269.0's generated `CfnScalingPolicy.scalingPolicyRef` reads `Ref` as the two joined by '|'
 * (aws-applicationautoscaling/lib/applicationautoscaling.generated.js). Either way the ARN is the part before a '|'.
 */
export function policyArnOf(physicalResourceId: string | undefined): string | undefined {
  const arn = physicalResourceId?.split('|')[0];
  return arn?.startsWith('arn:') ? arn : undefined;
}

/** What Application Auto Scaling gave for the policy: the live `ScalingPolicy` as DescribeScalingPolicies returned it, or why none was read. */
export type LivePolicyRead = { readonly policy: Json } | { readonly missing: string };

/** The queries the check sends and where they come from, or why it sends none (SKIP). */
export type ScalingQueryPlan =
  | { readonly logicalId: string; readonly queries: readonly ScalingQuery[]; readonly source: string }
  | { readonly logicalId: string; readonly skip: string };

/**
 * The live policy's queries when Application Auto Scaling returned the policy (its values are resolved), else the
 * template's when they are all literals, else none: SKIP, naming why no live policy was read.
 */
export function scalingQueryPlan(policy: ScalingMetricPolicy, live: LivePolicyRead): ScalingQueryPlan {
  const { logicalId } = policy;
  let why: string;
  if ('policy' in live) {
    const read = configQueries(field(live.policy, 'TargetTrackingScalingPolicyConfiguration'));
    if (read.queries) return { logicalId, queries: read.queries, source: 'the live policy (DescribeScalingPolicies)' };
    why = read.metrics ? 'the live policy has a query this check cannot read' : 'the live policy has no metric math';
  } else {
    why = live.missing;
  }
  if (policy.queries) return { logicalId, queries: policy.queries, source: `the deployed template (no live policy read: ${why})` };
  return { logicalId, skip: `a value of its queries is a CloudFormation token in the template and no live policy was read (${why}): not queried` };
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
export function scalingMetricCheck(plan: ScalingQueryPlan, answer: ScalingMetricAnswer | undefined, windowHours: number): CheckResult {
  const id = `scaling-metric:${plan.logicalId}`;
  const settles = `the customized metric of scaling policy ${plan.logicalId} is accepted by CloudWatch and has data`;
  if ('skip' in plan) return { id, status: 'skip', settles, detail: plan.skip };
  if (answer === undefined) return { id, status: 'skip', settles, detail: 'not queried' };
  const from = `; queries from ${plan.source}`;
  if ('error' in answer) {
    return {
      id, status: 'fail', settles, detail: `GetMetricData failed (a ValidationError means CloudWatch does not accept the queries): ${answer.error}${from}`,
    };
  }
  const returned = plan.queries.find((q) => q.ReturnData)?.Id;
  const values = answer.results.find((r) => r.id === returned)?.values ?? [];
  const counts = plan.queries.filter((q) => q.MetricStat)
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
        + `this policy cannot scale out and the target cannot scale in (traffic-driven metrics need traffic)${from}`,
    };
  }
  return {
    id, status: 'pass', settles,
    detail: `${values.length} datapoints of '${returned}' in the last ${windowHours} h, newest ${values[0]} (datapoints per metric: ${perMetric})${caveat}${from}`,
  };
}
