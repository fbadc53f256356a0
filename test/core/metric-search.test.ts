import * as fc from 'fast-check';
import { maxOfSearches, parseMaxOfSearches, parseSearch, searchesIn, searchExpression, type SearchSpec } from '../../lib/core/metrics/search';

const SPEC: SearchSpec = {
  namespace: 'AWS/SageMaker',
  dimensionNames: ['EndpointName', 'InstanceType', 'VariantName'],
  metricName: 'ModelLatency',
  pinned: { EndpointName: 'my"end\\point', VariantName: 'a' },
  stat: 'p95',
  periodSeconds: 60,
};

describe('SEARCH expressions: one builder, one parser', () => {
  test('the builder writes the schema, MetricName then the pinned terms in order, values quoted and escaped', () => {
    expect(searchExpression(SPEC)).toBe(
      'SEARCH(\'{AWS/SageMaker,EndpointName,InstanceType,VariantName} MetricName="ModelLatency" '
      + 'EndpointName="my\\"end\\\\point" VariantName="a"\', \'p95\', 60)');
  });

  test('without a period the call has no third argument (the graph\'s period applies), and parses back the same', () => {
    const { periodSeconds: _, ...noPeriod } = SPEC;
    const e = searchExpression(noPeriod);
    expect(e).toBe('SEARCH(\'{AWS/SageMaker,EndpointName,InstanceType,VariantName} MetricName="ModelLatency" '
      + 'EndpointName="my\\"end\\\\point" VariantName="a"\', \'p95\')');
    expect(parseSearch(e)).toStrictEqual(parseSearch(searchExpression(SPEC)));
  });

  test('build then parse gives the metric back: pinned values (quotes and backslashes too), the other dimensions searched over', () => {
    expect(parseSearch(searchExpression(SPEC))).toStrictEqual({
      namespace: 'AWS/SageMaker',
      name: 'ModelLatency',
      dimensions: { EndpointName: 'my"end\\point', InstanceType: undefined, VariantName: 'a' },
    });
    const name = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,11}$/);
    fc.assert(fc.property(
      fc.uniqueArray(name, { minLength: 1, maxLength: 4 }).chain((dims) => fc.record({
        dims: fc.constant(dims),
        pinned: fc.subarray(dims).chain((keys) => fc.tuple(...keys.map(() => fc.string()))
          .map((vs) => Object.fromEntries(keys.map((k, i) => [k, vs[i]])))),
        metricName: fc.string({ minLength: 1 }),
      })),
      ({ dims, pinned, metricName }) => {
        const parsed = parseSearch(searchExpression({ namespace: 'Custom/Ns', dimensionNames: dims, metricName, pinned, stat: 'Sum', periodSeconds: 300 }));
        expect(parsed).toStrictEqual({ namespace: 'Custom/Ns', name: metricName, dimensions: Object.fromEntries(dims.map((d) => [d, pinned[d]])) });
      },
    ));
  });

  test('anything but one SEARCH call of the builder\'s form parses to undefined; the SEARCHes inside metric math are found in order', () => {
    for (const e of ['m1 * 0.001', 'FILL(m1, 0)', 'SUM([m1, m2])', `MAX(${searchExpression(SPEC)})`, "SEARCH('{AWS/EC2,InstanceId} CPUUtilization', 'Average')", '']) {
      expect(parseSearch(e)).toBeUndefined();
    }
    expect(searchesIn('FILL(m1, 0)')).toEqual([]);
    const variantLevel = { ...SPEC, dimensionNames: ['EndpointName', 'VariantName'] };
    expect(searchesIn(`MAX([MAX(${searchExpression(SPEC)}), MAX(${searchExpression(variantLevel)})])`)).toStrictEqual([
      { namespace: 'AWS/SageMaker', name: 'ModelLatency', dimensions: { EndpointName: 'my"end\\point', InstanceType: undefined, VariantName: 'a' } },
      { namespace: 'AWS/SageMaker', name: 'ModelLatency', dimensions: { EndpointName: 'my"end\\point', VariantName: 'a' } },
    ]);
  });

  test('a MAX of SEARCHes: built and read back, each operand a fallback; any other expression is not one', () => {
    const variantLevel = { ...SPEC, dimensionNames: ['EndpointName', 'VariantName'] };
    const both = maxOfSearches([searchExpression(SPEC), searchExpression(variantLevel)]);
    expect(both).toBe(`MAX([MAX(${searchExpression(SPEC)}), MAX(${searchExpression(variantLevel)})])`);
    expect(parseMaxOfSearches(both)).toStrictEqual(searchesIn(both));
    expect(parseMaxOfSearches(both)).toHaveLength(2);
    expect(parseMaxOfSearches(maxOfSearches([searchExpression(SPEC)]))).toStrictEqual([parseSearch(searchExpression(SPEC))]);
    const search = searchExpression(SPEC);
    for (const e of [search, `MAX(${search})`, `SUM([MAX(${search}), MAX(${search})])`, `MAX([MAX(${search}), m1])`, `MAX([MAX(${search}), MAX(${search})]) * 2`,
      "MAX([MAX(SEARCH('{AWS/EC2,InstanceId} InstanceId=\"i\"', 'Average', 60))])", 'MAX([])']) {
      expect(parseMaxOfSearches(e)).toBeUndefined();
    }
  });
});
