/**
 * verify's metrics check covers what the alarms read: every AWS serving metric of the synthesized DeadlineExhaustion
 * and FallbackShare alarms is among the metrics verify expects, for the configuration the Reconciler of the same serving
 * deploys. Built from the constructs, so the alarms and verify cannot drift apart unnoticed.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { InferenceAlarms } from '../../lib/control/alarms';
import { Reconciler } from '../../lib/control/reconciler';
import { type AlbRoutingFacts, type RoutedClassFacts, type RoutingFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type ServingSignals } from '../../lib/core/reconciler/serving';
import { expectedMetrics, metricPresenceCheck } from '../../lib/core/verify/metric-presence';
import { testStack } from '../util';
import { servingOf } from '../control/serving-fixture';

const cls = (name: string, preferenceRank: number, instanceType: string): RoutedClassFacts => ({
  name, preferenceRank, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 4, instanceType,
});

const SAGEMAKER: SageMakerRoutingFacts = {
  kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  variants: [
    { variantName: 'preferred', classes: [cls('l40s', 0, 'ml.g6e.xlarge')] },
    { variantName: 'pooled', classes: [cls('a10g', 1, 'ml.g5.xlarge'), cls('inf2', 2, 'ml.inf2.xlarge')] },
  ],
};
// The SageMaker example's shape: the preferred variant's pools are a preferred class and a fallback one.
const POOLED_PREFERRED: SageMakerRoutingFacts = {
  ...SAGEMAKER,
  variants: [
    { variantName: 'preferred', classes: [cls('l40s', 0, 'ml.g6e.xlarge'), cls('a10g', 1, 'ml.g5.xlarge')] },
    { variantName: 'fallback', classes: [cls('inf2', 2, 'ml.inf2.xlarge')] },
  ],
};
const tg = (name: string) => `targetgroup/${name}/0001`;
const ALB: AlbRoutingFacts = {
  kind: 'alb', listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/sd/abc/def', loadBalancerFullName: 'app/sd/abc',
  targets: [cls('l40s', 0, 'g6e.xlarge'), cls('a10g', 1, 'g5.xlarge')].map((c) => ({
    class: c, targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:${tg(c.name)}`, targetGroupFullName: tg(c.name),
    namespace: 'serving', deploymentName: `sd-${c.name}`, nodePoolName: `sd-${c.name}`,
  })),
};

type AlarmMetric = { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: Array<{ Name: string; Value: string }> } } };

/** A metric as `[namespace, name, dimensions]` with its dimensions in name order, for comparison. */
const keyOf = (namespace: string, name: string, dims: Readonly<Record<string, string | undefined>>) =>
  JSON.stringify([namespace, name, Object.fromEntries(Object.entries(dims).sort(([a], [b]) => a.localeCompare(b)))]);

/**
 * The metrics the service's alarms whose construct id matches `ids` read (by default the AWS ones of DeadlineExhaustion
 * and FallbackShare), and the metrics verify expects for its reconciler's configuration.
 */
function readsOf(facts: RoutingFacts, signals: ServingSignals, ids = /DeadlineExhaustion|FallbackShare/, namespace = 'AWS/') {
  const { stack } = testStack();
  const serving = servingOf(facts, 'svc', 250, signals);
  new InferenceAlarms(stack, 'Alarms', { serving, fallbackShare: { basis: 'requests' } });
  const reconciler = new Reconciler(stack, 'Reconciler', { serving });
  const alarms = Object.entries(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm'))
    .filter(([id]) => ids.test(id))
    // A metric alarm (the heartbeat) names its metric itself; a metric-math alarm lists its metrics.
    .flatMap(([, r]) => (r.Properties.Metrics
      ? (r.Properties.Metrics as AlarmMetric[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []))
      : [{ Namespace: r.Properties.Namespace, MetricName: r.Properties.MetricName, Dimensions: r.Properties.Dimensions }]))
    .filter((m) => m.Namespace.startsWith(namespace))
    .map((m) => keyOf(m.Namespace, m.MetricName, Object.fromEntries((m.Dimensions ?? []).map((d) => [d.Name, d.Value]))));
  const expected = new Map(expectedMetrics(reconciler.config).map((m) => [keyOf(m.namespace, m.name, m.dimensions), m]));
  return { alarms: [...new Set(alarms)], expected };
}

test.each([
  ['SageMaker, a variant with two pools shedding in different status classes (TGI 429 beside vLLM 503)', SAGEMAKER,
    { classes: { a10g: { rejectionStatus: '4xx' as const } } }],
  ['SageMaker, every pool shedding 503', SAGEMAKER, { classes: {} }],
  ['SageMaker, a preferred variant with a fallback pool shedding 429', POOLED_PREFERRED, { classes: { a10g: { rejectionStatus: '4xx' as const } } }],
  ['an ALB, a class shedding 429', ALB, { classes: { a10g: { rejectionStatus: '4xx' as const } }, containerInsightsClusterName: 'prod' }],
])('%s: every AWS serving metric the DeadlineExhaustion and FallbackShare alarms read is one verify checks', (_, facts, signals) => {
  const { alarms, expected } = readsOf(facts, signals);
  expect(alarms.length).toBeGreaterThan(0);
  expect(alarms.filter((a) => !expected.has(a))).toEqual([]);
});

test.each([
  ['a variant of fallback pools only: none, it is read on its own series', SAGEMAKER, 'pooled', []],
  ['a preferred variant\'s fallback pool: its requests, FallbackShare\'s alone', POOLED_PREFERRED, 'preferred',
    [['Invocations', 'ml.g5.xlarge', [], ["FallbackShare alarm's a10g requests"]]]],
])('the per-InstanceType series the alarms read, checked as theirs: %s', (_, facts, a10gVariant, perTypeReads) => {
  const { alarms, expected } = readsOf(facts, { classes: { a10g: { rejectionStatus: '4xx' } } });
  const perType = alarms.flatMap((a) => expected.get(a) ?? []).filter((m) => m.dimensions.InstanceType);
  expect(perType.map((m) => [m.name, m.dimensions.InstanceType, m.readBy, m.alarmReadBy])).toEqual(perTypeReads);
  // Every variant's requests and sheds, in the status classes its pools shed in, on its variant-level series.
  const deadline = alarms.flatMap((a) => expected.get(a) ?? []).filter((m) => m.alarms?.includes('DeadlineExhaustion'));
  expect(deadline.every((m) => Object.keys(m.dimensions).sort().join() === 'EndpointName,VariantName')).toBe(true);
  expect(deadline.filter((m) => m.name === 'Invocation4XXErrors').map((m) => m.dimensions.VariantName)).toEqual([a10gVariant]);
});

test.each([
  ['SageMaker (refused scale-outs roll back: PendingScaleOut and RefusedScaleOuts)', SAGEMAKER, { classes: {} }, ['PendingScaleOut', 'RefusedScaleOuts']],
  ['an ALB (DesiredReplicas and ReadyReplicas)', ALB, { classes: {}, containerInsightsClusterName: 'prod' }, ['DesiredReplicas', 'ReadyReplicas']],
])('%s: every metric of the ReplicaShortage and ReconcilerHeartbeat alarms is one verify checks, named by the alarm', (_, facts, signals, shortage) => {
  const { alarms, expected } = readsOf(facts, signals, /ReplicaShortage|ReconcilerHeartbeat/, 'CapacityAwareInference');
  expect(alarms.filter((a) => !expected.has(a))).toEqual([]);
  const read = alarms.map((a) => expected.get(a)!);
  // The [Service] rollup of Decisions, and the two series of each of the two routes.
  expect(read.map((m) => m.name).sort()).toEqual(['Decisions', ...shortage, ...shortage].sort());
  expect(read.find((m) => m.name === 'Decisions')).toMatchObject({ dimensions: { Service: 'svc' }, alarms: ['ReconcilerHeartbeat'] });
  expect(read.filter((m) => m.name !== 'Decisions').every((m) => m.alarms?.includes('ReplicaShortage'))).toBe(true);
});

// SageMaker provisions a variant's priority-1 pool first (realtime-endpoints-heterogeneous.html): on a healthy pooled
// endpoint the fallback pool runs no instance and publishes nothing, and the FallbackShare alarm FILLs its series (R252).
test('a preferred variant\'s fallback pool that publishes nothing is SKIP, not FAIL: the alarm FILLs it; the variant-level series still fails', () => {
  const { expected } = readsOf(POOLED_PREFERRED, { classes: { a10g: { rejectionStatus: '4xx' } } });
  const metrics = [...expected.values()];
  const pool = metrics.find((m) => m.name === 'Invocations' && m.dimensions.InstanceType === 'ml.g5.xlarge')!;
  expect(pool.absentWhile).toMatch(/^FILLed by the alarm: absent while the pool runs no instance/);
  const skipped = metricPresenceCheck(pool, [], []);
  expect(skipped).toMatchObject({ status: 'skip' });
  expect(skipped.detail).toMatch(/^FILLed by the alarm: absent while the pool runs no instance \(.*\): ListMetrics lists no such metric$/);
  // Published within two weeks (the pool ran instances then), not in the past 3 hours: as healthy.
  const dims = Object.entries(pool.dimensions).map(([Name, Value]) => ({ Name, Value }));
  const listed = [{ Namespace: pool.namespace, MetricName: pool.name, Dimensions: dims }];
  expect(metricPresenceCheck(pool, listed, [])).toMatchObject({ status: 'skip', detail: expect.stringContaining('not with RecentlyActive PT3H') });
  expect(metricPresenceCheck(pool, listed, listed).status).toBe('pass');
  // Listed under other dimensions, the alarm reads nothing even while the pool serves: still a failure.
  const other = [{ Namespace: pool.namespace, MetricName: pool.name, Dimensions: [...dims, { Name: 'Extra', Value: 'x' }] }];
  expect(metricPresenceCheck(pool, other, []).status).toBe('fail');
  // Only the FILLed pool series: what the reconciler or DeadlineExhaustion read is still required.
  const required = metrics.filter((m) => m.absentWhile === undefined && m.namespace === 'AWS/SageMaker' && m.name === 'Invocations');
  expect(required.length).toBeGreaterThan(0);
  for (const m of required) expect(metricPresenceCheck(m, [], []).status).toBe('fail');
  expect(metrics.filter((m) => m.absentWhile !== undefined)).toEqual([pool]);
});
