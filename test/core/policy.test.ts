import { decide, initialPolicyState, returnHold } from '../../lib/core/policy/decide';
import {
  DEFAULT_POLICY_CONFIG,
  policyClassProblems,
  policyWindowPeriods,
  resolvePolicyConfig,
} from '../../lib/core/policy/defaults';
import { type ClassSignals, type PolicyClass, type PolicyInput, type PolicyState } from '../../lib/core/policy/types';
import { policyClassesFromFacts } from '../../lib/core/reconciler/from-facts';
import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { policyConfigProblems } from '../../lib/core/validation/policy-config';
import { historyPeriodMultiple } from '../../lib/core/platform/limits';
import { replicaFloors, routingPlan } from '../../lib/core/policy/plan';
import { doubledWindow, flapStability, plannedDemand, recoverySeen, sustainedDemand, typicalDemand } from '../../lib/core/policy/evidence';

// GIVEN three classes in preference order; the preferred one is also the cheapest per token.
// inf2: 0.76 USD/h / 300 tok/s; g6: 0.80 / 200; g5: 1.00 / 250 (g6 and g5 cost the same per token, g6 ranks first).
const CLASSES: PolicyClass[] = [
  { name: 'inf2', preferenceRank: 0, tokensPerSecondPerReplica: 300, usdPerReplicaHour: 0.76, placementAllowed: true },
  { name: 'g6', preferenceRank: 1, tokensPerSecondPerReplica: 200, usdPerReplicaHour: 0.8, placementAllowed: true },
  { name: 'g5', preferenceRank: 2, tokensPerSecondPerReplica: 250, usdPerReplicaHour: 1.0, placementAllowed: true },
];
const W = policyWindowPeriods(DEFAULT_POLICY_CONFIG);
/** The re-entry memory, seconds: how long a capacity event and a class's losses are remembered. */
const MEMORY = DEFAULT_POLICY_CONFIG.reentryMemorySeconds;
const NOW = 1_800_000_000;

/** A window of `n` equal datapoints. */
const flat = (value: number | null, n = W) => Array.from({ length: n }, () => value);

function healthy(ready: number, n = W): ClassSignals {
  return { readyReplicas: flat(ready, n), desiredReplicas: flat(ready, n), capacityErrors: flat(0, n), latencyP95Ms: flat(400, n) };
}

function input(signals: Record<string, ClassSignals>, demand: number | null, extra: Partial<PolicyInput> = {}): PolicyInput {
  return { now: NOW, classes: CLASSES, signals, demandTokensPerSecond: flat(demand), config: { latencySloP95Ms: 1000 }, ...extra };
}

const costState = (weights: Record<string, number>, modeSince = NOW - 3600): PolicyState => ({ mode: 'cost', weights, modeSince, ramping: false });
const BASE = { inf2: healthy(3), g6: healthy(1), g5: healthy(1) };
/** 3 ready of 3, except that in period `at` the class asked for a 4th replica and got a capacity error. */
function refusedOnce(at: number, n = W): ClassSignals {
  return {
    ...healthy(3, n),
    desiredReplicas: flat(3, n).map((v, i) => (i === at ? 4 : v)),
    capacityErrors: flat(0, n).map((v, i) => (i === at ? 1 : v)),
  };
}

describe('decide(): cost mode', () => {
  test('fills the planned demand cheapest first and keeps a warm floor on every compatible ready class', () => {
    // demand 500; inf2 has 900 ready.
    const { decision, state } = decide(input(BASE, 500), costState({ inf2: 100, g6: 0, g5: 0 }));
    expect(decision.mode).toBe('cost');
    expect(decision.weights).toEqual({ inf2: 96, g6: 2, g5: 2 });
    expect(decision.reason.code).toBe('cost-plan');
    expect(decision.requiredTokensPerSecond).toBeCloseTo(500);
    expect(decision.deficitTokensPerSecond).toBe(0);
    expect(decision.readyTokensPerSecond).toBe(1350);
    expect(decision.fallbackShare).toBeCloseTo(0.04);
    expect(state).toEqual({ mode: 'cost', weights: decision.weights, modeSince: NOW - 3600, ramping: false });
  });

  test('spills to the next cheapest class, each class filled up to its envelope, in proportion to the tokens assigned', () => {
    // demand 1000 (1200 with headroom <= 1350 ready: covered): inf2 900, then g6 (ties with g5 per token, ranks first)
    // 100, g5 nothing but its floor, taken from the others in proportion to what they carry above theirs.
    const { decision } = decide(input(BASE, 1000), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.mode).toBe('cost');
    expect(decision.weights).toEqual({ inf2: 88, g6: 10, g5: 2 });
  });

  test('does not rewrite weights for a change inside the dead band', () => {
    const { decision } = decide(input(BASE, 500), costState({ inf2: 95, g6: 3, g5: 2 }));
    expect(decision.weights).toEqual({ inf2: 95, g6: 3, g5: 2 });
    expect(decision.weightsChanged).toBe(false);
  });

  test('takes weight off a class that lost its ready replicas at once, dead band or not', () => {
    const { decision } = decide(input({ ...BASE, g5: healthy(0) }, 500), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.weights.g5).toBe(0);
    expect(decision.weightsChanged).toBe(true);
  });

  test('with no demand, the cheapest class carries the weight and the others keep their floor', () => {
    const { decision } = decide(input(BASE, 0), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.weights).toEqual({ inf2: 96, g6: 2, g5: 2 });
  });
});

describe('decide(): entering capacity mode', () => {
  test('demand above ready capacity is not capacity evidence: cost mode holds and the deficit goes to the class that can grow', () => {
    // Two minutes at 1600 after three at 1000: the planned demand (p90 of 5) is 1600 > 1350 ready, a deficit of 250.
    // The autoscaler has not had the grace period to fix it, so the mode stays; inf2 (cheapest, may grow) takes it.
    const demand = [...flat(1000, W - 2), 1600, 1600];
    const { decision } = decide(input(BASE, null, { demandTokensPerSecond: demand }), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.mode).toBe('cost');
    expect(decision.deficitTokensPerSecond).toBeCloseTo(250);
    expect(decision.weights).toEqual({ inf2: 72, g6: 12, g5: 16 });
  });

  test('one noisy minute is smoothed (a high quantile of several periods) and never changes the mode', () => {
    const noisy = [...flat(500, W - 1), 1400];
    const { decision } = decide(input(BASE, null, { demandTokensPerSecond: noisy }), costState({ inf2: 96, g6: 2, g5: 2 }));
    // p90 of [500, 500, 500, 500, 1400] = 1040.
    expect(decision.requiredTokensPerSecond).toBeCloseTo(1040);
    expect(decision).toMatchObject({ mode: 'cost', modeChanged: false, deficitTokensPerSecond: 0 });
  });

  test('enters on a deficit autoscaling had the whole grace period to fix and did not, giving it to a fallback that can grow', () => {
    // 1500 > 1350 ready in every period, ready capacity flat: the preferred class is not growing.
    const { decision, state } = decide(input(BASE, 1500), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision).toMatchObject({ mode: 'capacity', modeChanged: true, reason: { code: 'enter-capacity', triggers: ['sustained-deficit'] } });
    // In capacity mode the preferred class is not counted on to grow: the 150 tokens/s deficit is g6's to grow into,
    // with a replica floor of ceil((200 + 150) / (200 / 1.2)) = 3. With the floor written, g6 is routed only
    // 200 x 0.2 = 40 tokens/s above its envelope; the other 110 are spread by ready capacity (900 : 200 : 250), where
    // they shed least: 973 : 256 : 270 of 1500.
    expect(decision.weights).toEqual({ inf2: 65, g6: 17, g5: 18 });
    expect(decision.replicaFloors).toEqual({ inf2: 0, g6: 3, g5: 0 });
    expect(state).toMatchObject({ mode: 'capacity', modeSince: NOW, ramping: false, entries: [NOW] });
    // Where nothing applies the floors, g6 must see the load to grow: it takes all 150 (up to its ready 200 again).
    const unboundConfig = { latencySloP95Ms: 1000, replicaFloorsApplied: false };
    const unbound = decide(input(BASE, 1500, { config: unboundConfig }), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(unbound.decision.weights).toEqual({ inf2: 60, g6: 23, g5: 17 });
  });

  test('the audit line does not say "to grow" of a receiver already at its maxReplicas', () => {
    // inf2 runs its 3 of at most 3: the plan still gives it the deficit (the cheapest class without a shortage), and
    // the line says it cannot grow and sheds what it cannot carry.
    const capped = CLASSES.map((c) => (c.name === 'inf2' ? { ...c, maxReplicas: 3 } : c));
    const demand = [...flat(1000, W - 2), 1600, 1600];
    const { decision } = decide(input(BASE, null, { classes: capped, demandTokensPerSecond: demand }), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.reason.message).toContain('the deficit of 250 tokens/s to inf2, which runs its most replicas (3) and cannot grow');
    const open = decide(input(BASE, null, { demandTokensPerSecond: demand }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(open.reason.message).toContain('the deficit of 250 tokens/s to inf2 to grow.');
    expect(open.weights).toEqual(decision.weights);
  });

  test('in capacity mode the preferred class keeps asking for what it is short of, as its platform takes floors', () => {
    // SageMaker: floors are capacity writes. While inf2 shows no shortage of its own (here the deficit alone entered),
    // its ask is written: 1500 tokens/s at inf2's target 300 / 1.2 = 6 replicas while 3 are ready. Routing is unchanged.
    const quiet = decide(input(BASE, 1500, { floorsTakenBy: 'capacity-writes' }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(quiet.replicaFloors).toEqual({ inf2: 6, g6: 3, g5: 0 });
    expect(quiet.weights).toEqual({ inf2: 65, g6: 17, g5: 18 });
    // With a capacity error it is not: a write the cloud cannot fill leaves the endpoint Updating.
    const erroring = { ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i === W - 1 ? 2 : 0)) } };
    const short = decide(input(erroring, 1500, { floorsTakenBy: 'capacity-writes' }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(short.mode).toBe('capacity');
    expect(short.replicaFloors!.inf2).toBe(0);
    // EKS: floors are published to inf2's own autoscaler; a floor it cannot fill is Pending pods, so it asks even while
    // short (Karpenter keeps trying): 6 replicas, with or without its capacity error.
    const published = decide(input(BASE, 1500, { floorsTakenBy: 'published' }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(published.replicaFloors).toEqual({ inf2: 6, g6: 3, g5: 0 });
    expect(published.reason.message).toContain('inf2 is asked for 6 replicas, its part of the sustained demand (its desired count includes the ask).');
    // Routing differs in the receiving fallback (g6): SageMaker routes it its headroom above its envelope (200 x 0.2 =
    // 40 of the 150 tokens/s deficit), on which its own target tracking scales out past the typical demand; EKS routes it
    // nothing above its envelope, since the published floor alone holds its replicas, and spreads the whole deficit by
    // ready capacity: inf2 900 + 100, g6 200 + 22.2, g5 250 + 27.8 of 1500.
    expect(published.weights).toEqual({ inf2: 67, g6: 15, g5: 18 });
    const shortEks = decide(input(erroring, 1500, { floorsTakenBy: 'published' }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(shortEks.replicaFloors!.inf2).toBe(6);
    // The ask is the preferred class's part of the cost plan: with a class cheaper per token holding 600 tokens/s ready
    // (g6 repriced to 0.2/h, 3 ready), inf2 is asked for ceil((1500 - 600) / 250) = 4 replicas, not 6.
    const cheapG6 = CLASSES.map((c) => (c.name === 'g6' ? { ...c, usdPerReplicaHour: 0.2 } : c));
    const withCheaper = decide({ ...input({ ...erroring, g6: healthy(3) }, 1500, { floorsTakenBy: 'published' }), classes: cheapG6 },
      costState({ inf2: 60, g6: 38, g5: 2 })).decision;
    expect(withCheaper.mode).toBe('capacity');
    expect(withCheaper.replicaFloors!.inf2).toBe(4);
    // Bursty demand (1500 for two minutes of five, 1000 the rest): EKS sizes on the sustained 1500 as above, SageMaker
    // on the typical 1000, the count Application Auto Scaling keeps: inf2 asked for 1000 / 250 = 4 replicas, and no
    // fallback floor (1000 fits the 1350 ready). The plan, and so the routing, is the same p90 on both.
    const bursty = [1000, 1500, 1000, 1000, 1500];
    const burstyInput = (floorsTakenBy: PolicyInput['floorsTakenBy']) => input(BASE, null, { demandTokensPerSecond: bursty, floorsTakenBy });
    const capacity: PolicyState = { mode: 'capacity', weights: quiet.weights, modeSince: NOW - 60, ramping: false, entries: [NOW - 60] };
    const burstyEks = decide(burstyInput('published'), capacity).decision;
    const burstySm = decide(burstyInput('capacity-writes'), capacity).decision;
    expect(burstyEks.replicaFloors).toEqual({ inf2: 6, g6: 3, g5: 0 });
    expect(burstySm.replicaFloors).toEqual({ inf2: 4, g6: 0, g5: 0 });
    expect(burstySm.reason.message).toContain('inf2 is asked for 4 replicas, its part of the typical demand');
    expect(burstySm.weights).toEqual(burstyEks.weights);
    // Unset (a direct caller of decide()): no standing ask, and floors on the sustained demand.
    expect(decide(burstyInput(undefined), capacity).decision.replicaFloors).toEqual({ inf2: 0, g6: 3, g5: 0 });
    // At the onset of a surge (1000, then 1800 twice; inf2 erroring) the plan's p90 sees a deficit of 450 tokens/s over
    // the 1350 ready that the typical demand does not yet: SageMaker writes no floor for it (EKS does), and the
    // receiving fallback (g6) is still routed its headroom above its envelope, 40 tokens/s, on which its own target
    // tracking scales out (routing it up to its ready capacity again, as without floors, measured worse:
    // BENCHMARKS.md); the rest is spread by ready capacity: inf2 900 + 273.3, g6 200 + 40 + 60.7, g5 250 + 75.9 of
    // 1800. EKS's floor holds g6's replicas, so it spreads all 450: inf2 1200, g6 266.7, g5 333.3.
    const surge = [...flat(1000, W - 2), 1800, 1800];
    const surgeInput = (floorsTakenBy: PolicyInput['floorsTakenBy']) =>
      input(erroring, null, { demandTokensPerSecond: surge, floorsTakenBy });
    const fromPreferred: PolicyState = { ...capacity, weights: { inf2: 96, g6: 2, g5: 2 } };
    const surgeSm = decide(surgeInput('capacity-writes'), fromPreferred).decision;
    const surgeEks = decide(surgeInput('published'), fromPreferred).decision;
    expect(surgeSm.replicaFloors).toEqual({ inf2: 0, g6: 0, g5: 0 });
    expect(surgeEks.replicaFloors!.g6).toBeGreaterThan(1);
    expect(surgeSm.deficitTokensPerSecond).toBe(450);
    expect(surgeSm.weights).toEqual({ inf2: 65, g6: 17, g5: 18 });
    expect(surgeEks.weights).toEqual({ inf2: 67, g6: 15, g5: 18 });
    // A one-period spike (1000, then 1800 once): the plan's p90 sees a deficit, but the sustained demand (1000) asks
    // g6 for no replica: on EKS the spike buys none, and g6 is not loaded to grow either; it carries its share of the
    // spread, as inf2 and g5 do. SageMaker routes it its headroom, as for every deficit.
    const spike = input(erroring, null, { demandTokensPerSecond: [...flat(1000, W - 1), 1800], floorsTakenBy: 'published' });
    const spikeEks = decide(spike, fromPreferred).decision;
    const spikeSm = decide({ ...spike, floorsTakenBy: 'capacity-writes' }, fromPreferred).decision;
    expect(spikeEks.replicaFloors!.g6).toBe(0);
    expect(spikeEks.deficitTokensPerSecond).toBeGreaterThan(0);
    expect(spikeEks.weights).toEqual({ inf2: 67, g6: 15, g5: 18 });
    expect(spikeSm.weights).toEqual({ inf2: 65, g6: 17, g5: 18 });
    // Entering on the spike, the audit line says that nothing asks g6 to grow; entering on the surge, its floor does.
    const costFrom = costState({ inf2: 96, g6: 2, g5: 2 });
    expect(decide(spike, costFrom).decision.reason.message)
      .toContain('; the deficit of 130 tokens/s is spread by ready capacity, and no replica floor asks g6 to grow for it.');
    expect(decide(surgeInput('published'), costFrom).decision.reason.message).toContain('; the deficit of 450 tokens/s to g6 to grow.');
    expect(decide({ ...spike, floorsTakenBy: 'capacity-writes' }, costFrom).decision.reason.message)
      .toContain('; the deficit of 130 tokens/s to g6 to grow.');
    // Published floors the construct does not apply (no `enableReplicaFloors`): the receiver is routed up to its ready
    // capacity again, whatever the platform: g6 200 + 200 of the 450, the other 250 spread (inf2 1066.7, g6 437,
    // g5 296.3 of 1800).
    const unapplied = { latencySloP95Ms: 1000, replicaFloorsApplied: false };
    const unappliedEks = decide({ ...surgeInput('published'), config: unapplied }, fromPreferred).decision;
    expect(unappliedEks.weights).toEqual({ inf2: 59, g6: 24, g5: 17 });
    expect(unappliedEks.weights)
      .toEqual(decide({ ...surgeInput('capacity-writes'), config: unapplied }, fromPreferred).decision.weights);
    // Cost mode asks for nothing: the class's own autoscaler sees its overflow.
    const costMode = decide(input(BASE, 1000, { floorsTakenBy: 'published' }), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(costMode.mode).toBe('cost');
    expect(costMode.replicaFloors!.inf2).toBe(0);
  });

  test('on SageMaker the preferred class retries growth in capacity mode once its loss is behind it, with a backoff', () => {
    // Demand 1000, then 1500 for the newest three minutes (also the typical demand SageMaker's floors are sized on): a
    // deficit of 150 tokens/s over the 1350 ready, not a sustained one. Capacity mode for 5 minutes; inf2's only losses
    // are the capacity errors given.
    const demand = [...flat(1000, W - 3), 1500, 1500, 1500];
    const errorsAgo = (...agos: number[]) =>
      ({ ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (agos.includes(W - 1 - i) ? 1 : 0)) } });
    const capacity: PolicyState = { mode: 'capacity', weights: { inf2: 96, g6: 2, g5: 2 }, modeSince: NOW - 300, ramping: false, entries: [NOW - 300] };
    const run = (signals: Record<string, ClassSignals>, extra: Partial<PolicyInput> = {}) =>
      decide(input(signals, null, { demandTokensPerSecond: demand, floorsTakenBy: 'capacity-writes', ...extra }), capacity).decision;
    const lookback = DEFAULT_POLICY_CONFIG.capacityErrorLookbackSeconds / 60;
    // A loss just out of the lookback: 180 s loss-free, at least a quarter of the 600 s a return requires. inf2 takes
    // the deficit (its standing ask, 1500 / 250 = 6) and no fallback is floored for it.
    const retried = run(errorsAgo(lookback));
    expect(retried.mode).toBe('capacity');
    expect(retried.replicaFloors).toEqual({ inf2: 6, g6: 0, g5: 0 });
    expect(retried.reason.message).toContain('inf2 retries growth: no shortage of its own now, and loss-free for 180 s, at least the 150 s ' +
      `its backoff requires after 1 loss episode within ${MEMORY} s; it takes the deficit and no fallback is grown for it.`);
    // Without a deficit there is nothing to take, and the audit line does not claim it.
    const noDeficit = decide(input(errorsAgo(lookback), 1000, { floorsTakenBy: 'capacity-writes' }), capacity).decision;
    expect(noDeficit.reason.code).toBe('stabilizing');
    expect(noDeficit.reason.message).not.toContain('retries growth');
    // Not counted on: g6 is floored for the deficit, as before this rule.
    const fallbackGrown = { inf2: 6, g6: 3, g5: 0 };
    expect(retried.weights.inf2).toBeGreaterThan(run(errorsAgo(lookback - 1)).weights.inf2);
    // - while the loss is within the lookback (evidence holds the mode; no standing ask either);
    expect(run(errorsAgo(lookback - 1)).replicaFloors).toEqual({ inf2: 0, g6: 3, g5: 0 });
    // - without a loss in the memory (a capacity mode entered on a deficit alone grows the fallbacks);
    expect(run(BASE).replicaFloors).toEqual(fallbackGrown);
    expect(run(BASE).reason.message).not.toContain('retries growth');
    // - backoff: a second loss episode 25 periods before the newest doubles what a return requires (2 x 24 quiet periods
    //   = 2880 s, capped at 2400): a retry needs 600 s loss-free, not 300;
    expect(run(errorsAgo(5, 30)).replicaFloors).toEqual(fallbackGrown);
    expect(run(errorsAgo(10, 35)).replicaFloors).toEqual({ inf2: 6, g6: 0, g5: 0 });
    //   and it keeps doubling where the return's requirement is capped: four episodes (10 periods apart) need a quarter
    //   of 600 x 2^3 = 4800 s, 1200 s, where a quarter of the capped 2400 s would retry after 600.
    expect(run(errorsAgo(10, 20, 30, 40)).replicaFloors).toEqual(fallbackGrown);
    expect(run(errorsAgo(20, 30, 40, 50)).replicaFloors).toEqual({ inf2: 6, g6: 0, g5: 0 });
    // - while anything else holds the mode: here a latency breach (every period over the SLO);
    const breaching = errorsAgo(lookback);
    const slow = { ...breaching, inf2: { ...breaching.inf2, latencyP95Ms: flat(2000) } };
    expect(run(slow).replicaFloors).toEqual({ inf2: 0, g6: 3, g5: 0 });
    // - at its maximum (SageMaker: the live MaxCapacity, e.g. a game day's pin): it could not be raised;
    const pinned = CLASSES.map((c) => (c.name === 'inf2' ? { ...c, maxReplicas: 3 } : c));
    expect(run(errorsAgo(lookback), { classes: pinned }).replicaFloors).toEqual({ inf2: 3, g6: 3, g5: 0 });
    expect(run(errorsAgo(lookback), { classes: pinned }).weights).toEqual(run(errorsAgo(lookback - 1)).weights);
    // - where floors are published (EKS): each class has its own autoscaler, the standing ask is enough.
    expect(run(errorsAgo(lookback), { floorsTakenBy: 'published' }).replicaFloors).toEqual(fallbackGrown);
  });

  test('enters when the preferred class reports a capacity error within the lookback, not after it', () => {
    const errorsAt = (ago: number) => ({ ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i === W - 1 - ago ? 2 : 0)) } });
    const lookback = DEFAULT_POLICY_CONFIG.capacityErrorLookbackSeconds / 60;
    // demand 800 x 1.2 headroom > 900 ready on inf2: the preferred class alone cannot carry the plan.
    const inside = decide(input(errorsAt(lookback - 1), 800), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(inside.mode).toBe('capacity');
    expect(inside.reason.triggers).toEqual(['capacity-errors']);
    const outside = decide(input(errorsAt(lookback), 800), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(outside.mode).toBe('cost');
  });

  test('a capacity error on a scale-out the preferred class does not need for the plan changes nothing', () => {
    const errors = { ...BASE, inf2: { ...healthy(3), capacityErrors: [...flat(0, W - 1), 1] } };
    expect(decide(input(errors, 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision).toMatchObject({ mode: 'cost', weightsChanged: false });
  });

  test('enters when desired exceeds ready on the preferred class for the whole grace period, not before', () => {
    const grace = DEFAULT_POLICY_CONFIG.provisioningGraceSeconds / 60;
    const shortFor = (periods: number) => ({
      ...BASE,
      inf2: { ...healthy(3), desiredReplicas: flat(3).map((_, i) => (i >= W - periods ? 5 : 3)) },
    });
    expect(decide(input(shortFor(grace - 1), 800), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('cost');
    const after = decide(input(shortFor(grace), 800), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(after.mode).toBe('capacity');
    expect(after.reason.triggers).toEqual(['replicas-not-ready']);
  });

  test('desired above ready is a scale-out in progress, not a shortage, while ready replicas keep arriving', () => {
    const grace = DEFAULT_POLICY_CONFIG.provisioningGraceSeconds / 60;
    const growing = { ...BASE, inf2: {
      ...healthy(3),
      readyReplicas: flat(3).map((_, i) => (i >= W - 2 ? 4 : 3)),
      desiredReplicas: flat(3).map((_, i) => (i >= W - grace ? 6 : 3)),
    } };
    expect(decide(input(growing, 800), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('cost');
  });

  test('enters when the preferred class breaches the latency SLO for consecutive periods, not for fewer', () => {
    const slowFor = (periods: number) => ({
      ...BASE,
      inf2: { ...healthy(3), latencyP95Ms: flat(400).map((_, i) => (i >= W - periods ? 1500 : 400)) },
    });
    expect(decide(input(slowFor(2), 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('cost');
    const breach = decide(input(slowFor(3), 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(breach.reason.triggers).toEqual(['latency-breach']);
    // Without an SLO configured the latency trigger is off.
    expect(decide(input(slowFor(3), 500, { config: {} }), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('cost');
  });

  test('a missing latency datapoint is not a breach', () => {
    const gaps = { ...BASE, inf2: { ...healthy(3), latencyP95Ms: [...flat(1500, W - 1), null] } };
    expect(decide(input(gaps, 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('cost');
  });
});

describe('decide(): each fallback judged on its own grace', () => {
  // inf2 (preferred) keeps refusing replicas; 1500 tokens/s planned against 1350 ready. g6, asked for 3 replicas by its
  // floor, has shown 1 of 3 for the last 8 periods: a routine start for a class that takes 10 minutes, a stuck one for
  // a class that takes 4.
  const refusing: ClassSignals = { ...healthy(3), desiredReplicas: flat(4), capacityErrors: flat(1) };
  const starting: ClassSignals = { ...healthy(1), desiredReplicas: flat(1).map((v, i) => (i >= W - 8 ? 3 : v)) };
  const state: PolicyState = { mode: 'capacity', weights: { inf2: 67, g6: 15, g5: 18 }, modeSince: NOW - 600, ramping: false, entries: [NOW - 600] };
  const run = (g6Grace?: number) => decide(input({ inf2: refusing, g6: starting, g5: healthy(1) }, 1500, {
    classes: CLASSES.map((c) => (c.name === 'g6' && g6Grace !== undefined ? { ...c, provisioningGraceSeconds: g6Grace } : c)),
  }), state).decision;

  test('on the policy\'s 300 s grace the starting fallback reads as stuck: its floor goes to the next class', () => {
    expect(run().replicaFloors).toEqual({ inf2: 0, g6: 0, g5: 2 });
  });

  test('on its own 720 s grace it is still growing: it keeps the floor (150 short at 166.7 per replica: 3)', () => {
    expect(run(720).replicaFloors).toEqual({ inf2: 0, g6: 3, g5: 0 });
    // Past its own grace without progress it is stuck too.
    expect(run(420).replicaFloors).toEqual({ inf2: 0, g6: 0, g5: 2 });
  });

  test('the preferred class is always judged on the policy\'s grace, which times the mode', () => {
    const slow = CLASSES.map((c) => (c.name === 'inf2' ? { ...c, provisioningGraceSeconds: 3600 } : c));
    // 6 periods behind: past the policy's 5, within the 60 the class would have on its own.
    const stuck: ClassSignals = { ...healthy(3), desiredReplicas: flat(3).map((v, i) => (i >= W - 6 ? 4 : v)) };
    const entered = decide(input({ inf2: stuck, g6: healthy(1), g5: healthy(1) }, 1500, { classes: slow }), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(entered.decision.reason.code).toBe('enter-capacity');
    expect(entered.decision.reason.triggers).toContain('replicas-not-ready');
  });

  test('a grace that is not a positive number of seconds is refused', () => {
    expect(policyClassProblems([{ ...CLASSES[0], provisioningGraceSeconds: 0 }, { ...CLASSES[1], provisioningGraceSeconds: NaN }])).toEqual([
      "classes['inf2'].provisioningGraceSeconds: 0 (must be > 0 seconds, or absent for the policy's)",
      "classes['g6'].provisioningGraceSeconds: NaN (must be > 0 seconds, or absent for the policy's)",
    ]);
    expect(policyWindowPeriods(DEFAULT_POLICY_CONFIG, [10800])).toBe(180);
  });
});

describe('routingPlan()', () => {
  // inf2 900, g6 200, g5 250 tokens/s ready; planned demand 1500: a deficit of 150 beyond the 1350 ready, g6 (the
  // cheapest fallback that can grow) its receiver.
  const views = CLASSES.map((cls, i) => ({ cls, ready: [3, 1, 1][i], steadyReady: [3, 1, 1][i], capacity: [900, 200, 250][i], eligible: true }));
  const plan = (growth?: Parameters<typeof routingPlan>[4]) =>
    routingPlan(views, 1500, new Set(['g6', 'g5']), { ...DEFAULT_POLICY_CONFIG, warmFloorShare: 0 }, growth);
  const share = (growth?: Parameters<typeof routingPlan>[4]) => plan(growth).shares.get('g6')! * 1500;

  test('routes the receiver above its envelope by what grows it: its load, a written floor, or a published floor', () => {
    expect(plan('published').receiver).toBe('g6');
    // Its load alone: up to its ready capacity again (200 + 150, nothing left to spread).
    expect(share()).toBeCloseTo(350, 9);
    // A written floor (SageMaker): its headroom, 200 x 0.2 = 40, and its share of the other 110 (200 / 1350 of it).
    expect(share('capacity-writes')).toBeCloseTo(200 + 40 + (110 * 200) / 1350, 9);
    // A published floor (EKS): only its share of the spread, exactly in proportion to ready capacity.
    expect(share('published')).toBeCloseTo((1500 * 200) / 1350, 9);
  });
});

describe('decide(): returning to cost mode', () => {
  const capacityState = (since: number): PolicyState => ({
    mode: 'capacity', weights: { inf2: 67, g6: 15, g5: 18 }, modeSince: since, ramping: false,
  });

  test('stays in capacity mode until the preferred class has been healthy for the stabilization window', () => {
    // Healthy now, but a capacity error 4 periods ago: inside the 10-period window.
    const recent = { ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i === W - 5 ? 1 : 0)) } };
    const { decision } = decide(input(recent, 500), capacityState(NOW - 3600));
    expect(decision.mode).toBe('capacity');
    expect(decision.reason.code).toBe('stabilizing');
    // Without a deficit the plan is the same in both modes: the preferred class carries what it has capacity for.
    expect(decision.weights).toEqual({ inf2: 96, g6: 2, g5: 2 });
  });

  test('the return hold doubles with each re-entry of the same capacity event', () => {
    const since = NOW - 1500;
    const withEntries = (entries: number[]): PolicyState => ({ ...capacityState(since), entries });
    // One entry: the 600 s window. Two: 1200 s. Three: 2400 s (the cap), so 1500 s is not enough.
    expect(decide(input(BASE, 500), withEntries([since])).decision.reason.code).toBe('return-to-cost');
    expect(decide(input(BASE, 500), withEntries([NOW - 3000, since])).decision.reason.code).toBe('return-to-cost');
    expect(decide(input(BASE, 500), withEntries([NOW - 3200, NOW - 3000, since])).decision.reason.code).toBe('stabilizing');
    // Entries older than the hour still count while the event lasts (here: capacity mode since the newest one).
    expect(decide(input(BASE, 500), withEntries([NOW - 4000, NOW - 3700, since])).decision.reason.code).toBe('stabilizing');
    // Bounded: only the entries that still lengthen the capped hold are kept (600 -> 1200 -> 2400: three).
    const many = decide(input(BASE, 500), withEntries([NOW - 9000, NOW - 8000, NOW - 7000, NOW - 4000, since]));
    expect(many.state.entries).toEqual([NOW - 7000, NOW - 4000, since]);
  });

  test('a relapse within the re-entry memory (two hours) of the return is the same capacity event; that long in cost mode ends it', () => {
    // inf2: 3 ready x 300 tokens/s = 900. Entered at `entered`, returned `ago` seconds ago; a capacity error now.
    const relapse = { ...BASE, inf2: { ...healthy(3), capacityErrors: [...flat(0, W - 1), 1] } };
    const returned = (ago: number, entered = NOW - 6000): PolicyState =>
      ({ ...costState({ inf2: 96, g6: 2, g5: 2 }, NOW - ago), entries: [entered] });
    // 50 minutes after the return, the entry (100 minutes old) still belongs to the event: re-entering needs the ready
    // classes (inf2 900 + g6 200 + g5 250 = 1350) short of the demand itself, and a re-entry doubles the hold.
    expect(decide(input(relapse, 800), returned(3000)).decision.mode).toBe('cost');
    const again = decide(input(relapse, 1400), returned(3000));
    expect(again.decision.mode).toBe('capacity');
    expect(again.state.entries).toEqual([NOW - 6000, NOW]);
    expect(again.decision.reason.message).toContain('re-entering the capacity event under way, 1 earlier entry: the planned demand of 1400');
    // 84 minutes after the return (past an hour, within the two-hour memory: traced on H4 EKS seed 8), still the same event.
    expect(decide(input(relapse, 800), returned(84 * 60, NOW - 84 * 60 - 1500)).decision.mode).toBe('cost');
    expect(decide(input(relapse, 1400), returned(84 * 60, NOW - 84 * 60 - 1500)).state.entries).toEqual([NOW - 84 * 60 - 1500, NOW]);
    // The memory's length of cost mode in which inf2 showed no loss ends the event: the entries are forgotten, and the
    // next loss is a fresh entry, on the headroom rule.
    const entered = NOW - MEMORY - 3000;
    const ended = decide(input(BASE, 800), returned(MEMORY, entered));
    expect(ended.state.entries).toBeUndefined();
    const fresh = decide(input(relapse, 800), ended.state);
    expect(fresh.decision.mode).toBe('capacity');
    expect(fresh.state.entries).toEqual([NOW]);
    // A loss within that time (a relapse the ready classes absorbed) means the shortage recurs: the event goes on.
    const recurring = { ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((v, i) => (i === W - 20 ? 1 : v)) } };
    expect(decide(input(recurring, 800), returned(MEMORY, entered)).state.entries).toEqual([entered]);
    expect(decide(input(relapse, 1000), returned(MEMORY, entered)).decision.mode).toBe('cost');
  });

  test('a relapse the ready classes absorb is not a re-entry: cost mode holds and the audit line says why', () => {
    // inf2 (900 ready) reports a capacity error 30 minutes after the return from an event; demand 1000 is more than inf2
    // carries, even without headroom, but the ready classes carry it (1350): the overflow spills to g6 and g5.
    const relapse = { ...BASE, inf2: { ...healthy(3), capacityErrors: [...flat(0, W - 1), 1] } };
    const returned: PolicyState = { ...costState({ inf2: 96, g6: 2, g5: 2 }, NOW - 1800), entries: [NOW - 3000] };
    const { decision, state } = decide(input(relapse, 1000), returned);
    expect(decision.mode).toBe('cost');
    expect(decision.modeChanged).toBe(false);
    expect(decision.reason.code).toBe('cost-plan');
    expect(decision.reason.message).toContain('Not re-entering capacity mode although inf2 reports capacity errors: within the capacity event ' +
      'under way (1 entry) the ready classes carry the planned demand (1000 of 1350 tokens/s)');
    expect(decision.weights.g6 + decision.weights.g5).toBeGreaterThan(4);
    expect(state.entries).toEqual([NOW - 3000]);
    // The rule has no headroom: demand up to the summed ready capacity itself (1350, which the first-entry rule's
    // headroom of 20% would call short from 1125) is carried; just above it, the same evidence re-enters.
    expect(decide(input(relapse, 1350), returned).decision.mode).toBe('cost');
    const above = decide(input(relapse, 1360), returned).decision;
    expect(above.mode).toBe('capacity');
    expect(above.reason.triggers).toContain('capacity-errors');
    expect(above.reason.message).toContain('the planned demand of 1360 tokens/s exceeds the summed ready capacity of the eligible classes, ' +
      '1350 tokens/s');
    // Without an event under way, the same evidence enters at once (fast to fall back).
    expect(decide(input(relapse, 1000), costState({ inf2: 96, g6: 2, g5: 2 })).decision.mode).toBe('capacity');
  });

  test('quiet is not recovery: a return needs the preferred class to have had the replicas it was refused', () => {
    // inf2 asked for 4 replicas and got a capacity error 30 periods ago; since then it has stopped asking (3 ready, 3
    // desired, no error): healthy for 30 periods, but it never had the 4th replica.
    const refusedAt = W - 31;
    const refused = refusedOnce(refusedAt);
    const held = decide(input({ ...BASE, inf2: refused }, 500), capacityState(NOW - 2400)).decision;
    expect(held.mode).toBe('capacity');
    expect(held.reason.code).toBe('stabilizing');
    expect(held.reason.message).toContain('Recovery not yet seen: inf2 was refused capacity 1800 s ago while asking for 4 replicas');
    // Once it has had 4 ready (and is healthy again), the return goes ahead.
    const grown: ClassSignals = { ...refused, readyReplicas: flat(3).map((v, i) => (i > refusedAt + 5 && i < refusedAt + 10 ? 4 : v)),
      desiredReplicas: flat(3).map((v, i) => (i >= refusedAt && i < refusedAt + 10 ? 4 : v)) };
    const back = decide(input({ ...BASE, inf2: grown }, 500), capacityState(NOW - 2400)).decision.reason;
    expect(back.code).toBe('return-to-cost');
    // Its newest loss is the last period of the 6 in which it asked for 4 with 3 ready (the grace window ends there).
    expect(back.message).toContain('and seen to recover (it has had the 4 replicas it was refused 1500 s ago)');
  });

  test('a loss in the oldest period of the memory is seen: the window holds the grace periods before it', () => {
    // Desired 4 above 3 ready, without progress, for the 5 grace periods ending at the oldest of the 60 memory periods
    // (3540 s ago), then 3 of 3: a loss the class has not recovered from. With only 60 datapoints it would be invisible.
    const memory = DEFAULT_POLICY_CONFIG.reentryMemorySeconds / 60;
    const grace = DEFAULT_POLICY_CONFIG.provisioningGraceSeconds / 60;
    const oldest = W - memory;
    const stuck: ClassSignals = { ...healthy(3), desiredReplicas: flat(3).map((v, i) => (i >= oldest - grace + 1 && i <= oldest ? 4 : v)) };
    expect(recoverySeen(stuck, DEFAULT_POLICY_CONFIG)).toEqual({ seen: false, asked: 4, lostSecondsAgo: (memory - 1) * 60 });
  });

  test('a rolled-back scale-out is recovered from only once the class has had what it asked for (refusedAsks), not what it fell back to', () => {
    // SageMaker: 3 of 3 throughout, a scale-out to 5 rolled back 10 periods ago (desired is back at 3 in that period).
    const rolled: ClassSignals = {
      ...healthy(3), capacityErrors: flat(0).map((v, i) => (i === W - 11 ? 1 : v)), refusedAsks: flat(null).map((v, i) => (i === W - 11 ? 5 : v)),
    };
    expect(recoverySeen(rolled, DEFAULT_POLICY_CONFIG)).toEqual({ seen: false, asked: 5, lostSecondsAgo: 600 });
    const five = flat(3).map((v, i) => (i >= W - 2 ? 5 : v));
    const back: ClassSignals = { ...rolled, readyReplicas: five, desiredReplicas: five };
    expect(recoverySeen(back, DEFAULT_POLICY_CONFIG).seen).toBe(true);
    const state: PolicyState = { mode: 'capacity', weights: { inf2: 90, g6: 5, g5: 5 }, modeSince: NOW - 1800, ramping: false, entries: [NOW - 1800] };
    const held = decide(input({ inf2: rolled, g6: healthy(1), g5: healthy(1) }, 500), state).decision;
    expect(held.reason.code).toBe('stabilizing');
    expect(held.reason.message).toContain('while asking for 5 replicas');
    expect(decide(input({ inf2: back, g6: healthy(1), g5: healthy(1) }, 500), state).decision.reason.code).toBe('return-to-cost');
  });

  test('only the return conditions still unmet are named in the stabilizing audit line', () => {
    // Healthy for 30 periods, and the mode has lasted its hold: only the missing recovery blocks the return.
    const refusedAt = W - 31;
    const refused = refusedOnce(refusedAt);
    expect(decide(input({ ...BASE, inf2: refused }, 500), capacityState(NOW - 2400)).decision.reason).toEqual({
      code: 'stabilizing',
      triggers: [],
      message: 'Staying in capacity mode until inf2 has been seen to recover. Recovery not yet seen: inf2 was refused capacity 1800 s ' +
        `ago while asking for 4 replicas and has not had that many ready since; it returns once it has (or after ${MEMORY} s without a loss).`,
    });
    // Only the hold.
    expect(decide(input(BASE, 500), capacityState(NOW - 540)).decision.reason.message).toBe(
      'Staying in capacity mode until the mode has lasted its return hold of 600 s (0 entries in this capacity event; mode held 540 s).');
    // Health and the loss-free stretch (a capacity error 4 periods ago), not the hold, not recovery (3 asked, 3 ready since).
    const recent = { ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i === W - 5 ? 1 : 0)) } };
    expect(decide(input(recent, 500), capacityState(NOW - 3600)).decision.reason.message).toBe(
      'Staying in capacity mode until inf2 has been healthy for 600 s (not yet healthy throughout), and inf2 has been free of capacity ' +
      'loss for 600 s (loss-free for 240 s).');
  });

  test('recovery counts only the periods after the loss, not the period of the loss itself', () => {
    // inf2's capacity error comes in a period whose replica datapoints still read 4 ready of 4 desired (it is refused
    // the replacement of a replica it is losing); since then it has had 3 ready of 3 desired. The 4 of the loss period
    // are not a recovery: it has not had 4 ready since it was refused.
    const refusedAt = W - 31;
    const lostOne: ClassSignals = {
      ...healthy(3),
      readyReplicas: flat(3).map((v, i) => (i <= refusedAt ? 4 : v)),
      desiredReplicas: flat(3).map((v, i) => (i <= refusedAt ? 4 : v)),
      capacityErrors: flat(0).map((v, i) => (i === refusedAt ? 1 : v)),
    };
    const held = decide(input({ ...BASE, inf2: lostOne }, 500), capacityState(NOW - 2400)).decision;
    expect(held.reason.code).toBe('stabilizing');
    expect(held.reason.message).toContain('Recovery not yet seen: inf2 was refused capacity 1800 s ago while asking for 4 replicas');
    // Had 4 ready one period later: recovered.
    const back: ClassSignals = { ...lostOne, readyReplicas: flat(3).map((v, i) => (i <= refusedAt + 1 ? 4 : v)),
      desiredReplicas: flat(3).map((v, i) => (i <= refusedAt + 1 ? 4 : v)) };
    expect(decide(input({ ...BASE, inf2: back }, 500), capacityState(NOW - 2400)).decision.reason.code).toBe('return-to-cost');
  });

  test('a loss older than the re-entry memory (two hours) no longer holds the mode: the need fell away', () => {
    // inf2 was refused a 4th replica `ago` periods before the newest one and never got it; the windows reach back
    // further than the memory (W + 10 periods), so only the memory's bound lets the loss go.
    const length = W + 10;
    const periods = MEMORY / 60;
    const refusedAgo = (ago: number) => refusedOnce(length - 1 - ago, length);
    const inside = decide(input({ ...BASE, inf2: refusedAgo(periods - 1) }, 500), capacityState(NOW - 3600)).decision;
    expect(inside.reason.code).toBe('stabilizing');
    expect(inside.reason.message).toContain(`Recovery not yet seen: inf2 was refused capacity ${MEMORY - 60} s ago while asking for 4 replicas`);
    expect(decide(input({ ...BASE, inf2: refusedAgo(periods) }, 500), capacityState(NOW - 3600)).decision.reason.code).toBe('return-to-cost');
  });

  test('a class that lost capacity, regained it and lost it again must stay loss-free longer than between its losses', () => {
    // Capacity errors in periods W-45..W-41 and W-25..W-21 of the hour: two losses 15 quiet periods apart. Twenty
    // loss-free periods (twice the stabilization window) are not enough: it needs 2 x 15 = 30.
    const errorsAt = (...ranges: Array<[number, number]>) =>
      flat(0).map((_, i) => (ranges.some(([a, b]) => i >= a && i <= b) ? 1 : 0));
    const twice = { ...BASE, inf2: { ...healthy(3), capacityErrors: errorsAt([W - 45, W - 41], [W - 25, W - 21]) } };
    const held = decide(input(twice, 500), capacityState(NOW - 3600)).decision;
    expect(held.reason.code).toBe('stabilizing');
    expect(held.reason.message).toContain('lost capacity 2 times');
    // The same losses further back (31 quiet periods since the newest): back to cost mode.
    const longAgo = { ...BASE, inf2: { ...healthy(3), capacityErrors: errorsAt([W - 56, W - 52], [W - 36, W - 32]) } };
    expect(decide(input(longAgo, 500), capacityState(NOW - 3600)).decision.reason.code).toBe('return-to-cost');
    // One long shortage (Karpenter retrying every 3 minutes) is one loss: the stabilization window is enough.
    const steady = { ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i < W - 10 && i % 3 === 0 ? 1 : 0)) } };
    expect(decide(input(steady, 500), capacityState(NOW - 3600)).decision.reason.code).toBe('return-to-cost');
  });

  test('a second run in the same period takes no second ramp step', () => {
    const first = decide(input(BASE, 500, { now: NOW }), capacityState(NOW - 600));
    expect(first.decision.reason.code).toBe('return-to-cost');
    expect(first.state.lastStepAt).toBe(NOW);
    const again = decide(input(BASE, 500, { now: NOW + 30 }), first.state);
    expect(again.decision).toMatchObject({ reason: { code: 'ramping' }, weightsChanged: false, weights: first.decision.weights });
    const next = decide(input(BASE, 500, { now: NOW + 60 }), again.state);
    expect(next.decision.weightsChanged).toBe(true);
  });

  test('stays in capacity mode until the mode itself has lasted the stabilization window', () => {
    const { decision } = decide(input(BASE, 500), capacityState(NOW - 540));
    expect(decision.reason.code).toBe('stabilizing');
  });

  test('a window too short to prove health is not health', () => {
    const short = { inf2: healthy(3, 4), g6: healthy(1, 4), g5: healthy(1, 4) };
    expect(decide(input(short, 500), capacityState(NOW - 3600)).decision.reason.code).toBe('stabilizing');
  });

  test('then returns and ramps by at most the step per tick until the cost plan is reached', () => {
    let state = capacityState(NOW - 600);
    const seen: Array<Record<string, number>> = [];
    const codes: string[] = [];
    for (let tick = 0; tick < 8; tick++) {
      const step = decide(input(BASE, 500, { now: NOW + tick * 60 }), state);
      for (const c of CLASSES) expect(Math.abs(step.decision.weights[c.name] - state.weights[c.name])).toBeLessThanOrEqual(10);
      seen.push(step.decision.weights);
      codes.push(step.decision.reason.code);
      state = step.state;
    }
    // 67 -> 96 on inf2 is 29 points: 10, 10, then the last 9.
    expect(codes.slice(0, 4)).toEqual(['return-to-cost', 'ramping', 'ramping', 'cost-plan']);
    expect(seen[0]).toEqual({ inf2: 77, g6: 11, g5: 12 });
    expect(seen[1]).toEqual({ inf2: 87, g6: 6, g5: 7 });
    expect(seen[2]).toEqual({ inf2: 96, g6: 2, g5: 2 });
    expect(seen.slice(3)).toEqual(Array(5).fill({ inf2: 96, g6: 2, g5: 2 }));
    expect(state.ramping).toBe(false);
  });

  test('re-enters capacity mode at once if the preferred class relapses during the ramp', () => {
    const ramping: PolicyState = { mode: 'cost', weights: { inf2: 77, g6: 11, g5: 12 }, modeSince: NOW - 60, ramping: true };
    const relapse = { ...BASE, inf2: { ...healthy(3), capacityErrors: [...flat(0, W - 1), 1] } };
    const { decision } = decide(input(relapse, 800), ramping);
    expect(decision).toMatchObject({ mode: 'capacity', modeChanged: true, weights: { inf2: 96, g6: 2, g5: 2 } });
  });
});

describe('decide(): safety', () => {
  test('missing demand holds the current weights and mode', () => {
    const held = { inf2: 80, g6: 10, g5: 10 };
    const { decision, state } = decide(input(BASE, null), costState(held));
    expect(decision).toMatchObject({ weights: held, weightsChanged: false, mode: 'cost', reason: { code: 'missing-data' } });
    expect(decision.reason.message).toContain('demand');
    expect(state.weights).toEqual(held);
  });

  test('a missing ready-replica datapoint of an allowed class holds the current weights', () => {
    const gap = { ...BASE, g6: { ...healthy(1), readyReplicas: [...flat(1, W - 1), null] } };
    const { decision } = decide(input(gap, 5000), costState({ inf2: 80, g6: 10, g5: 10 }));
    expect(decision.reason.code).toBe('missing-data');
    expect(decision.reason.message).toContain('ready replicas of g6');
    expect(decision.weights).toEqual({ inf2: 80, g6: 10, g5: 10 });
  });

  test('a class with zero ready replicas gets no weight, in either mode', () => {
    const signals = { ...BASE, inf2: { ...healthy(0), capacityErrors: [...flat(0, W - 1), 3] } };
    const { decision } = decide(input(signals, 300), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.mode).toBe('capacity');
    // Cost order among the ready: g6 and g5 cost the same per token, g6 ranks first and is filled to its envelope.
    expect(decision.weights).toEqual({ inf2: 0, g6: 67, g5: 33 });
    expect(decision.fallbackShare).toBe(1);
  });

  test('routes on the ready count taken at the run (readyNow) where there is one: the load balancer routes on health now', () => {
    // The window says inf2 still has its 3 replicas (published minutes late); the run's count says they are gone.
    const lost = decide(input({ ...BASE, inf2: { ...healthy(3), readyNow: 0 } }, 300), costState({ inf2: 96, g6: 2, g5: 2 })).decision;
    expect(lost.weights.inf2).toBe(0);
    // The window still reads the loss (0 ready); the run's count says 3 are back: inf2 takes the cost plan again.
    const back = { ...BASE, inf2: { ...healthy(3), readyReplicas: [...flat(3, W - 2), 0, 0], readyNow: 3 } };
    expect(decide(input(back, 500), costState({ inf2: 0, g6: 67, g5: 33 })).decision.weights).toEqual({ inf2: 96, g6: 2, g5: 2 });
    // The count stands in for a missing newest datapoint, and a missing count leaves the window's.
    const gap = { ...BASE, g6: { ...healthy(1), readyReplicas: [...flat(1, W - 1), null], readyNow: 1 } };
    expect(decide(input(gap, 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision.reason.code).toBe('cost-plan');
    const unread = { ...BASE, g6: { ...healthy(1), readyReplicas: [...flat(1, W - 1), null], readyNow: Number.NaN } };
    expect(decide(input(unread, 500), costState({ inf2: 96, g6: 2, g5: 2 })).decision.reason.code).toBe('missing-data');
  });

  test('a floor never holds a count seen only at the run: a rolling update\'s surge pods are not kept for capacity mode', () => {
    // Capacity mode (inf2 refused a 9th replica), 8 ready in every published minute; the run counts 10 healthy targets
    // (new pods up before the old ones drain). Its ask is what its part of the demand needs, never below the 8.
    const capState: PolicyState = { mode: 'capacity', weights: { inf2: 60, g6: 30, g5: 10 }, modeSince: NOW - 120, ramping: false };
    const inf2 = (readyNow?: number): ClassSignals => ({
      ...refusedOnce(W - 2), readyReplicas: flat(8), desiredReplicas: flat(8).map((v, i) => (i === W - 2 ? 9 : v)),
      ...(readyNow === undefined ? {} : { readyNow }),
    });
    const ask = (readyNow?: number) => decide(input({ ...BASE, inf2: inf2(readyNow) }, 1500, { floorsTakenBy: 'published' }), capState)
      .decision.replicaFloors!.inf2;
    expect(ask()).toBe(8);
    expect(ask(10)).toBe(8);
    // A live count below the published one holds no more than what is there now.
    expect(ask(7)).toBe(7);
  });

  test('the evidence rules read the window, not the run\'s count: a class back now was still short in its periods', () => {
    // desired 4 > ready 3 through the grace window without progress: replicas-not-ready, whatever the run counts now
    // (1100 x 1.2 is more than inf2's 4 x 300 either way, so the evidence calls for the mode).
    const short = { ...BASE, inf2: { ...healthy(3), desiredReplicas: flat(4), readyNow: 4 } };
    const { decision } = decide(input(short, 1100), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.mode).toBe('capacity');
    expect(decision.reason.triggers).toContain('replicas-not-ready');
  });

  test('when no allowed class is ready, weights stay on the allowed classes they were on, never all zero', () => {
    const none = { inf2: healthy(0), g6: healthy(0), g5: healthy(0) };
    const { decision } = decide(input(none, 300), costState({ inf2: 96, g6: 2, g5: 2 }));
    expect(decision.reason.code).toBe('nothing-ready');
    expect(decision.weights).toEqual({ inf2: 96, g6: 2, g5: 2 });
    const fromZero = decide(input(none, 300), costState({ inf2: 0, g6: 0, g5: 0 })).decision;
    expect(fromZero.weights).toEqual({ inf2: 100, g6: 0, g5: 0 });
  });

  test('a class forbidden by placement never gets weight, and the preferred class is the best allowed one', () => {
    const classes = CLASSES.map((c) => (c.name === 'inf2' ? { ...c, placementAllowed: false } : c));
    const { decision } = decide(input(BASE, 100, { classes }), costState({ inf2: 90, g6: 5, g5: 5 }));
    expect(decision.weights.inf2).toBe(0);
    expect(decision.preferredClass).toBe('g6');
    expect(decision.weights).toEqual({ inf2: 0, g6: 98, g5: 2 });
  });

  test('fails loudly on classes it cannot reason about', () => {
    const bad = [{ ...CLASSES[0], tokensPerSecondPerReplica: 0 }, { ...CLASSES[0] }];
    expect(() => decide(input(BASE, 1, { classes: bad }), costState({}))).toThrow(
      /tokensPerSecondPerReplica: 0 \(must be > 0.*'inf2' appears twice/,
    );
  });

  test('a class bound (maxReplicas) must be a whole number of at least 1 when given', () => {
    expect(policyClassProblems([{ ...CLASSES[0], maxReplicas: 0 }, { ...CLASSES[1], maxReplicas: 2.5 }, { ...CLASSES[2], maxReplicas: 4 }])).toEqual([
      "classes['inf2'].maxReplicas: 0 (a whole number, at least 1, or absent for no bound)",
      "classes['g6'].maxReplicas: 2.5 (a whole number, at least 1, or absent for no bound)",
    ]);
  });
});

describe('configuration', () => {
  test('defaults are valid and need 124 one-minute datapoints (the re-entry memory, each period judged on the grace window ending there)', () => {
    expect(policyConfigProblems(DEFAULT_POLICY_CONFIG)).toEqual([]);
    expect(MEMORY).toBe(7200);
    expect(W).toBe(120 + 5 - 1);
  });

  test('fails when fields are out of range, naming every one with what is allowed', () => {
    const config = resolvePolicyConfig({ periodSeconds: 45, weightTotal: 1000, headroom: -1, stabilizationWindowSeconds: 100 });
    const problems = policyConfigProblems(config);
    expect(problems).toEqual(expect.arrayContaining([
      'periodSeconds: is 45 s; allowed: a whole number from 60 to 21_600 s, a multiple of 60 (the schedule runs at EventBridge rates of whole minutes, '
        + "and a trigger event may wait one period, up to Lambda's maximum event age of 21600 s)",
      'weightTotal: is 1000; allowed: a whole number from 10 to 999 (ALB accepts at most 999 per target group)',
      'headroom: is -1; allowed: a finite number from 0 to 4',
      'stabilizationWindowSeconds: is 100 s, not a whole number of 60 s periods; allowed: a whole number of periods, at least one',
    ]));
  });

  test('fails when a period passes Lambda\'s maximum event age, or a window makes each run read more than a day of minutes', () => {
    expect(policyConfigProblems(resolvePolicyConfig({ periodSeconds: 7 * 3600 }))[0])
      .toMatch(/^periodSeconds: is 25200 s; allowed: a whole number from 60 to 21_600 s/);
    // Two days of re-entry memory at one-minute periods: 2880 + 5 - 1 periods a run, past the 1440 the reads are bounded by.
    expect(policyConfigProblems(resolvePolicyConfig({ reentryMemorySeconds: 2 * 86_400 }))).toEqual([
      'reentryMemorySeconds: makes each run read 2884 periods of 60 s; allowed: a history of at most 1440 periods (each run reads it with GetMetricData, '
        + '100,800 datapoints a page, at most 5 pages), in a period CloudWatch still answers for its oldest datapoint (a multiple of 300 s beyond 15 days '
        + 'back, of 3600 s beyond 63 days) (the oldest periods would read as missing data)',
    ]);
    // The same memory at 5-minute periods is 580 periods: within the bound.
    expect(policyConfigProblems(resolvePolicyConfig({ periodSeconds: 300, reentryMemorySeconds: 2 * 86_400, provisioningGraceSeconds: 300,
      stabilizationWindowSeconds: 600, capacityErrorLookbackSeconds: 300 }))).toEqual([]);
  });

  test('fails when the history a run reads reaches past 15 days (63 days) in a period that is not a multiple of 300 s (3600 s)', () => {
    // GetMetricData returns nothing for a start time 15-63 days back unless the period is a multiple of 300 s, beyond
    // 63 days of 3600 s (botocore 1.43.67 cloudwatch service-2.json, GetMetricDataInput.StartTime).
    expect(historyPeriodMultiple(15 * 86_400)).toBe(60);
    expect(historyPeriodMultiple(15 * 86_400 + 1)).toBe(300);
    expect(historyPeriodMultiple(63 * 86_400 + 1)).toBe(3600);
    const at = (periodSeconds: number, reentryMemoryDays: number) => policyConfigProblems(resolvePolicyConfig({
      periodSeconds, reentryMemorySeconds: reentryMemoryDays * 86_400, provisioningGraceSeconds: periodSeconds,
      stabilizationWindowSeconds: periodSeconds, capacityErrorLookbackSeconds: periodSeconds, maxReturnHoldSeconds: periodSeconds,
    }));
    // 16 days at 20-minute periods (a multiple of 300 s) reads; at 16-minute periods its oldest periods would be missing.
    expect(at(1200, 16)).toEqual([]);
    expect(at(960, 16)[0]).toMatch(new RegExp('^reentryMemorySeconds: makes each run read \\d+ periods of 960 s, from up to 17 days back, '
      + 'where GetMetricData returns datapoints only for a period that is a multiple of 300 s;'));
    // 70 days at 75-minute periods (a multiple of 300 s, not of 3600 s); at 2 hours it reads.
    expect(at(4500, 70)[0]).toMatch(/a multiple of 3600 s;/);
    expect(at(7200, 70)).toEqual([]);
    // Just under 15 days of periods still reaches past it: the newest period is rounded down (one more period) and the
    // metric delay may be up to 900 s (R201).
    const edge = policyConfigProblems(resolvePolicyConfig({ periodSeconds: 960, capacityErrorLookbackSeconds: 1349 * 960,
      provisioningGraceSeconds: 1920, stabilizationWindowSeconds: 960, maxReturnHoldSeconds: 960 }));
    expect(edge[0]).toMatch(/a multiple of 300 s;/);
  });

  test('fails when replicaFloorsApplied is not a boolean (a JSON config that says "true")', () => {
    const config = resolvePolicyConfig({ replicaFloorsApplied: 'true' as unknown as boolean });
    expect(policyConfigProblems(config)).toEqual(['replicaFloorsApplied: is "true"; allowed: true or false (set by the Reconciler from the serving construct)']);
  });

  test('fails when every class is forbidden by placement', () => {
    expect(policyClassProblems(CLASSES.map((c) => ({ ...c, placementAllowed: false })))).toEqual([
      'classes: every class is forbidden by the placement policy (at least one must be allowed)',
    ]);
  });

  test('the initial state is capacity mode, so cost mode needs a full window of evidence first', () => {
    const start = initialPolicyState({ inf2: 34, g6: 33, g5: 33 }, NOW);
    expect(decide(input(BASE, 500), start).decision.reason.code).toBe('stabilizing');
  });
});

describe('replicaFloors', () => {
  const view = (cls: PolicyClass, ready: number) =>
    ({ cls, ready, steadyReady: ready, capacity: ready * cls.tokensPerSecondPerReplica, eligible: ready > 0 });
  const [inf2, g6, g5] = CLASSES;

  test('the deficit beyond every ready envelope goes to the cheapest growable class, at its scaling target', () => {
    // 900 + 200 + 250 ready, 1500 planned: 150 short. g6 (cheaper than g5 per token) carries 200 + 150 at
    // 200 / 1.2 per replica: 3 replicas. g5 is not needed, inf2 cannot grow.
    const floors = replicaFloors([view(inf2, 3), view(g6, 1), view(g5, 1)], 1500, new Set(['g6', 'g5']), DEFAULT_POLICY_CONFIG);
    expect(Object.fromEntries(floors)).toEqual({ inf2: 0, g6: 3, g5: 0 });
  });

  test('a class at its maxReplicas passes the rest of the deficit to the next one', () => {
    const capped = { ...g6, maxReplicas: 2 };
    // g6 holds at most 2 x 166.7 = 333 tokens/s: 133 of the 450 short; g5 takes the other 317 at 208.3 per replica.
    const floors = replicaFloors([view(inf2, 3), view(capped, 1), view(g5, 1)], 1800, new Set(['g6', 'g5']), DEFAULT_POLICY_CONFIG);
    expect(Object.fromEntries(floors)).toEqual({ inf2: 0, g6: 2, g5: 3 });
  });

  test('no deficit, no floor; a class not ready yet still gets one', () => {
    expect([...replicaFloors([view(inf2, 3), view(g6, 1)], 800, new Set(['g6']), DEFAULT_POLICY_CONFIG).values()]).toEqual([0, 0]);
    // g6 has no ready replica: all 300 short are its to carry, 2 replicas at 166.7.
    expect(Object.fromEntries(replicaFloors([view(inf2, 3), view(g6, 0)], 1200, new Set(['g6']), DEFAULT_POLICY_CONFIG)))
      .toEqual({ inf2: 0, g6: 2 });
  });
});

describe('doubledWindow: the one growth law of the policy\'s waits', () => {
  const c = DEFAULT_POLICY_CONFIG;
  const w = c.stabilizationWindowSeconds;
  test('the stabilization window doubled per time, never below it, never Infinity', () => {
    expect(doubledWindow(c, 0)).toBe(w);
    expect(doubledWindow(c, -1)).toBe(w);
    expect(doubledWindow(c, 3)).toBe(8 * w);
    expect(doubledWindow(c, 31)).toBe(w * 2 ** 30);
    expect(Number.isFinite(doubledWindow(c, 5000))).toBe(true);
  });
  test('a flapping class waits the window doubled per further loss episode, where that is longer than its gaps', () => {
    // Two losses 4 periods apart (more than the 3-period capacity-error lookback: two episodes) in the hour: twice the
    // longest quiet gap is 480 s, the window doubled once 1200 s.
    const n = c.reentryMemorySeconds / c.periodSeconds;
    const errors = Array.from({ length: n }, (_, i) => (i === 40 || i === 45 ? 1 : 0));
    const steady = Array.from({ length: 2 * n }, () => 3);
    const flap = flapStability({ readyReplicas: steady, desiredReplicas: steady, capacityErrors: errors }, c);
    expect(flap).toEqual({ episodes: 2, requiredQuietSeconds: 2 * w, quietSeconds: (n - 1 - 45) * c.periodSeconds });
  });
  test('the return hold is it, per further entry, capped at maxReturnHoldSeconds', () => {
    expect(returnHold([], c)).toBe(w);
    expect(returnHold([0], c)).toBe(w);
    expect(returnHold([0, 600], c)).toBe(2 * w);
    expect(returnHold(Array.from({ length: 40 }, (_, i) => i * 60), c)).toBe(c.maxReturnHoldSeconds);
  });
});

describe('typicalDemand: what floors a platform autoscaler can undo are sized on', () => {
  const c = DEFAULT_POLICY_CONFIG;
  test('the median of the known datapoints, never above the sustained demand', () => {
    expect(typicalDemand([1000, 1400, 1000, 1800, 1000], c)).toBe(1000);
    expect(typicalDemand([1000, 1000, 1000, 1800, 1800], c)).toBe(1000);
    expect(sustainedDemand([1000, 1000, 1000, 1800, 1800], c)).toBe(1800);
    expect(typicalDemand([null, 1000, 1200, 1400, 1600], c)).toBe(1300);
    expect(typicalDemand([null, null, null, null, 700], c)).toBe(700);
    // Two known datapoints: their mean would be 1500, above the sustained (second-highest) 1000.
    expect(typicalDemand([null, null, null, 1000, 2000], c)).toBe(1000);
    expect(typicalDemand([null, null, null, null, null], c)).toBeNull();
  });
});

describe('sustainedDemand: what replica floors are sized on', () => {
  const c = DEFAULT_POLICY_CONFIG;
  test('a one-minute spike moves the plan but not the floors', () => {
    const spike = [1000, 1000, 4000, 1000, 1000];
    expect(plannedDemand(spike, c)).toBeCloseTo(2800, 6);
    expect(sustainedDemand(spike, c)).toBe(1000);
  });
  test('a rise that lasts two periods is sustained; it never exceeds the plan; missing points are skipped', () => {
    expect(sustainedDemand([1000, 1000, 1000, 1800, 1800], c)).toBe(1800);
    expect(sustainedDemand([1800, 1800, 1800, 1800, 1800], c)).toBe(1800);
    expect(sustainedDemand([null, null, null, null, 700], c)).toBe(700);
    expect(sustainedDemand([null, null, null, null, null], c)).toBeNull();
  });
});

describe('policyClassesFromFacts', () => {
  const cls = (name: string, rank: number, instanceType: string, tps: number, usd: number, allowSensitive = true) => ({
    name, preferenceRank: rank, tokensPerSecondPerReplica: tps, safeConcurrency: 8, usdPerReplicaHour: usd, allowSensitive,
    maxReplicas: 10, instanceType,
  });

  test('one class per ALB target group, placement from the class', () => {
    const k8s = { namespace: 'n', deploymentName: 'd', nodePoolName: 'p' };
    const facts: RoutingFacts = {
      kind: 'alb', listenerArn: 'arn', loadBalancerFullName: 'app/x/1',
      targets: [
        { class: cls('inf2', 0, 'inf2.xlarge', 300, 0.76), targetGroupArn: 'tg1', targetGroupFullName: 'targetgroup/a/1', ...k8s },
        { class: cls('g6', 1, 'g6.xlarge', 200, 0.8, false), targetGroupArn: 'tg2', targetGroupFullName: 'targetgroup/b/2', ...k8s },
      ],
    };
    expect(policyClassesFromFacts(facts, { sensitive: true })).toEqual([
      { name: 'inf2', preferenceRank: 0, tokensPerSecondPerReplica: 300, usdPerReplicaHour: 0.76, placementAllowed: true, maxReplicas: 10 },
      { name: 'g6', preferenceRank: 1, tokensPerSecondPerReplica: 200, usdPerReplicaHour: 0.8, placementAllowed: false, maxReplicas: 10 },
    ]);
  });

  test('one class per SageMaker variant, envelope and price weighted by the instances each pool runs', () => {
    const facts: RoutingFacts = {
      kind: 'sagemaker', endpointName: 'e', endpointArn: 'arn',
      variants: [
        { variantName: 'preferred', classes: [cls('p4', 0, 'ml.p4d.24xlarge', 1000, 40), cls('g6e', 1, 'ml.g6e.12xlarge', 500, 10)] },
        { variantName: 'fallback', classes: [cls('g5', 2, 'ml.g5.12xlarge', 250, 7, false)] },
      ],
    };
    const [preferred, fallback] = policyClassesFromFacts(facts, {}, { preferred: { 'ml.p4d.24xlarge': 1, 'ml.g6e.12xlarge': 3 } });
    expect(preferred).toEqual({
      name: 'preferred', preferenceRank: 0, tokensPerSecondPerReplica: 625, usdPerReplicaHour: 17.5, placementAllowed: true,
      // Instances of both pools, each bounded by its own quota.
      maxReplicas: 20,
    });
    expect(fallback).toMatchObject({ name: 'fallback', tokensPerSecondPerReplica: 250, usdPerReplicaHour: 7, placementAllowed: true });
    // The variant's scaling maximum bounds it below the pools' quotas (a floor above it would be scaled back in).
    const bounded: RoutingFacts = { ...facts, variants: [{ ...facts.variants[0], maxInstances: 12 }, facts.variants[1]] };
    expect(policyClassesFromFacts(bounded)[0].maxReplicas).toBe(12);
    expect(policyClassesFromFacts(facts, { sensitive: true })[1].placementAllowed).toBe(false);
  });
});
