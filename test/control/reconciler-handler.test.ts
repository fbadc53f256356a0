import { DescribeScalableTargetsCommand } from '@aws-sdk/client-application-auto-scaling';
import { GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  DescribeListenersCommand, DescribeRulesCommand, DescribeTargetHealthCommand, ModifyListenerCommand, ModifyRuleCommand, type TargetHealthStateEnum,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeEndpointCommand, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { scalableTargetPin } from '../../lib/core/game-day/injection';
import { variantResourceId } from '../../lib/core/platform/sagemaker-scalable-target';
import { Dim } from '../../lib/core/metrics/contract';
import { DEFAULT_POLICY_CONFIG, policyWindowPeriods } from '../../lib/core/policy/defaults';
import { type PolicyState } from '../../lib/core/policy/types';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { type RunMemory } from '../../lib/core/reconciler/memory';
import { routingTarget } from '../../lib/core/reconciler/targets';
import { handler } from '../../lambda/reconciler';
import { reconcile } from '../../lambda/reconciler/reconcile';
import { landed } from '../../lambda/reconciler/targets/sagemaker';
import {
  aas, clients, cls, cw, elb, endpoint, fill, healthyHistory, NOW_MS, perMinute, resetWorld, scalableTargets, scalableTargetsAnswer, serveMetrics, sm,
  SLOTS,
  SM as ENDPOINT_CONFIG,
  START, targetsHealthy,
} from './reconciler-world';

// GIVEN a SageMaker endpoint with a preferred (inf2, 300 tok/s) and a fallback (g5, 250 tok/s) variant.
const SM: ReconcilerConfig = { ...ENDPOINT_CONFIG, clusterName: 'prod' };

/** Preferred variant healthy at 3 instances, serving `tokens` tokens/s. */
const busy = (tokens: number) => ({ ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(tokens)) });
const fastRetry = { sleep: jest.fn(async () => undefined), random: () => 1 };

function run(config: ReconcilerConfig = SM, memory?: RunMemory) {
  const lines: Array<Record<string, unknown>> = [];
  // The memory a run hands the next one is the subject of its own tests (reconciler-faults.test.ts).
  return reconcile(config, clients, { nowMs: NOW_MS, log: (l) => lines.push(l), retry: fastRetry, ...(memory ? { memory } : {}) })
    .then(({ memory: _, ...result }) => ({ result, lines }));
}
const audit = (lines: Array<Record<string, unknown>>) => lines.find((l) => l.audit === 'routing-decision') as Record<string, unknown>;

/**
 * The memory a run of the period before `nowMs` in the same execution environment leaves when nothing changed since:
 * the state the metrics rebuild. A run without memory is a cold start, which holds its period's ramp step
 * (`stepAssumed`, lib/core/reconciler/observe.ts); these runs are warm ones. Found by a run that writes nothing.
 */
async function warm(nowMs = NOW_MS): Promise<RunMemory> {
  const lines: Array<Record<string, unknown>> = [];
  await reconcile(SM, clients, { nowMs, log: (l) => lines.push(l), retry: fastRetry });
  const { lastStepAt: _, ...state } = audit(lines).previous as PolicyState;
  return { period: Math.floor(nowMs / 60_000) * 60 - 60, state, floors: null };
}

/** A run at `nowMs` handed `memory`, keeping the memory it hands on (the runs of one execution environment). */
async function runRemembering(nowMs: number, memory?: RunMemory) {
  const lines: Array<Record<string, unknown>> = [];
  const { memory: next } = await reconcile(SM, clients, { nowMs, log: (l) => lines.push(l), retry: fastRetry, ...(memory ? { memory } : {}) });
  return { lines, memory: next };
}

/** DescribeScalableTargets denied (a permissions boundary): the read fails on every attempt. */
function denyScalableTargetsRead(): void {
  aas.on(DescribeScalableTargetsCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }));
}

beforeEach(() => {
  resetWorld();
  fastRetry.sleep.mockClear();
});

describe('reconciler run, SageMaker endpoint', () => {
  test('steady state: cost plan already in force, one GetMetricData batch, no write', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: {
        preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(490)), latencyP95Ms: fill(400_000) },
        fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    });
    const { result, lines } = await run();
    expect(result).toEqual({ action: 'unchanged', weights: { preferred: 98, fallback: 2 } });
    expect(cw.commandCalls(GetMetricDataCommand)).toHaveLength(1);
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(audit(lines)).toMatchObject({ mode: 'cost', reason: { code: 'cost-plan' }, apply: { action: 'unchanged' } });
    // No HealthyTargets, as the kind declares (the dashboard draws the metric only where it does).
    expect(lines.filter((l) => l.HealthyTargets !== undefined)).toEqual([]);
    expect(routingTarget(SM.facts).publishesHealthyTargets).toBe(false);
    // The GetMetricData window: the policy's window (two hours: its re-entry memory, where a flapping class shows) of
    // one-minute periods for the signals ending at 11:58, the own mode history up to now.
    const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
    expect(input.StartTime).toEqual(new Date((START + 10 * 60 - policyWindowPeriods(DEFAULT_POLICY_CONFIG) * 60) * 1000));
    expect(input.EndTime).toEqual(new Date(NOW_MS - 30_000 + 60_000));
  });

  /** Cost mode, 98/2 in force, 1200 tokens/s: the preferred variant wants 6 instances and has 3 (the shortage test). */
  function inShortage() {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 6, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: { preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(1200)) }, fallback: healthyHistory(1) },
    });
  }

  test('shortage: a deficit autoscaling did not fix within the grace period switches to capacity mode and writes weights once', async () => {
    inShortage();
    const { result, lines } = await run();
    // 1200 tokens/s against 900 + 250 ready: the preferred variant is filled to its 900, the fallback to its 250, and the
    // 50 tokens/s deficit goes to the fallback (it can grow; the preferred is not counted on in capacity mode): 900 : 300.
    // Its replica floor: 300 tokens/s at its scaling target 250 / 1.2 = 208.3 per instance is 2 instances, above its
    // desired 1. The weights go first: the API writes weights or one capacity per call, and the endpoint is Updating after.
    expect(result).toEqual({ action: 'applied', weights: { preferred: 75, fallback: 25 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map((c) => c.args[0].input)).toEqual([{
      EndpointName: 'llm',
      DesiredWeightsAndCapacities: [{ VariantName: 'preferred', DesiredWeight: 75 }, { VariantName: 'fallback', DesiredWeight: 25 }],
    }]);
    expect(lines.find((l) => l.CapacityClass === 'fallback' && 'RouteWeight' in l)).toMatchObject({ ReplicaFloor: 2 });
    // The preferred variant shows no shortage of its own yet (desired > ready, but not beyond the grace period), so it
    // keeps asking for what the demand needs: 1200 / (300 / 1.2) = 5 instances (below its desired 6: nothing to raise).
    expect(lines.find((l) => l.CapacityClass === 'preferred' && 'RouteWeight' in l)).toMatchObject({ ReplicaFloor: 5 });
    expect(audit(lines)).toMatchObject({ replicaFloors: { preferred: 5, fallback: 2 } });
    expect(audit(lines)).toMatchObject({ mode: 'capacity', reason: { code: 'enter-capacity', triggers: ['sustained-deficit'] } });
    const emfMode = lines.find((l) => 'PolicyMode' in l)!;
    // 25% of requests, and 250 x 25 / (300 x 75 + 250 x 25) = 21.7% of routed token capacity, off the preferred variant.
    expect(emfMode).toMatchObject({ PolicyMode: 1, PolicyRamping: 0, Service: 'chat', WeightChanges: 1, WritesDeferred: 0, FallbackShareRequests: 25 });
    expect(emfMode.FallbackShareTokens).toBeCloseTo(21.74, 1);
    expect(lines.find((l) => l.CapacityClass === 'preferred')).toMatchObject({ RouteWeight: 75, ReadyReplicas: 3, DesiredReplicas: 6 });
    // Ready instances per pool, named by the pool's capacity class (cost per class needs them).
    expect(lines.find((l) => l.CapacityClass === 'inf2')).toMatchObject({ ReadyReplicas: 3 });
    const decisions = lines.find((l) => l.Reason)!;
    expect(decisions).toMatchObject({ Reason: 'enter-capacity', Decisions: 1 });
    // The [Service] rollup counts every run (the heartbeat alarm watches it).
    expect((decisions._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][] }> }).CloudWatchMetrics[0].Dimensions).toEqual([['Service', 'Reason'], ['Service']]);
  });

  test.each(['plain', 'pools'] as const)(
    'a one-class variant (%s): its class\'s ready instances are the variant\'s CurrentInstanceCount, with or without InstancePools',
    async (shape) => {
      // ENDPOINT's variants have one class each: rendered with a plain InstanceType, DescribeEndpoint lists no pools for
      // them ('plain'); an endpoint configuration with one-entry pool lists ('pools') reads the same.
      sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
        { name: 'preferred', weight: 98, ready: 3, desired: 6, type: 'ml.inf2.xlarge' },
        { name: 'fallback', weight: 2, ready: 2, desired: 2, type: 'ml.g5.xlarge' },
      ], shape));
      serveMetrics(SM, {
        mode: fill(0),
        classes: { preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(1200)) }, fallback: healthyHistory(2) },
      });
      const { lines } = await run();
      const ready = (name: string) => lines.filter((l) => l.CapacityClass === name).map((l) => [l.ReadyReplicas, l.DesiredReplicas]);
      expect(ready('inf2')).toEqual([[3, undefined]]);
      expect(ready('g5')).toEqual([[2, undefined]]);
      expect(lines.find((l) => l.CapacityClass === 'preferred' && 'RouteWeight' in l)).toMatchObject({ ReadyReplicas: 3, DesiredReplicas: 6 });
    },
  );

  /**
   * The run after the shortage test's entry: capacity mode, weights 75/25 in force, 1200 tokens/s demand (both variants
   * hold weight, so both report what they serve: 950 + 250), the fallback's floor 2; `fallbackDesired` as described; the
   * preferred variant at 3 ready of `preferredDesired` (6: short; 3: no shortage of its own, so its floor 5 applies).
   */
  function inCapacityModeWithFallbackDesired(fallbackDesired: number, preferredDesired = 6) {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 75, ready: 3, desired: preferredDesired, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 25, ready: 1, desired: fallbackDesired, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(1),
      classes: {
        preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(950)) },
        fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(250)) },
      },
    });
  }

  test('the next run, weights in force: the fallback\'s desired instance count is raised to its replica floor, alone', async () => {
    inCapacityModeWithFallbackDesired(1);
    const { result, lines } = await run();
    expect(result).toEqual({ action: 'applied', weights: { preferred: 75, fallback: 25 }, detail: 'desired instances of fallback raised from 1 to its replica floor 2' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map((c) => c.args[0].input)).toEqual([{
      EndpointName: 'llm', DesiredWeightsAndCapacities: [{ VariantName: 'fallback', DesiredInstanceCount: 2 }],
    }]);
    // A capacity write is not a weight change.
    expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ PolicyMode: 1, WeightChanges: 0 });
  });

  test('a floor at or below the desired count writes nothing: counts are only ever raised', async () => {
    inCapacityModeWithFallbackDesired(3);
    const { result, lines } = await run();
    // The decision holds capacity mode with the same floor of 2 (so the test is not vacuous), but 3 are already desired.
    expect(audit(lines)).toMatchObject({ mode: 'capacity', replicaFloors: { fallback: 2 } });
    expect(result).toEqual({ action: 'unchanged', weights: { preferred: 75, fallback: 25 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('reads each variant\'s live scaling bounds: DescribeScalableTargets, namespace sagemaker, the variant dimension and resource ids', async () => {
    inCapacityModeWithFallbackDesired(1);
    await run();
    expect(aas.commandCalls(DescribeScalableTargetsCommand).map((c) => c.args[0].input)).toEqual([{
      ServiceNamespace: 'sagemaker',
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      ResourceIds: ['endpoint/llm/variant/preferred', 'endpoint/llm/variant/fallback'],
    }]);
  });

  test('a game-day pin holds: a variant pinned at its count (MinCapacity = MaxCapacity) is not raised to its floor', async () => {
    inCapacityModeWithFallbackDesired(1);
    // The pin the game day registers (lib/core/game-day/injection.ts), at the variant's current count of 1.
    const pin = scalableTargetPin(variantResourceId('llm', 'fallback'), { minCapacity: 1, maxCapacity: 10 }, 1).after;
    scalableTargets({ fallback: { min: pin.minCapacity, max: pin.maxCapacity } });
    const { result, lines } = await run();
    // Without the pin the same run floors the fallback at 2 (the first test). The policy plans each variant within its
    // live MaxCapacity, so the pinned fallback gets no floor above its count: nothing to write.
    expect(audit(lines)).toMatchObject({ mode: 'capacity', replicaFloors: { fallback: 0 } });
    expect(result).toEqual({ action: 'unchanged', weights: { preferred: 75, fallback: 25 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('the preferred variant pinned by the game day is not raised while it shows no shortage of its own', async () => {
    // Capacity mode, 1200 tokens/s, the preferred variant at 3 of 3 instances: the pin makes desired = ready, so it shows
    // no shortage of its own and keeps asking for what the demand needs (1200 / (300 / 1.2) = 5 instances). Without the
    // pin's bounds the reconciler raises it to 5, past the pin (docs/reconciler.md, the preferred variant's floor).
    // The preferred variant at 3 of 3 instances (its floor 5), the fallback at 3 desired (above its floor 2).
    inCapacityModeWithFallbackDesired(3, 3);
    const unpinned = await run();
    expect(unpinned.result).toMatchObject({ action: 'applied', detail: 'desired instances of preferred raised from 3 to its replica floor 5' });
    sm.resetHistory();
    const pin = scalableTargetPin(variantResourceId('llm', 'preferred'), { minCapacity: 1, maxCapacity: 10 }, 3).after;
    scalableTargets({ preferred: { min: pin.minCapacity, max: pin.maxCapacity } });
    const pinned = await run();
    // Its ask is planned within the pin: its count, 3.
    expect(audit(pinned.lines)).toMatchObject({ mode: 'capacity', replicaFloors: { preferred: 3 } });
    expect(pinned.result).toMatchObject({ action: 'unchanged' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('a MaxCapacity lowered at runtime caps the raise at it', async () => {
    // The preferred variant at 3 of 3 instances (its floor 5), the fallback at 3 desired (above its floor 2).
    inCapacityModeWithFallbackDesired(3, 3);
    // The facts allow 10; the operator lowered the preferred variant's maximum to 4 after the deploy: the policy plans it
    // within 4, and 4 is written. (Floors in force from before the change are capped by the write: reconciler-step.test.ts.)
    scalableTargets({ preferred: { min: 1, max: 4 } });
    expect((await run()).result).toMatchObject({ action: 'applied', detail: 'desired instances of preferred raised from 3 to its replica floor 4' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand).map((c) => c.args[0].input)).toEqual([{
      EndpointName: 'llm', DesiredWeightsAndCapacities: [{ VariantName: 'preferred', DesiredInstanceCount: 4 }],
    }]);
  });

  test('fail safe: a variant without a scalable target gets no capacity write (nothing would scale it back in); weights still are', async () => {
    inCapacityModeWithFallbackDesired(1);
    scalableTargets({ fallback: null });
    const { result, lines } = await run();
    // Planned at its desired count, 1: unable to grow, so no floor (2 with a scalable target, the first test).
    expect(audit(lines)).toMatchObject({ mode: 'capacity', replicaFloors: { fallback: 0 } });
    expect(result).toMatchObject({ action: 'unchanged' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // The preferred variant at 3 of 3 without a scalable target: its ask (5 with one, the pin test) is planned at its
    // desired count, 3, not below what it has.
    resetWorld();
    inCapacityModeWithFallbackDesired(3, 3);
    scalableTargets({ preferred: null });
    const unbounded = await run();
    expect(audit(unbounded.lines)).toMatchObject({ mode: 'capacity', replicaFloors: { preferred: 3 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // Weights do not depend on it: the shortage entry (a weights write) goes through with no scalable target at all.
    resetWorld();
    scalableTargets({ preferred: null, fallback: null });
    inShortage();
    expect((await run()).result).toEqual({ action: 'applied', weights: { preferred: 75, fallback: 25 } });
  });

  test('DescribeScalableTargets failing writes no capacity, but the weights still move (the fallback does not wait on it)', async () => {
    inCapacityModeWithFallbackDesired(1);
    denyScalableTargetsRead();
    const held = await run();
    expect(held.result).toMatchObject({ action: 'unchanged' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // The audit line says why, so a lasting denial (a permissions boundary) is not silent.
    expect(audit(held.lines)).toMatchObject({
      apply: { action: 'unchanged', detail: 'no capacity write this run: DescribeScalableTargets failed (AccessDeniedException: denied)' },
    });
    // The decision is the one a good read gives (the first test: a floor of 2): unknown bounds are planned at the facts'
    // maxima, not as no room, so one failed read moves no weight.
    expect(audit(held.lines)).toMatchObject({ mode: 'capacity', replicaFloors: { fallback: 2 } });
    resetWorld();
    denyScalableTargetsRead();
    inShortage();
    const moved = await run();
    expect(moved.result).toMatchObject({ action: 'applied', weights: { preferred: 75, fallback: 25 } });
    expect(audit(moved.lines)).toMatchObject({ apply: { action: 'applied', detail: expect.stringContaining('DescribeScalableTargets failed') } });
    // Both runs succeed, so each counts a DegradedReads datapoint for the alarm that sees a lasting denial.
    for (const lines of [held.lines, moved.lines]) expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ DegradedReads: 1 });
  });

  test('a run whose reads all answer publishes DegradedReads 0', async () => {
    inShortage();
    const { lines } = await run();
    expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ DegradedReads: 0 });
  });

  test('a failed DescribeScalableTargets plans within the bounds an earlier run read: a pin stays in the plan', async () => {
    inCapacityModeWithFallbackDesired(1);
    scalableTargets({ fallback: { min: 1, max: 1 } });
    const pinned = await runRemembering(NOW_MS);
    expect(pinned.memory?.boundsRead).toEqual({
      at: NOW_MS / 1000 - ((NOW_MS / 1000) % 60), bounds: { preferred: { min: 1, max: 10 }, fallback: { min: 1, max: 1 } },
    });
    // The next run's read fails. Planned at the facts' maxima, the pinned fallback would get a floor of 2 (the failed
    // read test above); planned within the bounds the earlier run read, none. No capacity write either way.
    aas.reset();
    denyScalableTargetsRead();
    const next = await runRemembering(NOW_MS + 60_000, pinned.memory);
    expect(audit(next.lines)).toMatchObject({
      mode: 'capacity', replicaFloors: { fallback: 0 },
      apply: { detail: expect.stringContaining(`planned within the scaling bounds read at ${new Date(pinned.memory!.boundsRead!.at * 1000).toISOString()}`) },
    });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // Carried on while reads keep failing.
    expect(next.memory?.boundsRead).toEqual(pinned.memory?.boundsRead);
    // A cold start has no memory: the facts' maxima, as in the failed read test.
    const cold = await runRemembering(NOW_MS + 60_000);
    expect(audit(cold.lines)).toMatchObject({ replicaFloors: { fallback: 2 } });
  });

  test('remembered bounds only plan: a failed read writes no capacity even where they would allow it', async () => {
    inCapacityModeWithFallbackDesired(2);
    const first = await runRemembering(NOW_MS);
    expect(first.memory?.boundsRead?.bounds).toEqual({ preferred: { min: 1, max: 10 }, fallback: { min: 1, max: 10 } });
    aas.reset();
    sm.reset();
    // The fallback at 1 desired, its floor 2 within the remembered maximum of 10: a good read would raise it.
    inCapacityModeWithFallbackDesired(1);
    denyScalableTargetsRead();
    const next = await runRemembering(NOW_MS + 60_000, first.memory);
    expect(audit(next.lines)).toMatchObject({ replicaFloors: { fallback: 2 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('a good read after a remembered pin plans with the fresh bounds and remembers them', async () => {
    inCapacityModeWithFallbackDesired(1);
    scalableTargets({ fallback: { min: 1, max: 1 } });
    const pinned = await runRemembering(NOW_MS);
    aas.reset();
    scalableTargets();
    const next = await runRemembering(NOW_MS + 60_000, pinned.memory);
    expect(audit(next.lines)).toMatchObject({ replicaFloors: { fallback: 2 } });
    expect(next.memory?.boundsRead?.bounds).toEqual({ preferred: { min: 1, max: 10 }, fallback: { min: 1, max: 10 } });
    expect(next.memory?.boundsRead?.at).toBeGreaterThan(pinned.memory!.boundsRead!.at);
  });

  test('DescribeScalableTargets throttled once is retried, and the capacity write goes through', async () => {
    inCapacityModeWithFallbackDesired(1);
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    aas.on(DescribeScalableTargetsCommand).rejectsOnce(throttled).callsFake(scalableTargetsAnswer());
    const { result, lines } = await run();
    expect(aas.commandCalls(DescribeScalableTargetsCommand)).toHaveLength(2);
    expect(result).toMatchObject({ action: 'applied' });
    expect(audit(lines)).toMatchObject({ apply: { detail: expect.stringContaining('raised from 1') } });
  });

  test('recovery: no return before the stabilization window, then a bounded ramp back', async () => {
    const capacityWeights = [
      { name: 'preferred', weight: 78, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 22, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ];
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', capacityWeights));
    // Preferred was short (desired 6 > ready 3) until 5 minutes before the newest signal period.
    const desired = fill(3).map((v, i) => (i < 5 ? 6 : v));
    serveMetrics(SM, {
      mode: fill(1),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: desired, servedTokensPerSecond: fill(perMinute(500)) },
        fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(100)) },
      },
    });
    const early = await run();
    // Still capacity mode; without a deficit the plan is the same in both modes (the preferred variant has room).
    expect(audit(early.lines)).toMatchObject({ mode: 'capacity', reason: { code: 'stabilizing' } });
    expect(early.result).toEqual({ action: 'applied', weights: { preferred: 98, fallback: 2 } });
    sm.reset();
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', capacityWeights));

    // Healthy for the whole window: return, moving at most 10 points.
    cw.reset();
    serveMetrics(SM, {
      mode: fill(1),
      classes: {
        preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(500)) },
        fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(100)) },
      },
    });
    const back = await run(SM, await warm());
    expect(back.result).toEqual({ action: 'applied', weights: { preferred: 88, fallback: 12 } });
    expect(audit(back.lines)).toMatchObject({ mode: 'cost', reason: { code: 'return-to-cost' } });

    // Next tick: the mode history now ends in cost, the target holds 88/12: the ramp finishes at the plan.
    cw.reset();
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { ...capacityWeights[0], weight: 88 },
      { ...capacityWeights[1], weight: 12 },
    ]));
    serveMetrics(SM, {
      mode: [...fill(1, SLOTS - 1), 0],
      ramping: [...fill(0, SLOTS - 1), 1],
      classes: {
        preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(500)) },
        fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(60)) },
      },
    });
    const done = await run(SM, await warm());
    expect(done.result).toEqual({ action: 'applied', weights: { preferred: 98, fallback: 2 } });
    expect(audit(done.lines)).toMatchObject({ reason: { code: 'ramping' }, previous: { mode: 'cost', ramping: true }, next: { ramping: false } });
    expect(back.lines.find((l) => 'PolicyRamping' in l)).toMatchObject({ PolicyRamping: 1, PolicyMode: 0 });
    expect(done.lines.find((l) => 'PolicyRamping' in l)).toMatchObject({ PolicyRamping: 0 });
  });

  test('endpoint Updating: the decision is logged, the write is skipped and says why', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('Updating', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, { mode: fill(0), classes: { preferred: busy(1200), fallback: healthyHistory(1) } });
    const { result, lines } = await run();
    expect(result).toEqual({
      action: 'skipped', detail: 'endpoint llm is Updating; weights are written on a later tick', weights: { preferred: 98, fallback: 2 },
    });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(audit(lines)).toMatchObject({ mode: 'capacity', apply: { action: 'skipped' } });
    // What is recorded as in force is what the endpoint holds, and the deferred write is counted (the frozen routing).
    expect(lines.find((l) => l.CapacityClass === 'preferred')).toMatchObject({ RouteWeight: 98 });
    expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ WeightChanges: 0, WritesDeferred: 1 });
  });

  test('throttling is retried with backoff within the run', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    serveMetrics(SM, { mode: fill(0), classes: { preferred: busy(1200), fallback: healthyHistory(1) } });
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejectsOnce(throttled).rejectsOnce(throttled).resolves({ EndpointArn: 'arn' });
    const { result } = await run();
    expect(result.action).toBe('applied');
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(3);
    // Exponential: 200 ms, then 400 ms (jitter pinned to its maximum).
    expect(fastRetry.sleep.mock.calls).toEqual([[200], [400]]);
  });

  describe('a write whose answer was lost (a timeout: SageMaker may have applied it)', () => {
    const timedOut = () => Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
    const before = [
      { name: 'preferred', weight: 98, ready: 3, desired: 6, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ];

    test('is not sent again when the endpoint already asks for it: the run reports it applied', async () => {
      inShortage();
      // The read sees 98/2 in force; the check before the retry sees the endpoint Updating to the weights written.
      sm.on(DescribeEndpointCommand).resolvesOnce(endpoint('InService', before)).resolves(endpoint('Updating', [
        { ...before[0], weight: 75 }, { ...before[1], weight: 25 },
      ]));
      sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(timedOut());
      const { result, lines } = await run();
      expect(result).toEqual({ action: 'applied', weights: { preferred: 75, fallback: 25 } });
      expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(1);
      expect(sm.commandCalls(DescribeEndpointCommand)).toHaveLength(2);
      expect(audit(lines)).toMatchObject({ apply: { action: 'applied' } });
    });

    test('is sent again when the endpoint does not ask for it', async () => {
      inShortage();
      sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejectsOnce(timedOut()).resolves({ EndpointArn: 'arn' });
      const { result } = await run();
      expect(result).toEqual({ action: 'applied', weights: { preferred: 75, fallback: 25 } });
      expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(2);
    });

    test('a capacity write is checked on its variant\'s desired instance count', async () => {
      sm.on(DescribeEndpointCommand).resolves(endpoint('Updating', [{ ...before[0] }, { ...before[1], desired: 3 }]));
      const write = { kind: 'capacity' as const, route: 'fallback', from: 1, to: 3 };
      expect(await landed(SM, clients, write)).toBe(true);
      expect(await landed(SM, clients, { ...write, to: 4 })).toBe(false);
      expect(await landed(SM, clients, { ...write, route: 'preferred' })).toBe(false);
    });

    test('a weights write with a zeroed variant is checked on it too', async () => {
      const weights = { kind: 'weights' as const, weights: { preferred: 98, fallback: 2 }, zeroed: ['retired'] };
      sm.on(DescribeEndpointCommand).resolvesOnce(endpoint('Updating', [...before, { name: 'retired', weight: 0, ready: 1, desired: 1, type: 'ml.g5.xlarge' }]))
        .resolvesOnce(endpoint('Updating', [...before, { name: 'retired', weight: 5, ready: 1, desired: 1, type: 'ml.g5.xlarge' }]))
        .resolvesOnce(endpoint('Updating', before));
      expect(await landed(SM, clients, weights)).toBe(true);
      expect(await landed(SM, clients, weights)).toBe(false);
      // A zeroed variant the endpoint no longer has: nothing shows the write landed.
      expect(await landed(SM, clients, weights)).toBe(false);
    });
  });

  test('persistent throttling leaves the weights unchanged and fails the run', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    cw.on(GetMetricDataCommand).rejects(throttled);
    const { result, lines } = await run();
    expect(result).toEqual({ action: 'failed', reason: 'aws-error', detail: 'weights unchanged: ThrottlingException: Rate exceeded' });
    expect(cw.commandCalls(GetMetricDataCommand)).toHaveLength(4);
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(audit(lines)).toMatchObject({ apply: { action: 'failed' } });
  });

  test('an error that is not transient is not retried', async () => {
    sm.on(DescribeEndpointCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } }));
    const { result } = await run();
    expect(result.action).toBe('failed');
    expect(sm.commandCalls(DescribeEndpointCommand)).toHaveLength(1);
  });

  test('missing datapoints hold the current weights', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 60, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 40, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    // No invocation datapoints for the newest signal periods: demand is unknown.
    const gap = { ...healthyHistory(3), servedTokensPerSecond: [...fill(perMinute(500), 8), null, null, null, null] };
    serveMetrics(SM, { mode: fill(0), classes: { preferred: gap, fallback: healthyHistory(1) } });
    const { result, lines } = await run();
    expect(result).toEqual({ action: 'unchanged', weights: { preferred: 60, fallback: 40 } });
    expect(audit(lines)).toMatchObject({ reason: { code: 'missing-data' } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('a variant with zero ready instances loses its weight', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 0, desired: 0, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, { mode: fill(0), classes: { preferred: busy(300), fallback: healthyHistory(1) } });
    const { result } = await run();
    expect(result).toEqual({ action: 'applied', weights: { preferred: 100, fallback: 0 } });
  });

  test('without any decision history it starts in capacity mode (fails toward availability)', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 50, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 50, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, { classes: { preferred: busy(300), fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(300)) } } });
    const { result, lines } = await run();
    expect(audit(lines)).toMatchObject({ mode: 'capacity', reason: { code: 'stabilizing' } });
    // Capacity mode does not count on the preferred variant to grow, but 300 tokens/s fit its 900 ready.
    expect(result).toEqual({ action: 'applied', weights: { preferred: 98, fallback: 2 } });
  });

  test('two runs in the same minute (an alarm run beside the scheduled one) take one ramp step between them', async () => {
    const capacityWeights = [
      { name: 'preferred', weight: 78, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 22, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ];
    // The fallback holds 22 % of the weight, so it reports demand too (a silent weighted class is missing data).
    const classes = {
      preferred: { ...healthyHistory(3), servedTokensPerSecond: fill(perMinute(500)) },
      fallback: { ...healthyHistory(1), servedTokensPerSecond: fill(perMinute(100)) },
    };
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', capacityWeights));
    serveMetrics(SM, { mode: fill(1), classes });
    const lines: Array<Record<string, unknown>> = [];
    const { memory, ...first } = await reconcile(SM, clients, { nowMs: NOW_MS, log: (l) => lines.push(l), retry: fastRetry, memory: await warm() });
    expect(first).toEqual({ action: 'applied', weights: { preferred: 88, fallback: 12 } });
    const emf = lines.find((l) => 'PolicyMode' in l)!;
    expect(emf).toMatchObject({ PolicyMode: 0, PolicyRamping: 1 });

    // 20 s later, same period, in another execution environment: the target holds 88/12 and CloudWatch has the first
    // run's decision at 12:00.
    cw.reset();
    sm.reset();
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [{ ...capacityWeights[0], weight: 88 }, { ...capacityWeights[1], weight: 12 }]));
    serveMetrics(SM, { mode: [...fill(1), emf.PolicyMode as number], ramping: [...fill(null), emf.PolicyRamping as number], classes });
    const second = await reconcile(SM, clients, { nowMs: NOW_MS + 20_000, log: () => undefined, retry: fastRetry });
    expect(second).toMatchObject({ action: 'unchanged', weights: { preferred: 88, fallback: 12 } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);

    // The next period takes the next step (in the first run's environment: a cold start would hold it).
    cw.reset();
    serveMetrics(SM, { mode: [...fill(1), 0], ramping: [...fill(null), 1], classes });
    const third = await reconcile(SM, clients, { nowMs: NOW_MS + 60_000, log: () => undefined, retry: fastRetry, memory });
    expect(third).toMatchObject({ action: 'applied', weights: { preferred: 98, fallback: 2 } });
  });
});

describe('reconciler run, ALB listener', () => {
  const target = (name: string, rank: number, tps: number, usd: number, n: number) => ({
    class: cls(name, rank, `${name}.xlarge`, tps, usd),
    targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/000${n}`,
    targetGroupFullName: `targetgroup/${name}/000${n}`,
    namespace: 'serving',
    deploymentName: name,
    nodePoolName: name,
  });
  const ALB: ReconcilerConfig = {
    facts: {
      kind: 'alb',
      listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/abc/def',
      loadBalancerFullName: 'app/llm/abc',
      targets: [target('inf2', 0, 300, 0.76, 1), target('g6', 1, 200, 0.8, 2)],
    },
    placement: {},
    policy: {},
    service: 'chat',
    tokensPerRequest: 200,
    metricDelaySeconds: 120,
    clusterName: 'prod',
    signals: { inf2: { capacityErrors: { namespace: 'CapacityAwareInference/Karpenter', metricName: 'InsufficientCapacity/prod/inf2', dimensions: {}, stat: 'Sum' } } },
  };
  const oidc = { Issuer: 'https://idp', AuthorizationEndpoint: 'https://idp/a', TokenEndpoint: 'https://idp/t', UserInfoEndpoint: 'https://idp/u', ClientId: 'c' };
  const auth = { Type: 'authenticate-oidc' as const, Order: 1, AuthenticateOidcConfig: oidc };
  // The actions a 75/25 write sends: the authenticate action as read, keeping the secret the listener or rule holds
  // (DescribeListeners / DescribeRules never return it), then the forward with the new weights.
  const WRITTEN_ACTIONS = [{ ...auth, AuthenticateOidcConfig: { ...oidc, UseExistingClientSecret: true } }, {
    Type: 'forward',
    Order: 2,
    ForwardConfig: {
      TargetGroups: [
        { TargetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/inf2/0001', Weight: 75 },
        { TargetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/g6/0002', Weight: 25 },
      ],
      TargetGroupStickinessConfig: { Enabled: false },
    },
  }];
  const listener = (w1: number, w2: number) => ({
    Listeners: [{
      ListenerArn: ALB.facts.kind === 'alb' ? ALB.facts.listenerArn : '',
      DefaultActions: [auth, {
        Type: 'forward' as const,
        Order: 2,
        ForwardConfig: {
          TargetGroups: [
            { TargetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/inf2/0001', Weight: w1 },
            { TargetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/g6/0002', Weight: w2 },
          ],
          TargetGroupStickinessConfig: { Enabled: false },
        },
      }],
    }],
  });

  test('reads ready targets from HealthyHostCount, desired from Container Insights; a capacity error enters capacity mode', async () => {
    elb.on(DescribeListenersCommand).resolves(listener(98, 2));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), capacityErrors: [...fill(0, 9), 2], servedTokensPerSecond: fill(perMinute(1200)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    targetsHealthy({ inf2: 3, g6: 2 });
    const { result, lines } = await run(ALB);
    // 1200 tokens/s x 1.2 headroom > 900 on inf2, which reports capacity errors: inf2 filled to 900, g6 carries 300.
    expect(result).toEqual({ action: 'applied', weights: { inf2: 75, g6: 25 } });
    expect(audit(lines)).toMatchObject({ reason: { code: 'enter-capacity', triggers: ['capacity-errors'] } });
    expect(elb.commandCalls(ModifyListenerCommand).map((c) => c.args[0].input)).toEqual([{
      ListenerArn: ALB.facts.kind === 'alb' ? ALB.facts.listenerArn : '',
      DefaultActions: WRITTEN_ACTIONS,
    }]);
    const queries = cw.commandCalls(GetMetricDataCommand)[0].args[0].input.MetricDataQueries!;
    expect(queries).toEqual(expect.arrayContaining([
      expect.objectContaining({
        MetricStat: expect.objectContaining({ Metric: expect.objectContaining({ Namespace: 'AWS/ApplicationELB', MetricName: 'HealthyHostCount' }) }),
      }),
      expect.objectContaining({
        MetricStat: expect.objectContaining({
          // Container Insights enhanced observability: PodName holds the Deployment's name.
          Metric: { Namespace: 'ContainerInsights', MetricName: 'replicas_desired', Dimensions: [
            { Name: 'ClusterName', Value: 'prod' }, { Name: 'Namespace', Value: 'serving' }, { Name: 'PodName', Value: 'inf2' },
          ] },
        }),
      }),
    ]));
  });

  test('fails when an action added between the read and the write is written away: the actions are read again, and nothing is written', async () => {
    // A deployment adds the authenticate action while the run reads health and metrics: ModifyListener replaces the
    // whole list, so a write from the first read would drop it and leave the route open.
    const [, forward] = listener(98, 2).Listeners[0].DefaultActions;
    const forwardOnly = { Listeners: [{ ...listener(98, 2).Listeners[0], DefaultActions: [{ ...forward, Order: 1 }] }] };
    elb.on(DescribeListenersCommand).resolvesOnce(forwardOnly).resolves(listener(98, 2));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), capacityErrors: [...fill(0, 9), 2], servedTokensPerSecond: fill(perMinute(1200)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    const { result } = await run(ALB);
    expect(result).toMatchObject({ action: 'failed', reason: 'aws-error' });
    expect(String((result as { detail?: string }).detail)).toContain('changed since this run read them (a deployment or an operator): nothing written');
    expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
    // Only the weights changed (another writer's): written from the new read.
    elb.reset();
    elb.on(DescribeListenersCommand).resolvesOnce(listener(98, 2)).resolves(listener(60, 40));
    targetsHealthy({ inf2: 3, g6: 2 });
    const again = await run(ALB);
    expect(again.result).toMatchObject({ action: 'applied' });
    expect(elb.commandCalls(ModifyListenerCommand).map((c) => c.args[0].input.DefaultActions)).toEqual([WRITTEN_ACTIONS]);
  });

  describe('target groups of the action that are not the service\'s', () => {
    const foreign = (n: number) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/canary${n}/0009`;
    const shortage = () => serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), capacityErrors: [...fill(0, 9), 2], servedTokensPerSecond: fill(perMinute(1200)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    const withForward = (forward: Record<string, unknown>) => ({
      Listeners: [{ ...listener(98, 2).Listeners[0], DefaultActions: [auth, { Type: 'forward' as const, Order: 2, ...forward }] }],
    });

    test('fails when the action would pass 5 target groups: no write ALB would refuse, and the failure names the others', async () => {
      const groups = [tgArn('inf2'), tgArn('g6'), foreign(1), foreign(2), foreign(3), foreign(4)].map((TargetGroupArn) => ({ TargetGroupArn, Weight: 1 }));
      elb.on(DescribeListenersCommand).resolves(withForward({ ForwardConfig: { TargetGroups: groups } }));
      shortage();
      const { result } = await run(ALB);
      expect(result).toMatchObject({ action: 'failed', reason: 'target-unavailable' });
      expect(String((result as { detail?: string }).detail)).toContain(
        `would hold 6 target groups (this service's 2 and 4 others: ${foreign(1)}, ${foreign(2)}, ${foreign(3)}, ${foreign(4)}); an action holds at most 5`);
      expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
    });
  });

  const tgArn = (name: string) => (ALB.facts.kind === 'alb' ? ALB.facts.targets.find((t) => t.class.name === name)!.targetGroupArn : '');
  const health = (...states: TargetHealthStateEnum[]) => ({
    TargetHealthDescriptions: states.map((State, i) => ({ Target: { Id: `10.0.0.${i + 1}`, Port: 8080 }, TargetHealth: { State } })),
  });
  describe('a target group that lost every pod (ALB then publishes no HealthyHostCount for it)', () => {
    // inf2's pods were all reclaimed six minutes ago: no HealthyHostCount, no RequestCount since.
    const emptied = () => serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: {
          readyReplicas: [...fill(3, 6), ...fill(null, 6)],
          desiredReplicas: fill(3),
          servedTokensPerSecond: [...fill(perMinute(500), 6), ...fill(null, 6)],
        },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(10)) },
      },
    });

    test('reads each target group\'s live health (DescribeTargetHealth): an empty one moves the traffic off its class', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      // The last inf2 pod is still deregistering; g6 has two healthy pods and one starting.
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).resolves(health('draining'));
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') }).resolves(health('healthy', 'healthy', 'initial'));
      emptied();
      const { result, lines } = await run(ALB);
      expect(elb.commandCalls(DescribeTargetHealthCommand).map((c) => c.args[0].input.TargetGroupArn).sort()).toEqual([tgArn('g6'), tgArn('inf2')]);
      expect(audit(lines)).toMatchObject({ healthyTargets: { inf2: 0, g6: 2 } });
      expect(audit(lines).reason).not.toMatchObject({ code: 'missing-data' });
      expect(result).toMatchObject({ action: 'applied' });
      expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(1);
    });

    test('a health read that still fails once retried leaves the class unknown: the weights are held, the run goes on', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      const denied = Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).rejects(denied);
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') }).resolves(health('healthy', 'healthy'));
      emptied();
      const { result, lines } = await run(ALB);
      expect(audit(lines)).toMatchObject({
        healthyTargets: { inf2: null, g6: 2 }, healthUnread: 'DescribeTargetHealth failed (inf2: AccessDenied: not authorized)', reason: { code: 'missing-data' },
      });
      expect(result).toMatchObject({ action: 'unchanged' });
      expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
      // A run that goes on without its health read counts for the degraded-reads alarm (a lasting denial is not silent).
      expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ DegradedReads: 1 });
    });

    test('a class that has pods again reads its gap from the counts earlier runs published: no hold, the losses stay losses', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(20, 80));
      serveMetrics(ALB, {
        mode: [...fill(0, 6), ...fill(1, 6)],
        classes: {
          inf2: {
            readyReplicas: [...fill(3, 6), ...fill(null, 6)],
            // What the earlier runs counted live and published (their HealthyTargets): empty, then two pods back.
            readyReplicasSeen: [...fill(3, 6), ...fill(0, 5), 2],
            desiredReplicas: fill(3),
            servedTokensPerSecond: [...fill(perMinute(500), 6), ...fill(null, 6)],
          },
          g6: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(500)) },
        },
      });
      const { lines } = await run(ALB);
      const inputs = lines.find((l) => l.audit === 'routing-inputs' && l.class === 'inf2') as { run: string; signals: { readyReplicas: unknown[] } };
      expect(inputs.signals.readyReplicas.slice(-5)).toEqual([3, 0, 0, 0, 0]);
      expect(inputs.run).toBe(audit(lines).run);
      expect(audit(lines)).toMatchObject({ healthyTargets: { inf2: 2, g6: 2 } });
      expect(audit(lines).reason).not.toMatchObject({ code: 'missing-data' });
    });

    test('a throttled health read is retried like every call (the controller re-registering pods shares the API limit)', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      const throttled = Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } });
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).rejectsOnce(throttled).resolves(health());
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') }).resolves(health('healthy', 'healthy'));
      emptied();
      const { result, lines } = await run(ALB);
      expect(audit(lines)).toMatchObject({ healthyTargets: { inf2: 0, g6: 2 } });
      expect(audit(lines)).not.toHaveProperty('healthUnread');
      expect(result).toMatchObject({ action: 'applied' });
      expect(lines.find((l) => 'PolicyMode' in l)).toMatchObject({ DegradedReads: 0 });
    });

    test('a health read still throttled after its one retry, or cut off by the network, is a failed read, not a failed run', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      const throttled = Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } });
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).rejects(throttled);
      // A mocked client's network fault has no $metadata (the SDK's retry middleware would add it): retryable by name.
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') }).rejects(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      emptied();
      const { result, lines } = await run(ALB);
      expect(elb.commandCalls(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') })).toHaveLength(2);
      expect(audit(lines)).toMatchObject({ healthyTargets: { inf2: null, g6: null }, healthUnread: expect.stringContaining('inf2: Throttling: Rate exceeded') });
      expect(result).toMatchObject({ action: 'unchanged' });
    });

    test('a run whose GetMetricData fails after the target read still prints the health it read; one whose target read fails has none', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).resolves(health('draining'));
      elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') })
        .rejects(Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
      cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
      const failed = await run(ALB);
      expect(failed.result).toMatchObject({ action: 'failed', reason: 'aws-error' });
      expect(audit(failed.lines)).toMatchObject({
        apply: { action: 'failed', reason: 'aws-error' },
        weights: { inf2: 98, g6: 2 },
        healthyTargets: { inf2: 0, g6: null }, healthUnread: 'DescribeTargetHealth failed (g6: AccessDenied: not authorized)',
      });
      elb.on(DescribeListenersCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
      const unread = await run(ALB);
      expect(audit(unread.lines)).toMatchObject({ apply: { action: 'failed', reason: 'aws-error' } });
      expect(audit(unread.lines)).not.toHaveProperty('healthyTargets');
    });

    test('a bug in the health read (not an AWS call\'s error) fails the run as an internal error, not as a failed read', async () => {
      elb.on(DescribeListenersCommand).resolves(listener(98, 2));
      elb.on(DescribeTargetHealthCommand).callsFake(() => {
        throw new TypeError('Cannot read properties of undefined');
      });
      emptied();
      const lines: Array<Record<string, unknown>> = [];
      const result = await reconcile(ALB, clients, { nowMs: NOW_MS, log: (l) => lines.push(l), retry: fastRetry });
      expect(result).toMatchObject({ action: 'failed' });
      expect(audit(lines)).toMatchObject({ apply: { action: 'failed', reason: 'internal-error', detail: expect.stringContaining('TypeError') } });
    });
  });

  test('a run triggered by the capacity alarm of a class acts on it before its datapoint is in the signal windows', async () => {
    elb.on(DescribeListenersCommand).resolves(listener(98, 2));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(800)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    // The EventBridge event of the construct's alarm on inf2's capacity errors (cloudwatch-and-eventbridge.html).
    const alarm = (value: string) => ({
      'detail-type': 'CloudWatch Alarm State Change',
      detail: {
        alarmName: 'chat-CapacityErrors-inf2',
        state: {
          value,
          timestamp: '2026-11-30T12:00:20.000+0000',
          reasonData: '{"version":"1.0","queryDate":"2026-11-30T12:00:20.000+0000","startDate":"2026-11-30T11:59:00.000+0000","statistic":"Sum","period":60,"recentDatapoints":[1.0],"threshold":1.0}',
        },
        configuration: {
          metrics: [{
            id: 'm1',
            metricStat: { metric: { namespace: 'CapacityAwareInference/Karpenter', name: 'InsufficientCapacity/prod/inf2', dimensions: {} }, period: 60, stat: 'Sum' },
            returnData: true,
          }],
        },
      },
    });
    const lines: Array<Record<string, unknown>> = [];
    const audits = () => lines.filter((l) => l.audit === 'routing-decision');
    // 800 tokens/s on 900 of inf2: the cost plan holds; with the headroom inf2 alone is short, so its errors count.
    await reconcile(ALB, clients, { nowMs: NOW_MS, log: (l) => lines.push(l), retry: fastRetry, event: alarm('OK') });
    expect(audits().at(-1)).toMatchObject({ mode: 'cost', reason: { code: 'cost-plan' } });
    await reconcile(ALB, clients, { nowMs: NOW_MS, log: (l) => lines.push(l), retry: fastRetry, event: alarm('ALARM') });
    expect(audits().at(-1)).toMatchObject({
      mode: 'capacity', reason: { code: 'enter-capacity', triggers: ['capacity-errors'] }, floorsPublished: { inf2: 4 }, alarmEvidence: ['inf2'],
    });
    expect(audits()[0]).not.toHaveProperty('alarmEvidence');
  });

  test('a service on a shared listener: reads its rule (DescribeRules) and writes only its rule\'s actions (ModifyRule), never the listener', async () => {
    const ruleArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/llm/abc/def/0123456789abcdef';
    const onRule: ReconcilerConfig = { ...ALB, facts: { ...ALB.facts, ruleArn } as ReconcilerConfig['facts'] };
    elb.on(DescribeRulesCommand).resolves({ Rules: [{ RuleArn: ruleArn, Priority: '10', Actions: listener(98, 2).Listeners[0].DefaultActions }] });
    serveMetrics(onRule, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), capacityErrors: [...fill(0, 9), 2], servedTokensPerSecond: fill(perMinute(1200)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    targetsHealthy({ inf2: 3, g6: 2 });
    const { result } = await run(onRule);
    expect(result).toEqual({ action: 'applied', weights: { inf2: 75, g6: 25 } });
    // Read, and read again just before the write (nothing but the weights may have changed meanwhile).
    expect(elb.commandCalls(DescribeRulesCommand).map((c) => c.args[0].input)).toEqual([{ RuleArns: [ruleArn] }, { RuleArns: [ruleArn] }]);
    expect(elb.commandCalls(DescribeListenersCommand)).toHaveLength(0);
    expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
    // The rule's actions as read, the OIDC secret kept (UseExistingClientSecret: "If you are modifying a rule, you can
    // omit this parameter"), and no Conditions: ModifyRule leaves what it is not given unchanged.
    expect(elb.commandCalls(ModifyRuleCommand).map((c) => c.args[0].input)).toEqual([{
      RuleArn: ruleArn,
      Actions: WRITTEN_ACTIONS,
    }]);
  });

  test('a rule that no longer forwards to the service is not written, and the audit names the rule', async () => {
    const ruleArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/llm/abc/def/0123456789abcdef';
    const onRule: ReconcilerConfig = { ...ALB, facts: { ...ALB.facts, ruleArn } as ReconcilerConfig['facts'] };
    elb.on(DescribeRulesCommand).resolves({ Rules: [{ RuleArn: ruleArn, Actions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '503' } }] }] });
    serveMetrics(onRule, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), capacityErrors: [...fill(0, 9), 2], servedTokensPerSecond: fill(perMinute(1200)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    const { lines } = await run(onRule);
    expect(elb.commandCalls(ModifyRuleCommand)).toHaveLength(0);
    expect(JSON.stringify(lines)).toContain(`not among the target group(s) of listener rule ${ruleArn} (it holds: none)`);
    // The target was read before the run failed: its line carries the live health, as a decided run's does.
    expect(audit(lines)).toMatchObject({ apply: { action: 'failed', reason: 'target-mismatch' }, healthyTargets: { inf2: 2, g6: 2 } });
  });

  test('steady state makes no ModifyListener call', async () => {
    elb.on(DescribeListenersCommand).resolves(listener(98, 2));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(400)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    const { result } = await run(ALB);
    expect(result.action).toBe('unchanged');
    expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
  });

  test('republishes the newest ready and desired replicas per class, and the healthy targets it counted, so dashboards, alarms and gaps have data', async () => {
    elb.on(DescribeListenersCommand).resolves(listener(98, 2));
    // Live, inf2 has one healthy pod (its newest HealthyHostCount, two minutes old, says 2); g6's health read is denied.
    elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('inf2') }).resolves(health('healthy', 'draining'));
    elb.on(DescribeTargetHealthCommand, { TargetGroupArn: tgArn('g6') })
      .rejects(Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: [...fill(3, 9), 2], desiredReplicas: [...fill(3, 9), 4], servedTokensPerSecond: fill(perMinute(400)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    const { lines } = await run(ALB);
    const replicas = lines
      .filter((l) => l.ReadyReplicas !== undefined)
      .map((l) => [l[Dim.CLASS], l.ReadyReplicas, l.DesiredReplicas]);
    // Ready and desired of the same (newest published) period, so the shortage alarm's desired - ready pairs them.
    expect(replicas).toEqual([['inf2', 2, 4], ['g6', 2, 2]]);
    // The live count apart, read back where HealthyHostCount has a gap; none for g6, whose read was denied.
    expect(lines.filter((l) => l.HealthyTargets !== undefined).map((l) => [l[Dim.CLASS], l.HealthyTargets])).toEqual([['inf2', 1]]);
    expect(routingTarget(ALB.facts).publishesHealthyTargets).toBe(true);
  });
});

describe('handler', () => {
  const env = process.env.RECONCILER_CONFIG;
  afterEach(() => {
    if (env === undefined) delete process.env.RECONCILER_CONFIG;
    else process.env.RECONCILER_CONFIG = env;
  });

  test('fails the invocation when an AWS call failed, so the Errors metric shows it', async () => {
    process.env.RECONCILER_CONFIG = JSON.stringify(SM);
    sm.on(DescribeEndpointCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }));
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    await expect(handler({ 'detail-type': 'Scheduled Event' })).rejects.toThrow(
      'reconciler: weights unchanged: AccessDeniedException: denied',
    );
    const lines = log.mock.calls.map((c) => JSON.parse(c[0] as string));
    expect(lines.find((l) => l.audit)).toMatchObject({ trigger: 'Scheduled Event', apply: { action: 'failed', reason: 'aws-error' } });
    expect(lines.find((l) => l._aws)).toMatchObject({ trigger: 'Scheduled Event', ReconcilerFailures: 1, Reason: 'aws-error' });
    log.mockRestore();
  });
});
