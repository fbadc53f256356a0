import { type ClassSignals, type PolicyClass } from '../../lib/core/policy/types';
import {
  demandWindow,
  missingTargets,
  SILENT_WEIGHT_SHARE,
  weightInvariantProblems,
} from '../../lib/core/reconciler/faults';

describe('demand with silent classes', () => {
  const signals = (a: Array<number | null>, b: Array<number | null>, bRejected: Array<number | null>): Record<string, ClassSignals> => ({
    a: { readyReplicas: [], desiredReplicas: [], servedTokensPerSecond: a },
    b: { readyReplicas: [], desiredReplicas: [], servedTokensPerSecond: b, rejectedTokensPerSecond: bRejected },
  });
  const windows = signals([100, null, null], [50, 25, null], [5, null, null]);

  test('a class holding no weight is silent without harm; one holding weight makes the period missing, not low', () => {
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 0, b: 100 })).toEqual([155, 25, null]);
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 50, b: 50 })).toEqual([155, null, null]);
  });

  test(`a warm floor (at most ${SILENT_WEIGHT_SHARE * 100} % of the weight) may be silent; just above it may not`, () => {
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 5, b: 95 })).toEqual([155, 25, null]);
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 6, b: 94 })).toEqual([155, null, null]);
  });

  test('fails when a class with no ready replica holds the weights on itself: its silence is no demand, not missing data', () => {
    // a holds half the weight and lost its replicas in the second period: nothing of it could count a request.
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 50, b: 50 }, new Set(), { a: [2, 0, 0] })).toEqual([155, 25, null]);
    // Unknown ready replicas, or some, keep the silence missing.
    expect(demandWindow(windows, ['a', 'b'], 3, { a: 50, b: 50 }, new Set(), { a: [2, null, 1] })).toEqual([155, null, null]);
  });

  test('without the weights in force any silent class makes the period missing; non-finite datapoints count as missing', () => {
    expect(demandWindow(windows, ['a', 'b'], 3)).toEqual([155, null, null]);
    expect(demandWindow(signals([Number.NaN, 1, 1], [1, 1, 1], [1, 1, 1]), ['a', 'b'], 3)).toEqual([null, 3, 3]);
  });
});

describe('targets and weight invariants', () => {
  const cls = (name: string, placementAllowed = true): PolicyClass => ({
    name, preferenceRank: 0, tokensPerSecondPerReplica: 1, usdPerReplicaHour: 1, placementAllowed,
  });

  test('names the routed targets the live target does not hold', () => {
    const facts = { kind: 'sagemaker' as const, endpointName: 'e', endpointArn: 'arn', variants: [{ variantName: 'a', classes: [] }, { variantName: 'b', classes: [] }] };
    expect(missingTargets(facts, ['a', 'b-v2'])).toEqual(['b']);
    expect(missingTargets(facts, ['b', 'a'])).toEqual([]);
  });

  test('all-zero weights, a weight for a forbidden or unknown class, and non-finite weights break an invariant', () => {
    expect(weightInvariantProblems({ a: 60, b: 40 }, [cls('a'), cls('b')])).toEqual([]);
    expect(weightInvariantProblems({ a: 0, b: 0 }, [cls('a'), cls('b')])).toEqual(['every weight is 0']);
    expect(weightInvariantProblems({ a: 60, b: 40 }, [cls('a'), cls('b', false)])).toEqual(["weight 40 for 'b', which the placement policy forbids"]);
    expect(weightInvariantProblems({ a: 100, c: 1 }, [cls('a')])).toEqual(["a weight for 'c', which is no routed target"]);
    expect(weightInvariantProblems({ a: Number.NaN, b: 1 }, [cls('a'), cls('b')])).toEqual(["weight of 'a' is NaN"]);
  });
});
