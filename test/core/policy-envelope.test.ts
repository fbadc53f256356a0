import { decide } from '../../lib/core/policy/decide';
import { DEFAULT_POLICY_CONFIG } from '../../lib/core/policy/defaults';
import { asDelivered, deliveredEnvelope } from '../../lib/core/policy/envelope';
import { type ClassSignals, type PolicyClass } from '../../lib/core/policy/types';

// GIVEN a fallback declared at 400 tokens/s per replica, and a five-period window.
const FALLBACK: PolicyClass = { name: 'a10g', preferenceRank: 1, tokensPerSecondPerReplica: 400, usdPerReplicaHour: 1, placementAllowed: true };
const N = 5;
const flat = (v: number | null) => Array.from({ length: N }, () => v);

/** Signals of a class with `ready` replicas that was offered `offered` tokens/s and shed `shed` of them in every period. */
function loaded(ready: number, offered: number, shed: number, extra: Partial<ClassSignals> = {}): ClassSignals {
  return {
    readyReplicas: flat(ready),
    desiredReplicas: flat(ready),
    servedTokensPerSecond: flat(offered - shed),
    rejectedTokensPerSecond: flat(shed),
    latencyP95Ms: flat(5_000),
    ...extra,
  };
}

describe('deliveredEnvelope', () => {
  test('a class that sheds while offered at least its declared capacity is planned at what it delivered per ready replica', () => {
    // 2 replicas offered 1000 tokens/s (above 2 x 400), 440 shed: 560 delivered, 280 per replica (a 0.7x fallback).
    expect(deliveredEnvelope(FALLBACK, loaded(2, 1000, 440), N)).toBeCloseTo(280);
  });

  test('where the served count includes the rejected requests (ALB RequestCount), delivered is served minus rejected', () => {
    const signals = { ...loaded(2, 1000, 440), servedTokensPerSecond: flat(1000), servedIncludesRejected: true };
    expect(deliveredEnvelope(FALLBACK, signals, N)).toBeCloseTo(280);
  });

  test('a class that answers late instead of shedding is not measured: its offered load is not observable', () => {
    const late = loaded(2, 600, 0, { latencyP95Ms: flat(45_000) });
    expect(deliveredEnvelope(FALLBACK, late, N)).toBe(400);
  });

  test('shedding below the declared capacity (a burst within the period) does not lower the envelope', () => {
    expect(deliveredEnvelope(FALLBACK, loaded(2, 600, 100), N)).toBe(400);
  });

  test('never above the declared envelope, never below a tenth of it; without the served or rejected signal it is the declared one', () => {
    // Delivered 1000 per replica while shedding: the declared 400 stands.
    expect(deliveredEnvelope(FALLBACK, loaded(1, 1100, 100), N)).toBe(400);
    expect(deliveredEnvelope(FALLBACK, loaded(1, 500, 500), N)).toBeCloseTo(40);
    const { rejectedTokensPerSecond: _, ...noRejections } = loaded(2, 1000, 440);
    expect(deliveredEnvelope(FALLBACK, noRejections, N)).toBe(400);
    expect(deliveredEnvelope(FALLBACK, undefined, N)).toBe(400);
  });

  test('a class delivering within 10% of its declared envelope while it sheds is a class at its envelope under bursts', () => {
    // 2 replicas offered 900, 140 shed: 760 delivered, 380 per replica (95% of 400): bursty arrivals, not a slow class.
    expect(deliveredEnvelope(FALLBACK, loaded(2, 900, 140), N)).toBe(400);
    // 700 delivered, 350 per replica (87.5%): outside the band, planned at what it delivered.
    expect(deliveredEnvelope(FALLBACK, loaded(2, 900, 200), N)).toBeCloseTo(350);
    // The band's edges: 364 per replica (91%) is inside, 356 (89%) outside.
    expect(deliveredEnvelope(FALLBACK, loaded(2, 900, 172), N)).toBe(400);
    expect(deliveredEnvelope(FALLBACK, loaded(2, 900, 188), N)).toBeCloseTo(356);
  });

  test('pools the saturated periods: one period measured high does not restore the declared envelope', () => {
    const signals: ClassSignals = {
      readyReplicas: [2, 2, 1, 2, 2],
      desiredReplicas: flat(2),
      // Period 2: one replica counted (the Minimum) while two served most of the minute; it also caps period 3.
      servedTokensPerSecond: [480, 480, 480, 480, null],
      rejectedTokensPerSecond: [520, 520, 520, 520, null],
    };
    // (480 x 4) / (2 + 2 + 1 + 1) = 320 per replica-period.
    expect(deliveredEnvelope(FALLBACK, signals, N)).toBeCloseTo(320);
  });

  test('a period counts the replicas present through it: a variant growing while it sheds is not a slower class', () => {
    // SageMaker's counts are taken at the end of each period: 2 instances through five saturated periods, 6 at the end
    // of the last. 800 delivered per period is 400 per instance; counting 6 for the last period would read 286.
    const signals: ClassSignals = {
      readyReplicas: [2, 2, 2, 2, 2, 6],
      desiredReplicas: [6, 6, 6, 6, 6, 6],
      servedTokensPerSecond: flat(800),
      rejectedTokensPerSecond: flat(1800),
    };
    expect(deliveredEnvelope(FALLBACK, signals, N)).toBe(400);
  });

  test('asDelivered keeps the class object when nothing was measured', () => {
    expect(asDelivered(FALLBACK, undefined, N)).toBe(FALLBACK);
    expect(asDelivered(FALLBACK, loaded(2, 1000, 440), N).tokensPerSecondPerReplica).toBeCloseTo(280);
  });
});

describe('decide() plans a class at its delivered envelope', () => {
  test('a slow fallback that shed is routed what it delivers; the rest of the demand goes to the class with room', () => {
    const W = 62;
    const f = (v: number) => Array.from({ length: W }, () => v);
    const classes: PolicyClass[] = [
      { name: 'l40s', preferenceRank: 0, tokensPerSecondPerReplica: 1200, usdPerReplicaHour: 1.861, placementAllowed: true },
      { name: 'a10g', preferenceRank: 1, tokensPerSecondPerReplica: 400, usdPerReplicaHour: 1.006, placementAllowed: true },
    ];
    const preferred: ClassSignals = {
      readyReplicas: f(4), desiredReplicas: f(4), capacityErrors: f(0), servedTokensPerSecond: f(4800), rejectedTokensPerSecond: f(0),
    };
    const declared: ClassSignals = { readyReplicas: f(2), desiredReplicas: f(2), capacityErrors: f(0) };
    const slow: ClassSignals = { ...declared, servedTokensPerSecond: f(1000), rejectedTokensPerSecond: f(440), servedIncludesRejected: true };
    const run = (a10g: ClassSignals) => decide({
      now: 1_800_000_000, classes, signals: { l40s: preferred, a10g }, demandTokensPerSecond: f(5400), config: { latencySloP95Ms: 30_000 },
    }, { mode: 'cost', weights: { l40s: 96, a10g: 4 }, modeSince: 1_800_000_000 - 3600, ramping: false }).decision;
    // Declared: l40s 4800 + a10g 800 of ready capacity; measured: a10g 2 x 280 = 560.
    expect(run(declared).readyTokensPerSecond).toBe(5600);
    expect(run(slow).readyTokensPerSecond).toBeCloseTo(5360);
    // The slow fallback gets a smaller share than its declared capacity would have given it.
    expect(run(slow).weights.a10g).toBeLessThanOrEqual(run(declared).weights.a10g);
    // The audit line says so; a class at its declared envelope is not named.
    expect(run(slow).reason.message).toContain('Planned below the declared envelope, at what it delivered while shedding (tokens/s per replica): a10g 280 of 400.');
    expect(run(declared).reason.message).not.toContain('Planned below');
    expect(DEFAULT_POLICY_CONFIG.latencySloP95Ms).toBeUndefined();
  });
});
