// A variant's per-pool scaling (scaling.perPoolTargets): which policies, and what the metric math computes.
import { findPublishedMetric, perPoolConcurrencyQueries, type TargetTrackingQuery } from '../../lib/core/metrics/aws-published';
import { variantScalingDefaults } from '../../lib/core/platform/control-loop';

const POOLS = [
  { instanceType: 'ml.g6e.xlarge', targetConcurrency: 13.33 },
  { instanceType: 'ml.g5.xlarge', targetConcurrency: 6.67 },
  { instanceType: 'ml.g6.xlarge', targetConcurrency: 10 },
];

/**
 * Evaluates the returned expression for one timestamp as CloudWatch's arithmetic does: a pool whose series has no
 * datapoint reads 0 ("Missing values in a time series are treated as 0", using-metric-math.html).
 */
function evaluate(queries: readonly TargetTrackingQuery[], perPool: ReadonlyArray<number | undefined>): number {
  const values = new Map<string, number>();
  queries.forEach((q) => {
    if (q.metricStat) values.set(q.id, perPool[Number(q.id.replace('pool', '')) - 1] ?? 0);
  });
  for (const q of queries.filter((x) => x.expression !== undefined)) {
    const js = q.expression!.replace(/ABS\(/g, 'Math.abs(').replace(/\b(pool\d+|largest\d+)\b/g, (id) => String(values.get(id)));
    values.set(q.id, Function(`return (${js});`)() as number);
  }
  return values.get(queries.find((q) => q.returnData)!.id)!;
}

describe('variantScalingDefaults', () => {
  const plans = [
    { minReplicas: 5, maxReplicas: 10, targetConcurrencyPerReplica: 13.33 },
    { minReplicas: 0, maxReplicas: 15, targetConcurrencyPerReplica: 6.67 },
  ];
  test('by default one policy at the smallest target of the pools', () => {
    expect(variantScalingDefaults(plans)).toEqual({ minInstances: 5, maxInstances: 15, targetConcurrencyPerInstance: 6.67 });
  });
  test('per pool: the priority-1 pool\'s target for the predefined policy, every pool\'s own for the second', () => {
    expect(variantScalingDefaults(plans, true))
      .toEqual({ minInstances: 5, maxInstances: 15, targetConcurrencyPerInstance: 13.33, poolTargets: [13.33, 6.67] });
    // One pool: nothing to hold apart, one policy.
    expect(variantScalingDefaults(plans.slice(0, 1), true)).toEqual({ minInstances: 5, maxInstances: 10, targetConcurrencyPerInstance: 13.33 });
  });
});

describe('perPoolConcurrencyQueries', () => {
  const queries = perPoolConcurrencyQueries('ep', 'preferred', POOLS);

  test('one Average ConcurrentRequestsPerModel per pool on the documented per-InstanceType series; one expression returns data', () => {
    const metrics = queries.filter((q) => q.metricStat);
    expect(metrics.map((q) => q.metricStat!.metric.dimensions)).toEqual(POOLS.map((p) => [
      { name: 'EndpointName', value: 'ep' }, { name: 'VariantName', value: 'preferred' }, { name: 'InstanceType', value: p.instanceType },
    ]));
    for (const q of metrics) {
      expect(q).toMatchObject({ returnData: false, metricStat: { stat: 'Average', metric: { namespace: 'AWS/SageMaker', metricName: 'ConcurrentRequestsPerModel' } } });
      const m = q.metricStat!.metric;
      expect(findPublishedMetric(m.namespace, m.metricName, m.dimensions.map((d) => d.name))).toBeDefined();
    }
    expect(queries.filter((q) => q.returnData)).toHaveLength(1);
    // Ids as CloudWatch allows them: a lower-case letter first, then letters, digits and underscores; unique.
    expect(queries.every((q) => /^[a-z][A-Za-z0-9_]*$/.test(q.id))).toBe(true);
    expect(new Set(queries.map((q) => q.id)).size).toBe(queries.length);
  });

  test('reads the largest concurrency over its own target of the pools that have instances', () => {
    // Every type at its own target: 1.
    expect(evaluate(queries, [13.33, 6.67, 10])).toBeCloseTo(1, 9);
    // Least-outstanding-requests routing: every instance at about the same concurrency; the slowest type present decides.
    expect(evaluate(queries, [8, 8, 8])).toBeCloseTo(8 / 6.67, 9);
    // Only the priority-1 type runs (the steady state): its own target, the others' series are missing.
    expect(evaluate(queries, [13.33, undefined, undefined])).toBeCloseTo(1, 9);
    expect(evaluate(queries, [20, undefined, undefined])).toBeCloseTo(20 / 13.33, 9);
    // The priority-1 type gone, the third type carries the variant.
    expect(evaluate(queries, [undefined, undefined, 12])).toBeCloseTo(1.2, 9);
  });

  test('one pool reads its ratio; five pools stay within an alarm\'s ten metrics', () => {
    const single = perPoolConcurrencyQueries('ep', 'v', POOLS.slice(0, 1));
    expect(evaluate(single, [6.665])).toBeCloseTo(0.5, 9);
    const five = perPoolConcurrencyQueries('ep', 'v', [...POOLS, ...POOLS.slice(0, 2)]);
    expect(five.filter((q) => q.metricStat)).toHaveLength(5);
    expect(evaluate(five, [1, 2, 3, 4, 6.67])).toBeCloseTo(1, 9);
  });
});
