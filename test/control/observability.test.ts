import { Duration, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import {
  type AlbRoutingFacts,
  type RoutedClassFacts,
  type SageMakerRoutingFacts,
} from '../../lib/core/reconciler/routing-facts';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { checkCapacityClasses } from '../../lib/core/service/checks';
import { ALARM_DEFAULTS, InferenceAlarms, InferenceDashboard, InferenceObservability } from '../../lib/control/observability';
import { findPublishedMetric } from '../../lib/core/metrics/aws-published';
import { classDimensions, METRIC_NAMESPACE, Metrics } from '../../lib/core/metrics/contract';
import { maxAlarmEvaluationSeconds } from '../../lib/core/platform/limits';
import { OBSERVABILITY_RULES, RECONCILER_RULES } from '../../lib/core/validation/rules';
import { llamaClasses, nagFindings, nistFindings, testStack } from '../util';
import { albFactsOf, servingOf } from './serving-fixture';

// ---------------------------------------------------------------------------------------------------------------
// GIVEN: the llama classes resolved by the real checks, as a SageMaker endpoint (one preferred variant, one fallback
// variant with two instance pools) and as an ALB on EKS (one target group per class)
// ---------------------------------------------------------------------------------------------------------------

function resolved(prefix: string): CapacityClass[] {
  const { classes, problems } = checkCapacityClasses(llamaClasses(prefix), { platform: prefix ? 'sagemaker' : 'ec2' });
  expect(problems).toEqual([]);
  return classes;
}

function routed(c: CapacityClass): RoutedClassFacts {
  return {
    name: c.name,
    preferenceRank: c.preferenceRank,
    tokensPerSecondPerReplica: c.envelope.tokensPerSecondPerReplica,
    safeConcurrency: c.envelope.safeConcurrency,
    usdPerReplicaHour: c.usdPerReplicaHour,
    allowSensitive: c.placement.allowSensitive,
    maxReplicas: c.maxReplicas,
    instanceType: c.instanceType,
  };
}

const SM_CLASSES = resolved('ml.').map(routed);
const SAGEMAKER: SageMakerRoutingFacts = {
  kind: 'sagemaker',
  endpointName: 'llama3-chat',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llama3-chat',
  variants: [
    { variantName: 'preferred', classes: [SM_CLASSES[0]] },
    { variantName: 'fallback', classes: [SM_CLASSES[1], SM_CLASSES[2]] },
  ],
};

const EC2_CLASSES = resolved('').map(routed);
const ALB: AlbRoutingFacts = albFactsOf(EC2_CLASSES);

type Widget = { type: string; x: number; y: number; width: number; height: number; properties: Record<string, unknown> & { title?: string } };
type MetricRow = unknown[];

/** The dashboard body with CloudFormation references (region, alarm ARNs) replaced by placeholders, parsed. */
function dashboardWidgets(stack: Stack, template: Template): Widget[] {
  const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
  expect(Object.keys(dashboards)).toHaveLength(1);
  const body = stack.resolve(Object.values(dashboards)[0].Properties.DashboardBody);
  const text = typeof body === 'string' ? body : (body['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'REF')).join('');
  return JSON.parse(text).widgets;
}

/** The dashboard's periodOverride (auto: each graph's period adapts to the time range). */
function dashboardPeriodOverride(stack: Stack, template: Template): unknown {
  const body = stack.resolve(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
  const text = typeof body === 'string' ? body : (body['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'REF')).join('');
  return JSON.parse(text).periodOverride;
}

function widget(widgets: Widget[], title: string): Widget {
  const found = widgets.find((w) => w.properties.title === title);
  if (!found) throw new Error(`no widget '${title}'; titles: ${widgets.map((w) => w.properties.title).join(' | ')}`);
  return found;
}

function rows(w: Widget): MetricRow[] {
  return w.properties.metrics as MetricRow[];
}

/** The expressions of a graph, in order. */
function expressions(w: Widget): string[] {
  return rows(w).flatMap((r) => (r.length === 1 && typeof r[0] === 'object' ? [(r[0] as { expression: string }).expression] : []));
}

/** A metric row as `namespace name dim=value... stat`, dimensions sorted, options reduced to the statistic. */
function metricKeys(w: Widget): string[] {
  return rows(w)
    .filter((r) => typeof r[0] === 'string')
    .map((r) => {
      const opts = (typeof r[r.length - 1] === 'object' ? r[r.length - 1] : {}) as { stat?: string };
      const parts = r.filter((p) => typeof p === 'string') as string[];
      const dims: string[] = [];
      for (let i = 2; i < parts.length; i += 2) dims.push(`${parts[i]}=${parts[i + 1]}`);
      return `${parts[0]} ${parts[1]} ${dims.sort().join(' ')} ${opts.stat ?? 'Average'}`;
    });
}

type AlarmProps = Record<string, unknown> & { Metrics?: Array<Record<string, unknown>>; AlarmDescription: string };

function alarmsByDescription(template: Template, fragment: string): AlarmProps[] {
  return Object.values(template.findResources('AWS::CloudWatch::Alarm'))
    .map((r) => r.Properties as AlarmProps)
    .filter((p) => p.AlarmDescription.includes(fragment));
}

function oneAlarm(template: Template, fragment: string): AlarmProps {
  const found = alarmsByDescription(template, fragment);
  expect(found).toHaveLength(1);
  return found[0];
}

function mathOf(alarm: AlarmProps): { expression: string; metrics: string[] } {
  const metrics = alarm.Metrics ?? [];
  const expr = metrics.find((q) => q.Expression !== undefined);
  const stats = metrics.filter((q) => q.MetricStat !== undefined).map((q) => {
    type Dimension = { Name: string; Value: string };
    const ms = q.MetricStat as { Metric: { Namespace: string; MetricName: string; Dimensions: Dimension[] }; Stat: string };
    const dims = (ms.Metric.Dimensions ?? []).map((d) => `${d.Name}=${d.Value}`).sort().join(' ');
    return `${q.Id} ${ms.Metric.Namespace} ${ms.Metric.MetricName} ${dims} ${ms.Stat}`;
  });
  return { expression: expr?.Expression as string, metrics: stats };
}

// ---------------------------------------------------------------------------------------------------------------
// SageMaker: the full construct with defaults
// ---------------------------------------------------------------------------------------------------------------

describe('InferenceObservability on a SageMaker endpoint, defaults', () => {
  let stack: Stack;
  let template: Template;
  let widgets: Widget[];
  let obs: InferenceObservability;

  beforeAll(() => {
    ({ stack } = testStack());
    obs = new InferenceObservability(stack, 'Obs', { serving: servingOf(SAGEMAKER, 'llama3-chat') });
    template = Template.fromStack(stack);
    widgets = dashboardWidgets(stack, template);
  });

  test('the summary names the endpoint and every class with price, envelope and cost at the envelope, in preference order', () => {
    const md = widgets[0].properties.markdown as string;
    expect(md).toContain('SageMaker endpoint `llama3-chat`');
    const lines = md.split('\n').filter((l) => /^\| \d/.test(l));
    expect(lines.map((l) => l.split('|')[2].trim())).toEqual(['l40s', 'a10g', 'inf2']);
    // l40s: 2.61 USD/h on ml.g6e.xlarge, 1200 tokens/s -> 2.61 / (3600 x 1200) x 1e6 = 0.60 USD per 1M tokens
    expect(lines[0]).toContain('| 0 | l40s | ml.g6e.xlarge | 2.610 | 1200 | 0.60 | 8 |');
  });

  test('request share per class comes from SageMaker Invocations, by variant and by instance type inside a multi-pool variant', () => {
    const w = widget(widgets, 'Request share per class (%)');
    expect(expressions(w)).toEqual([
      '100 * rq0 / SUM([rq0, rq1, rq2])',
      '100 * rq1 / SUM([rq0, rq1, rq2])',
      '100 * rq2 / SUM([rq0, rq1, rq2])',
    ]);
    expect(metricKeys(w)).toEqual([
      'AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum',
      'AWS/SageMaker Invocations EndpointName=llama3-chat InstanceType=ml.g5.xlarge VariantName=fallback Sum',
      'AWS/SageMaker Invocations EndpointName=llama3-chat InstanceType=ml.inf2.xlarge VariantName=fallback Sum',
    ]);
    expect(w.properties.stacked).toBe(true);
    expect(w.properties.yAxis).toEqual({ left: { min: 0, max: 100, label: '%', showUnits: false } });
  });

  test('token share sits next to request share: SageMaker counts no tokens, so requests x the mean output tokens', () => {
    const req = widget(widgets, 'Request share per class (%)');
    const tok = widget(widgets, 'Token share per class (%)');
    expect(tok.y).toBe(req.y);
    expect(tok.x).toBe(req.x + req.width);
    expect(expressions(tok)).toEqual(expect.arrayContaining(['tkxr0 * 250', 'tkxr1 * 250', 'tkxr2 * 250', '100 * tk0 / SUM([tk0, tk1, tk2])']));
    expect(metricKeys(tok)).toEqual(metricKeys(req));
    expect(JSON.stringify(tok)).not.toContain('GeneratedTokens');
  });

  test('fallback share graph: observed share by requests and by tokens, the planned share, and the alarm threshold', () => {
    const w = widget(widgets, 'Fallback share: requests vs tokens (%)');
    // By routed class: the fallback variant with both its pools is fallback as a whole, read on its variant-level series.
    expect(expressions(w).filter((e) => e.startsWith('100'))).toEqual(['100 * SUM([fr1]) / SUM([fr0, fr1])', '100 * SUM([ft1]) / SUM([ft0, ft1])']);
    const keys = metricKeys(w);
    expect(keys).toContain('AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum');
    expect(keys).toContain('AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=fallback Sum');
    expect(keys.filter((k) => k.includes('InstanceType'))).toEqual([]);
    // A variant of several pools in tokens: its requests x the mean output tokens (the pools may run different engines).
    expect(expressions(w)).toContain('fttv1 * 250');
    expect(keys[keys.length - 1]).toBe('CapacityAwareInference FallbackShareRequests Service=llama3-chat Average');
    expect((w.properties.annotations as { horizontal: Array<{ value: number }> }).horizontal.map((a) => a.value)).toEqual([50]);
  });

  test('latency percentiles per class are SageMaker ModelLatency converted from microseconds to milliseconds', () => {
    const w = widget(widgets, 'Latency a10g (ms)');
    expect(expressions(w)).toEqual(['p50_1_raw * 0.001', 'p95_1_raw * 0.001', 'p99_1_raw * 0.001']);
    expect(metricKeys(w)).toEqual(['p50', 'p95', 'p99'].map(
      (p) => `AWS/SageMaker ModelLatency EndpointName=llama3-chat InstanceType=ml.g5.xlarge VariantName=fallback ${p}`,
    ));
    // No engine metrics are scraped on SageMaker (detailed observability is PromQL-only): no queue widget.
    expect(widgets.map((w) => String(w.properties.title)).filter((t) => t.startsWith('Requests waiting'))).toEqual([]);
  });

  test('replicas desired vs ready per routed class (a variant), its pools drawn too, with the summed quota as a line', () => {
    const w = widget(widgets, 'Replicas fallback: desired vs ready');
    expect(metricKeys(w)).toEqual([
      'CapacityAwareInference DesiredReplicas CapacityClass=fallback Service=llama3-chat Maximum',
      'CapacityAwareInference ReadyReplicas CapacityClass=fallback Service=llama3-chat Minimum',
      'CapacityAwareInference ReadyReplicas CapacityClass=a10g Service=llama3-chat Minimum',
      'CapacityAwareInference ReadyReplicas CapacityClass=inf2 Service=llama3-chat Minimum',
      // SageMaker publishes no capacity error: the refusals the reconciler saw (a rolled-back scale-out), right axis.
      'CapacityAwareInference RefusedScaleOuts CapacityClass=fallback Service=llama3-chat Maximum',
    ]);
    expect((w.properties.annotations as { horizontal: Array<{ value: number; label: string }> }).horizontal).toEqual([
      expect.objectContaining({ value: 48, label: 'max replicas (quota)' }),
    ]);
    // A single-pool variant: desired, ready and its refusals; no pool lines.
    expect(metricKeys(widget(widgets, 'Replicas preferred: desired vs ready'))).toHaveLength(3);
    // SageMaker counts no target group's health: no HealthyTargets line on any variant.
    const replicaGraphs = widgets.filter((x) => String(x.properties.title).startsWith('Replicas '));
    expect(replicaGraphs).toHaveLength(2);
    for (const g of replicaGraphs) expect(metricKeys(g).filter((k) => k.includes(' HealthyTargets '))).toEqual([]);
  });

  test('a variant whose scaling maximum is below its pools\' quotas: the line is the variant\'s maximum (its scalable target\'s MaxCapacity)', () => {
    const { stack: s } = testStack();
    const capped: SageMakerRoutingFacts = { ...SAGEMAKER, variants: [SAGEMAKER.variants[0], { ...SAGEMAKER.variants[1], maxInstances: 15 }] };
    new InferenceDashboard(s, 'Dashboard', { serving: servingOf(capped, 'llama3-chat') });
    const w = widget(dashboardWidgets(s, Template.fromStack(s)), 'Replicas fallback: desired vs ready');
    expect((w.properties.annotations as { horizontal: Array<{ value: number; label: string }> }).horizontal).toEqual([
      expect.objectContaining({ value: 15, label: 'max replicas (quota)' }),
    ]);
  });

  test('SageMaker produces no capacity-error metric: no such widget; server errors per class and the shed rate instead', () => {
    const titles = widgets.map((w) => w.properties.title);
    expect(titles.filter((t) => /Capacity|Deadline|Replica ready time/.test(String(t)))).toEqual(['Deadline exhaustions (% of arrivals)']);
    expect(metricKeys(widget(widgets, 'Server errors (5XX) per class'))).toEqual([
      'AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat VariantName=preferred Sum',
      'AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat InstanceType=ml.g5.xlarge VariantName=fallback Sum',
      'AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat InstanceType=ml.inf2.xlarge VariantName=fallback Sum',
    ]);
  });

  test('the mode timeline puts the policy mode on the right axis next to the stacked route weights', () => {
    const w = widget(widgets, 'Mode (0 cost, 1 capacity) and route weights (%)');
    const keys = metricKeys(w);
    expect(keys).toEqual([
      ...['preferred', 'fallback'].map((c) => `CapacityAwareInference RouteWeight CapacityClass=${c} Service=llama3-chat Average`),
      'CapacityAwareInference PolicyMode Service=llama3-chat Maximum',
    ]);
    const modeRow = rows(w)[2];
    expect(modeRow[modeRow.length - 1]).toEqual(expect.objectContaining({ yAxis: 'right' }));
    expect(w.properties.yAxis).toEqual(expect.objectContaining({ right: { min: 0, max: 1, label: 'mode', showUnits: false } }));
  });

  test('decisions by reason are found by a search on the service, one line per reason, at the graph\'s period (none fixed in the call)', () => {
    const w = widget(widgets, 'Reconciler decisions by reason');
    // A period in the call would hold for every time range: a fixed 60 s returns nothing for ranges older than 15 days.
    expect(expressions(w)).toEqual([
      'SEARCH(\'{CapacityAwareInference,Service,Reason} MetricName="Decisions" Service="llama3-chat"\', \'Sum\')',
    ]);
    expect(rows(w)[0][0]).toEqual(expect.objectContaining({ period: 60 }));
    expect(dashboardPeriodOverride(stack, template)).toBe('auto');
    expect(rows(w)[0][0]).toEqual(expect.objectContaining({ label: "${PROP('Dim.Reason')}" }));
  });

  test('cost per 1M tokens per class is price x ready replicas over tokens, and the service line counts warm standby', () => {
    const w = widget(widgets, 'Cost per 1M output tokens (USD)');
    const exprs = expressions(w);
    expect(exprs.filter((e) => /^\d/.test(e))).toEqual([
      '2.61 * cr0 * PERIOD(cr0) / 3600 / ct0 * 1000000',
      '1.4084 * cr1 * PERIOD(cr1) / 3600 / ct1 * 1000000',
      '0.99 * cr2 * PERIOD(cr2) / 3600 / ct2 * 1000000',
    ]);
    // Every class's ready replicas are paid for, including fallback classes that serve nothing (warm standby).
    expect(exprs).toContain('(2.61 * sr0 + 1.4084 * sr1 + 0.99 * sr2) * PERIOD(sr0) / 3600 / (st0 + st1 + st2) * 1000000');
    expect(metricKeys(w)).toContain('CapacityAwareInference ReadyReplicas CapacityClass=inf2 Service=llama3-chat Average');
  });

  test('tokens per replica are drawn against each class envelope', () => {
    const w = widget(widgets, 'Tokens/s per ready replica vs envelope');
    expect(expressions(w)).toContain('pt0 / PERIOD(pr0) / pr0');
    expect((w.properties.annotations as { horizontal: Array<{ value: number; label: string }> }).horizontal.map((a) => [a.label, a.value])).toEqual([
      ['l40s envelope', 1200], ['a10g envelope', 400], ['inf2 envelope', 300],
    ]);
  });

  test('every rate divides by the period CloudWatch graphs at (the dashboard adapts it to the time range), never by a constant', () => {
    const body = stack.resolve(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    expect(JSON.stringify(body)).toMatch(/periodOverride\W+auto/);
    const w = widget(widgets, 'Output tokens/s per class');
    expect(expressions(w).filter((e) => e.startsWith('gt'))).toEqual(['gt0 / PERIOD(gp0)', 'gt1 / PERIOD(gp1)', 'gt2 / PERIOD(gp2)']);
    expect(metricKeys(w)).toContain('AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum');
    // PERIOD takes a metric, never an expression, and no expression of any widget divides by the seconds of a minute.
    const graphs = widgets.filter((x) => Array.isArray(x.properties.metrics));
    const all = graphs.flatMap((x) => expressions(x));
    const metricRows = graphs.flatMap((x) => rows(x)).filter((r) => typeof r[0] === 'string');
    const ids = new Set(metricRows.map((r) => (r[r.length - 1] as { id?: string }).id));
    for (const e of all) for (const [, id] of e.matchAll(/PERIOD\((\w+)\)/g)) expect(ids).toContain(id);
    expect(all.filter((e) => /[*/] 60\b/.test(e))).toEqual([]);
  });

  test('no widget is wider than the grid and no row overflows', () => {
    for (const w of widgets) expect(w.x + w.width).toBeLessThanOrEqual(24);
  });

  test('the last row shows the state of every alarm', () => {
    const w = widgets[widgets.length - 1];
    expect(w.type).toBe('alarm');
    expect((w.properties.alarms as unknown[]).length).toBe(obs.alarms.alarms.length);
  });

  test('fallback share alarm: observed token share above 50% for 15 one-minute periods, missing data not breaching', () => {
    const a = oneAlarm(template, 'served by fallback classes');
    const { expression, metrics } = mathOf(a);
    expect(expression).toBe('100 * SUM([fs1]) / SUM([fs0, fs1])');
    // Tokens as requests x the contract's mean output tokens: SageMaker counts no tokens.
    expect((a.Metrics ?? []).map((q) => q.Expression).filter(Boolean)).toEqual(expect.arrayContaining(['fstr0 * 250', 'fstv1 * 250']));
    expect(metrics.map((m) => m.split(' ').slice(1).join(' '))).toEqual([
      'AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum',
      'AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=fallback Sum',
    ]);
    const periods = (a.Metrics ?? []).flatMap((q) => (q.MetricStat ? [(q.MetricStat as { Period: number }).Period] : []));
    expect(new Set(periods)).toEqual(new Set([60]));
    expect(a).toEqual(expect.objectContaining({
      Threshold: ALARM_DEFAULTS.fallbackShare.thresholdPercent,
      EvaluationPeriods: 15,
      DatapointsToAlarm: 15,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    }));
  });

  test('the deadline exhaustion alarm is on by default: what each variant shed with its rejection status over what reached it', () => {
    expect(alarmsByDescription(template, 'reported capacity errors')).toEqual([]);
    expect(obs.alarms.preferredCapacityErrorsAlarm).toBeUndefined();
    const a = oneAlarm(template, 'shed more than 1% of arriving requests to protect the deadline');
    const { expression, metrics } = mathOf(a);
    const sum = (p: string) => [0, 1].map((i) => `FILL(${p}${i}, 0)`).join(' + ');
    expect(expression).toBe(`IF((${sum('rq')}) >= 20, 100 * (${sum('sh')}) / (${sum('rq')}), 0)`);
    // vLLM, vLLM and DJL LMI shed with 503: SageMaker counts them in Invocation5XXErrors, per variant (all its pools: the
    // variant-level series SageMaker documents for every variant, where a per-InstanceType one may be missing).
    expect(metrics).toEqual([
      'sh0 AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat VariantName=preferred Sum',
      'rq0 AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum',
      'sh1 AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat VariantName=fallback Sum',
      'rq1 AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=fallback Sum',
    ]);
    // 5 of 7: FILL reads a newest minute not yet published as 0 (M out of N, using-metric-math.md, FILL).
    expect(a).toEqual(expect.objectContaining({ Threshold: 1, EvaluationPeriods: 7, DatapointsToAlarm: 5, ComparisonOperator: 'GreaterThanThreshold' }));
  });

  test('deadline exhaustion on an ALB: a TGI class sheds with 429 (4XX), the others with 503 (5XX); off when disabled', () => {
    const { stack: s2 } = testStack();
    new InferenceAlarms(s2, 'A', { serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { rejectionStatus: '4xx' } } }) });
    const { metrics } = mathOf(oneAlarm(Template.fromStack(s2), 'to protect the deadline'));
    expect(metrics.filter((m) => m.startsWith('sh')).map((m) => m.split(' ').slice(0, 3).join(' '))).toEqual([
      'sh0 AWS/ApplicationELB HTTPCode_Target_4XX_Count',
      ...ALB.targets.slice(1).map((_, i) => `sh${i + 1} AWS/ApplicationELB HTTPCode_Target_5XX_Count`),
    ]);
    const { stack: s3 } = testStack();
    const off = new InferenceAlarms(s3, 'A', { serving: servingOf(ALB, 'llama-eks'), deadlineExhaustion: { enabled: false } });
    expect(off.deadlineExhaustionAlarm).toBeUndefined();
    expect(alarmsByDescription(Template.fromStack(s3), 'to protect the deadline')).toEqual([]);
  });

  test('capacity error alarm watches only the preferred class\'s produced metric and fires on the first error', () => {
    const { stack: s2 } = testStack();
    const errors = (pool: string) => ({ namespace: 'CapacityAwareInference/Karpenter', metricName: `InsufficientCapacity/prod/${pool}`, dimensions: {}, stat: 'Sum' });
    new InferenceAlarms(s2, 'A', {
      serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors('llama-l40s') }, inf2: { capacityErrors: errors('llama-inf2') } } }),
    });
    const a = oneAlarm(Template.fromStack(s2), 'reported capacity errors');
    const { expression, metrics } = mathOf(a);
    expect(expression).toBe('FILL(ce0, 0)');
    expect(metrics).toEqual(['ce0 CapacityAwareInference/Karpenter InsufficientCapacity/prod/llama-l40s  Sum']);
    expect(a).toEqual(expect.objectContaining({
      // 1 of 3: an error whose datapoint is published late (stamped with its log line's time) is still evaluated.
      Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching',
    }));
  });

  test('one replica shortage alarm per routed class (variant): pending instances (+ a refused scale-out) >= 1 for 5 minutes', () => {
    const found = alarmsByDescription(template, 'wanted more replicas than are ready');
    expect(found).toHaveLength(2);
    const fallback = found.find((a) => a.AlarmDescription.includes('fallback (a10g on ml.g5.xlarge, inf2 on ml.inf2.xlarge)'))!;
    const { expression, metrics } = mathOf(fallback);
    // A minute in which the reconciler saw a refused scale-out (desired rolled back to ready) still counts as short:
    // otherwise the alarm flipped to OK once per provisioning timeout during a steady shortage.
    // The shortage is what each run saw pending (PendingScaleOut), not DesiredReplicas (Maximum) - ReadyReplicas (Minimum),
    // which can pair the counts of two runs in one minute.
    expect(expression).toBe('p1 + FILL(f1, 0)');
    expect(metrics).toEqual([
      'p1 CapacityAwareInference PendingScaleOut CapacityClass=fallback Service=llama3-chat Maximum',
      'f1 CapacityAwareInference RefusedScaleOuts CapacityClass=fallback Service=llama3-chat Maximum',
    ]);
    expect(fallback).toEqual(expect.objectContaining({ Threshold: 1, EvaluationPeriods: 7, DatapointsToAlarm: 5 }));
  });

  test('the reconciler heartbeat alarm breaches on missing Decisions for 10 minutes', () => {
    const a = oneAlarm(template, 'recorded no decision');
    expect(a).toEqual(expect.objectContaining({
      MetricName: 'Decisions',
      Dimensions: [{ Name: 'Service', Value: 'llama3-chat' }],
      Statistic: 'SampleCount',
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 10,
      TreatMissingData: 'breaching',
    }));
  });

  test('capacityAlarms are the replica shortage alarms (SageMaker produces no capacity-error metric), nothing else', () => {
    expect(obs.capacityAlarms).toHaveLength(2);
    expect(obs.capacityAlarms).toEqual(obs.alarms.replicaShortageAlarms);
    expect(obs.capacityAlarms).not.toContain(obs.alarms.fallbackShareAlarm);
    expect(obs.capacityAlarms).not.toContain(obs.alarms.reconcilerHeartbeatAlarm);
  });

  test('every alarm notifies the topic on ALARM and OK', () => {
    const topicRef = { Ref: stack.getLogicalId(obs.alarms.topic.node.defaultChild as sns.CfnTopic) };
    const all = template.findResources('AWS::CloudWatch::Alarm');
    expect(Object.keys(all)).toHaveLength(5);
    for (const r of Object.values(all)) {
      expect(r.Properties.AlarmActions).toEqual([topicRef]);
      expect(r.Properties.OKActions).toEqual([topicRef]);
    }
  });

  test('the topic it creates is encrypted with a rotating key CloudWatch may use, and refuses plain HTTP', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] } });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([Match.objectLike({
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        })]),
      },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  test('fails when the topic policy lets no alarm publish: it replaces SNS\'s default policy, so CloudWatch needs its own Allow', () => {
    const topicRef = { Ref: stack.getLogicalId(obs.alarms.topic.node.defaultChild as sns.CfnTopic) };
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [topicRef],
      PolicyDocument: {
        Statement: Match.arrayWith([{
          Sid: 'AllowAlarmsOfThisAccountToPublish',
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: 'sns:Publish',
          Resource: topicRef,
          // Only the alarms of this account and region.
          Condition: { ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:us-east-1:123456789012:alarm:*']] } } },
        }]),
      },
    });
  });

  test('is cdk-nag clean', () => {
    expect(nagFindings(stack)).toEqual([]);
    expect(nistFindings(stack)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// SageMaker: a preferred variant with instance pools (the example's shape), whose per-InstanceType series a deployment
// may lack (review R249)
// ---------------------------------------------------------------------------------------------------------------

describe('a SageMaker endpoint whose preferred variant has instance pools: the alarms read each variant on its variant-level series', () => {
  // l40s (rank 0) and a10g (rank 1, a fallback class) are the preferred variant's pools; inf2 is the fallback variant.
  const POOLED: SageMakerRoutingFacts = {
    ...SAGEMAKER,
    variants: [
      { variantName: 'preferred', classes: [SM_CLASSES[0], SM_CLASSES[1]] },
      { variantName: 'fallback', classes: [SM_CLASSES[2]] },
    ],
  };
  let template: Template;
  let widgets: Widget[];

  beforeAll(() => {
    const { stack } = testStack();
    // The a10g pool runs TGI (429, a 4XX), the l40s pool vLLM (503).
    new InferenceObservability(stack, 'Obs', { serving: servingOf(POOLED, 'llama3-chat', 250, { classes: { a10g: { rejectionStatus: '4xx' } } }) });
    template = Template.fromStack(stack);
    widgets = dashboardWidgets(stack, template);
  });

  type Query = { Id: string; Expression?: string; MetricStat?: { Metric: { Dimensions: Array<{ Name: string; Value: string }> } } };
  const queries = (a: AlarmProps) => (a.Metrics ?? []) as unknown as Query[];
  const dimensionNames = (q: Query) => q.MetricStat!.Metric.Dimensions.map((d) => d.Name).sort();
  /** The ids an expression names, and those of the expressions it names, down to the metrics. */
  const reads = (all: Query[], id: string): string[] => {
    const q = all.find((x) => x.Id === id)!;
    if (!q.Expression) return [id];
    return [...q.Expression.matchAll(/\b[a-z]\w*\b/g)].flatMap(([name]) => (all.some((x) => x.Id === name) ? reads(all, name) : []));
  };

  test('DeadlineExhaustion: every MetricStat is exactly [EndpointName, VariantName]; the pooled variant reads 4XX and 5XX', () => {
    const a = oneAlarm(template, 'to protect the deadline');
    const { expression, metrics } = mathOf(a);
    const stats = queries(a).filter((q) => q.MetricStat);
    expect(stats.map(dimensionNames)).toEqual(Array(stats.length).fill(['EndpointName', 'VariantName']));
    expect(expression).toBe('IF((FILL(rq0, 0) + FILL(rq1, 0)) >= 20, 100 * (FILL(sh0_4xx, 0) + FILL(sh0_5xx, 0) + FILL(sh1, 0)) / (FILL(rq0, 0) + '
      + 'FILL(rq1, 0)), 0)');
    expect(metrics).toEqual([
      'sh0_4xx AWS/SageMaker Invocation4XXErrors EndpointName=llama3-chat VariantName=preferred Sum',
      'sh0_5xx AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat VariantName=preferred Sum',
      'rq0 AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=preferred Sum',
      'sh1 AWS/SageMaker Invocation5XXErrors EndpointName=llama3-chat VariantName=fallback Sum',
      'rq1 AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=fallback Sum',
    ]);
  });

  test('FallbackShare: the total is the variants\' own series; the preferred variant\'s fallback pool is added FILLed, from its InstanceType series', () => {
    const a = oneAlarm(template, 'served by fallback classes');
    const all = queries(a);
    const { expression } = mathOf(a);
    expect(expression).toBe('100 * (SUM([fs1]) + FILL(fsp1, 0)) / SUM([fs0, fs1])');
    const [numerator, denominator] = expression.split(' / ');
    const perType = (id: string) => dimensionNames(all.find((q) => q.Id === id)!).includes('InstanceType');
    // The denominator carries no InstanceType: a missing per-type series cannot take the preferred variant out of the total.
    const total = [...denominator.matchAll(/\b(fs\d+)\b/g)].map(([, id]) => id);
    expect(total).toEqual(['fs0', 'fs1']);
    expect(total.flatMap((id) => reads(all, id)).filter(perType)).toEqual([]);
    // The per-type series is read only inside FILL(..., 0) of the numerator: missing, it leaves the a10g load out (reads low).
    const filled = [...numerator.matchAll(/FILL\((\w+), 0\)/g)].map(([, id]) => id);
    expect(all.filter((q) => q.MetricStat && perType(q.Id)).map((q) => q.Id)).toEqual(filled.flatMap((id) => reads(all, id)));
    expect(mathOf(a).metrics).toContain('fspr1 AWS/SageMaker Invocations EndpointName=llama3-chat InstanceType=ml.g5.xlarge VariantName=preferred Sum');
    // It FILLs, so M of N: a newest minute whose pool series is not yet published reads low, and must not hold the alarm in OK.
    expect([a.EvaluationPeriods, a.DatapointsToAlarm]).toEqual([17, 15]);
    expect(a.AlarmDescription).toContain('has been served by fallback classes in 15 of 17 periods of 1 minute.');
  });

  test('the dashboard keeps each pool\'s per-InstanceType series', () => {
    expect(metricKeys(widget(widgets, 'Request share per class (%)'))).toEqual([
      'AWS/SageMaker Invocations EndpointName=llama3-chat InstanceType=ml.g6e.xlarge VariantName=preferred Sum',
      'AWS/SageMaker Invocations EndpointName=llama3-chat InstanceType=ml.g5.xlarge VariantName=preferred Sum',
      'AWS/SageMaker Invocations EndpointName=llama3-chat VariantName=fallback Sum',
    ]);
    expect(expressions(widget(widgets, 'Fallback share: requests vs tokens (%)')).filter((e) => e.startsWith('100')))
      .toEqual(['100 * (SUM([fr1]) + FILL(frp1, 0)) / SUM([fr0, fr1])', '100 * (SUM([ft1]) + FILL(ftp1, 0)) / SUM([ft0, ft1])']);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// EKS (ALB): the dashboard alone and the alarms alone, with user options
// ---------------------------------------------------------------------------------------------------------------

describe('token counters scraped less often than the period', () => {
  const counter = (cls: string) => ({
    namespace: 'ContainerInsights/Prometheus', metricName: 'vllm_generation_tokens_total', dimensions: { Service: 'llama-eks', CapacityClass: cls }, stat: 'Sum' as const,
  });
  const tokenShareAlarm = (intervalSeconds?: number) => {
    const { stack } = testStack(`Interval${intervalSeconds ?? 0}`);
    const classes = Object.fromEntries(EC2_CLASSES.map((c) => [c.name, {
      generatedTokens: counter(c.name), ...(intervalSeconds ? { generatedTokensIntervalSeconds: intervalSeconds } : {}),
    }]));
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(ALB, 'llama-eks', 250, { classes }) });
    return mathOf(oneAlarm(Template.fromStack(stack), 'served by fallback classes'));
  };

  test('the token share reads the counters scraped every period, and requests x the mean where a scrape spans several', () => {
    const names = (m: ReturnType<typeof tokenShareAlarm>) => m.metrics.map((x) => x.split(' ')[2]);
    expect(new Set(names(tokenShareAlarm()))).toEqual(new Set(['vllm_generation_tokens_total']));
    expect(new Set(names(tokenShareAlarm(60)))).toEqual(new Set(['vllm_generation_tokens_total']));
    // A 120 s scrape leaves every other minute without tokens: the share would swing between 0% and 100%.
    expect(new Set(names(tokenShareAlarm(120)))).toEqual(new Set(['RequestCount']));
  });
});

describe('default durations at periods longer than they are', () => {
  const errors = { namespace: 'CapacityAwareInference/Karpenter', metricName: 'InsufficientCapacity/prod/llama-l40s', dimensions: {}, stat: 'Sum' as const };
  // Each alarm's default duration, and the period it is evaluated at (the run-fed ones at the Reconciler's, one minute).
  const defaults: Array<[string, Duration, 'period' | 'runs']> = [
    ['served by fallback classes', ALARM_DEFAULTS.fallbackShare.duration, 'period'],
    ['to protect the deadline', ALARM_DEFAULTS.deadlineExhaustion.duration, 'period'],
    ['answered more than', ALARM_DEFAULTS.loadBalancerErrors.duration, 'period'],
    ['reported capacity errors', ALARM_DEFAULTS.preferredCapacityErrors.duration, 'period'],
    ['wanted more replicas', ALARM_DEFAULTS.replicaShortage.duration, 'runs'],
    ['recorded no decision', ALARM_DEFAULTS.reconcilerHeartbeat.duration, 'runs'],
  ];

  test.each([3, 11, 15])('fails when a default alarm has 0 evaluation periods or a shortened window: period %i minutes', (minutes) => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors } } }), period: Duration.minutes(minutes) });
    const template = Template.fromStack(stack);
    expect(Object.keys(template.findResources('AWS::CloudWatch::Alarm'))).toHaveLength(1 + 1 + 1 + 1 + ALB.targets.length + 1);
    for (const [fragment, duration, at] of defaults) {
      for (const a of alarmsByDescription(template, fragment)) {
        const stats = (a.Metrics ?? []).map((q) => (q.MetricStat as { Period?: number } | undefined)?.Period);
        const periods = new Set([a.Period, ...stats].filter((p) => p !== undefined));
        expect([...periods]).toEqual([at === 'period' ? minutes * 60 : 60]);
        const period = [...periods][0] as number;
        const n = a.DatapointsToAlarm as number;
        expect(n).toBeGreaterThanOrEqual(1);
        // An alarm whose math FILLs waits one period more for a late one (120 s, at periods of 2 minutes or more).
        const fills = (a.Metrics ?? []).some((q) => String(q.Expression ?? '').includes('FILL('));
        expect(a.EvaluationPeriods).toBe(fills ? n + (period >= 120 ? 1 : 2) : n);
        expect((a.EvaluationPeriods as number) * period).toBeLessThanOrEqual(86400);
        // Rounded up to whole periods: at least the default, less than one period more.
        expect(n * period).toBeGreaterThanOrEqual(duration.toSeconds());
        expect(n * period - period).toBeLessThan(duration.toSeconds());
      }
    }
  });

  test('an alarm that FILLs keeps its late margin up to CloudWatch\'s bound: 1 day at periods under an hour, N = M + late', () => {
    // 60 s periods, metricDelay 120 s: 2 late periods, so 1438 minutes is the longest duration that keeps them.
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors } } }),
      deadlineExhaustion: { duration: Duration.minutes(1438) },
      preferredCapacityErrors: { duration: Duration.minutes(1438) },
      // No FILL: the whole day is its own.
      fallbackShare: { duration: Duration.days(1) },
    });
    const template = Template.fromStack(stack);
    const window = (fragment: string) => {
      const a = oneAlarm(template, fragment);
      return [a.DatapointsToAlarm, a.EvaluationPeriods];
    };
    expect(window('to protect the deadline')).toEqual([1438, 1440]);
    expect(window('reported capacity errors')).toEqual([1438, 1440]);
    expect(window('served by fallback classes')).toEqual([1440, 1440]);
  });

  test('a duration that leaves a FILL alarm no room for its metricDelay is refused, naming the duration, the delay and the longest allowed', () => {
    // 60 s periods, metricDelay 900 s (15 periods), 1 day: before, M = N = 1440, and a late datapoint was never judged.
    const { stack } = testStack();
    expect(() => new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks', 250), metricDelay: Duration.minutes(15), deadlineExhaustion: { duration: Duration.days(1) },
    })).toThrow("InferenceAlarms 'Test/Alarms' is invalid (1 problem):\n  - deadlineExhaustion.duration: is 1 day with a period of 60 s and "
      + 'a metricDelay of 900 s: the alarm FILLs, so it evaluates 15 periods more for a late datapoint, 87300 s in all, over the 86400 s CloudWatch '
      + 'evaluates at that period; at most 85500 s (Duration.minutes(1425)); allowed: a whole number of periods, at least one, whose evaluation range');
    const { stack: boundary } = testStack('Boundary');
    new InferenceAlarms(boundary, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks', 250), metricDelay: Duration.minutes(15), deadlineExhaustion: { duration: Duration.minutes(1425) },
    });
    expect([oneAlarm(Template.fromStack(boundary), 'to protect the deadline')].map((a) => [a.DatapointsToAlarm, a.EvaluationPeriods]))
      .toEqual([[1425, 1440]]);
  });

  test('at periods of an hour or more the bound is 7 days (604800 s), the margin included', () => {
    const built = (deadline: Duration, fallback = Duration.hours(1)) => {
      const { stack } = testStack();
      new InferenceAlarms(stack, 'Alarms', {
        serving: servingOf(ALB, 'llama-eks', 250), period: Duration.hours(1), deadlineExhaustion: { duration: deadline }, fallbackShare: { duration: fallback },
      });
      return Template.fromStack(stack);
    };
    const t = built(Duration.hours(167), Duration.days(7));
    expect([oneAlarm(t, 'to protect the deadline')].map((a) => [a.DatapointsToAlarm, a.EvaluationPeriods])).toEqual([[167, 168]]);
    expect(oneAlarm(t, 'served by fallback classes').EvaluationPeriods).toBe(168);
    expect(() => built(Duration.days(7))).toThrow('deadlineExhaustion.duration: is 7 days with a period of 3600 s and a metricDelay of 120 s: '
      + 'the alarm FILLs, so it evaluates 1 period more for a late datapoint, 608400 s in all, over the 604800 s CloudWatch evaluates at that period; '
      + 'at most 601200 s (Duration.minutes(10020))');
    expect(() => built(Duration.hours(1), Duration.days(8))).toThrow('fallbackShare.duration: is 8 days with a period of 3600 s, longer than the '
      + '604800 s CloudWatch evaluates at that period; at most 604800 s (Duration.minutes(10080))');
  });

  test('at a one-day period the FILL alarms keep their late period (N = 2 days), no longer cut to M = N by a one-day bound', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors } } }), period: Duration.days(1) });
    const template = Template.fromStack(stack);
    for (const fragment of ['to protect the deadline', 'reported capacity errors']) {
      expect([oneAlarm(template, fragment)].map((a) => [a.DatapointsToAlarm, a.EvaluationPeriods])).toEqual([[1, 2]]);
    }
  });

  test('a SageMaker replica shortage FILLs (its refused scale-outs) and gets the margin in the bound; on an ALB it does not', () => {
    const shortage = (facts: typeof ALB | typeof SAGEMAKER) => () => {
      const { stack } = testStack();
      new InferenceAlarms(stack, 'Alarms', { serving: servingOf(facts, 'llama', 250), replicaShortage: { duration: Duration.days(1) } });
    };
    expect(shortage(SAGEMAKER)).toThrow('replicaShortage.duration: is 1 day with a period of 60 s and a metricDelay of 120 s: the alarm FILLs');
    expect(shortage(ALB)).not.toThrow();
  });

  test('the alarms that FILL leave room for the metricDelay declared (300 s at 60 s periods: 5 periods), the others do not change', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors } } }), metricDelay: Duration.seconds(300),
    });
    const template = Template.fromStack(stack);
    const window = (fragment: string) => alarmsByDescription(template, fragment).map((a) => [a.DatapointsToAlarm, a.EvaluationPeriods]);
    expect(window('to protect the deadline')).toEqual([[5, 10]]);
    expect(window('reported capacity errors')).toEqual([[1, 6]]);
    expect(oneAlarm(template, 'to protect the deadline').AlarmDescription).toContain('in 5 of 10 periods of 1 minute');
    // No FILL: CloudWatch judges the most recent real datapoints of its evaluation range, a late one only waits.
    expect(window('served by fallback classes')).toEqual([[15, 15]]);
    expect(window('wanted more replicas')).toEqual(ALB.targets.map(() => [5, 5]));
    expect(window('recorded no decision')).toEqual([[10, 10]]);
  });

  test('every default run-fed alarm fits CloudWatch\'s bound at every reconcilerPeriod the Reconciler\'s policy.period rule allows', () => {
    // Swept from the rule itself (whole minutes, 1 minute to 6 hours); metricDelay at its 900 s maximum gives the FILLed
    // SageMaker replica shortage its widest margin. The heartbeat (2 periods at least) did not fit at a 4-day period (R193).
    const rule = OBSERVABILITY_RULES['alarm.reconcilerPeriod'];
    expect(rule).toBe(RECONCILER_RULES['policy.period']);
    const { stack } = testStack();
    const alarmTopic = new sns.Topic(stack, 'Topic');
    const serving = servingOf(SAGEMAKER, 'llama', 250);
    for (let period = rule.min!; period <= rule.max!; period += rule.multipleOf!) {
      const a = new InferenceAlarms(stack, `Alarms${period}`, {
        serving, alarmTopic, reconcilerPeriod: Duration.seconds(period), metricDelay: Duration.seconds(900),
      });
      const runFed = [...a.replicaShortageAlarms, a.reconcilerHeartbeatAlarm!];
      expect(runFed).toHaveLength(SAGEMAKER.variants.length + 1);
      for (const alarm of runFed) {
        const n = (alarm.node.defaultChild as cloudwatch.CfnAlarm).evaluationPeriods!;
        expect(n * period).toBeLessThanOrEqual(maxAlarmEvaluationSeconds(period));
      }
    }
  });

  test.each([
    [Duration.days(4), 'is 345600 s'], [Duration.hours(6).plus(Duration.minutes(1)), 'is 21660 s'], [Duration.seconds(90), 'is 90 s'],
  ])('reconcilerPeriod %s is refused with the Reconciler\'s policy.period rule, before any alarm is built', (reconcilerPeriod, found) => {
    const { stack } = testStack();
    expect(() => new InferenceAlarms(stack, 'Alarms', { serving: servingOf(SAGEMAKER, 'llama', 250), reconcilerPeriod }))
      .toThrow(`InferenceAlarms 'Test/Alarms' is invalid (1 problem):\n  - reconcilerPeriod: ${found}; allowed: a whole number from 60 to 21_600 s, `
        + 'a multiple of 60 (the schedule runs at EventBridge rates of whole minutes');
  });

  test.each([
    [Duration.seconds(901), 'is 901 s'], [Duration.millis(90_500), 'is 90.5 s'],
  ])('metricDelay is held to the Reconciler\'s rule: %s', (metricDelay, found) => {
    const { stack } = testStack();
    expect(() => new InferenceAlarms(stack, 'Alarms', { serving: servingOf(ALB, 'llama-eks', 250), metricDelay }))
      .toThrow(`metricDelay: ${found}; allowed: a whole number from 0 to 900 s`);
  });
});

describe('InferenceDashboard and InferenceAlarms on an ALB, with options', () => {
  let stack: Stack;
  let template: Template;
  let widgets: Widget[];
  let alarms: InferenceAlarms;
  let topic: sns.Topic;

  beforeAll(() => {
    ({ stack } = testStack());
    topic = new sns.Topic(stack, 'OnCall', { enforceSSL: true });
    alarms = new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks'),
      alarmTopic: topic,
      fallbackShare: { thresholdPercent: 30, duration: Duration.minutes(20), basis: 'requests' },
      deadlineExhaustion: { enabled: false },
      replicaShortage: { duration: Duration.minutes(8) },
      reconcilerHeartbeat: { duration: Duration.minutes(3) },
    });
    new InferenceDashboard(stack, 'Dashboard', { serving: servingOf(ALB, 'llama-eks'), dashboardName: 'llama-eks' });
    template = Template.fromStack(stack);
    widgets = dashboardWidgets(stack, template);
  });

  test('request share and latency come from the class target groups; latency converted from seconds to ms', () => {
    expect(metricKeys(widget(widgets, 'Request share per class (%)'))[1]).toBe(
      'AWS/ApplicationELB RequestCount LoadBalancer=app/llama/50dc6c495c0c9188 TargetGroup=targetgroup/a10g/6d0ecf831eec9f01 Sum',
    );
    const w = widget(widgets, 'Latency inf2 (ms)');
    expect(expressions(w)).toEqual(['p50_2_raw * 1000', 'p95_2_raw * 1000', 'p99_2_raw * 1000']);
    expect(metricKeys(w)[1]).toBe('AWS/ApplicationELB TargetResponseTime LoadBalancer=app/llama/50dc6c495c0c9188 TargetGroup=targetgroup/inf2/6d0ecf831eec9f02 p95');
    expect(widgets[0].properties.markdown).toContain('ALB `app/llama/50dc6c495c0c9188` (EKS)');
  });

  test('each class\'s replicas graph draws the healthy targets the reconciler counted live, beside desired and ready', () => {
    for (const c of EC2_CLASSES) {
      const w = widget(widgets, `Replicas ${c.name}: desired vs ready`);
      expect(metricKeys(w)).toEqual([
        `CapacityAwareInference DesiredReplicas CapacityClass=${c.name} Service=llama-eks Maximum`,
        `CapacityAwareInference ReadyReplicas CapacityClass=${c.name} Service=llama-eks Minimum`,
        `CapacityAwareInference HealthyTargets CapacityClass=${c.name} Service=llama-eks Minimum`,
      ]);
      expect(rows(w).map((r) => (r.at(-1) as { label?: string }).label)).toEqual(['desired', 'ready', 'healthy (reconciler)']);
    }
  });

  test('without alarms the dashboard has no threshold lines and no alarm row', () => {
    expect(widget(widgets, 'Fallback share: requests vs tokens (%)').properties.annotations).toBeUndefined();
    expect(widgets.some((w) => w.type === 'alarm')).toBe(false);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'llama-eks' });
  });

  test('user thresholds and durations replace the defaults', () => {
    const fallback = oneAlarm(template, 'served by fallback classes');
    expect(fallback).toEqual(expect.objectContaining({ Threshold: 30, EvaluationPeriods: 20, DatapointsToAlarm: 20 }));
    expect(mathOf(fallback).metrics[0]).toBe(
      'fs0 AWS/ApplicationELB RequestCount LoadBalancer=app/llama/50dc6c495c0c9188 TargetGroup=targetgroup/l40s/6d0ecf831eec9f00 Sum',
    );
    for (const a of alarmsByDescription(template, 'wanted more replicas')) {
      expect(a.EvaluationPeriods).toBe(8);
      // An HPA's pending pods are not rolled back: on an ALB target no refusal term.
      expect(mathOf(a).expression).toMatch(/^d\d+ - r\d+$/);
    }
    expect(oneAlarm(template, 'recorded no decision').EvaluationPeriods).toBe(3);
  });

  test('a disabled alarm is not created and not listed', () => {
    expect(alarmsByDescription(template, 'ran out of deadline')).toEqual([]);
    expect(alarms.deadlineExhaustionAlarm).toBeUndefined();
    // fallback share, the load balancer's own 5XX, 3 replica shortages, heartbeat (no capacity-error producer in these
    // facts, deadline disabled)
    expect(alarms.alarms).toHaveLength(6);
  });

  test('the user topic is used and no topic or key is created', () => {
    expect(alarms.topic).toBe(topic);
    expect(alarms.topicKey).toBeUndefined();
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::KMS::Key', 0);
    for (const r of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(r.Properties.AlarmActions).toEqual([{ Ref: stack.getLogicalId(topic.node.defaultChild as sns.CfnTopic) }]);
    }
  });
});

describe('the engine queue and the sheds a class answers outside the 5XX, on an ALB (review R256)', () => {
  // l40s runs vLLM (sheds with 503), a10g TGI (sheds with 429): both scraped for their queue depth, as EksInferenceService
  // hands them over (Average of the class's one series).
  const waiting = (name: string) => ({
    namespace: METRIC_NAMESPACE, metricName: Metrics.requestsWaiting.name, dimensions: classDimensions('llama-eks', name), stat: 'Average',
  });
  let widgets: Widget[];
  beforeAll(() => {
    const { stack } = testStack();
    new InferenceDashboard(stack, 'Dashboard', {
      serving: servingOf(ALB, 'llama-eks', 250, {
        classes: {
          l40s: { requestsWaiting: waiting('l40s'), rejectionStatus: '5xx' },
          a10g: { requestsWaiting: waiting('a10g'), rejectionStatus: '4xx' },
        },
      }),
    });
    widgets = dashboardWidgets(stack, Template.fromStack(stack));
  });

  test('fails when the queue graph reads as the class\'s queue: it draws the Average over the pods, labelled per replica', () => {
    // Every pod publishes into one [Service, CapacityClass] series, a sample per scrape: the Average is one replica's
    // queue; a Sum would add every scrape of every pod in the period, which the dashboard widens with the time range.
    const w = widget(widgets, 'Requests waiting per replica, by class (engine queue, mean over pods)');
    expect(metricKeys(w)).toEqual(['l40s', 'a10g'].map((c) => `CapacityAwareInference RequestsWaiting CapacityClass=${c} Service=llama-eks Average`));
    expect(w.properties.yAxis).toEqual(expect.objectContaining({ left: expect.objectContaining({ label: 'requests per replica' }) }));
    expect(widgets.map((x) => String(x.properties.title)).filter((t) => t.startsWith('Requests waiting'))).toHaveLength(1);
  });

  test('fails when a TGI class\'s 429 sheds are missing from the error graph: its 4XX is drawn beside every class\'s 5XX', () => {
    const w = widget(widgets, 'Server errors (5XX) and 429 sheds (4XX) per class');
    const lb = 'LoadBalancer=app/llama/50dc6c495c0c9188';
    expect(metricKeys(w)).toEqual([
      ...ALB.targets.map((t) => `AWS/ApplicationELB HTTPCode_Target_5XX_Count ${lb} TargetGroup=${t.targetGroupFullName} Sum`),
      `AWS/ApplicationELB HTTPCode_Target_4XX_Count ${lb} TargetGroup=targetgroup/a10g/6d0ecf831eec9f01 Sum`,
    ]);
    expect((rows(w).at(-1)!.at(-1) as { label?: string }).label).toBe('a10g 4XX (429 sheds, and client errors)');
    // Without a class that sheds with 429 the graph is the 5XX alone (the SageMaker and ALB suites above).
    expect(widgets.map((x) => x.properties.title)).not.toContain('Server errors (5XX) per class');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------------------------------

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('validation', () => {
  const FILLING = 'deadlineExhaustion, preferredCapacityErrors, a SageMaker replicaShortage, a fallbackShare that reads a preferred variant\'s '
    + 'fallback instance pools';
  test('fails when props are out of range, listing every problem with the construct path', () => {
    const { stack } = testStack();
    const bad: AlbRoutingFacts = { ...ALB, targets: [ALB.targets[0], { ...ALB.targets[1], class: { ...ALB.targets[1].class, name: 'l40s', usdPerReplicaHour: -1 } }] };
    const message = errorOf(() => new InferenceObservability(stack, 'Obs', {
      serving: servingOf(bad, ''),
      period: Duration.seconds(90),
      fallbackShare: { thresholdPercent: 150, duration: Duration.seconds(30) },
      deadlineExhaustion: { minRequestsPerPeriod: 0 },
      preferredCapacityErrors: { threshold: 0.5 },
      reconcilerHeartbeat: { duration: Duration.days(2) },
    }));
    // One error type for every construct: its path, then each problem as `<field>: <value>; allowed: <what is>`.
    // Durations are measured against the default period while the period itself is invalid.
    expect(message.split('\n')).toEqual([
      "InferenceObservability 'Test/Obs' is invalid (9 problems):",
      "  - serving.service: is '' (empty); allowed: a CloudWatch dimension value: 1 to 255 printable ASCII characters, not all blank "
        + '(the Service dimension of every metric and alarm; CloudWatch alarms document 255 characters)',
      "  - serving.routing.classes: 'l40s' occur more than once; allowed: unique capacity class names",
      "  - serving.routing.classes['l40s'].usdPerReplicaHour: is -1 USD; allowed: a finite number at least 0 USD",
      '  - period: is 90 s; allowed: a whole number of minutes from 1 minute to 1 day (the dashboard and the alarms read metrics published '
        + 'once a minute; a period under a minute is for high-resolution metrics only)',
      '  - fallbackShare.thresholdPercent: is 150 %; allowed: a finite number above 0 and below 100 %',
      '  - fallbackShare.duration: is 30 seconds with a period of 60 s; allowed: a whole number of periods, at least one, whose evaluation range '
        + `(the duration, plus the periods of metricDelay for the alarms that FILL: ${FILLING}) is at most 1 day at periods under 1 hour, 7 days `
        + 'otherwise (PutMetricAlarm: Period x EvaluationPeriods at most 604,800 s, and at most 86,400 s at a period under 3,600 s)',
      '  - deadlineExhaustion.minRequestsPerPeriod: is 0; allowed: a whole number at least 1',
      '  - preferredCapacityErrors.threshold: is 0.5; allowed: a whole number at least 1 (capacity errors per period)',
      '  - reconcilerHeartbeat.duration: is 2 days with a period of 60 s, longer than the 86400 s CloudWatch evaluates at that period; at most '
        + '86400 s (Duration.minutes(1440)); allowed: a whole number of periods, at least one, whose evaluation range (the duration, plus the '
        + `periods of metricDelay for the alarms that FILL: ${FILLING}) is at most 1 day at periods under 1 hour, 7 days otherwise (PutMetricAlarm: `
        + 'Period x EvaluationPeriods at most 604,800 s, and at most 86,400 s at a period under 3,600 s)',
    ]);
  });

  test('fails when facts hold no class', () => {
    const { stack } = testStack();
    expect(() => new InferenceDashboard(stack, 'Dash', { serving: servingOf({ ...ALB, targets: [] }, 's') }))
      .toThrow("InferenceDashboard 'Test/Dash' is invalid (1 problem):\n  - serving.routing.targets: 0 target groups; allowed: 1 to 5 ALB target groups");
  });

  test('fails when more preferred classes with capacity errors share rank 0 than one alarm can read (one metric each, 10 at most)', () => {
    const { stack } = testStack();
    // Up to 5 pools per variant: n preferred classes spread over variants of 5.
    const pool = SAGEMAKER.variants[0].classes[0];
    const many = (n: number): SageMakerRoutingFacts => ({
      ...SAGEMAKER,
      variants: Array.from({ length: Math.ceil(n / 5) }, (_, v) => ({
        variantName: `v${v}`,
        classes: Array.from({ length: Math.min(5, n - 5 * v) }, (_, i) => ({ ...pool, name: `c${5 * v + i}`, preferenceRank: 0 })),
      })),
    });
    // A platform that produces capacity errors for every class (SageMaker itself produces none).
    const producing = (n: number) => servingOf(many(n), 's', 250, {
      classes: Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, {
        capacityErrors: { namespace: 'CapacityAwareInference/Karpenter', metricName: `InsufficientCapacity/c${i}`, dimensions: {}, stat: 'Sum' as const },
      }])),
    });
    const noFallback = { fallbackShare: { enabled: false }, deadlineExhaustion: { enabled: false } };
    expect(() => new InferenceAlarms(stack, 'Alarms', { serving: producing(11), ...noFallback })).toThrow(
      "InferenceAlarms 'Test/Alarms' is invalid (1 problem):\n  - serving: needs 11 metrics and 1 math expression in one alarm (the preferred-class "
      + 'capacity error alarm: one per class of the best preference rank whose platform produces them); disable it with '
      + 'preferredCapacityErrors.enabled: false; allowed: at most 10 metrics and 10 math expressions in one alarm, or the alarm disabled '
      + '(PutMetricAlarm takes at most 10 metrics and 10 expressions)',
    );
    expect(() => new InferenceAlarms(stack, 'Ten', { serving: producing(10), ...noFallback })).not.toThrow();
    expect(() => new InferenceAlarms(stack, 'Off', { serving: producing(11), ...noFallback, preferredCapacityErrors: { enabled: false } }))
      .not.toThrow();
    // Without a producer there is no such alarm, and nothing to count.
    expect(() => new InferenceAlarms(stack, 'None', { serving: servingOf(many(11), 's'), ...noFallback })).not.toThrow();
  });

  test('fails when preferredCapacityErrors is set on a serving without capacity errors (SageMaker): the alarm would not exist (R231)', () => {
    const { stack } = testStack();
    const message = errorOf(() => new InferenceObservability(stack, 'Obs', {
      serving: servingOf(SAGEMAKER, 'llama3-chat'), preferredCapacityErrors: { enabled: true, threshold: 3 },
    }));
    expect(message).toBe("InferenceObservability 'Test/Obs' is invalid (1 problem):\n  - preferredCapacityErrors: sets enabled: true, threshold, "
      + "but SageMaker endpoint `llama3-chat` has no capacity-error metric for its preferred class 'l40s', so no such alarm is created; allowed: unset "
      + 'or { enabled: false } where no preferred class has a capacity-error metric (every SageMaker endpoint: it publishes none, and its '
      + 'shortages alarm through replicaShortage, one alarm per variant on the instances desired but not ready, in capacityAlarms) (the alarm '
      + 'reads a capacity-error metric of the preferred classes (EKS: the Karpenter log metric filter of the NodePool))');
    expect(() => new InferenceAlarms(stack, 'Duration', { serving: servingOf(SAGEMAKER, 'llama3-chat'), preferredCapacityErrors: { duration: Duration.minutes(3) } }))
      .toThrow('preferredCapacityErrors: sets duration, but SageMaker endpoint `llama3-chat` has no capacity-error metric');
    // Disabling what cannot exist asks for nothing; unset keeps the documented default (no such alarm).
    const off = new InferenceAlarms(stack, 'Off', { serving: servingOf(SAGEMAKER, 'llama3-chat'), preferredCapacityErrors: { enabled: false, threshold: 3 } });
    expect(off.preferredCapacityErrorsAlarm).toBeUndefined();
    expect(new InferenceAlarms(stack, 'Unset', { serving: servingOf(SAGEMAKER, 'llama3-chat') }).preferredCapacityErrorsAlarm).toBeUndefined();
    // The same on an ALB serving without a producer for its preferred class.
    expect(() => new InferenceAlarms(stack, 'Alb', { serving: servingOf(ALB, 'llama-eks'), preferredCapacityErrors: { threshold: 2 } }))
      .toThrow("preferredCapacityErrors: sets threshold, but ALB `app/llama/50dc6c495c0c9188` (EKS) has no capacity-error metric for its preferred class 'l40s'");
    // Where the preferred class produces them, the option is the alarm's.
    const errors = { namespace: 'CapacityAwareInference/Karpenter', metricName: 'InsufficientCapacity/l40s', dimensions: {}, stat: 'Sum' as const };
    const eks = new InferenceAlarms(stack, 'Eks', {
      serving: servingOf(ALB, 'llama-eks', 250, { classes: { l40s: { capacityErrors: errors } } }), preferredCapacityErrors: { enabled: true, threshold: 2 },
    });
    expect(eks.preferredCapacityErrorsAlarm).toBeDefined();
  });

  test('fails when the token-based fallback share alarm needs more than 10 expressions (requests x tokensPerRequest per class without a token counter)', () => {
    const { stack } = testStack();
    const pool = SAGEMAKER.variants[0].classes[0];
    // Ten classes, one per variant (SageMaker counts no tokens): ten metrics, and eleven expressions by tokens.
    const ten: SageMakerRoutingFacts = {
      ...SAGEMAKER,
      variants: Array.from({ length: 10 }, (_, v) => ({ variantName: `v${v}`, classes: [{ ...pool, name: `c${v}`, preferenceRank: v }] })),
    };
    const noDeadline = { deadlineExhaustion: { enabled: false } };
    expect(() => new InferenceAlarms(stack, 'Tokens', { serving: servingOf(ten, 's'), ...noDeadline })).toThrow(
      "InferenceAlarms 'Test/Tokens' is invalid (1 problem):\n  - serving: needs 10 metrics and 11 math expressions in one alarm (the fallback share "
      + 'alarm by tokens: one metric per routed class and per fallback pool of a routed class that holds a preferred one, and one expression, '
      + 'requests x tokensPerRequest, for each of the 10 series without a token counter, 10 routed classes); set fallbackShare.basis: '
      + "'requests' or disable it with fallbackShare.enabled: false; allowed: at most 10 metrics and 10 math expressions in one alarm, or the "
      + 'alarm disabled (PutMetricAlarm takes at most 10 metrics and 10 expressions)',
    );
    new InferenceAlarms(stack, 'Requests', { serving: servingOf(ten, 's'), ...noDeadline, fallbackShare: { basis: 'requests' } });
    const metrics = oneAlarm(Template.fromStack(stack), 'served by fallback classes').Metrics ?? [];
    expect([metrics.filter((q) => q.MetricStat).length, metrics.filter((q) => q.Expression).length]).toEqual([10, 1]);
    expect(() => new InferenceAlarms(stack, 'Off', { serving: servingOf(ten, 's'), ...noDeadline, fallbackShare: { enabled: false } })).not.toThrow();
  });

  test('fails when the deadline exhaustion alarm would read more than 10 metrics (two per routed class, three where its pools shed in both)', () => {
    const { stack } = testStack();
    const pool = SAGEMAKER.variants[0].classes[0];
    // `variants` variants of `pools` pools each; the first pool of each sheds with 429 (TGI) when `mixed`.
    const many = (variants: number, pools = 1): SageMakerRoutingFacts => ({
      ...SAGEMAKER,
      variants: Array.from({ length: variants }, (_, v) => ({
        variantName: `v${v}`,
        classes: Array.from({ length: pools }, (_, i) => ({ ...pool, name: `c${v}x${i}`, preferenceRank: v * pools + i, instanceType: `ml.g${i + 4}.xlarge` })),
      })),
    });
    const mixed = (variants: number) => ({ classes: Object.fromEntries(Array.from({ length: variants }, (_, v) => [`c${v}x0`, { rejectionStatus: '4xx' as const }])) });
    expect(() => new InferenceAlarms(stack, 'Six', { serving: servingOf(many(6), 's') })).toThrow(
      '  - serving: needs 12 metrics and 1 math expression in one alarm (the deadline exhaustion alarm: shed (in each status class its classes '
      + 'shed in) and arriving requests per routed class, 6 routed classes); disable it with deadlineExhaustion.enabled: false; allowed: at most '
      + '10 metrics and 10 math expressions in one alarm, or the alarm disabled',
    );
    expect(() => new InferenceAlarms(stack, 'Five', { serving: servingOf(many(5), 's') })).not.toThrow();
    expect(() => new InferenceAlarms(stack, 'Off', { serving: servingOf(many(6), 's'), deadlineExhaustion: { enabled: false } })).not.toThrow();
    // A variant reads its own series whatever its pools: two variants of five pools each are 4 metrics, not 20.
    expect(() => new InferenceAlarms(stack, 'Pools', { serving: servingOf(many(2, 5), 's'), fallbackShare: { enabled: false } })).not.toThrow();
    // Pools shedding in both status classes: 3 metrics a variant.
    expect(() => new InferenceAlarms(stack, 'Mixed', { serving: servingOf(many(4, 2), 's', 250, mixed(4)), fallbackShare: { enabled: false } })).toThrow(
      'needs 12 metrics and 1 math expression in one alarm (the deadline exhaustion alarm: shed (in each status class its classes shed in) and '
      + 'arriving requests per routed class, 4 routed classes of 8 classes)',
    );
    expect(() => new InferenceAlarms(stack, 'Mixed3', { serving: servingOf(many(3, 2), 's', 250, mixed(3)), fallbackShare: { enabled: false } })).not.toThrow();
  });

  test('fails when a multi-pool variant bears the name of a class, and accepts a single-pool variant named after its class', () => {
    const { stack } = testStack();
    const clash: SageMakerRoutingFacts = { ...SAGEMAKER, variants: [SAGEMAKER.variants[0], { ...SAGEMAKER.variants[1], variantName: 'a10g' }] };
    expect(() => new InferenceDashboard(stack, 'Clash', { serving: servingOf(clash, 's') })).toThrow(
      "  - serving.routing.variants['a10g'].variantName: 'a10g' is the name of a capacity class it is not exactly; allowed: a variant name "
      + 'that is no class name, or the name of its only class',
    );
    const same: SageMakerRoutingFacts = { ...SAGEMAKER, variants: [{ ...SAGEMAKER.variants[0], variantName: 'l40s' }, SAGEMAKER.variants[1]] };
    expect(() => new InferenceDashboard(stack, 'Same', { serving: servingOf(same, 's') })).not.toThrow();
  });

  test('fails when the period is under a minute: every metric the alarms read is published once a minute, so they could never fill a window', () => {
    for (const seconds of [10, 30]) {
      const { stack } = testStack();
      expect(() => new InferenceAlarms(stack, 'Alarms', { serving: servingOf(ALB, 's'), period: Duration.seconds(seconds) })).toThrow(
        `InferenceAlarms 'Test/Alarms' is invalid (1 problem):\n  - period: is ${seconds} s; allowed: a whole number of minutes from 1 minute to 1 day `
        + '(the dashboard and the alarms read metrics published once a minute; a period under a minute is for high-resolution metrics only)',
      );
      expect(() => new InferenceDashboard(stack, 'Dashboard', { serving: servingOf(ALB, 's'), period: Duration.seconds(seconds) })).toThrow(`is ${seconds} s`);
    }
  });

  test('accepts the boundaries: 99.9% share, one-period durations, a 1-day heartbeat', () => {
    const { stack } = testStack();
    expect(() => new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 's'),
      fallbackShare: { thresholdPercent: 99.9, duration: Duration.minutes(1) },
      reconcilerHeartbeat: { duration: Duration.days(1) },
    })).not.toThrow();
  });
});

/**
 * Review R240: a 503 the ALB answers itself (no healthy or registered target in a class's target group) is in neither
 * RequestCount nor HTTPCode_Target_5XX_Count, so no class metric sees it; HTTPCode_ELB_5XX_Count does, under the
 * `LoadBalancer` dimension only (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html).
 */
describe("the load balancer's own 5XX answers (R240)", () => {
  const SHARED: AlbRoutingFacts = { ...ALB, ruleArn: `${ALB.listenerArn.replace(':listener/', ':listener-rule/')}/9683b2d02a6cabee` };
  const build = (facts: AlbRoutingFacts | SageMakerRoutingFacts, options: ConstructorParameters<typeof InferenceAlarms>[2] extends infer P
    ? Omit<P, 'serving'> : never = {}) => {
    const { stack } = testStack();
    const alarms = new InferenceAlarms(stack, 'Alarms', { serving: servingOf(facts, 'llama-eks'), ...options });
    return { stack, alarms, template: Template.fromStack(stack) };
  };

  test("on the service's own ALB: ELB 5XX over RequestCount + ELB 5XX of the load balancer (LoadBalancer dimension only), > 1% in 5 of 7", () => {
    const { alarms, template } = build(ALB);
    expect(alarms.loadBalancerErrorsAlarm).toBeDefined();
    const a = oneAlarm(template, 'answered more than 1% of its requests itself with a 5XX');
    expect(a.AlarmDescription).toContain('Its load balancer answered');
    expect(a.AlarmDescription).not.toContain('shared');
    expect(mathOf(a)).toEqual({
      expression: 'IF((FILL(lbr, 0) + FILL(lbe, 0)) >= 5, 100 * FILL(lbe, 0) / (FILL(lbr, 0) + FILL(lbe, 0)), 0)',
      metrics: [
        'lbe AWS/ApplicationELB HTTPCode_ELB_5XX_Count LoadBalancer=app/llama/50dc6c495c0c9188 Sum',
        'lbr AWS/ApplicationELB RequestCount LoadBalancer=app/llama/50dc6c495c0c9188 Sum',
      ],
    });
    expect(a).toEqual(expect.objectContaining({
      Threshold: ALARM_DEFAULTS.loadBalancerErrors.thresholdPercent, ComparisonOperator: 'GreaterThanThreshold',
      DatapointsToAlarm: 5, EvaluationPeriods: 7, TreatMissingData: 'notBreaching',
    }));
    expect(alarms.alarms).toContain(alarms.loadBalancerErrorsAlarm);
    expect(alarms.capacityAlarms).not.toContain(alarms.loadBalancerErrorsAlarm);
  });

  test('both metrics are in the AWS-published table under exactly those dimensions (the 5XX count only once it has one)', () => {
    expect(findPublishedMetric('AWS/ApplicationELB', 'HTTPCode_ELB_5XX_Count', ['LoadBalancer'])?.publishedOn).toBeDefined();
    expect(findPublishedMetric('AWS/ApplicationELB', 'HTTPCode_ELB_5XX_Count', ['LoadBalancer', 'TargetGroup'])).toBeUndefined();
    expect(findPublishedMetric('AWS/ApplicationELB', 'RequestCount', ['LoadBalancer'])).toBeDefined();
    expect(findPublishedMetric('AWS/ApplicationELB', 'RequestCount', ['LoadBalancer', 'TargetGroup'])).toBeDefined();
  });

  test('on a shared listener: not created by default (the count is every service\'s); enabled: true creates it, described as the shared one', () => {
    const byDefault = build(SHARED);
    expect(byDefault.alarms.loadBalancerErrorsAlarm).toBeUndefined();
    expect(alarmsByDescription(byDefault.template, 'answered more than')).toEqual([]);
    const asked = build(SHARED, { loadBalancerErrors: { enabled: true, thresholdPercent: 5 } });
    const a = oneAlarm(asked.template, 'answered more than 5% of its requests itself');
    expect(a.AlarmDescription).toContain('The shared load balancer it is routed through');
    expect(a.AlarmDescription).toContain('every service routed through it counts');
  });

  test('off with enabled: false; options are validated like the deadline alarm\'s, under their own names', () => {
    expect(build(ALB, { loadBalancerErrors: { enabled: false } }).alarms.loadBalancerErrorsAlarm).toBeUndefined();
    const { stack } = testStack();
    const message = errorOf(() => new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(ALB, 'llama-eks'), loadBalancerErrors: { thresholdPercent: 0, minRequestsPerPeriod: 0.5, duration: Duration.seconds(90) },
    }));
    expect(message).toContain('loadBalancerErrors.thresholdPercent: is 0');
    expect(message).toContain('loadBalancerErrors.minRequestsPerPeriod: is 0.5');
    expect(message).toContain('loadBalancerErrors.duration: is 1 minute 30 seconds');
  });

  test('SageMaker has no load balancer: no alarm, and setting it fails naming the endpoint', () => {
    expect(build(SAGEMAKER).alarms.loadBalancerErrorsAlarm).toBeUndefined();
    expect(build(SAGEMAKER, { loadBalancerErrors: { enabled: false } }).alarms.loadBalancerErrorsAlarm).toBeUndefined();
    const { stack } = testStack();
    const message = errorOf(() => new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(SAGEMAKER, 'llama'), loadBalancerErrors: { thresholdPercent: 2 },
    }));
    expect(message).toMatch(/loadBalancerErrors: sets thresholdPercent, but .* has no load balancer whose own 5XX answers could be counted; /);
    expect(message).toContain('allowed: unset, or { enabled: false }');
  });

  test('the dashboard draws the count (and the alarm\'s share with its threshold); none on SageMaker', () => {
    const { stack } = testStack();
    new InferenceObservability(stack, 'Obs', { serving: servingOf(ALB, 'llama-eks') });
    const widgets = dashboardWidgets(stack, Template.fromStack(stack));
    const w = widget(widgets, '5XX answered by the load balancer itself');
    expect(metricKeys(w)).toContain('AWS/ApplicationELB HTTPCode_ELB_5XX_Count LoadBalancer=app/llama/50dc6c495c0c9188 Sum');
    expect(expressions(w)).toEqual([expect.stringContaining('100 * FILL(lbe, 0)')]);
    const { stack: sm } = testStack();
    new InferenceObservability(sm, 'Obs', { serving: servingOf(SAGEMAKER, 'llama') });
    expect(dashboardWidgets(sm, Template.fromStack(sm)).filter((x) => String(x.properties.title ?? '').includes('load balancer itself'))).toEqual([]);
  });
});
