/**
 * The reconciler under injected AWS faults and facts that no longer match the world. Invariants, whatever happens:
 * every run leaves exactly one audit line; a failed run also leaves a ReconcilerFailures datapoint; no write ever
 * carries all-zero weights, a weight for a placement-forbidden class, or a weight for a target that does not exist;
 * in steady state at most one write of each kind per period.
 */
import { GetMetricDataCommand, type GetMetricDataCommandOutput, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { DescribeListenersCommand, ModifyListenerCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import { DescribeEndpointCommand, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import * as fc from 'fast-check';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { type RoutedClassFacts } from '../../lib/core/reconciler/routing-facts';
import { handler } from '../../lambda/reconciler';
import { MAX_METRIC_PAGES, reconcile } from '../../lambda/reconciler/reconcile';
import { type RunMemory } from '../../lib/core/reconciler/memory';
import { DEFAULT_RETRY } from '../../lib/core/reconciler/retry';
import { buildQueryBatch } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import {
  ALB, albTarget, clients, cw, elb, endpoint, fill, listener, NOW_MS, perMinute, resetWorld, type Series, serveMetrics, sm, SLOTS, SM, tg,
} from './reconciler-world';


const fastRetry = { sleep: async () => undefined, random: () => 1 };
async function run(config: ReconcilerConfig, nowMs = NOW_MS, memory?: RunMemory) {
  const lines: Array<Record<string, unknown>> = [];
  const { memory: next, ...result } = await reconcile(config, clients, { nowMs, log: (l) => lines.push(l), retry: fastRetry, memory });
  return { result, lines, memory: next };
}
const audits = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.audit === 'routing-decision');
const failures = (lines: Array<Record<string, unknown>>) => lines.filter((l) => 'ReconcilerFailures' in l);

beforeEach(resetWorld);

/** The preferred variant lost every instance (capacity errors) while the fallback serves: a run plans a write. Returns the variants. */
function servePreferredLost() {
  serveMetrics(SM, {
    mode: fill(0),
    classes: {
      preferred: { readyReplicas: fill(0), desiredReplicas: fill(6), capacityErrors: fill(3) },
      fallback: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(1200)) },
    },
  });
  return [
    { name: 'preferred', weight: 50, ready: 0, desired: 6, type: 'ml.inf2.xlarge' },
    { name: 'fallback', weight: 50, ready: 2, desired: 2, type: 'ml.g5.xlarge' },
  ];
}

describe('facts that no longer match the target', () => {
  test('a renamed SageMaker variant: no write to a variant that does not exist, an audit line and a failure datapoint', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 50, ready: 3, desired: 6, type: 'ml.inf2.xlarge' },
      { name: 'fallback-v2', weight: 50, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: { preferred: { readyReplicas: fill(3), desiredReplicas: fill(6), servedTokensPerSecond: fill(perMinute(1200)) } },
    });
    const { result, lines } = await run(SM);
    expect(result).toMatchObject({ action: 'failed', reason: 'target-mismatch' });
    expect(result.detail).toContain("the routing facts name 'fallback', not among the variant(s) of endpoint llm (it holds: 'preferred', 'fallback-v2')");
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(audits(lines)).toHaveLength(1);
    expect(audits(lines)[0]).toMatchObject({ apply: { action: 'failed', reason: 'target-mismatch' } });
    expect(failures(lines)).toEqual([expect.objectContaining({ Service: 'chat', Reason: 'target-mismatch', ReconcilerFailures: 1 })]);
    // No decision metric: the heartbeat must not count a run that decided nothing.
    expect(lines.some((l) => 'Decisions' in l)).toBe(false);
  });

  test('fails when a deployment under way pages: variants its pending deployment brings are a skipped run with a heartbeat', async () => {
    // A deploy that renames 'fallback-v2' to 'fallback': the function has the new facts, while DescribeEndpoint shows the
    // running deployment's variants, and the new ones in PendingDeploymentSummary, until the blue/green update ends.
    const running = [
      { name: 'preferred', weight: 50, ready: 3, desired: 6, type: 'ml.inf2.xlarge' },
      { name: 'fallback-v2', weight: 50, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ];
    const pending = (...names: string[]) => ({
      ...endpoint('Updating', running),
      PendingDeploymentSummary: { EndpointConfigName: 'llm-config-2', ProductionVariants: names.map((VariantName) => ({ VariantName })) },
    });
    serveMetrics(SM, {
      mode: fill(0),
      classes: { preferred: { readyReplicas: fill(3), desiredReplicas: fill(6), servedTokensPerSecond: fill(perMinute(1200)) } },
    });
    sm.on(DescribeEndpointCommand).resolves(pending('preferred', 'fallback'));
    const deferred = await run(SM);
    expect(deferred.result).toMatchObject({ action: 'skipped' });
    expect(deferred.result.detail).toBe("weights unchanged: the deployment under way brings 'fallback', not yet among the variant(s) of endpoint llm "
      + "(it holds: 'preferred', 'fallback-v2'); weights are written once it is over");
    expect(audits(deferred.lines)).toEqual([expect.objectContaining({ apply: expect.objectContaining({ action: 'skipped' }) })]);
    expect(failures(deferred.lines)).toEqual([]);
    // The heartbeat (Decisions) still beats: a long blue/green update is not a frozen reconciler.
    expect(deferred.lines).toContainEqual(expect.objectContaining({ Service: 'chat', Reason: 'deployment-under-way', Decisions: 1 }));
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // Updating for another reason (autoscaling, a deployment that does not bring 'fallback'): still a mismatch, it pages.
    for (const answer of [endpoint('Updating', running), pending('preferred', 'fallback-v3'), endpoint('InService', running)]) {
      sm.on(DescribeEndpointCommand).resolves(answer);
      const { result, lines } = await run(SM);
      expect(result).toMatchObject({ action: 'failed', reason: 'target-mismatch' });
      expect(failures(lines)).toHaveLength(1);
    }
  });

  test('fails when facts of a new endpoint configuration write to the endpoint still on the old one (R108): the run defers', async () => {
    // The stack update has given the function the facts of 'llm-config-new'; CloudFormation's UpdateEndpoint has not
    // started, and the endpoint, InService on 'llm-config-old', would take the write and be Updating when it comes.
    const variants = servePreferredLost();
    const NEW: ReconcilerConfig = { ...SM, facts: { ...SM.facts, endpointConfigName: 'llm-config-new' } as ReconcilerConfig['facts'] };
    sm.on(DescribeEndpointCommand).resolves({ ...endpoint('InService', variants), EndpointConfigName: 'llm-config-old' });
    const deferred = await run(NEW);
    expect(deferred.result).toMatchObject({ action: 'skipped' });
    expect(deferred.result.detail).toContain("endpoint llm runs endpoint configuration 'llm-config-old', not 'llm-config-new'");
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(failures(deferred.lines)).toEqual([]);
    expect(deferred.lines).toContainEqual(expect.objectContaining({ Service: 'chat', Reason: 'deployment-under-way', Decisions: 1 }));
    // Once the endpoint runs the configuration the facts describe, the same run writes.
    sm.on(DescribeEndpointCommand).resolves({ ...endpoint('InService', variants), EndpointConfigName: 'llm-config-new' });
    expect((await run(NEW)).result).toMatchObject({ action: 'applied' });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(1);
  });

  test('fails when an endpoint updated outside the stack defers every run for ever: after 15 minutes InService the run pages (R110)', async () => {
    const variants = servePreferredLost();
    const NEW: ReconcilerConfig = { ...SM, facts: { ...SM.facts, endpointConfigName: 'llm-config-new' } as ReconcilerConfig['facts'] };
    sm.on(DescribeEndpointCommand).resolves({ ...endpoint('InService', variants), EndpointConfigName: 'llm-config-console' });
    // Each run hands the next its memory, as the warm execution environment does (lambda/reconciler/index.ts).
    const first = await run(NEW);
    const tenMinutes = await run(NEW, NOW_MS + 600_000, first.memory);
    expect([first.result.action, tenMinutes.result.action]).toEqual(['skipped', 'skipped']);
    expect(failures(tenMinutes.lines)).toEqual([]);
    const stuck = await run(NEW, NOW_MS + 900_000, tenMinutes.memory);
    expect(stuck.result).toMatchObject({ action: 'failed', reason: 'target-mismatch' });
    expect(stuck.result.detail).toContain("runs endpoint configuration 'llm-config-console', not 'llm-config-new'");
    expect(stuck.result.detail).toContain('so for 900 s with the endpoint InService');
    expect(failures(stuck.lines)).toEqual([expect.objectContaining({ Service: 'chat', Reason: 'target-mismatch', ReconcilerFailures: 1 })]);
    expect(stuck.lines.some((l) => 'Decisions' in l)).toBe(false);
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    // Redeployed (or pointed back): the run decides again (no metric this late: it holds), and the count is gone.
    sm.on(DescribeEndpointCommand).resolves({ ...endpoint('InService', variants), EndpointConfigName: 'llm-config-new' });
    const back = await run(NEW, NOW_MS + 960_000, stuck.memory);
    expect(back.result.action).toBe('unchanged');
    expect(failures(back.lines)).toEqual([]);
    expect(stuck.memory?.configurationMismatch).toEqual({ seconds: 900, writableAt: Math.floor(NOW_MS / 1000) + 900 });
    expect(back.memory?.configurationMismatch).toBeUndefined();
  });

  test('an endpoint no wait brings back (Failed, UpdateRollbackFailed, OutOfService, Deleting) pages; a transient status waits', async () => {
    const variants = servePreferredLost();
    for (const status of ['Failed', 'UpdateRollbackFailed', 'OutOfService', 'Deleting']) {
      sm.on(DescribeEndpointCommand).resolves({ ...endpoint(status, variants), FailureReason: 'Rollback failed' });
      const { result, lines } = await run(SM);
      expect(result).toMatchObject({ action: 'failed', reason: 'target-unavailable' });
      expect(result.detail).toBe(`weights unchanged: endpoint llm is ${status} (Rollback failed); no weight can be written until it is InService again`);
      expect(failures(lines)).toEqual([expect.objectContaining({ Service: 'chat', Reason: 'target-unavailable', ReconcilerFailures: 1 })]);
      // No heartbeat: the reconciler cannot act, so the failure alarm must be what an operator sees.
      expect(lines.some((l) => 'Decisions' in l)).toBe(false);
      expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    }
    for (const status of ['Updating', 'SystemUpdating', 'RollingBack', 'Creating']) {
      sm.on(DescribeEndpointCommand).resolves(endpoint(status, variants));
      const { result, lines } = await run(SM);
      expect(result).toMatchObject({ action: 'skipped' });
      expect(failures(lines)).toEqual([]);
    }
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('an endpoint another writer took between the read and the write defers the write; one still InService fails the run', async () => {
    const variants = servePreferredLost();
    // Application Auto Scaling's own update starts after the run's DescribeEndpoint: SageMaker refuses the write.
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(Object.assign(new Error('in progress'), { name: 'ValidationException' }));
    sm.on(DescribeEndpointCommand).resolvesOnce(endpoint('InService', variants)).resolves(endpoint('Updating', variants));
    const taken = await run(SM);
    expect(taken.result.action).toBe('skipped');
    expect(taken.result.detail).toMatch(/deferred: endpoint llm is Updating; .*taken after this run read it: ValidationException: in progress/);
    expect(failures(taken.lines)).toEqual([]);
    expect(taken.lines.find((l) => 'WritesDeferred' in l)).toMatchObject({ WritesDeferred: 1 });
    // Nothing was written: the next run in the period may write.
    expect(taken.memory?.wrote).toBeUndefined();
    // The endpoint reads InService again: the refusal is not another writer's, and the run fails.
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', variants));
    const refused = await run(SM);
    expect(refused.result).toMatchObject({ action: 'failed' });
    expect(failures(refused.lines)).toHaveLength(1);
    // A denial fails the run whatever the status reads: a missing grant is never hidden as a deferral.
    sm.reset();
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    sm.on(DescribeEndpointCommand).resolvesOnce(endpoint('InService', variants)).resolves(endpoint('Updating', variants));
    const denied = await run(SM);
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(1);
    expect(denied.result).toMatchObject({ action: 'failed', reason: 'aws-error' });
    expect(failures(denied.lines)).toHaveLength(1);
  });

  test('a target group missing from the listener: no ModifyListener, an audit line and a failure datapoint', async () => {
    elb.on(DescribeListenersCommand).resolves(listener({ inf2: 100 }));
    serveMetrics(ALB, {
      mode: fill(0),
      classes: { inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(400)) } },
    });
    const { result, lines } = await run(ALB);
    expect(result).toMatchObject({ action: 'failed', reason: 'target-mismatch' });
    expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(0);
    expect(audits(lines)).toHaveLength(1);
    expect(failures(lines)).toHaveLength(1);
  });
});

describe('non-finite or invalid facts', () => {
  // JSON (the function's environment) turns NaN and Infinity into null.
  const broken = (edit: (c: RoutedClassFacts) => RoutedClassFacts): ReconcilerConfig => JSON.parse(JSON.stringify({
    ...SM,
    facts: { ...SM.facts, variants: (SM.facts.kind === 'sagemaker' ? SM.facts.variants : []).map((v, i) => (i === 1 ? { ...v, classes: v.classes.map(edit) } : v)) },
  }));

  test.each([
    ['NaN envelope', broken((c) => ({ ...c, tokensPerSecondPerReplica: Number.NaN }))],
    ['Infinity price', broken((c) => ({ ...c, usdPerReplicaHour: Number.POSITIVE_INFINITY }))],
    ['no tokens per request', { ...SM, tokensPerRequest: Number.NaN }],
    ['a policy out of range', { ...SM, policy: { weightTotal: 5000 } }],
    // A hand-edited configuration with null where a pool belongs: reported as invalid, not an internal TypeError.
    ['a null instance pool', JSON.parse(JSON.stringify({ ...SM, facts: { ...SM.facts, variants: [{ variantName: 'v', classes: [null] }] } }))],
    ['a null variant', JSON.parse(JSON.stringify({ ...SM, facts: { ...SM.facts, variants: [null] } }))],
  ])('%s: the run does not throw, calls no AWS API, and leaves an audit line and a failure datapoint', async (_, config) => {
    const { result, lines } = await run(config as ReconcilerConfig);
    expect(result).toMatchObject({ action: 'failed', reason: 'invalid-config' });
    expect(sm.calls()).toHaveLength(0);
    expect(cw.calls()).toHaveLength(0);
    expect(audits(lines)).toEqual([expect.objectContaining({ apply: expect.objectContaining({ action: 'failed', reason: 'invalid-config' }) })]);
    expect(failures(lines)).toEqual([expect.objectContaining({ Reason: 'invalid-config' })]);
  });

  test('the handler reports a configuration it cannot parse under the service name, then fails the invocation', async () => {
    const saved = { config: process.env.RECONCILER_CONFIG, service: process.env.RECONCILER_SERVICE };
    process.env.RECONCILER_CONFIG = '{not json';
    process.env.RECONCILER_SERVICE = 'chat';
    // This file calls the handler only here: its configuration cache is empty.
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await expect(handler({ 'detail-type': 'Scheduled Event' })).rejects.toThrow(/reconciler: weights unchanged: cannot start: SyntaxError/);
      const lines = log.mock.calls.map((c) => JSON.parse(c[0] as string));
      expect(lines.find((l) => l.audit)).toMatchObject({ apply: { action: 'failed', reason: 'invalid-config' } });
      expect(lines.find((l) => 'ReconcilerFailures' in l)).toMatchObject({ Service: 'chat', Reason: 'invalid-config' });
    } finally {
      log.mockRestore();
      for (const [key, value] of [['RECONCILER_CONFIG', saved.config], ['RECONCILER_SERVICE', saved.service]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});

describe('missing demand datapoints', () => {
  test('a class holding weight that reports no demand while the other does is missing data: hold, never read it as low demand', async () => {
    // Capacity mode at 60/40; the preferred variant's invocations are missing in the newest period, the fallback reports.
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 60, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 40, ready: 2, desired: 2, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(1),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: [...fill(perMinute(900), 9), null] },
        fallback: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(100)) },
      },
    });
    const { result, lines } = await run(SM);
    expect(result.action).toBe('unchanged');
    expect(audits(lines)[0]).toMatchObject({ reason: { code: 'missing-data' }, inputs: { demandTokensPerSecond: expect.arrayContaining([null]) } });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });

  test('a warm-floor class without requests in a quiet minute still counts as no demand', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: { preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(490)) } },
    });
    const { result, lines } = await run(SM);
    expect(result.action).toBe('unchanged');
    expect(audits(lines)[0]).toMatchObject({ reason: { code: 'cost-plan' } });
  });
});

describe('steady state and placement', () => {
  test('two runs in the same period (schedule and alarm) write at most once', async () => {
    let weights = { inf2: 50, g6: 50 };
    elb.on(DescribeListenersCommand).callsFake(() => listener(weights));
    elb.on(ModifyListenerCommand).callsFake((input) => {
      const groups = input.DefaultActions[0].ForwardConfig.TargetGroups as Array<{ TargetGroupArn: string; Weight: number }>;
      weights = { inf2: groups.find((g) => g.TargetGroupArn === tg('inf2'))!.Weight, g6: groups.find((g) => g.TargetGroupArn === tg('g6'))!.Weight };
      return {};
    });
    const world = {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(300)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(300)) },
      },
    };
    serveMetrics(ALB, world);
    const first = await run(ALB);
    const second = await run(ALB, NOW_MS + 20_000);
    expect(first.result.action).toBe('applied');
    expect(second.result.action).toBe('unchanged');
    expect(elb.commandCalls(ModifyListenerCommand)).toHaveLength(1);
  });

  test('sensitive traffic never gets weight on a class the placement policy forbids, even in a shortage', async () => {
    const config: ReconcilerConfig = {
      ...ALB,
      placement: { sensitive: true },
      facts: { ...ALB.facts, kind: 'alb', targets: [albTarget('inf2', 0, 300, 0.76), albTarget('g6', 1, 200, 0.8, false)] } as ReconcilerConfig['facts'],
    };
    elb.on(DescribeListenersCommand).resolves(listener({ inf2: 98, g6: 2 }));
    serveMetrics(config, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(8), capacityErrors: fill(3), servedTokensPerSecond: fill(perMinute(2000)) },
        g6: { readyReplicas: fill(4), desiredReplicas: fill(4) },
      },
    });
    const { lines } = await run(config);
    for (const call of elb.commandCalls(ModifyListenerCommand)) {
      const groups = call.args[0].input.DefaultActions![0].ForwardConfig!.TargetGroups!;
      expect(groups.find((g) => g.TargetGroupArn === tg('g6'))!.Weight).toBe(0);
    }
    expect(audits(lines)).toHaveLength(1);
    expect((audits(lines)[0].weights as Record<string, number>).g6).toBe(0);
  });
});

describe('property: whatever AWS answers, the invariants hold', () => {
  const value = fc.oneof(
    fc.constant(null), fc.constant(Number.NaN), fc.constant(Number.POSITIVE_INFINITY), fc.constant(-1),
    fc.double({ min: 0, max: 5000, noNaN: true }), fc.integer({ min: 0, max: 20 }),
  );
  const series = fc.option(fc.array(value, { minLength: 0, maxLength: SLOTS }), { nil: undefined });
  const signals = fc.record({ readyReplicas: series, desiredReplicas: series, capacityErrors: series, servedTokensPerSecond: series });
  const variantAnswer = (name: string) => fc.record({
    name: fc.constantFrom(name, name, name, `${name}-renamed`),
    weight: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(0)),
    ready: fc.integer({ min: 0, max: 8 }),
    desired: fc.integer({ min: 0, max: 8 }),
    type: fc.constantFrom('ml.inf2.xlarge', 'ml.g5.xlarge'),
  });
  const fault = fc.constantFrom('none', 'none', 'none', 'describe-throttled', 'metrics-throttled', 'update-fails', 'metrics-garbage');

  test('never throws; one audit line per run; failures leave a datapoint; writes only valid weights for existing variants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          status: fc.constantFrom('InService', 'InService', 'Updating'),
          variants: fc.tuple(variantAnswer('preferred'), variantAnswer('fallback')),
          mode: series,
          preferred: signals,
          fallback: signals,
          fault,
          sensitive: fc.boolean(),
        }),
        async (w) => {
          cw.reset();
          sm.reset();
          const facts = SM.facts.kind === 'sagemaker' ? SM.facts : undefined!;
          const config: ReconcilerConfig = w.sensitive
            ? {
              ...SM,
              placement: { sensitive: true },
              facts: {
                ...facts,
                variants: [facts.variants[0], { ...facts.variants[1], classes: [{ ...facts.variants[1].classes[0], allowSensitive: false }] }],
              },
            }
            : SM;
          const answer = endpoint(w.status, w.variants);
          if (w.fault === 'describe-throttled') sm.on(DescribeEndpointCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
          else sm.on(DescribeEndpointCommand).resolves(answer);
          if (w.fault === 'update-fails') sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(Object.assign(new Error('no'), { name: 'ValidationException' }));
          if (w.fault === 'metrics-throttled') cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
          else if (w.fault === 'metrics-garbage') cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'nope', Values: [Number.NaN], Timestamps: [new Date(0)] }] });
          else {
            const clean = (s?: Series) => s?.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null));
            serveMetrics(config, {
              mode: clean(w.mode),
              classes: {
                preferred: Object.fromEntries(Object.entries(w.preferred).map(([k, v]) => [k, clean(v)])),
                fallback: Object.fromEntries(Object.entries(w.fallback).map(([k, v]) => [k, clean(v)])),
              },
            });
          }
          const { result, lines } = await run(config);
          expect(audits(lines)).toHaveLength(1);
          if (result.action === 'failed') expect(failures(lines)).toHaveLength(1);
          else expect(failures(lines)).toHaveLength(0);
          const writes = sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand);
          expect(writes.length).toBeLessThanOrEqual(1);
          const existing = new Set(w.variants.map((v) => v.name));
          for (const call of writes) {
            const desired = call.args[0].input.DesiredWeightsAndCapacities!;
            expect(desired.every((d) => existing.has(d.VariantName!))).toBe(true);
            expect(desired.every((d) => Number.isFinite(d.DesiredWeight) && d.DesiredWeight! >= 0)).toBe(true);
            expect(desired.some((d) => d.DesiredWeight! > 0)).toBe(true);
            if (w.sensitive) expect(desired.find((d) => d.VariantName === 'fallback')!.DesiredWeight).toBe(0);
            expect(w.status).toBe('InService');
          }
        },
      ),
      { numRuns: 150, seed: 15 },
    );
  });
});

describe('the listener write keeps an authenticate-oidc action valid', () => {
  test('fails when the write-back carries neither ClientSecret nor UseExistingClientSecret (ModifyListener rejects it and the weights freeze)', async () => {
    const oidc = { Issuer: 'https://idp', AuthorizationEndpoint: 'https://idp/a', TokenEndpoint: 'https://idp/t', UserInfoEndpoint: 'https://idp/u', ClientId: 'c' };
    const read = listener({ inf2: 50, g6: 50 });
    // DescribeListeners never returns the client secret.
    elb.on(DescribeListenersCommand).resolves({
      Listeners: [{ ...read.Listeners[0], DefaultActions: [{ Type: 'authenticate-oidc', Order: 1, AuthenticateOidcConfig: oidc }, { ...read.Listeners[0].DefaultActions[0], Order: 2 }] }],
    });
    // ELBv2's own rule: "required if you are creating a rule. If you are modifying a rule, you can omit this parameter if
    // you set UseExistingClientSecret to true" (AuthenticateOidcActionConfig.ClientSecret).
    elb.on(ModifyListenerCommand).callsFake((input) => {
      for (const a of input.DefaultActions) {
        if (a.Type === 'authenticate-oidc' && !a.AuthenticateOidcConfig.ClientSecret && a.AuthenticateOidcConfig.UseExistingClientSecret !== true) {
          throw Object.assign(new Error('A client secret must be specified'), { name: 'ValidationError' });
        }
      }
      return {};
    });
    serveMetrics(ALB, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(300)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(300)) },
      },
    });
    const { result } = await run(ALB);
    expect(result.action).toBe('applied');
    const written = elb.commandCalls(ModifyListenerCommand)[0].args[0].input.DefaultActions!;
    expect(written[0]).toEqual({ Type: 'authenticate-oidc', Order: 1, AuthenticateOidcConfig: { ...oidc, UseExistingClientSecret: true } });
  });
});

describe('a run never outlives its deadline', () => {
  test('fails when an AWS call that never answers keeps the run past its deadline: it ends with reason timeout, an audit line and a datapoint', async () => {
    sm.on(DescribeEndpointCommand).callsFake(() => new Promise(() => undefined));
    const lines: Array<Record<string, unknown>> = [];
    const started = Date.now();
    const result = await reconcile(SM, clients, { nowMs: NOW_MS, deadlineMs: NOW_MS + 100, log: (l) => lines.push(l), retry: fastRetry });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ action: 'failed', reason: 'timeout' });
    expect(audits(lines)).toEqual([expect.objectContaining({ apply: expect.objectContaining({ action: 'failed', reason: 'timeout' }) })]);
    expect(failures(lines)).toEqual([expect.objectContaining({ Reason: 'timeout', ReconcilerFailures: 1 })]);
  });

  test('fails when a write the deadline cut off is reported as weights unchanged: its outcome is unknown', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 0, desired: 6, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 2, desired: 2, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: {
        preferred: { readyReplicas: fill(0), desiredReplicas: fill(6), capacityErrors: fill(3) },
        fallback: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(1200)) },
      },
    });
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).callsFake(() => new Promise(() => undefined));
    const result = await reconcile(SM, clients, { nowMs: NOW_MS, deadlineMs: NOW_MS + 300, log: () => undefined, retry: fastRetry });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(1);
    expect(result).toMatchObject({ action: 'failed', reason: 'timeout' });
    expect(result.detail).toContain(": outcome unknown (sent, and it may have landed; the next run reads the target): AWS did not answer before the run's deadline");
    expect(result.detail).not.toContain('unchanged');
  });

  test('fails when a throttled call is retried past the deadline: no attempt starts after it', async () => {
    let calls = 0;
    sm.on(DescribeEndpointCommand).callsFake(() => {
      calls += 1;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    });
    const slowRetry = { sleep: () => new Promise<void>((r) => setTimeout(r, 80)), random: () => 1 };
    const result = await reconcile(SM, clients, { nowMs: NOW_MS, deadlineMs: NOW_MS + 50, log: () => undefined, retry: slowRetry });
    expect(result).toMatchObject({ action: 'failed', reason: 'timeout' });
    expect(calls).toBe(1);
  });

  test('four SDK attempts, each bounded, fit between the run\'s start and its deadline', async () => {
    const { DEADLINE_RESERVE_MS, FUNCTION_TIMEOUT_MS } = await import('../../lambda/reconciler');
    const { LAMBDA_CLIENT_OPTIONS } = await import('../../lib/core/sdk-client-profiles');
    // The profile's own values: test/core/sdk-client-profiles.test.ts.
    expect(LAMBDA_CLIENT_OPTIONS.maxAttempts).toBe(1);
    // The deadline leaves the reserve for the records before the function's own timeout (the construct's 30 s).
    expect(FUNCTION_TIMEOUT_MS - DEADLINE_RESERVE_MS).toBeGreaterThanOrEqual(4 * LAMBDA_CLIENT_OPTIONS.requestHandler.requestTimeout);
  });

  test('fails when a query CloudWatch did not answer is read as no data: InternalError is asked again, then the run fails unchanged', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    serveMetrics(SM, {
      mode: fill(0),
      classes: { preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(1200)) } },
    });
    // The world's answer, with the mode's query not answered: read as no history, a cold environment would start in
    // capacity mode and publish it.
    const queries = buildQueryBatch(signalPlan(SM, 60), 60).queries as MetricDataQuery[];
    const read = new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: new Date(0), EndTime: new Date(0) });
    const answer = (await clients.cloudwatch.send(read)) as GetMetricDataCommandOutput;
    const unanswered = (status: 'InternalError' | 'Forbidden' | 'PartialData') => ({ ...answer, MetricDataResults: answer.MetricDataResults!.map((r, i) =>
      (i === 0 ? { ...r, Timestamps: [], Values: [], StatusCode: status, Messages: [{ Code: 'InternalError', Value: 'try again' }] } : r)) });
    for (const status of ['InternalError', 'PartialData', 'Forbidden'] as const) {
      cw.reset();
      cw.on(GetMetricDataCommand).resolves(unanswered(status));
      const { result, lines } = await run(SM);
      expect(result).toMatchObject({ action: 'failed', reason: 'aws-error' });
      expect(result.detail).toContain(`GetMetricData did not answer ${answer.MetricDataResults![0].Id} (${status}): InternalError: try again`);
      expect(lines.some((l) => 'PolicyMode' in l)).toBe(false);
      expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
      // InternalError and a partial answer with no page to follow are asked again; a denial is not.
      expect(cw.commandCalls(GetMetricDataCommand).length).toBe(status === 'Forbidden' ? 1 : DEFAULT_RETRY.maxAttempts);
    }
    // Answered once asked again: the run decides as usual.
    cw.reset();
    cw.on(GetMetricDataCommand).resolvesOnce(unanswered('InternalError')).resolves(answer);
    expect((await run(SM)).result.action).not.toBe('failed');
  });

  test('fails when GetMetricData pages without end: the run stops after a bounded number of pages', async () => {
    sm.on(DescribeEndpointCommand).resolves(endpoint('InService', [
      { name: 'preferred', weight: 98, ready: 3, desired: 3, type: 'ml.inf2.xlarge' },
      { name: 'fallback', weight: 2, ready: 1, desired: 1, type: 'ml.g5.xlarge' },
    ]));
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [], NextToken: 'more' });
    const { result } = await run(SM);
    expect(result).toMatchObject({ action: 'failed', reason: 'aws-error', detail: expect.stringContaining(`after ${MAX_METRIC_PAGES} pages`) });
    expect(cw.commandCalls(GetMetricDataCommand)).toHaveLength(MAX_METRIC_PAGES);
  });
});
