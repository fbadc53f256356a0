import { DEFAULT_POLICY_CONFIG } from '../../lib/core/policy/defaults';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { assembleSignals, buildQueryBatch, rebuildState, windowsFromResults } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { demandWindow } from '../../lib/core/reconciler/faults';

const FRAME = { start: 1_800_000_000, periodSeconds: 60, slots: 12 };
const NOW = FRAME.start + 12 * 60;
const W = { a: 60, b: 40 };
const cls = (name: string, rank: number) => ({
  name, preferenceRank: rank, tokensPerSecondPerReplica: 100, safeConcurrency: 4, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 4,
  instanceType: 'ml.g5.xlarge',
});
const CONFIG: ReconcilerConfig = {
  facts: {
    kind: 'sagemaker', endpointName: 'my"endpoint', endpointArn: 'arn',
    variants: [{ variantName: 'a', classes: [cls('a', 0)] }, { variantName: 'b', classes: [cls('b', 1)] }],
  },
  placement: {}, policy: {}, service: 'svc', tokensPerRequest: 120, metricDelaySeconds: 120,
};

describe('rebuildState: the policy state from the reconciler\'s own decision metrics', () => {
  const none = Array(12).fill(null);

  test('without history: capacity mode entered now (costs one window, never availability)', () => {
    expect(rebuildState(none, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG)).toEqual({ mode: 'capacity', weights: W, modeSince: NOW, ramping: false });
  });

  test('the mode of the newest datapoint, entered where its trailing run began; gaps do not end a run', () => {
    const mode = [0, 0, 0, 1, 1, null, 1, 1, null, null, null, null];
    expect(rebuildState(mode, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG)).toEqual({
      mode: 'capacity', weights: W, modeSince: FRAME.start + 3 * 60, ramping: false, entries: [FRAME.start + 3 * 60],
    });
  });

  test('every visible cost-to-capacity transition is an entry, so the return hold grows across Lambda runs', () => {
    const mode = [0, 1, 1, 0, 0, 1, 1, 1, null, null, null, null];
    expect(rebuildState(mode, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG).entries).toEqual([FRAME.start + 60, FRAME.start + 5 * 60]);
  });

  test('a window that opens in capacity mode holds an entry at least that old: the capacity event is still under way', () => {
    const mode = [1, 1, 0, 0, 0, 0, 0, 0, null, null, null, null];
    expect(rebuildState(mode, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG)).toMatchObject({ mode: 'cost', entries: [FRAME.start] });
    expect(rebuildState(Array(12).fill(0), none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG).entries).toBeUndefined();
  });

  test('the published CapacityEventEntries at the newest decision sets how many entries the event counts', () => {
    const at = (count: number | null) => Array.from({ length: 12 }, (_, i) => (i === 7 ? count : null));
    // A capacity run filling the window, 3 entries: all older than the window, they stand just before it, in order.
    const held = rebuildState([...Array(8).fill(1), null, null, null, null], none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG, at(3));
    expect(held.entries).toEqual([FRAME.start - 180, FRAME.start - 120, FRAME.start - 60]);
    // Visible transitions keep their periods; the count keeps the newest of them (the policy keeps the newest entries).
    const flap = [0, 1, 1, 0, 0, 1, 1, 1, null, null, null, null];
    expect(rebuildState(flap, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG, at(3)).entries)
      .toEqual([FRAME.start - 60, FRAME.start + 60, FRAME.start + 5 * 60]);
    expect(rebuildState(flap, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG, at(1)).entries).toEqual([FRAME.start + 5 * 60]);
    // 0: the event ended (or capacity mode was the fail-safe start): no entry, not even for a window opening in capacity mode.
    const returned = [1, 1, 0, 0, 0, 0, 0, 0, null, null, null, null];
    expect(rebuildState(returned, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG, at(0)).entries).toBeUndefined();
    // Only the datapoint of the newest decision counts: an older one is another decision's.
    const stale = Array.from({ length: 12 }, (_, i) => (i === 6 ? 3 : null));
    expect(rebuildState(returned, none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG, stale).entries).toEqual([FRAME.start]);
  });

  test('a ramp decision already recorded in the current period marks its step as taken; an older one does not', () => {
    const slots = FRAME.slots;
    const current = FRAME.start + (slots - 1) * 60;
    const mode: Array<number | null> = Array.from({ length: slots }, (_, i) => (i < slots - 2 ? 1 : 0));
    const rampNow: Array<number | null> = Array.from({ length: slots }, (_, i) => (i >= slots - 2 ? 1 : null));
    const frameNow = rebuildState(mode, rampNow, W, FRAME, current, DEFAULT_POLICY_CONFIG);
    expect(frameNow).toMatchObject({ mode: 'cost', ramping: true, lastStepAt: current });
    const earlier = rebuildState(mode.slice(0, slots - 1).concat([null]), rampNow.slice(0, slots - 1).concat([null]), W, FRAME, current,
      DEFAULT_POLICY_CONFIG);
    expect(earlier).toMatchObject({ mode: 'cost', ramping: true });
    expect(earlier.lastStepAt).toBeUndefined();
  });

  test('the ramp flag comes from PolicyRamping at the same period', () => {
    const mode = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0];
    const ramping = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0];
    expect(rebuildState(mode, ramping, W, FRAME, NOW, DEFAULT_POLICY_CONFIG).ramping).toBe(false);
    expect(rebuildState(mode, [...ramping.slice(0, 11), 1], W, FRAME, NOW, DEFAULT_POLICY_CONFIG).ramping).toBe(true);
  });

  test('without the ramp flag, a recent capacity-to-cost transition counts as ramping, a window-long cost run does not', () => {
    expect(rebuildState([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0], none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG).ramping).toBe(true);
    expect(rebuildState(Array(12).fill(0), none, W, FRAME, NOW, DEFAULT_POLICY_CONFIG)).toMatchObject({ mode: 'cost', ramping: false });
  });
});

describe('the GetMetricData batch and its answer', () => {
  const plan = signalPlan(CONFIG, 60);
  const batch = buildQueryBatch(plan, 60);

  test('a one-class SageMaker variant reads its variant-level metrics [EndpointName, VariantName]: no SEARCH, no InstanceType', () => {
    const variantMetric = (metricName: string, stat: string) => ({ namespace: 'AWS/SageMaker', metricName, dimensions: { EndpointName: 'my"endpoint', VariantName: 'a' }, stat });
    expect(plan.classes.a.servedTokensPerSecond).toEqual({ metric: variantMetric('Invocations', 'Sum'), scale: 2 });
    expect(plan.classes.a.rejectedTokensPerSecond).toEqual({ metric: variantMetric('Invocation5XXErrors', 'Sum'), scale: 2 });
    expect(plan.classes.a.latencyP95Ms).toEqual({ metric: variantMetric('ModelLatency', 'p95'), scale: 1 / 1000 });
    // Nothing in the batch searches or names an InstanceType: SageMaker documents that series only for pooled variants.
    expect(batch.queries.filter((q) => q.Expression !== undefined)).toEqual([]);
    expect(batch.queries.flatMap((q) => q.MetricStat!.Metric.Dimensions.map((d) => d.Name))).not.toContain('InstanceType');
    expect(batch.queries.map((q) => q.Id)).toEqual(batch.index.map((e) => e.id));
    expect(new Set(batch.queries.map((q) => q.Id)).size).toBe(batch.queries.length);
    expect(batch.queries.every((q) => /^[a-z][a-zA-Z0-9_]*$/.test(q.Id))).toBe(true);
  });

  test('a variant with several pools: requests at the variant level, p95 the MAX over the per-InstanceType series and the variant-level one, names quoted safely', () => {
    const pooled: ReconcilerConfig = {
      ...CONFIG,
      facts: { ...CONFIG.facts, variants: [{ variantName: 'a', classes: [cls('a', 0), { ...cls('a2', 1), instanceType: 'ml.g6.xlarge' }] }] } as ReconcilerConfig['facts'],
      signals: { a: { rejectionStatus: 'mixed' } },
    };
    const sources = signalPlan(pooled, 60).classes.a;
    const variantMetric = (metricName: string) => ({ namespace: 'AWS/SageMaker', metricName, dimensions: { EndpointName: 'my"endpoint', VariantName: 'a' }, stat: 'Sum' });
    expect(sources.servedTokensPerSecond).toEqual({ metric: variantMetric('Invocations'), scale: 2 });
    expect(sources.rejectedTokensPerSecond).toEqual([
      { metric: variantMetric('Invocation4XXErrors'), scale: 2 },
      { metric: variantMetric('Invocation5XXErrors'), scale: 2 },
    ]);
    // The variant-level p95 is in the same expression: without the per-type series the latency still reads (no fail-open).
    expect(sources.latencyP95Ms).toEqual({
      expression: 'MAX([MAX(SEARCH(\'{AWS/SageMaker,EndpointName,InstanceType,VariantName} MetricName="ModelLatency" '
        + 'EndpointName="my\\"endpoint" VariantName="a"\', \'p95\', 60)), '
        + 'MAX(SEARCH(\'{AWS/SageMaker,EndpointName,VariantName} MetricName="ModelLatency" '
        + 'EndpointName="my\\"endpoint" VariantName="a"\', \'p95\', 60))])',
      scale: 1 / 1000,
    });
  });

  test('datapoints land in their period, scaled; out-of-frame and non-finite values are dropped', () => {
    const served = batch.index.find((e) => e.className === 'a' && e.signal === 'servedTokensPerSecond')!;
    const at = (slot: number) => new Date((FRAME.start + slot * 60 + 5) * 1000);
    const windows = windowsFromResults([
      { Id: served.id, Timestamps: [at(0), at(3), at(-1), at(12), at(4)], Values: [10, 20, 99, 99, Number.NaN] },
    ], batch, FRAME);
    expect(windows.get(served.id)).toEqual([20, null, null, 40, null, null, null, null, null, null, null, null]);
  });

  test('demand is served + rejected over classes; a period where a class holding weight is silent is missing', () => {
    const id = (className: string, signal: string) => batch.index.find((e) => e.className === className && e.signal === signal)!.id;
    const windows = new Map<string, Array<number | null>>(batch.index.map((e) => [e.id, Array(3).fill(null)]));
    windows.set(id('a', 'servedTokensPerSecond'), [100, null, null]);
    windows.set(id('b', 'servedTokensPerSecond'), [50, 25, null]);
    windows.set(id('b', 'rejectedTokensPerSecond'), [5, null, null]);
    const { signals } = assembleSignals(windows, batch, ['a', 'b']);
    // Period 2: a is silent. Unweighted, any silent class makes the period missing; with a holding no weight, b's 25 is the demand.
    expect(demandWindow(signals, ['a', 'b'], 3)).toEqual([155, null, null]);
    expect(demandWindow(signals, ['a', 'b'], 3, { a: 0, b: 100 })).toEqual([155, 25, null]);
  });
});

describe('EKS signal plan: the producers the EKS construct deploys', () => {
  const target = (name: string, rank: number) => ({
    class: cls(name, rank), targetGroupArn: `arn:tg/${name}`, targetGroupFullName: `targetgroup/${name}/1`,
    namespace: 'serving', deploymentName: `svc-${name}`, nodePoolName: `svc-${name}`,
  });
  const ALB_CONFIG: ReconcilerConfig = {
    facts: { kind: 'alb', listenerArn: 'arn:listener', loadBalancerFullName: 'app/lb/1', targets: [target('a', 0), target('b', 1)] },
    placement: {}, policy: {}, service: 'svc', tokensPerRequest: 120, metricDelaySeconds: 120, clusterName: 'prod',
    karpenterCapacityErrors: true,
    signals: { a: { generatedTokens: { namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'svc', CapacityClass: 'a' }, stat: 'Sum' } } },
  };
  const plan = signalPlan(ALB_CONFIG, 60);

  test('desired replicas are Container Insights replicas_desired of the Deployment (PodName holds its name)', () => {
    expect(plan.classes.b.desiredReplicas).toEqual({ metric: {
      namespace: 'ContainerInsights', metricName: 'replicas_desired', dimensions: { ClusterName: 'prod', Namespace: 'serving', PodName: 'svc-b' }, stat: 'Maximum',
    } });
  });

  test('capacity errors are the Karpenter log metric filter of each NodePool', () => {
    expect(plan.classes.b.capacityErrors).toEqual({ metric: {
      namespace: 'CapacityAwareInference/Karpenter', metricName: 'InsufficientCapacity/prod/svc-b', dimensions: {}, stat: 'Sum',
    } });
  });

  test('rejected demand is read in the status class each engine sheds with: 4XX for TGI (429), 5XX otherwise', () => {
    const tgi = signalPlan({ ...ALB_CONFIG, signals: { ...ALB_CONFIG.signals, b: { rejectionStatus: '4xx' } } }, 60);
    expect(tgi.classes.b.rejectedTokensPerSecond).toEqual({
      metric: { namespace: 'AWS/ApplicationELB', metricName: 'HTTPCode_Target_4XX_Count', dimensions: { TargetGroup: 'targetgroup/b/1', LoadBalancer: 'app/lb/1' }, stat: 'Sum' },
      scale: 2,
    });
    expect((tgi.classes.a.rejectedTokensPerSecond as { metric: { metricName: string } }).metric.metricName).toBe('HTTPCode_Target_5XX_Count');
    const sm = signalPlan({ ...CONFIG, signals: { a: { rejectionStatus: '4xx' } } }, 60);
    expect((sm.classes.a.rejectedTokensPerSecond as { metric: { metricName: string } }).metric.metricName).toBe('Invocation4XXErrors');
    expect((sm.classes.b.rejectedTokensPerSecond as { metric: { metricName: string } }).metric.metricName).toBe('Invocation5XXErrors');
  });

  test('served tokens are the tokens the server counted where it counts them, requests x mean tokens elsewhere', () => {
    expect(plan.classes.a.servedTokensPerSecond).toEqual({ metric: ALB_CONFIG.signals!.a.generatedTokens, scale: 1 / 60 });
    expect(plan.classes.b.servedTokensPerSecond).toEqual({
      metric: { namespace: 'AWS/ApplicationELB', metricName: 'RequestCount', dimensions: { TargetGroup: 'targetgroup/b/1', LoadBalancer: 'app/lb/1' }, stat: 'Sum' },
      scale: 2,
    });
  });
});
