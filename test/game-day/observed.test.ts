// The game day's observed window: the reconciler's own query batch, read back per minute, shaped as the simulator's
// chart series and summarized beside the simulator's prediction.
import { compareOutcomes, observedOutcome, observedSeries } from '../../lib/core/game-day/observed';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { buildQueryBatch, windowsFromResults } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { EKS_CONFIG } from '../verify/account';
import { shortageWorld } from './window';

function window(config: ReconcilerConfig, slots: number) {
  const batch = buildQueryBatch(signalPlan(config, 60), 60);
  const results = batch.queries.map((q, i) => {
    const e = batch.index[i];
    const points = Array.from({ length: slots }, (_, m) => [m, shortageWorld(e.className, e.signal, m)] as const).filter(([, v]) => v !== undefined);
    return { Id: q.Id, Timestamps: points.map(([m]) => new Date((1000 + m * 60) * 1000)), Values: points.map(([, v]) => v! / e.scale) };
  });
  return observedSeries(batch, windowsFromResults(results, batch, { start: 1000, periodSeconds: 60, slots }), slots);
}

test('per minute: share of served tokens per class, ready replicas, p95 in seconds, the mode, demand and rejected share', () => {
  const s = window(EKS_CONFIG, 35);
  expect(s.classNames).toEqual(['inf2', 'a10g']);
  expect(s.share[0]).toEqual([0.8, 0.2]);
  expect(s.share[15]).toEqual([60 / 100, 40 / 100]);
  expect(s.readyReplicas[15]).toEqual([4, 3]);
  expect(s.latency[10]).toEqual([NaN, 1.4, NaN]);
  expect([s.modes[11], s.modes[12], s.modes[26]]).toEqual(['cost', 'capacity', 'cost']);
  // Demand as the reconciler derives it: on EKS the served signal is ALB RequestCount, which already counts the 10
  // rejected, so demand is 60 + 35 (served + rejected would count the rejections twice).
  expect(s.demandTokensPerSecond[10]).toBe(60 + 35);
  expect(s.rejectedShare[10]).toBeCloseTo(10 / 95, 12);
});

test('the outcome: time to capacity and back, rejected share, worst p95, mode changes; each difference to the prediction named', () => {
  const o = observedOutcome(window(EKS_CONFIG, 35), 10, 20, 60, { inf2: 2, a10g: 1.5 });
  expect(o).toEqual({
    secondsToCapacityMode: 120, secondsToCostMode: 360, rejectedShare: expect.closeTo(20 / 3485, 12), peakLatencyP95Seconds: 1.4, modeChanges: 2,
    // inf2: 4 ready for 35 minutes at $2/replica-hour; a10g: 1 ready, 3 from minute 13 to 19 (49 replica-minutes) at $1.5.
    costUsdByClass: { inf2: expect.closeTo((4 * 35 * 60 * 2) / 3600, 12), a10g: expect.closeTo((49 * 60 * 1.5) / 3600, 12) },
    costUsd: expect.closeTo((4 * 35 * 2 + 49 * 1.5) / 60, 12),
    unpricedPeriods: 0,
  });
  const predicted = {
    timeToFallbackSeconds: 300, timeToReturnSeconds: 600, rejectedShare: 0.001, latencyP95Seconds: 1.1, modeChangesPerEvent: 2,
    costUsd: 7, readyCostUsdByClass: { inf2: 4.5, a10g: 1.5 }, readyCostUsd: 6,
  };
  const rows = compareOutcomes(o, predicted);
  expect(rows.map((r) => [r.measure, r.observed, r.predicted])).toEqual([
    ['time to fallback, s', '120', '300'],
    ['time to return, s', '360', '600'],
    ['rejected share', expect.stringMatching(/%$/), '0.10%'],
    ['p95 latency, s', '1.40', '1.10'],
    ['mode changes', '2', '2.0'],
    ['cost inf2, USD', '4.67', '4.50'],
    ['cost a10g, USD', '1.23', '1.50'],
    ['cost total, USD', '5.89', '6.00'],
    ['predicted billed, USD', '-', '7.00'],
  ]);
  expect(rows[5].difference).toBe('+0.17 USD observed vs predicted');
  // Like with like: the total compares ready replica-time on both sides; the simulator's billed cost is its own row.
  expect(rows[7].difference).toMatch(/^-0\.11 USD observed vs predicted; both sides ready replicas x period/);
  expect(rows[8].difference).toMatch(/^the simulator's replicas alive \(pending, ready, draining\)/);
  expect(rows[0].difference).toMatch(/^-180 s observed vs predicted; observed is injection to capacity mode/);
  expect(compareOutcomes(o, undefined).every((r) => r.predicted === '-' && r.difference.startsWith('no prediction given (--predicted)'))).toBe(true);
});

test('a prediction read by observedOutcome: each row sets one quantity beside itself, not the simulator\'s own metric', () => {
  const o = observedOutcome(window(EKS_CONFIG, 35), 10, 20, 60, { inf2: 2, a10g: 1.5 });
  const predicted = {
    // The simulator's own metrics (deficit onset to 90% carried, per event): not what the rows compare.
    timeToFallbackSeconds: 300, timeToReturnSeconds: 600, rejectedShare: 0.001, latencyP95Seconds: 1.1, modeChangesPerEvent: 2, costUsd: 7,
    asObserved: { secondsToCapacityMode: 180, secondsToCostMode: Infinity, rejectedShare: 0.004, peakLatencyP95Seconds: 1.7, modeChanges: 1 },
    readyCostUsdByClass: { inf2: 4.5, a10g: 1.5 }, readyCostUsd: 6,
  };
  const rows = compareOutcomes(o, predicted);
  expect(rows.slice(0, 5).map((r) => [r.measure, r.observed, r.predicted, r.difference])).toEqual([
    ['time to fallback, s', '120', '180', '-60 s observed vs predicted; both injection to the first period in capacity mode'],
    ['time to return, s', '360', 'never', 'not comparable (one side has no value); both restore to the first period back in cost mode'],
    ['rejected share', expect.stringMatching(/%$/), '0.40%', expect.stringMatching(/; both each period's rejected share weighted by its demand/)],
    ['p95 latency, s', '1.40', '1.70', expect.stringMatching(/^-0\.30 s observed vs predicted; both the worst period's p95/)],
    ['mode changes', '2', '1.0', '+1.0 changes observed vs predicted; both over the window; more observed than predicted is flapping the simulator does not see'],
  ]);
});

test('cost: a class without a price or a period without a ready count is named, never guessed', () => {
  const s = window(EKS_CONFIG, 35);
  const gappy = { ...s, readyReplicas: s.readyReplicas.map((r, m) => (m === 3 ? [NaN, r[1]] : r)) };
  const o = observedOutcome(gappy, 10, 20, 60, { inf2: 2 });
  expect(o.costUsdByClass.inf2).toBeCloseTo((4 * 34 * 2) / 60, 12);
  expect(o.costUsdByClass.a10g).toBeNaN();
  expect(o.unpricedPeriods).toBe(1);
  const totalOnly = { timeToFallbackSeconds: 1, timeToReturnSeconds: 1, rejectedShare: 0, latencyP95Seconds: 1, modeChangesPerEvent: 1, costUsd: 5 };
  const rows = compareOutcomes(o, totalOnly);
  const cost = rows.filter((r) => r.measure.startsWith('cost'));
  expect(cost.map((r) => [r.measure, r.observed, r.predicted])).toEqual([
    ['cost inf2, USD', '4.53', '-'], ['cost a10g, USD', '-', '-'], ['cost total, USD', '-', '5.00'],
  ]);
  expect(cost[0].difference).toBe('not comparable: the prediction has only a total (a --predicted results.json)');
  expect(cost[1].difference).toMatch(/^not comparable: the serving record gives a class no single price/);
  expect(cost[2].difference).toMatch(/1 period\(s\) without a ready-replicas datapoint are not priced$/);
  // Only a billed total (a results.json): said not to be the same quantity.
  const billedOnly = compareOutcomes(observedOutcome(s, 10, 20, 60, { inf2: 2, a10g: 1.5 }), totalOnly).find((r) => r.measure === 'cost total, USD')!;
  expect(billedOnly.difference)
    .toMatch(/^\+0\.89 USD observed vs predicted; not like for like: observed is ready replicas x period, the results.json's costUsd every replica/);
});

test('a class whose target group emptied reads its gap from the HealthyTargets the reconciler published, as the reconciler does', () => {
  const batch = buildQueryBatch(signalPlan(EKS_CONFIG, 60), 60);
  const slots = 6;
  // inf2 lost every pod at minute 3: no HealthyHostCount from then on, the runs counted 0 healthy targets.
  const raw = (className: string | undefined, signal: string, m: number): number | undefined => {
    if (className === 'inf2' && signal === 'readyReplicas') return m < 3 ? 4 : undefined;
    if (className === 'inf2' && signal === 'readyReplicasSeen') return m <= 3 ? 4 : 0;
    return shortageWorld(className, signal, m);
  };
  const results = batch.queries.map((q, i) => {
    const e = batch.index[i];
    const points = Array.from({ length: slots }, (_, m) => [m, raw(e.className, e.signal, m)] as const).filter(([, v]) => v !== undefined);
    return { Id: q.Id, Timestamps: points.map(([m]) => new Date((1000 + m * 60) * 1000)), Values: points.map(([, v]) => v! / e.scale) };
  });
  const s = observedSeries(batch, windowsFromResults(results, batch, { start: 1000, periodSeconds: 60, slots }), slots);
  // Minute 3 had its pods at its start, none at its end: the lower, 0.
  expect(s.readyReplicas.map((r) => r[0])).toEqual([4, 4, 4, 0, 0, 0]);
});
