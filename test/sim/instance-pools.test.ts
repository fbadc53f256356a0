/**
 * SageMaker instance pools in the simulator: a variant with several pools is one routed column (one weight, one target
 * tracking, one queue) whose scale-outs try the pools by priority and whose scale-ins release the lowest priority first
 * (realtime-endpoints-heterogeneous.html, "Auto-scaling with instance pools"), each pool paid at its own price.
 */
import { replicaCostUsd } from '../../lib/core/report/cost';
import { retryOnPreferred } from '../../lib/sim/baselines';
import { ClassState, Pool } from '../../lib/sim/class-state';
import { libraryPolicy } from '../../lib/sim/library-policy';
import { computeMetrics } from '../../lib/sim/metrics';
import { routedScenario, type ScenarioInstance } from '../../lib/sim/model';
import { type Observation, type PolicyFactory } from '../../lib/sim/policy';
import { H9, S1 } from '../../lib/sim/scenarios';
import { runSimulation } from '../../lib/sim/simulator';

const SHORT = { durationMinutes: 100, onsetMinute: 20, shortageMinutes: 60 };

/**
 * H9 on SageMaker, shortened: at minute 20 eight L40S instances get their reclaim notice (lost at 22) and no more than 5
 * L40S run until minute 80, while demand rises 80%.
 */
function pooled(params: Record<string, number> = SHORT): ScenarioInstance {
  return { ...H9.build(1, params), platform: 'sagemaker' };
}

/** Always all traffic to the preferred column, recording what DescribeEndpoint would show each minute. */
function recording(seen: Array<Observation['live']>): PolicyFactory {
  return (ctx) => {
    const inner = retryOnPreferred(ctx);
    return { name: 'recording', decide: (o) => { seen.push(o.live); return inner.decide(o); } };
  };
}

test('a variant with several classes is one column whose pools are its classes in priority order; EKS keeps every class', () => {
  const routed = routedScenario(pooled());
  expect(routed.classes.map((c) => c.name)).toEqual(['preferred', 'fallback']);
  expect(routed.pools?.preferred?.map((c) => c.name)).toEqual(['l40s', 'a10g']);
  expect(routed.pools?.fallback?.map((c) => c.name)).toEqual(['inf2']);
  const [l40s, a10g] = routed.pools!.preferred!;
  // The construct's defaults for a variant (lib/sagemaker/variants.ts): the largest range, the smallest target.
  expect(routed.classes[0]).toMatchObject({
    maxReplicas: Math.max(l40s.maxReplicas, a10g.maxReplicas),
    targetConcurrencyPerReplica: Math.min(l40s.targetConcurrencyPerReplica, a10g.targetConcurrencyPerReplica),
    tokensPerSecondPerReplica: l40s.tokensPerSecondPerReplica,
    usdPerReplicaHour: l40s.usdPerReplicaHour,
  });
  expect(routedScenario(routed)).toBe(routed);
  // The construct's `scaling.targetConcurrencyPerInstance` replaces the default target.
  expect(routedScenario(pooled({ ...SHORT, preferredTarget: 13 })).classes[0].targetConcurrencyPerReplica).toBe(13);
  const eks = { ...pooled(), platform: 'eks' as const };
  expect(routedScenario(eks)).toBe(eks);
});

test('variants that do not place every class exactly once fail, naming the scenario, the classes and what is wrong', () => {
  const base = pooled();
  expect(() => routedScenario({ ...base, variants: [{ name: 'preferred', classes: ['l40s', 'a10g', 'h100'] }, { name: 'f', classes: ['inf2'] }] }))
    .toThrow(/Scenario H9: variants must place every class \(l40s, inf2, a10g\) in exactly one non-empty variant, .*; unknown: \[h100\]/);
  expect(() => routedScenario({ ...base, variants: [{ name: 'a', classes: ['l40s', 'a10g'] }, { name: 'b', classes: ['inf2', 'a10g'] }] }))
    .toThrow(/placed twice: \[a10g\]/);
  expect(() => routedScenario({ ...base, variants: [{ name: 'a', classes: ['l40s', 'a10g'] }] })).toThrow(/not placed: \[inf2\]/);
  // A variant's name where a class is meant would be ignored: availability and interruptions act on pools.
  expect(() => routedScenario({ ...base, availability: { preferred: [{ at: 0, instances: 1 }] } }))
    .toThrow(/must name classes, not variants; unknown: \[preferred\]/);
  expect(() => routedScenario({ ...base, interruptions: [{ className: 'fallback', at: 60, replicas: 1, noticeSeconds: 0 }] }))
    .toThrow(/unknown: \[fallback\]/);
});

test('fails when a variant\'s target concurrency breaks the construct\'s rule (a finite number above 0), naming the variant, the value and what is allowed', () => {
  // The rule's message: the unit after a finite value only.
  for (const [bad, shown] of [[0, '0 requests'], [-1, '-1 requests'], [Infinity, 'Infinity']] as const) {
    expect(() => routedScenario(pooled({ ...SHORT, preferredTarget: bad })))
      .toThrow(`Scenario H9: variant 'preferred' targetConcurrencyPerInstance is ${shown}; allowed: a finite number above 0 requests`);
  }
});

test('a one-class variant under its own name runs exactly as the class alone (pools change nothing but the name)', () => {
  const plain = { ...S1.build(1, SHORT), platform: 'sagemaker' as const };
  const renamed: ScenarioInstance = {
    ...plain,
    variants: [{ name: 'l40s', classes: ['l40s'] }, { name: 'standby', classes: ['inf2'] }, { name: 'a10g', classes: ['a10g'] }],
  };
  expect(routedScenario(renamed).classes.map((c) => c.name)).toEqual(['l40s', 'standby', 'a10g']);
  const a = runSimulation(plain, retryOnPreferred, { seed: 1 }).series;
  const b = runSimulation(renamed, retryOnPreferred, { seed: 1 }).series;
  for (const key of ['readyReplicas', 'costUsd', 'servedTokens', 'rejected', 'capacityErrors', 'sloMetRequests'] as const) {
    expect(Array.from(b[key])).toEqual(Array.from(a[key]));
  }
});

describe('a pooled variant short of its priority-1 type', () => {
  const seen: Array<Observation['live']> = [];
  const scenario = pooled();
  const run = runSimulation(scenario, recording(seen), { seed: 1 });
  const s = run.series;
  const [l40s, a10g] = routedScenario(scenario).pools!.preferred!;

  test('scale-outs get the next pool\'s instances in the same operation: no capacity error, no rollback', () => {
    const during = seen.slice(23, 80);
    expect(Math.max(...seen.slice(0, 20).map((live) => live![0].pools[0]))).toBeGreaterThan(5);
    expect(during.every((live) => live![0].pools[0] <= 5)).toBe(true);
    expect(Math.max(...during.map((live) => live![0].pools[1]))).toBeGreaterThan(5);
    for (let m = 0; m < s.minutes; m++) expect(s.capacityErrors[m * s.classCount]).toBe(0);
    // Every ask is met once its instances start (no wait for the provisioning timeout, no rollback).
    expect(seen[75]![0].ready).toBe(seen[75]![0].desired);
  });

  test('without the shortage the variant stays on its priority-1 type', () => {
    const unlimited: Array<Observation['live']> = [];
    runSimulation({ ...scenario, availability: {} }, recording(unlimited), { seed: 1 });
    expect(unlimited.every((live) => live![0].pools[1] === 0)).toBe(true);
    expect(Math.max(...unlimited.slice(23, 80).map((live) => live![0].pools[0]))).toBeGreaterThan(5);
  });

  test('what the lower pool costs counts as fallback cost, and the deficit is measured on the variant\'s own capacity', () => {
    const m = computeMetrics(run, scenario);
    let fallbackVariant = 0;
    let lowerPool = 0;
    for (let i = 0; i < s.minutes; i++) {
      fallbackVariant += s.costUsd[i * s.classCount + 1];
      lowerPool += s.lowerPoolCostUsd[i * s.classCount];
    }
    expect(lowerPool).toBeGreaterThan(0);
    expect(m.fallbackCostUsd).toBeCloseTo(fallbackVariant + lowerPool, 9);
    // Ready capacity counts each pool at its own envelope (an A10G is not an L40S).
    const minute = 60;
    const [nL40s, nA10g] = seen[minute + 1]![0].pools;
    expect(s.readyCapacity[minute * s.classCount]).toBe(nL40s * l40s.tokensPerSecondPerReplica + nA10g * a10g.tokensPerSecondPerReplica);
  });

  test('each pool is paid at its own price', () => {
    // A minute with no instance starting or stopping: its cost is the pools' counts at their prices.
    const steady = seen.findIndex((live, m) => m > 40 && m < 79 && live![0].pools[1] > 0
      && JSON.stringify(live![0].pools) === JSON.stringify(seen[m + 1]![0].pools) && s.pendingReplicas[m * s.classCount] === 0);
    expect(steady).toBeGreaterThan(0);
    const [nL40s, nA10g] = seen[steady + 1]![0].pools;
    const priced = replicaCostUsd(60 * nL40s, l40s.usdPerReplicaHour) + replicaCostUsd(60 * nA10g, a10g.usdPerReplicaHour);
    expect(s.costUsd[steady * s.classCount]).toBeCloseTo(priced, 9);
    expect(a10g.usdPerReplicaHour).not.toBe(l40s.usdPerReplicaHour);
  });
});

test('the library\'s Reconciler runs the pooled endpoint as deployed: variants with their pools, instances per type', () => {
  const scenario = pooled();
  const run = runSimulation(scenario, libraryPolicy(), { seed: 1 });
  // It would throw on a target that does not match its routing facts (lib/core/reconciler/step.ts).
  expect(run.series.modes.length).toBe(100);
  expect(computeMetrics(run, scenario).sloAttainment).toBeGreaterThan(0.9);
});

test('a pool without ready replicas admits nothing and takes nothing from the others (no NaN from 0 x unbounded)', () => {
  const [l40s, inf2] = [pooled().classes[0], pooled().classes[1]];
  const state = new ClassState({ ...l40s, name: 'v' }, [new Pool(l40s, 1, 1), new Pool(inf2, 1, 1)]);
  state.pools[0].readyCount = 3;
  expect(inf2.admission?.maxQueuedPromptTokens).toBeUndefined();
  expect(state.admitsQueued(100, 100)).toBe(true);
  state.pools[0].readyCount = 0;
  state.pools[1].readyCount = 1;
  expect(state.admitsQueued(100, 100)).toBe(true);
});

test('scale-in releases the lowest-priority pool first', () => {
  // Demand falls back to a quarter after the shortage: the variant shrinks, A10G first.
  const built = pooled();
  const scenario: ScenarioInstance = {
    ...built,
    workload: { ...built.workload, rateProfile: [...(built.workload.rateProfile ?? []), { at: 85 * 60, multiplier: 0.25 }] },
  };
  const seen: Array<Observation['live']> = [];
  runSimulation(scenario, recording(seen), { seed: 1 });
  const peak = Math.max(...seen.slice(20, 80).map((live) => live![0].pools[1]));
  expect(peak).toBeGreaterThan(0);
  const last = seen[seen.length - 1]![0];
  expect(last.pools[1]).toBe(0);
  expect(last.pools[0]).toBeGreaterThan(0);
});

describe('perPoolTargets: each pool scaled to its own target (two policies, as the construct renders them)', () => {
  const perPool = (params: Record<string, number>) => pooled({ ...SHORT, ...params, perPoolTargets: 1 });

  test('the column carries the priority-1 pool\'s target and every pool\'s own; refused where the construct refuses it', () => {
    const routed = routedScenario(perPool({}));
    const [l40s, a10g] = routed.pools!.preferred!;
    expect(routed.classes[0]).toMatchObject({
      targetConcurrencyPerReplica: l40s.targetConcurrencyPerReplica,
      poolTargets: [l40s.targetConcurrencyPerReplica, a10g.targetConcurrencyPerReplica],
    });
    expect(routedScenario(pooled()).classes[0].poolTargets).toBeUndefined();
    const base = pooled();
    expect(() => routedScenario({ ...base, variants: [{ name: 'preferred', classes: ['l40s', 'a10g'], perPoolTargets: true, targetConcurrencyPerInstance: 5 },
      { name: 'fallback', classes: ['inf2'] }] })).toThrow(/Scenario H9: variant 'preferred' perPoolTargets is true with targetConcurrencyPerInstance 5; allowed: true or false; true only/);
    expect(() => routedScenario({ ...base, variants: [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'], perPoolTargets: true }] }))
      .toThrow(/variant 'fallback' perPoolTargets is true on a variant with one pool \('inf2'\); allowed/);
  });

  test('fails when H9\'s perPoolTargets parameter is not 0 or 1, naming the value and what is allowed', () => {
    expect(() => pooled({ ...SHORT, perPoolTargets: 2 })).toThrow('H9: perPoolTargets is 2; allowed: 0 or 1');
  });

  test('without a shortage the priority-1 type runs at its own target: fewer instances than at the slowest pool\'s', () => {
    const steady = (params: Record<string, number>) => {
      const seen: Array<Observation['live']> = [];
      runSimulation({ ...pooled({ ...SHORT, ...params, reclaimedReplicas: 0 }), availability: {} }, recording(seen), { seed: 1 });
      return seen.slice(30, 80).map((live) => live![0].pools[0]);
    };
    const [lean, safe] = [steady({ perPoolTargets: 1 }), steady({})];
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // L40S's target is twice A10G's: about half the instances.
    expect(mean(lean)).toBeLessThan(0.7 * mean(safe));
  });

  test('with the slower type in the variant, the per-pool policy holds the variant to that type\'s target', () => {
    const seen: Array<Observation['live']> = [];
    const scenario = perPool({});
    const run = runSimulation(scenario, recording(seen), { seed: 1 });
    const [, a10g] = routedScenario(scenario).pools!.preferred!;
    const s = run.series;
    // Minutes after the A10G instances came in and the variant settled: in flight per instance in service near A10G's
    // target, not L40S's (twice that).
    const settled = Array.from({ length: 20 }, (_, i) => 55 + i).filter((m) => seen[m + 1]![0].pools[1] > 0);
    expect(settled.length).toBeGreaterThan(10);
    const perInstance = settled.map((m) => s.inFlight[m * s.classCount] / s.readyReplicas[m * s.classCount]);
    expect(Math.max(...perInstance)).toBeLessThan(1.3 * a10g.targetConcurrencyPerReplica);
  });
});
