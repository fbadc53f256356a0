/**
 * The simulator's run of the game day's shortage on the deployed serving record: the observed demand replayed, the
 * class held at its observed ready replicas between injection and restore, the deployed reconciler's configuration.
 */
import { predictShortage, routedClassPrices, shortageScenario, type ShortageWindow } from '../../bin/game-day-prediction';
import * as observedModule from '../../lib/core/game-day/observed';
import { compareOutcomes, observedCost, observedOutcome, observedSeries } from '../../lib/core/game-day/observed';
import { interruptionHoldSeconds } from '../../lib/core/platform/control-loop';
import { resolvePolicyConfig } from '../../lib/core/policy/defaults';
import * as libraryPolicyModule from '../../lib/sim/library-policy';
import { type ScenarioInstance } from '../../lib/sim/model';
import { buildQueryBatch, windowsFromResults } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { servingRecordOf } from '../../lib/core/service/serving-record';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { EKS_CONFIG } from '../verify/account';
import { recordedTemplateBody, shortageWorld, shortageWorldRecord } from './window';

const SLOTS = 40;
const WINDOW: ShortageWindow = { routedClass: 'inf2', onsetSeconds: 600, restorationSeconds: 1200, durationSeconds: SLOTS * 60, periodSeconds: 60 };

function world(value = shortageWorld) {
  const batch = buildQueryBatch(signalPlan(EKS_CONFIG, 60), 60);
  const results = batch.queries.map((q) => {
    const e = batch.index.find((x) => x.id === q.Id)!;
    const points = Array.from({ length: SLOTS }, (_, m) => [m, value(e.className, e.signal, m)] as const).filter((p) => p[1] !== undefined);
    return { Id: q.Id, Timestamps: points.map(([m]) => new Date(m * 60_000)), Values: points.map(([, v]) => v! / e.scale) };
  });
  return observedSeries(batch, windowsFromResults(results, batch, { start: 0, periodSeconds: 60, slots: SLOTS }), SLOTS);
}

test('the record is read back from the template by service name', () => {
  expect(servingRecordOf(JSON.parse(recordedTemplateBody()), 'sd21').classes.map((c) => c.name)).toEqual(['inf2', 'a10g']);
  expect(() => servingRecordOf({ Resources: {} } as never, 'sd21')).toThrow(/records no serving description for service 'sd21'.*redeploy/);
  expect(() => servingRecordOf({ Metadata: { 'CdkCapacityAwareInference::Serving': { sd21: { version: 99 } } } }, 'sd21')).toThrow(/version 99/);
});

test('the scenario replays the observed demand and holds the class at its ready replicas at the injection', () => {
  const { scenario, assumptions } = shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), WINDOW);
  // 100 images/s before the injection (80 + 20 served), one image per request.
  expect(scenario.workload.meanRatePerSecond).toBeGreaterThan(95);
  expect(scenario.workload.rateProfile![0]).toEqual({ at: 0, multiplier: expect.closeTo(100 / scenario.workload.meanRatePerSecond, 6) });
  // The NodePool's limit: pods past it stay Pending, with no insufficient-capacity error (`AvailabilityStep.limit`).
  expect(scenario.availability)
    .toEqual({ inf2: [{ at: 0, instances: Infinity }, { at: 600, instances: 4, limit: true }, { at: 1200, instances: Infinity }] });
  expect(scenario.classes.map((c) => [c.name, c.initialReplicas])).toEqual([['inf2', 4], ['a10g', 1]]);
  expect(scenario.capacityEvents).toEqual([{ className: 'inf2', onset: 600, restoration: 1200 }]);
  expect(scenario.platform).toBe('eks');
  expect(assumptions.join('\n')).toMatch(/provisioning: 300 s/);
});

/**
 * The prediction of the shortage window from fresh inputs, simulated once for the file (three seeds of the simulator
 * are most of its time): the determinism test compares it with a second, independent prediction, and the cost test
 * reads it as it read its own prediction from the same inputs before.
 */
let shared: ReturnType<typeof predictShortage> | undefined;
const prediction = () => (shared ??= predictShortage(shortageWorldRecord(), EKS_CONFIG, world(), WINDOW));

test('the prediction is the library policy over three seeds, deterministic', () => {
  const a = prediction();
  const b = predictShortage(shortageWorldRecord(), EKS_CONFIG, world(), WINDOW);
  expect(a.outcome).toEqual(b.outcome);
  expect(a.outcome.rejectedShare).toBeGreaterThanOrEqual(0);
  expect(Number.isFinite(a.outcome.latencyP95Seconds)).toBe(true);
  expect(a.chart.classNames).toEqual(['inf2', 'a10g']);
  expect(a.assumptions.at(-1)).toMatch(/3 seeds/);
});

test('a capacity event the deployed reconciler still remembered at the injection is named: the prediction starts without it', () => {
  const observed = world();
  expect(observed.eventEntries).toHaveLength(SLOTS);
  const fresh = shortageScenario(shortageWorldRecord(), EKS_CONFIG, observed, WINDOW).assumptions.join('\n');
  expect(fresh).not.toContain('memory:');
  // Read from the reconciler's own CapacityEventEntries, as the window publishes it.
  const published = world((className, signal, m) => (signal === 'eventEntries' ? (m < 8 ? 2 : 0) : shortageWorld(className, signal, m)));
  expect([published.eventEntries![5], published.eventEntries![12]]).toEqual([2, 0]);
  // Entries published up to the period before the injection's (slot 10): the newest known one counts.
  const entries = observed.eventEntries!.map((_, m) => (m < 8 ? 2 : m < 10 ? NaN : 0));
  const remembered = shortageScenario(shortageWorldRecord(), EKS_CONFIG, { ...observed, eventEntries: entries }, WINDOW).assumptions.join('\n');
  expect(remembered).toContain('memory: the deployed reconciler still remembered a capacity event at the injection (2 entries, CapacityEventEntries)');
  expect(remembered).toContain('A game day has none when cost mode has lasted the deployed re-entry memory (policy.reentryMemory, 7200 s) '
    + 'since the last return with no capacity loss of the preferred class');
});

test('no demand in the window: nothing to replay, said so', () => {
  expect(() => shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(() => 0), WINDOW)).toThrow(/no demand/);
});

test('cost: the prediction\'s ready replicas priced like the observed window (observedCost), per routed class; its billed cost apart', () => {
  const p = prediction();
  const byClass = p.outcome.readyCostUsdByClass!;
  expect(Object.keys(byClass)).toEqual(['inf2', 'a10g']);
  expect(byClass.inf2 + byClass.a10g).toBeCloseTo(p.outcome.readyCostUsd!, 9);
  // Ready replica-time is part of the replica-time the simulator bills (pending and draining too).
  expect(p.outcome.readyCostUsd!).toBeLessThan(p.outcome.costUsd);
  // At least the held inf2 replicas, ready the whole window (4 x 40 minutes), at the recorded price.
  const price = shortageWorldRecord().classes[0].usdPerReplicaHour;
  expect(byClass.inf2).toBeGreaterThanOrEqual((4 * 40 * price) / 60 - 1e-9);
  // The first seed's chart priced by the observed side's function: the same concept and formula.
  const prices = Object.fromEntries(shortageWorldRecord().classes.map((c) => [c.name, c.usdPerReplicaHour]));
  expect(observedCost(p.chart, prices, 60).byClass.a10g).toBeGreaterThan(0);
});

test('prices per routed class come from the serving record; a variant whose pools are priced differently has none', () => {
  const record = shortageWorldRecord();
  expect(routedClassPrices(record, EKS_CONFIG)).toEqual({ inf2: record.classes[0].usdPerReplicaHour, a10g: record.classes[1].usdPerReplicaHour });
  const facts = (name: string) => ({ ...(EKS_CONFIG.facts as unknown as { targets: ReadonlyArray<{ class: object }> }).targets[0].class, name });
  const pooled: ReconcilerConfig = {
    ...EKS_CONFIG,
    facts: { kind: 'sagemaker', endpointName: 'e', endpointArn: 'arn:aws:sagemaker:us-east-1:1:endpoint/e', variants: [{ variantName: 'v', classes: [facts('inf2'), facts('a10g')] }] } as never,
  };
  expect(routedClassPrices(record, pooled).v).toBeNaN();
});

test('SageMaker: a variant is simulated as the endpoint runs it, one routed column over its pools, its scalable target pinned', () => {
  // One variant of two pools (inf2 first, a deployed maximum of 6), pinned at the 4 instances it had: the cloud still has
  // capacity, but neither its target tracking nor the Reconciler may move it (MinCapacity = MaxCapacity), where each
  // pool simulated as a variant of its own would have been a second routed class the Reconciler routes to.
  const record = { ...shortageWorldRecord(), platform: 'sagemaker' as const };
  const facts = (name: string) => ({ ...(EKS_CONFIG.facts as unknown as { targets: ReadonlyArray<{ class: object }> }).targets[0].class, name });
  const config: ReconcilerConfig = {
    ...EKS_CONFIG,
    facts: {
      kind: 'sagemaker', endpointName: 'e', endpointArn: 'arn:aws:sagemaker:us-east-1:1:endpoint/e',
      variants: [{ variantName: 'v', classes: [facts('inf2'), facts('a10g')], maxInstances: 6 }],
    } as never,
  };
  const slots = Array.from({ length: SLOTS }, () => 0);
  const observed = {
    classNames: ['v'], share: slots.map(() => [1]), readyReplicas: slots.map(() => [4]), latency: slots.map((): [number, number, number] => [0.5, 0.8, 0.9]),
    modes: slots.map(() => 'cost'), demandTokensPerSecond: slots.map(() => 80), rejectedShare: slots.map(() => 0),
  };
  const w = { ...WINDOW, routedClass: 'v' };
  const { scenario, assumptions } = shortageScenario(record, config, observed, w);
  expect(scenario.variants).toEqual([{ name: 'v', classes: ['inf2', 'a10g'], maxInstances: 6 }]);
  expect(scenario.scalingPins).toEqual([{ routedClass: 'v', from: 600, to: 1200, instances: 4 }]);
  expect(scenario.availability).toEqual({});
  // The observed count starts on the priority-1 pool, none on the other (its default would be sized on demand).
  expect(scenario.classes.map((c) => [c.name, c.initialReplicas])).toEqual([['inf2', 4], ['a10g', 0]]);
  // One capacity event, on the priority-1 class.
  expect(scenario.capacityEvents).toEqual([{ className: 'inf2', onset: 600, restoration: 1200 }]);
  expect(assumptions.join('\n')).toContain("shortage: v's scalable target pinned at 4 instance(s) from 600 s to 1200 s (its ready replicas observed "
    + 'at the injection; MinCapacity = MaxCapacity');
  expect(assumptions.join('\n')).toContain('variants: v [inf2, a10g] (pools in priority order, each variant\'s starting instances in its priority-1 '
    + 'pool), each scaled by the construct\'s default target tracking (variantScalingDefaults) up to its planned maximum: the serving record, '
    + 'written before stop 65, holds no variants');
  // A record that holds the variants as deployed: scaled by them (a target set on the construct, its maximum).
  const deployed = { ...record, variants: [{ name: 'v', classes: ['inf2', 'a10g'], minInstances: 1, maxInstances: 5, targetConcurrencyPerInstance: 3 }] };
  const asDeployed = shortageScenario(deployed, config, observed, w);
  expect(asDeployed.scenario.variants).toEqual([{ name: 'v', classes: ['inf2', 'a10g'], maxInstances: 5, targetConcurrencyPerInstance: 3 }]);
  expect(asDeployed.assumptions.join('\n')).toContain('each scaled as the serving record says it was deployed (its tracking target or per-pool policy, and its maximum');
  const perPool = { ...deployed, variants: [{ ...deployed.variants[0], poolTargets: [3, 2] }] };
  expect(shortageScenario(perPool, config, observed, w).scenario.variants).toEqual([{ name: 'v', classes: ['inf2', 'a10g'], maxInstances: 5, perPoolTargets: true }]);
  // The run routes the variant, as the Reconciler does, and prices it per route as the observed window is priced: a
  // variant whose pools are priced differently has no single price in either.
  const p = predictShortage(record, config, observed, w);
  expect(p.chart.classNames).toEqual(['v']);
  expect(Object.keys(p.outcome.readyCostUsdByClass!)).toEqual(['v']);
  expect(p.outcome.readyCostUsdByClass!.v).toBeNaN();
  // Held at 4 through the pin, whatever the demand.
  for (let m = 11; m < 20; m++) expect(p.chart.readyReplicas[m][0]).toBe(4);
  // Pools priced alike: the route's price, read as the observed window is.
  const alike = { ...record, classes: record.classes.map((c) => ({ ...c, usdPerReplicaHour: record.classes[0].usdPerReplicaHour })) };
  const q = predictShortage(alike, config, observed, w);
  // At least the 4 pinned instances over the pin's 10 minutes, at that price.
  expect(q.outcome.readyCostUsdByClass!.v).toBeGreaterThanOrEqual(4 * (10 / 60) * record.classes[0].usdPerReplicaHour);
});

test('a reclaim is predicted as the drain runs it: the budget\'s allowance at the injection, the rest at terminationGracePeriod', () => {
  const perInstance = shortageWorldRecord().classes[0].replicasPerInstance;
  const running = Math.ceil(4 / perInstance);
  const reclaim = { instances: 1, evictedPods: 3, allowedAtOnce: 1, terminationGracePeriodSeconds: 300 };
  const { scenario, assumptions } = shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), { ...WINDOW, reclaim });
  // One pod at the injection (maxUnavailable 1: its replacement cannot become Ready under the cap), two when the grace ends.
  expect(scenario.interruptions).toEqual([
    { className: 'inf2', at: 600, replicas: 1, noticeSeconds: 0 }, { className: 'inf2', at: 900, replicas: 2, noticeSeconds: 0 },
  ]);
  expect(scenario.availability).toEqual({
    inf2: [{ at: 0, instances: Infinity }, { at: 600, instances: running - 1, limit: true }, { at: 1200, instances: Infinity }],
  });
  expect(assumptions.join('\n')).toMatch(/1 of its 3 pod\(s\) on them evicted then \(without notice\), as the PodDisruptionBudget allows; the other 2 at 900 s/);
  // A grace that ends after the restore: the rest stay (said), only the allowance leaves.
  const longGrace = { ...reclaim, terminationGracePeriodSeconds: 2580 };
  const long = shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), { ...WINDOW, reclaim: longGrace });
  expect(long.scenario.interruptions).toEqual([{ className: 'inf2', at: 600, replicas: 1, noticeSeconds: 0 }]);
  expect(long.assumptions.join('\n')).toMatch(/the other 2 stay until the restore \(Karpenter deletes them at the NodeClaims' terminationGracePeriod \(2580 s\) less/);
  // No budget (or no grace read): every pod at the injection.
  const open = shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), { ...WINDOW, reclaim: { ...reclaim, allowedAtOnce: Infinity } });
  expect(open.scenario.interruptions).toEqual([{ className: 'inf2', at: 600, replicas: 3, noticeSeconds: 0 }]);
  // Without a reclaim there is no interruption.
  expect(shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), WINDOW).scenario.interruptions).toEqual([]);
});

test('a reclaim\'s held pods go when Karpenter deletes them: the NodeClaims\' grace less the pods\' own (interruptionHoldSeconds)', () => {
  // terminationGracePeriod 300 s, the pods' own 33 s: Karpenter deletes them 267 s after the NodeClaims' deletion
  // (kubernetes-sigs/karpenter@v1.14.1 terminator.go:169-178), not at 300 s.
  const reclaim = { instances: 1, evictedPods: 3, allowedAtOnce: 1, terminationGracePeriodSeconds: 300, podTerminationGracePeriodSeconds: 33 };
  const { scenario, assumptions } = shortageScenario(shortageWorldRecord(), EKS_CONFIG, world(), { ...WINDOW, reclaim });
  expect(interruptionHoldSeconds(33, 300)).toBe(267);
  expect(scenario.interruptions).toEqual([
    { className: 'inf2', at: 600, replicas: 1, noticeSeconds: 0 }, { className: 'inf2', at: 600 + 267, replicas: 2, noticeSeconds: 0 },
  ]);
  expect(assumptions.join('\n')).toMatch(/the other 2 at 867 s \(Karpenter deletes them at the NodeClaims' terminationGracePeriod \(300 s\) less their own 33 s\)/);
});

test('each class\'s autoscaling floor is the recorded plan\'s steady replicas, as the construct deploys it, and the report says so', () => {
  const record = shortageWorldRecord();
  // The EKS service's plan runs each class at its own minReplicas.
  const planned = Object.fromEntries(record.plan.classes.map((c) => [c.name, c.minReplicas]));
  expect(record.plan.classes.map((c) => c.steadyReplicas)).toEqual(record.plan.classes.map((c) => c.minReplicas));
  // The preferred class's plan runs it at min = max (5 here), not the simulator's default of 1.
  expect(planned.inf2).toBeGreaterThan(1);
  const { scenario, assumptions } = shortageScenario(record, EKS_CONFIG, world(), WINDOW);
  expect(scenario.classes.map((c) => [c.name, c.minReplicas])).toEqual([['inf2', planned.inf2], ['a10g', planned.a10g]]);
  expect(assumptions.join('\n')).toContain(`minimum from the recorded plan's steadyReplicas (inf2 ${planned.inf2}, a10g ${planned.a10g};`);
  expect(assumptions.join('\n')).toContain('an EKS classOptions.minReplicas set on the construct is not recorded');
});

test('a SageMaker variant\'s recorded minimum (scaling.minInstances) is the floor of its priority-1 class', () => {
  // What planAsDeployed records for a variant with scaling.minInstances 3 on a10g (test/sagemaker: its steady fleet).
  const base = shortageWorldRecord();
  const record = { ...base, plan: { ...base.plan, classes: base.plan.classes.map((c) => (c.name === 'a10g' ? { ...c, steadyReplicas: 3, steadyInstances: 3 } : c)) } };
  expect(base.plan.classes.find((c) => c.name === 'a10g')!.minReplicas).not.toBe(3);
  const { scenario, assumptions } = shortageScenario(record, EKS_CONFIG, world(), WINDOW);
  expect(scenario.classes.find((c) => c.name === 'a10g')!.minReplicas).toBe(3);
  expect(assumptions.join('\n')).toContain(', a10g 3;');
});

test('each class starts in the replica-ready time its envelope declares; the others in the assumed 300 s, and the report says which', () => {
  const base = shortageWorldRecord();
  expect(shortageScenario(base, EKS_CONFIG, world(), WINDOW).assumptions)
    .toContain('provisioning: 300 s from launch to ready for every class (no replica-ready time declared: envelope.replicaReadyTimeP95Seconds)');
  const record = { ...base, classes: base.classes.map((c) => (c.name === 'inf2' ? { ...c, envelope: { ...c.envelope, replicaReadyTimeP95Seconds: 420 } } : c)) };
  const { scenario, assumptions } = shortageScenario(record, EKS_CONFIG, world(), WINDOW);
  expect(scenario.classes.map((c) => [c.name, c.provisioningSeconds])).toEqual([['inf2', 420], ['a10g', 300]]);
  expect(assumptions).toContain('provisioning: inf2 420 s from launch to ready (the p95 replica-ready time its envelope declares, every replica); '
    + '300 s from launch to ready for a10g (no replica-ready time declared: envelope.replicaReadyTimeP95Seconds)');
});

test('the simulated reconciler runs the deployed configuration: its policy as its function resolves it, its metric delay', () => {
  const spy = jest.spyOn(libraryPolicyModule, 'libraryPolicy');
  try {
    // A deployment that set its metric delay (180 s) and its headroom, and left the provisioning grace at the default.
    const deployed: typeof EKS_CONFIG = { ...EKS_CONFIG, policy: { headroom: 0.3, latencySloP95Ms: 2500 }, metricDelaySeconds: 180 };
    const p = predictShortage(shortageWorldRecord(), deployed, world(), WINDOW);
    // No fallback graces deployed (a Reconciler from before them, or classes that declare no ready time): none simulated.
    expect(spy).toHaveBeenCalledWith(resolvePolicyConfig(deployed.policy), { metricDelaySeconds: 180, fallbackGraceSeconds: {}, sensitive: false });
    // What the simulated reconciler then runs with: the deployed 300 s grace, not the simulator's own choice for the
    // preferred class (its 300 s start + the 120 s delay, 420 s), and the deployed delay.
    const { scenario } = shortageScenario(shortageWorldRecord(), deployed, world(), WINDOW);
    const factory = spy.mock.results[0].value as ReturnType<typeof libraryPolicyModule.libraryPolicy>;
    const run = factory({ scenario: scenario as ScenarioInstance, trace: undefined as never }) as unknown as { config: typeof EKS_CONFIG };
    expect(run.config.policy).toMatchObject({ provisioningGraceSeconds: 300, headroom: 0.3, latencySloP95Ms: 2500, periodSeconds: 60 });
    expect(run.config.metricDelaySeconds).toBe(180);
    expect(run.config).not.toHaveProperty('fallbackGraceSeconds');
    expect(p.assumptions.at(-1)).toMatch(/^policy: the deployed reconciler's configuration, resolved as its Lambda resolves it \(resolvePolicy/);
    expect(p.assumptions.at(-1)).toContain('"provisioningGraceSeconds":300,');
    expect(p.assumptions.at(-1)).toMatch(/fallback graces \{\}; placement not sensitive; metric delay 180 s; 3 seeds, means$/);
    // Deployed graces and placement are simulated as deployed, the graces by the simulator's route names (here the classes).
    const sensitive = { ...deployed, fallbackGraceSeconds: { a10g: 900 }, placement: { sensitive: true } };
    const q = predictShortage(shortageWorldRecord(), sensitive, world(), WINDOW);
    expect(spy).toHaveBeenLastCalledWith(resolvePolicyConfig(deployed.policy),
      { metricDelaySeconds: 180, fallbackGraceSeconds: { a10g: 900 }, sensitive: true });
    const sensitiveRun = (spy.mock.results.at(-1)!.value as ReturnType<typeof libraryPolicyModule.libraryPolicy>)(
      { scenario: scenario as ScenarioInstance, trace: undefined as never }) as unknown as { config: typeof EKS_CONFIG };
    expect(sensitiveRun.config.placement).toEqual({ sensitive: true });
    expect(sensitiveRun.config.fallbackGraceSeconds).toEqual({ a10g: 900 });
    expect(q.assumptions.at(-1)).toContain('placement sensitive;');
  } finally {
    spy.mockRestore();
  }
});

test('a deployed period the simulator cannot run is refused, not run at its 60 s', () => {
  const slow: typeof EKS_CONFIG = { ...EKS_CONFIG, policy: { periodSeconds: 120 } };
  expect(() => predictShortage(shortageWorldRecord(), slow, world(), WINDOW))
    .toThrow('the deployed reconciler runs every 120 s (policy.period); the simulator runs it every 60 s only, so its run would not be the deployed control loop');
});

test('the rows compare like with like: each seed\'s run read by the observed side\'s function (observedOutcome), means over seeds', () => {
  const spy = jest.spyOn(observedModule, 'observedOutcome');
  try {
    const p = predictShortage(shortageWorldRecord(), EKS_CONFIG, world(), WINDOW);
    // One read per seed, in the observed window's slots (injection at minute 10, restore at 20), the first seed's the chart shown.
    expect(spy.mock.calls.map((c) => c.slice(1, 4))).toEqual([[10, 20, 60], [10, 20, 60], [10, 20, 60]]);
    expect(spy.mock.calls[0][0]).toBe(p.chart);
    const reads = spy.mock.results.map((r) => r.value as ReturnType<typeof observedOutcome>);
    const mean = (k: 'modeChanges' | 'rejectedShare' | 'peakLatencyP95Seconds') => reads.reduce((a, r) => a + r[k], 0) / reads.length;
    const a = p.outcome.asObserved!;
    expect(a.modeChanges).toBeCloseTo(mean('modeChanges'), 12);
    expect(a.rejectedShare).toBeCloseTo(mean('rejectedShare'), 12);
    expect(a.peakLatencyP95Seconds).toBeCloseTo(mean('peakLatencyP95Seconds'), 12);
    // A seed that never entered capacity mode (observedOutcome's NaN) makes the mean "never".
    const times = reads.map((r) => r.secondsToCapacityMode);
    expect(a.secondsToCapacityMode).toBe(times.some(Number.isNaN) ? Infinity : times.reduce((x, y) => x + y, 0) / times.length);
    const rows = compareOutcomes(observedOutcome(world(), 10, 20, 60), p.outcome);
    expect(rows[0].measure).toBe('time to fallback, s');
    expect(rows[0].difference).toMatch(/both injection to the first period in capacity mode$/);
    expect(rows[4]).toMatchObject({ measure: 'mode changes', predicted: a.modeChanges.toFixed(1) });
  } finally {
    spy.mockRestore();
  }
});
