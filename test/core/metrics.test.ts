import * as fc from 'fast-check';
import {
  ADMISSION_DECISIONS,
  ADMISSION_REJECTIONS,
  ALL_METRIC_NAMES,
  ALL_METRICS,
  AwsMetrics,
  CAPACITY_ERROR_OUTCOMES,
  CAPACITY_OUTCOMES,
  classDimensions,
  Dim,
  dimensionMap,
  dimensionSets,
  emfRecord,
  METRIC_NAMESPACE,
  MetricContractError,
  Metrics,
  metricsEmittedBy,
  serviceDimensions,
} from '../../lib/core/metrics/contract';

const S = Dim.SERVICE;
const C = Dim.CLASS;

describe('the metric contract', () => {
  test('keeps the names the other areas already use', () => {
    expect(Object.keys(Metrics)).toEqual(expect.arrayContaining([
      'capacityAttempts', 'replicaReadyTime', 'admissions', 'queueWait', 'tokensPerSecond', 'readyReplicas', 'desiredReplicas',
      'fallbackShareRequests', 'fallbackShareTokens', 'deadlineExhaustions', 'policyMode', 'routeWeight', 'decisions', 'weightChanges',
    ]));
    expect(METRIC_NAMESPACE).toBe('CapacityAwareInference');
  });

  test.each([
    ['capacityAttempts', 'CapacityAttempts', [S, C, Dim.OUTCOME], 'Count'],
    ['replicaReadyTime', 'ReplicaReadyTime', [S, C], 'Seconds'],
    ['admissions', 'Admissions', [S, C, Dim.DECISION], 'Count'],
    ['queueWait', 'QueueWait', [S, C], 'Milliseconds'],
    ['tokensPerSecond', 'TokensPerSecond', [S, C], 'Count/Second'],
    ['generatedTokens', 'GeneratedTokens', [S, C], 'Count'],
    ['readyReplicas', 'ReadyReplicas', [S, C], 'Count'],
    ['desiredReplicas', 'DesiredReplicas', [S, C], 'Count'],
    ['healthyTargets', 'HealthyTargets', [S, C], 'Count'],
    ['fallbackShareRequests', 'FallbackShareRequests', [S], 'Percent'],
    ['fallbackShareTokens', 'FallbackShareTokens', [S], 'Percent'],
    ['deadlineExhaustions', 'DeadlineExhaustions', [S, C], 'Count'],
    ['policyMode', 'PolicyMode', [S], 'None'],
    ['routeWeight', 'RouteWeight', [S, C], 'Percent'],
    ['decisions', 'Decisions', [S, Dim.REASON], 'Count'],
  ] as const)('covers %s as %s by %j in %s', (key, name, dims, unit) => {
    const spec = Metrics[key];
    expect(spec).toEqual(expect.objectContaining({ namespace: METRIC_NAMESPACE, name, dimensions: dims, unit }));
  });

  test('names are unique, CloudWatch-valid and dimension names come from Dim', () => {
    expect(new Set(ALL_METRIC_NAMES).size).toBe(ALL_METRIC_NAMES.length);
    const dims = new Set<string>(Object.values(Dim));
    for (const m of ALL_METRICS) {
      expect(m.name).toMatch(/^[A-Za-z][A-Za-z0-9]{1,254}$/);
      expect(m.dimensions.length).toBeLessThanOrEqual(30);
      for (const d of m.dimensions) expect(dims.has(d)).toBe(true);
      expect(m.description.length).toBeGreaterThan(10);
    }
  });

  test('rollups drop dimensions, never add one, and keep Service', () => {
    for (const m of ALL_METRICS) {
      for (const r of m.rollups) {
        expect(r.length).toBeLessThan(m.dimensions.length);
        for (const d of r) expect(m.dimensions).toContain(d);
        expect(r).toContain(S);
      }
    }
    // The alarms read these service-wide totals.
    expect(dimensionSets(Metrics.decisions)).toEqual([[S, Dim.REASON], [S]]);
    expect(dimensionSets(Metrics.deadlineExhaustions)).toEqual([[S, C], [S]]);
    expect(dimensionSets(Metrics.admissions)).toEqual([[S, C, Dim.DECISION], [S, Dim.DECISION]]);
  });

  test('every metric has exactly one emitter, and the split matches the design', () => {
    const byEmitter = (e: Parameters<typeof metricsEmittedBy>[0]) => metricsEmittedBy(e).map((m) => m.name).sort();
    expect(byEmitter('reconciler')).toEqual(
      ['CapacityEventEntries', 'Decisions', 'DegradedReads', 'DesiredReplicas', 'FallbackShareRequests', 'FallbackShareTokens', 'HealthyTargets', 'PendingScaleOut', 'PolicyMode', 'PolicyRamping', 'ReadyReplicas', 'ReconcilerFailures', 'RefusedScaleOuts', 'ReplicaFloor', 'RouteWeight',
        'WeightChanges', 'WritesDeferred'],
    );
    expect(byEmitter('model-server')).toEqual(
      ['Admissions', 'DeadlineExhaustions', 'GeneratedTokens', 'KvCacheUsage', 'PromptTokens', 'QueueWait', 'ReplicaReadyTime',
        'RequestsRunning', 'RequestsWaiting', 'TokensPerSecond'],
    );
    expect(byEmitter('provisioning')).toEqual(['CapacityAttempts']);
  });

  test('error outcomes and rejections are the outcomes and decisions minus the good one', () => {
    expect(CAPACITY_ERROR_OUTCOMES).toEqual(CAPACITY_OUTCOMES.filter((o) => o !== 'launched'));
    expect(ADMISSION_REJECTIONS).toEqual(['rejected-deadline', 'rejected-queue-full']);
    expect(ADMISSION_DECISIONS[0]).toBe('admitted');
  });

  test('ALL_METRIC_NAMES lists the AWS metric names but no namespace', () => {
    expect(ALL_METRIC_NAMES).toEqual(expect.arrayContaining(['Invocations', 'ModelLatency', 'RequestCount', 'TargetResponseTime', 'QueueWait']));
    for (const g of Object.values(AwsMetrics)) expect(ALL_METRIC_NAMES).not.toContain(g.namespace);
  });
});

describe('dimensionMap', () => {
  test('orders the dimensions as the contract does', () => {
    expect(Object.keys(dimensionMap(Metrics.capacityAttempts, { [Dim.OUTCOME]: 'launched', [C]: 'l40s', [S]: 'svc' }))).toEqual([S, C, Dim.OUTCOME]);
    expect(dimensionMap(Metrics.readyReplicas, classDimensions('svc', 'l40s'))).toEqual({ Service: 'svc', CapacityClass: 'l40s' });
  });

  test('accepts a rollup dimension set', () => {
    expect(dimensionMap(Metrics.decisions, serviceDimensions('svc'))).toEqual({ Service: 'svc' });
  });

  test('fails when a dimension is missing, extra or empty, naming the metric and the allowed sets', () => {
    expect(() => dimensionMap(Metrics.readyReplicas, serviceDimensions('svc'))).toThrow(
      'ReadyReplicas: dimensions [Service] are not a dimension set of this metric; allowed: [Service, CapacityClass]',
    );
    expect(() => dimensionMap(Metrics.decisions, { ...classDimensions('svc', 'x') })).toThrow(
      'allowed: [Service, Reason] or [Service]',
    );
    expect(() => dimensionMap(Metrics.policyMode, { [S]: '' })).toThrow('PolicyMode: dimension Service is empty');
    expect(() => dimensionMap(Metrics.policyMode, { [S]: 'x'.repeat(1025) })).toThrow(MetricContractError);
  });
});

describe('emfRecord', () => {
  test('publishes under the full dimensions and each rollup, with values as top-level members', () => {
    const rec = emfRecord(1700000000000, classDimensions('svc', 'l40s'), [
      { spec: Metrics.deadlineExhaustions, value: 2 },
      { spec: Metrics.queueWait, value: 120 },
      { spec: Metrics.generatedTokens, value: 5400 },
    ], { requestId: 'r1' });
    expect(rec).toEqual({
      requestId: 'r1',
      _aws: {
        Timestamp: 1700000000000,
        CloudWatchMetrics: [
          {
            Namespace: 'CapacityAwareInference',
            Dimensions: [[S, C], [S]],
            Metrics: [{ Name: 'DeadlineExhaustions', Unit: 'Count' }, { Name: 'GeneratedTokens', Unit: 'Count' }],
          },
          { Namespace: 'CapacityAwareInference', Dimensions: [[S, C]], Metrics: [{ Name: 'QueueWait', Unit: 'Milliseconds' }] },
        ],
      },
      Service: 'svc',
      CapacityClass: 'l40s',
      DeadlineExhaustions: 2,
      QueueWait: 120,
      GeneratedTokens: 5400,
    });
  });

  test('fails when metrics of one record have different dimensions, or a value is not finite', () => {
    expect(() => emfRecord(0, serviceDimensions('svc'), [
      { spec: Metrics.policyMode, value: 1 },
      { spec: Metrics.routeWeight, value: 50 },
      { spec: Metrics.weightChanges, value: Number.NaN },
    ])).toThrow(new MetricContractError([
      'RouteWeight: emitted with dimensions [Service]; its dimensions are [Service, CapacityClass]',
      'WeightChanges: value NaN is not a finite number',
    ]).message);
    expect(() => emfRecord(0, serviceDimensions('svc'), [])).toThrow('an EMF record needs at least one metric');
    expect(() => emfRecord(0, serviceDimensions('svc'), [{ spec: Metrics.policyMode, value: 1 }, { spec: Metrics.policyMode, value: 0 }]))
      .toThrow('PolicyMode: appears more than once');
  });

  test('property: every dimension a directive names is a top-level member, every metric has its value', () => {
    const perClass = ALL_METRICS.filter((m) => m.dimensions.length === 2 && m.dimensions.includes(C));
    fc.assert(fc.property(
      fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
      fc.subarray(perClass, { minLength: 1 }),
      fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: perClass.length, maxLength: perClass.length }),
      (service, cls, specs, values) => {
        const rec = emfRecord(1, classDimensions(service, cls), specs.map((spec, i) => ({ spec, value: values[i] })));
        const directives = (rec._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics;
        for (const d of directives) {
          for (const set of d.Dimensions) for (const k of set) expect(typeof rec[k]).toBe('string');
          for (const m of d.Metrics) expect(typeof rec[m.Name]).toBe('number');
        }
        expect(directives.flatMap((d) => d.Metrics.map((m) => m.Name)).sort()).toEqual(specs.map((s) => s.name).sort());
      },
    ), { seed: 7, numRuns: 200 });
  });
});
