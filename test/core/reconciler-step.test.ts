/**
 * The reconciler's pure step (lib/core/reconciler/observe.ts, step.ts): no SDK, no mocks, answers built from the query
 * itself as CloudWatch would publish them. The Lambda's handler suites run the same step behind the I/O shell.
 */
import { KARPENTER_CAPACITY_NAMESPACE } from '../../lib/core/metrics/karpenter-capacity';
import { SAGEMAKER_ENDPOINT_LIMITS } from '../../lib/core/platform/limits';
import { policyWindowPeriods, resolvePolicyConfig } from '../../lib/core/policy/defaults';
import { recoverySeen } from '../../lib/core/policy/evidence';
import { type ClassSignals } from '../../lib/core/policy/types';
import { ALARM_STATE_CHANGE, alarmedClasses } from '../../lib/core/reconciler/alarm-trigger';
import { counterPerSecond, type ReconcilerConfig, windowDefaultsForPeriod } from '../../lib/core/reconciler/config';
import { demandWindow } from '../../lib/core/reconciler/faults';
import { AUDIT_RECORD_MAX_BYTES, type MetricResult } from '../../lib/core/reconciler/io';
import { provisioningGraceFromFacts } from '../../lib/core/reconciler/from-facts';
import { type RunMemory } from '../../lib/core/reconciler/memory';
import { emptyWhereUnpublished, metricQuery, observe, seenWhereUnpublished } from '../../lib/core/reconciler/observe';
import { type RoutedClassFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { rememberRun, runRecords, type RunOutcome, step, type StepDecision, weightsInForce } from '../../lib/core/reconciler/step';
import { hpaHonouredFloor } from '../../lib/core/reconciler/targets/alb';
import { routingTarget } from '../../lib/core/reconciler/targets';
import { capacityToLower } from '../../lib/core/reconciler/targets/sagemaker';
import { instancesByType } from '../../lib/core/reconciler/targets/sagemaker-instances';
import { type TargetState } from '../../lib/core/reconciler/targets/kind';
import { numberProblem } from '../../lib/core/validation/checker';
import { reconcilerConfigProblems } from '../../lib/core/validation/reconciler-config';
import { MAX_WINDOW_PERIODS, RECONCILER_RULES } from '../../lib/core/validation/reconciler-rules';
import { EKS_RULES } from '../../lib/core/validation/rules';

const NOW_MS = Date.UTC(2026, 10, 30, 12, 0, 30);
const cls = (name: string, rank: number, instanceType: string, tps: number, usd: number, maxReplicas = 10): RoutedClassFacts => ({
  name, preferenceRank: rank, tokensPerSecondPerReplica: tps, safeConcurrency: 8, usdPerReplicaHour: usd, allowSensitive: true, maxReplicas,
  instanceType,
});
const SM: ReconcilerConfig = {
  facts: {
    kind: 'sagemaker',
    endpointName: 'llm',
    endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
    variants: [
      { variantName: 'preferred', classes: [cls('inf2', 0, 'ml.inf2.xlarge', 300, 0.76)] },
      { variantName: 'fallback', classes: [cls('g5', 1, 'ml.g5.xlarge', 250, 1.0)] },
    ],
  },
  placement: {},
  policy: {},
  service: 'chat',
  tokensPerRequest: 200,
  metricDelaySeconds: 120,
};
const albTarget = (name: string, rank: number, tps: number, usd: number, maxReplicas = 10) => ({
  class: cls(name, rank, `${name}.xlarge`, tps, usd, maxReplicas),
  targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0001`,
  targetGroupFullName: `targetgroup/${name}/0001`,
  namespace: 'serving',
  deploymentName: name,
  nodePoolName: name,
});
const ALB: ReconcilerConfig = {
  facts: {
    kind: 'alb',
    listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/abc/def',
    loadBalancerFullName: 'app/llm/abc',
    targets: [albTarget('inf2', 0, 300, 0.76), albTarget('g6', 1, 200, 0.8, 12)],
  },
  placement: {},
  policy: {},
  service: 'chat',
  tokensPerRequest: 200,
  metricDelaySeconds: 120,
  clusterName: 'prod',
};

type Series = Array<number | null>;
interface World {
  mode?: Series;
  ramping?: Series;
  eventEntries?: Series;
  floors?: Record<string, Series>;
  /** Raw metric values by routed name and signal, one per period; the 12 periods end just before the current one. */
  classes: Record<string, Partial<Record<
    'readyReplicas' | 'readyReplicasSeen' | 'desiredReplicas' | 'pendingScaleOut' | 'capacityErrors' | 'servedTokensPerSecond'
    | 'rejectedTokensPerSecond',
    Series
  >>>;
}
const fill = (value: number | null, n = 12) => Array.from({ length: n }, () => value);
/** Requests per minute that make `tokens` tokens/s at 200 tokens per request. */
const perMinute = (tokens: number) => (tokens * 60) / 200;

/** The GetMetricData answer to `metricQuery(config, nowMs)` for a world, as CloudWatch publishes it. */
function answer(config: ReconcilerConfig, world: World, nowMs = NOW_MS): MetricResult[] {
  const { batch, frame, now } = metricQuery(config, nowMs);
  const start = now - 12 * frame.periodSeconds;
  return batch.index.map((e) => {
    const series = e.signal === 'mode' ? world.mode
      : e.signal === 'ramping' ? world.ramping
        : e.signal === 'eventEntries' ? world.eventEntries
          : e.signal === 'floor' ? world.floors?.[e.className!]
            : world.classes[e.className!]?.[e.signal as keyof World['classes'][string]];
    const points = (series ?? []).map((v, i) => ({ v, ts: new Date((start + i * frame.periodSeconds) * 1000) })).filter((p) => p.v !== null);
    return { Id: e.id, Timestamps: points.map((p) => p.ts), Values: points.map((p) => p.v as number) };
  });
}
const sagemaker = (weights: Record<string, number>, desired: Record<string, number> = {}, ready: Record<string, number> = {}): TargetState => ({
  weights,
  pools: { preferred: { 'ml.inf2.xlarge': ready.preferred ?? 3 }, fallback: { 'ml.g5.xlarge': ready.fallback ?? 1 } },
  replicas: {
    preferred: { ready: ready.preferred ?? 3, desired: desired.preferred ?? 3 },
    fallback: { ready: ready.fallback ?? 1, desired: desired.fallback ?? 1 },
  },
  present: Object.keys(weights),
});
const alb = (weights: Record<string, number>): TargetState => ({ weights, pools: {}, replicas: {}, present: Object.keys(weights) });
const decided = (s: ReturnType<typeof step>): StepDecision => {
  if (!s.ok) throw new Error(`step failed: ${s.detail}`);
  return s;
};

describe('step: one run, from answers to the write', () => {
  test('steady state: the cost plan in force is left unchanged; the records carry one audit line', () => {
    const world: World = {
      mode: fill(0),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(490)) },
        fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    };
    const s = decided(step(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, world), NOW_MS));
    expect(s.plan).toEqual({ action: 'unchanged' });
    expect(s.decision.reason.code).toBe('cost-plan');
    expect(s.observation.demandTokensPerSecond.at(-1)).toBeCloseTo(500, 6);
    const records = runRecords(SM, s, { action: 'unchanged' }, NOW_MS);
    expect(records.filter((r) => r.audit === 'routing-decision')).toHaveLength(1);
    // HealthyTargets is an ALB target group's: SageMaker neither publishes nor reads it.
    expect(records.filter((r) => 'HealthyTargets' in r)).toEqual([]);
    expect(metricQuery(SM, NOW_MS).batch.index.filter((e) => e.signal === 'readyReplicasSeen')).toEqual([]);
  });

  test('fails when the facts name a variant the endpoint does not hold: no decision, a target-mismatch failure', () => {
    const s = step(SM, sagemaker({ preferred: 98, 'fallback-v2': 2 }), answer(SM, { classes: {} }), NOW_MS);
    expect(s).toMatchObject({ ok: false, reason: 'target-mismatch' });
    expect(runRecords(SM, s, { action: 'failed' }, NOW_MS).map((r) => ('ReconcilerFailures' in r ? 'emf' : r.audit))).toEqual(['emf', 'routing-decision']);
  });

  test('fails when a variant the facts no longer name keeps its traffic: the weights write sets it to 0', () => {
    const world: World = {
      mode: fill(0),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(490)) },
        fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    };
    const target = { ...sagemaker({ preferred: 98, fallback: 2 }), weights: { preferred: 98, fallback: 2, retired: 10 } };
    const s = decided(step(SM, { ...target, present: ['preferred', 'fallback', 'retired'] }, answer(SM, world), NOW_MS));
    expect(s.plan).toMatchObject({ action: 'write', write: { kind: 'weights', weights: { preferred: 98, fallback: 2 }, zeroed: ['retired'] } });
  });
});

describe('demand holes', () => {
  const classes = (served: Series, rejected: Series) => ({
    a: { readyReplicas: [], desiredReplicas: [], servedTokensPerSecond: served, rejectedTokensPerSecond: rejected },
  });

  test('fails when a class without a served datapoint but a rejection count of 0 is read as zero demand', () => {
    // SageMaker publishes Invocation5XXErrors as 0 per request: it can be there while Invocations is missing.
    expect(demandWindow(classes([null], [0]), ['a'], 1, { a: 100 })).toEqual([null]);
    // Rejections alone, when there are some, are demand.
    expect(demandWindow(classes([null], [40]), ['a'], 1, { a: 100 })).toEqual([40]);
  });

  test('fails when shed requests are counted twice where the served count already includes them (ALB RequestCount)', () => {
    expect(demandWindow(classes([100], [30]), ['a'], 1, { a: 100 }, new Set(['a']))).toEqual([100]);
    expect(demandWindow(classes([100], [30]), ['a'], 1, { a: 100 })).toEqual([130]);
  });

  test('ALB: demand is RequestCount alone, so client 4xx of a TGI class never add demand; the 4XX count stays informational', () => {
    const config: ReconcilerConfig = { ...ALB, signals: { inf2: { rejectionStatus: '4xx' } } };
    const world: World = {
      mode: fill(0),
      classes: {
        inf2: {
          readyReplicas: fill(3), desiredReplicas: fill(3),
          servedTokensPerSecond: fill(perMinute(400)), rejectedTokensPerSecond: fill(perMinute(100)),
        },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    };
    const o = observe(config, alb({ inf2: 98, g6: 2 }), answer(config, world), NOW_MS);
    expect(o.demandTokensPerSecond.at(-1)).toBeCloseTo(410, 6);
    expect(o.signals.inf2.rejectedTokensPerSecond?.at(-1)).toBeCloseTo(100, 6);
    // The policy is told the served count includes the rejections (it measures what a class delivered from it).
    expect(o.signals.inf2.servedIncludesRejected).toBe(true);
    expect(o.signals.g6.servedIncludesRejected).toBe(true);
  });

  test('each fallback that declares a replica-ready time is handed to the policy with its own grace, and the window covers it', () => {
    // As the Reconciler construct resolves it at synth from g6's declared 8000 s (the facts it deploys carry no ready times).
    const slow = { ...albTarget('g6', 1, 200, 0.8, 12), class: { ...albTarget('g6', 1, 200, 0.8, 12).class, replicaReadyTimeP95Seconds: 8000 } };
    const declared = { ...ALB.facts, targets: [albTarget('inf2', 0, 300, 0.76), slow] } as ReconcilerConfig['facts'];
    const config: ReconcilerConfig = { ...ALB, fallbackGraceSeconds: provisioningGraceFromFacts(declared, {}, 120, 60).fallbacks };
    const world: World = {
      mode: fill(0),
      classes: { inf2: { readyReplicas: fill(3), desiredReplicas: fill(3) }, g6: { readyReplicas: fill(1), desiredReplicas: fill(1) } },
    };
    const o = observe(config, alb({ inf2: 98, g6: 2 }), answer(config, world), NOW_MS);
    // (8000 + 120) s in whole minutes; the preferred class keeps the policy's grace. 136 periods: more than the policy's own.
    expect(o.classes.map((c) => [c.name, c.provisioningGraceSeconds])).toEqual([['inf2', undefined], ['g6', 8160]]);
    expect(policyWindowPeriods(resolvePolicyConfig({}))).toBeLessThan(136);
    expect(o.query.signalSlots).toBe(136);
    expect(metricQuery(ALB, NOW_MS).classGraces).toEqual({});
    // A grace for a route the facts do not have, or of no seconds, is refused by the function's configuration check.
    expect(reconcilerConfigProblems({ ...config, fallbackGraceSeconds: { g5: 600, g6: -1 } })).toEqual([
      "fallbackGraceSeconds.g5: no route of the facts is named 'g5'; allowed: inf2, g6",
      'fallbackGraceSeconds.g6: is -1; allowed: seconds above 0',
    ]);
    // The run's own history stays the policy's window: a floor published 80 periods ago is no floor in force.
    const { batch, frame } = metricQuery(config, NOW_MS);
    const floorAt = (slot: number): MetricResult[] => batch.index.filter((e) => e.signal === 'floor' && e.className === 'g6')
      .map((e) => ({ Id: e.id, Timestamps: [new Date((frame.start + slot * frame.periodSeconds) * 1000)], Values: [4] }));
    const results = [...answer(config, world).filter((r) => !floorAt(0).some((f) => f.Id === r.Id)), ...floorAt(5)];
    expect(observe(config, alb({ inf2: 98, g6: 2 }), results, NOW_MS).floorsInForce).toBeNull();
    const recent = [...answer(config, world).filter((r) => !floorAt(0).some((f) => f.Id === r.Id)), ...floorAt(frame.slots - 3)];
    expect(observe(config, alb({ inf2: 98, g6: 2 }), recent, NOW_MS).floorsInForce).toEqual({ g6: 4 });
    // Nor is one older than the stabilization window (600 s), though within the history a run reads (review R268).
    const stale = [...answer(config, world).filter((r) => !floorAt(0).some((f) => f.Id === r.Id)), ...floorAt(frame.slots - 15)];
    expect(observe(config, alb({ inf2: 98, g6: 2 }), stale, NOW_MS).floorsInForce).toBeNull();
  });

  test('fails when fallbackGraceSeconds is not an object of seconds above 0 by route of the facts, naming the value and what is allowed', () => {
    expect(reconcilerConfigProblems({ ...ALB, fallbackGraceSeconds: 'g6' as never })).toEqual([
      'fallbackGraceSeconds: is "g6"; allowed: an object of seconds by route',
    ]);
    expect(reconcilerConfigProblems({ ...ALB, fallbackGraceSeconds: [600] as never })).toEqual([
      'fallbackGraceSeconds: is [600]; allowed: an object of seconds by route',
    ]);
    // JSON turns a NaN into null; an edited environment may hold a string.
    expect(reconcilerConfigProblems({ ...ALB, fallbackGraceSeconds: { g6: null, inf2: '600' } as never })).toEqual([
      'fallbackGraceSeconds.g6: is null; allowed: seconds above 0',
      'fallbackGraceSeconds.inf2: is "600"; allowed: seconds above 0',
    ]);
    expect(reconcilerConfigProblems({ ...ALB, fallbackGraceSeconds: { g6: 480 } })).toEqual([]);
  });

  test('reads a scraped counter over the least common multiple of the period and the scrape interval (an even count of deltas each)', () => {
    const tokens = { namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'chat', CapacityClass: 'inf2' }, stat: 'Sum' };
    const periodOf = (periodSeconds: number, intervalSeconds: number) =>
      counterPerSecond(tokens, periodSeconds, intervalSeconds).periodSeconds ?? periodSeconds;
    // 300 s periods and a 2-minute scrape: 2 or 3 deltas per period, 5 in every 600 s (R204).
    expect(periodOf(300, 120)).toBe(600);
    expect(periodOf(120, 180)).toBe(360);
    expect(periodOf(60, 120)).toBe(120);
    expect(periodOf(60, 30)).toBe(60);
    expect(periodOf(300, 60)).toBe(300);
    expect(counterPerSecond(tokens, 300, 120).scale).toBe(1 / 600);
  });

  test('fails when a token counter scraped every 2 minutes leaves every other period without demand: it is read over 2 periods', () => {
    const tokens = { namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'chat', CapacityClass: 'inf2' }, stat: 'Sum' };
    const config: ReconcilerConfig = { ...ALB, signals: { inf2: { generatedTokens: tokens, generatedTokensIntervalSeconds: 120 } } };
    const { batch, frame } = metricQuery(config, NOW_MS);
    const entry = batch.index.find((e) => e.className === 'inf2' && e.signal === 'servedTokensPerSecond')!;
    expect(batch.queries.find((q) => q.Id === entry.id)?.MetricStat?.Period).toBe(120);
    // CloudWatch answers the 120-s query with one Sum per 2 minutes: 400 tokens/s x 120 s.
    const results = answer(config, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3) },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    }).map((r) => (r.Id !== entry.id ? r : {
      Id: r.Id,
      Timestamps: Array.from({ length: Math.ceil(frame.slots / 2) }, (_, i) => new Date((frame.start + i * 120) * 1000)),
      Values: Array.from({ length: Math.ceil(frame.slots / 2) }, () => 400 * 120),
    }));
    const o = observe(config, alb({ inf2: 98, g6: 2 }), results, NOW_MS);
    expect(o.signals.inf2.servedTokensPerSecond?.slice(-10)).toEqual(fill(400, 10));
    expect(o.demandTokensPerSecond.slice(-10).every((d) => d !== null && Math.abs(d - 410) < 1e-6)).toBe(true);
  });

  // Review R256 D1: CloudWatch cuts a query's answer into periods from its StartTime on (boto/boto3#3457). A counter read
  // over a longer period than the reconciler's must end a bucket at the newest signal period's end, or that bucket holds
  // deltas up to now (or none yet, past it), divided by the full period: a demand that reads low every run.
  const scrapedAt = (periodSeconds: number, graceSeconds: number, scrapeSeconds: number): ReconcilerConfig => {
    const windows = resolvePolicyConfig({ periodSeconds, ...windowDefaultsForPeriod(periodSeconds) });
    return {
      ...ALB,
      policy: {
        periodSeconds,
        ...windowDefaultsForPeriod(periodSeconds),
        provisioningGraceSeconds: Math.ceil(graceSeconds / periodSeconds) * periodSeconds,
        // At least the stabilization window (an hour's period makes it an hour).
        maxReturnHoldSeconds: Math.max(windows.maxReturnHoldSeconds, windows.stabilizationWindowSeconds),
      },
      // As the Reconciler renders an EksInferenceService's scraped counters (`routedProducers`, targets/alb.ts).
      contractTokenCounters: ['inf2'],
      ...(scrapeSeconds > 60 ? { signals: { inf2: { generatedTokensIntervalSeconds: scrapeSeconds } } } : {}),
    };
  };
  const tokenQueryPeriod = (q: ReturnType<typeof metricQuery>) => {
    const entry = q.batch.index.find((e) => e.className === 'inf2' && e.signal === 'servedTokensPerSecond')!;
    return q.batch.queries.find((x) => x.Id === entry.id)!.MetricStat!.Period;
  };

  test('fails when the token bucket over the newest signal period ends past it: every period, scrape interval and grace 300-900 s', () => {
    const scrapes = Array.from({ length: 231 }, (_, i) => i + 10).filter((s) => numberProblem(EKS_RULES['observability.scrapeInterval'], s) === undefined
      && EKS_RULES['observability.scrapeInterval@periods'].check(s) === undefined);
    expect(scrapes).toEqual([10, 12, 15, 20, 30, 60, 120, 180, 240]);
    const periods = Array.from({ length: 21_600 / 60 }, (_, i) => (i + 1) * 60).filter((p) => numberProblem(RECONCILER_RULES['policy.period'], p) === undefined);
    expect(periods).toHaveLength(360);
    let checked = 0;
    let longer = 0;
    for (const period of periods) {
      const graces = [...new Set(Array.from({ length: 11 }, (_, i) => Math.ceil((300 + i * 60) / period) * period))];
      for (const grace of graces) {
        for (const scrape of scrapes) {
          const config = scrapedAt(period, grace, scrape);
          // Only what the Reconciler accepts (a window of up to 1,440 periods that GetMetricData still answers).
          if (reconcilerConfigProblems(config).length > 0) continue;
          const first = metricQuery(config, NOW_MS);
          const q = tokenQueryPeriod(first);
          if (q > period) longer++;
          // Every phase of the run against the query period.
          for (let k = 0; k < q / period; k++) {
            const nowMs = NOW_MS + k * period * 1000;
            const { startTime, frame, signalSlots } = metricQuery(config, nowMs);
            const signalsEnd = frame.start + signalSlots * period;
            expect(signalsEnd).toBe(Math.floor((nowMs / 1000 - config.metricDelaySeconds) / period) * period);
            const newest = frame.start + (signalSlots - 1) * period;
            const bucketEnd = startTime + (Math.floor((newest - startTime) / q) + 1) * q;
            if (bucketEnd > signalsEnd || startTime > frame.start || startTime % 60 !== 0) {
              throw new Error(`period ${period} s, grace ${grace} s, scrape ${scrape} s, now +${k} periods: `
                + `the bucket over the newest signal period ends ${bucketEnd - signalsEnd} s past it (StartTime ${startTime}, frame ${frame.start})`);
            }
            checked++;
          }
        }
      }
    }
    expect(longer).toBeGreaterThan(0);
    // Every period and scrape interval at least once (the ones the Reconciler accepts: all of them).
    expect(checked).toBeGreaterThan(periods.length * scrapes.length);
  });

  test('fails when the newest demand period reads a partial token bucket: 300 s periods, a 120 s scrape, grace 600 s (R256)', () => {
    const config = scrapedAt(300, 600, 120);
    // 11:57:00, the metric delay (120 s) after the newest signal period's end, 11:55:00.
    const nowMs = Date.UTC(2026, 10, 30, 11, 57, 0);
    const query = metricQuery(config, nowMs);
    const { batch, frame, signalSlots, startTime, endTime } = query;
    expect(tokenQueryPeriod(query)).toBe(600);
    // An odd number of signal periods: from the frame's start, the newest 600 s bucket would end at 12:00:00, one period
    // past them, holding 7 of its 10 minutes (0.7 x the rate).
    expect(signalSlots % 2).toBe(1);
    const now = nowMs / 1000;
    const rate = 400;
    // CloudWatch's answer: each query's buckets from StartTime on, up to EndTime. The agent publishes a delta per scrape
    // as it scrapes, so a bucket holds the tokens served up to now; replicas and the other class's requests per period.
    const results: MetricResult[] = batch.index.map((e) => {
      const period = batch.queries.find((x) => x.Id === e.id)!.MetricStat?.Period ?? frame.periodSeconds;
      const starts = Array.from({ length: Math.ceil((endTime - startTime) / period) }, (_, i) => startTime + i * period).filter((t) => t < now);
      const value = (t: number) => (e.className === 'inf2' && e.signal === 'servedTokensPerSecond' ? rate * (Math.min(t + period, now) - t)
        : e.signal === 'readyReplicas' || e.signal === 'desiredReplicas' ? (e.className === 'inf2' ? 3 : 1)
          : e.className === 'g6' && e.signal === 'servedTokensPerSecond' ? (10 * period) / 200
            : e.signal === 'mode' ? 0 : undefined);
      const points = starts.flatMap((t) => (value(t) === undefined ? [] : [{ t, v: value(t)! }]));
      return { Id: e.id, Timestamps: points.map((p) => new Date(p.t * 1000)), Values: points.map((p) => p.v) };
    });
    const o = observe(config, alb({ inf2: 98, g6: 2 }), results, nowMs);
    expect(o.signals.inf2.servedTokensPerSecond).toEqual(fill(rate, signalSlots));
    expect(o.demandTokensPerSecond.at(-1)).toBeCloseTo(rate + 10, 6);
    // The query starts a period before the frame; the frame, and with it every other window, is where it was.
    expect(startTime).toBe(frame.start - 300);
    expect(frame.start).toBe(Math.floor((now - config.metricDelaySeconds) / 300) * 300 - signalSlots * 300);
  });

  test('a window reaching back about 15 days starts where it did when an earlier start would need periods of 5 minutes', () => {
    // 1,135 periods of 19 minutes and a 900 s metric delay: the Reconciler accepts the window (its oldest period within
    // 15 days), and a 2,280 s token bucket ending at the newest signal period would start a period further back.
    const base = scrapedAt(1140, 1140, 120);
    const config: ReconcilerConfig = { ...base, metricDelaySeconds: 900, policy: { ...base.policy, reentryMemorySeconds: 1135 * 1140 } };
    expect(reconcilerConfigProblems(config)).toEqual([]);
    // A run `late` seconds after the metric delay passed its newest signal period's end.
    const nowOf = (late: number) => Math.floor(NOW_MS / 1000 / 1140) * 1140 + 900 + late;
    const late = metricQuery(config, nowOf(600) * 1000);
    expect(late.signalSlots).toBe(1135);
    // Past 15 days GetMetricData answers only periods of a multiple of 300 s (`historyPeriodMultiple`): 1,140 s is not one.
    expect(nowOf(600) - (late.frame.start - 1140)).toBeGreaterThan(15 * 86_400);
    expect(late.startTime).toBe(late.frame.start);
    // Judged at the latest the request can reach CloudWatch (Lambda's 900 s timeout, R259): a run reads whole buckets
    // only while the earlier start stays within 15 days that long; within 900 s of the bound it starts where it did.
    // 1,133 periods (an odd count, so the bucket does move the start): always whole; 1,135: the runs soon after the delay
    // passed would have read whole buckets without the margin, and start where they did.
    const seen = new Set<string>();
    for (const periods of [1133, 1135]) {
      const c: ReconcilerConfig = { ...config, policy: { ...config.policy, reentryMemorySeconds: periods * 1140 } };
      for (let after = 0; after < 1140; after += 30) {
        const q = metricQuery(c, nowOf(after) * 1000);
        const whole = nowOf(after) + 900 - (q.frame.start - 1140) <= 15 * 86_400;
        expect(q.startTime).toBe(whole ? q.frame.start - 1140 : q.frame.start);
        if (whole) seen.add('whole');
        else if (nowOf(after) - (q.frame.start - 1140) <= 15 * 86_400) seen.add('margin');
      }
    }
    expect([...seen].sort()).toEqual(['margin', 'whole']);
  });

  test('fails when SageMaker shed requests are counted twice: Invocations already counts the requests the model answered 5XX', () => {
    const world: World = {
      mode: fill(0),
      classes: {
        preferred: {
          readyReplicas: fill(3), desiredReplicas: fill(3),
          servedTokensPerSecond: fill(perMinute(400)), rejectedTokensPerSecond: fill(perMinute(100)),
        },
        fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
      },
    };
    const o = observe(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, world), NOW_MS);
    expect(o.demandTokensPerSecond.at(-1)).toBeCloseTo(410, 6);
    expect(o.signals.preferred.servedIncludesRejected).toBe(true);
    // A variant whose engine counts its own tokens (excluding what it shed) adds its rejections.
    const tokens = { namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'chat', CapacityClass: 'preferred' }, stat: 'Sum' };
    const counted: ReconcilerConfig = { ...SM, signals: { preferred: { generatedTokens: tokens } } };
    // The counter's query answers the tokens of each 60-s period (Sum): 300 tokens/s served.
    const preferred = { ...world.classes.preferred, servedTokensPerSecond: fill(300 * 60) };
    const tokenWorld: World = { ...world, classes: { ...world.classes, preferred } };
    const c = observe(counted, sagemaker({ preferred: 98, fallback: 2 }), answer(counted, tokenWorld), NOW_MS);
    expect(c.demandTokensPerSecond.at(-1)).toBeCloseTo(410, 6);
    expect(c.signals.preferred.servedIncludesRejected).toBeUndefined();
  });

  test('a mixed SageMaker variant sums its 4XX and 5XX queries per period', () => {
    const config: ReconcilerConfig = { ...SM, signals: { fallback: { rejectionStatus: 'mixed' } } };
    const { batch } = metricQuery(config, NOW_MS);
    expect(batch.index.filter((e) => e.className === 'fallback' && e.signal === 'rejectedTokensPerSecond')).toHaveLength(2);
    const world: World = {
      mode: fill(0),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(400)) },
        fallback: {
          readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)), rejectedTokensPerSecond: fill(perMinute(5)),
        },
      },
    };
    // The world answers both rejection queries with the same series: 5 + 5 tokens/s.
    const o = observe(config, sagemaker({ preferred: 98, fallback: 2 }), answer(config, world), NOW_MS);
    expect(o.signals.fallback.rejectedTokensPerSecond?.at(-1)).toBeCloseTo(10, 6);
  });
});

describe('a refused SageMaker scale-out: the rollback is the capacity error', () => {
  // SageMaker waits for the provisioning timeout, then rolls the desired count back; nothing else lowers it while a
  // scale-out is under way. desired > ready lasts at most the timeout per attempt, shorter than a grace window that
  // covers a replica's start, so without this the grace rule could never see the shortage.
  const steady = { servedTokensPerSecond: fill(perMinute(400)) };
  // One run a minute: each minute's PendingScaleOut is its desired - ready.
  const pendingOf = (ready: Series, desired: Series) => ready.map((r, i) => Math.max(0, desired[i]! - r!));
  const world = (ready: Series, desired: Series, pending: Series = pendingOf(ready, desired)): World => ({
    mode: fill(0),
    classes: {
      preferred: { readyReplicas: ready, desiredReplicas: desired, pendingScaleOut: pending, ...steady },
      fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), pendingScaleOut: fill(0), ...steady },
    },
  });

  test('fails when a desired count rolled back to ready without new replicas is not read as a capacity error', () => {
    // The published minutes end asking for 5 with 3 ready; DescribeEndpoint now shows 3 of 3: rolled back.
    const w = world(fill(3), [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3]);
    const o = observe(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, w), NOW_MS);
    const errors = o.signals.preferred.capacityErrors!;
    expect(errors.filter((v) => v === 1)).toHaveLength(1);
    expect(errors.at(-1)).toBe(1);
    // The period of the rollback records the ask that was refused (3 ready + 2 pending) beside the counts as published:
    // a return to cost mode waits until the class has had 5 (recoverySeen), not the 3 it always had.
    expect(o.signals.preferred.refusedAsks).toEqual([...fill(null, o.signals.preferred.readyReplicas.length - 1), 5]);
    expect(o.signals.preferred.desiredReplicas.at(-1)).toBe(3);
    expect(recoverySeen(o.signals.preferred, resolvePolicyConfig({}))).toEqual({ seen: false, asked: 5, lostSecondsAgo: 0 });
    expect(o.signals.fallback).not.toHaveProperty('refusedAsks');
    // DescribeEndpoint's live count is already the window's newest slot: no separate count taken at the run.
    expect(o.signals.preferred.readyReplicas.at(-1)).toBe(3);
    expect(o.signals.preferred).not.toHaveProperty('readyNow');
    const s = decided(step(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, w), NOW_MS));
    expect(s.decision.reason.triggers).toContain('capacity-errors');
    // The audit line names what an operator will find: a rollback, not a capacity-error metric.
    expect(s.decision.reason.message).toContain('preferred reports capacity errors or had a scale-out rolled back without new instances');
  });

  test('a rolled-back ask is the ready count plus the scale-out pending the period before, and only where that was published', () => {
    // 4 ready asking for 6, then 3 of 3: the ask refused was 6, whatever the class fell back to.
    const fell = observe(SM, sagemaker({ preferred: 98, fallback: 2 }, { preferred: 3 }, { preferred: 3 }),
      answer(SM, world(fill(4), [4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6])), NOW_MS);
    expect(fell.signals.preferred.refusedAsks?.at(-1)).toBe(6);
    expect(recoverySeen(fell.signals.preferred, resolvePolicyConfig({})).asked).toBe(6);
    // Before the upgrade that published PendingScaleOut, pending is desired - ready, which two runs around a scale-in can
    // misread: the rollback still counts as a refusal, but no ask is recorded from it.
    const derived = observe(SM, sagemaker({ preferred: 98, fallback: 2 }),
      answer(SM, world(fill(3), [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3], fill(null))), NOW_MS);
    expect(derived.signals.preferred.capacityErrors?.at(-1)).toBe(1);
    expect(derived.signals.preferred).not.toHaveProperty('refusedAsks');
    // An ALB target rolls nothing back: no asks.
    const w: World = {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3], ...steady },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), ...steady },
      },
    };
    expect(observe(ALB, alb({ inf2: 98, g6: 2 }), answer(ALB, w), NOW_MS).signals.inf2).not.toHaveProperty('refusedAsks');
  });

  test('fails when a refusal the reconciler derives is invisible: it is published as RefusedScaleOuts (1 now, 0 otherwise; never on EKS)', () => {
    const refused = (s: ReturnType<typeof step>, config: ReconcilerConfig) => runRecords(config, s, { action: 'unchanged' }, NOW_MS)
      .filter((r) => 'RefusedScaleOuts' in r).map((r) => [r.CapacityClass, r.RefusedScaleOuts]);
    const rolled = step(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, world(fill(3), [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3])), NOW_MS);
    expect(refused(rolled, SM)).toEqual([['preferred', 1], ['fallback', 0]]);
    const calm = step(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, world(fill(3), fill(3))), NOW_MS);
    expect(refused(calm, SM)).toEqual([['preferred', 0], ['fallback', 0]]);
    const w: World = {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3], ...steady },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), ...steady },
      },
    };
    expect(refused(step(ALB, alb({ inf2: 98, g6: 2 }), answer(ALB, w), NOW_MS), ALB)).toEqual([]);
  });

  test('a scale-out that got its replicas, and a scale-in, are not refusals', () => {
    const grown = observe(SM, sagemaker({ preferred: 98, fallback: 2 }, { preferred: 5 }, { preferred: 5 }),
      answer(SM, world([3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 5], [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5])), NOW_MS);
    expect(grown.signals.preferred.capacityErrors!.some((v) => v !== null && v > 0)).toBe(false);
    const shrunk = observe(SM, sagemaker({ preferred: 98, fallback: 2 }, { preferred: 2 }, { preferred: 2 }),
      answer(SM, world([3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3], fill(3))), NOW_MS);
    expect(shrunk.signals.preferred.capacityErrors!.some((v) => v !== null && v > 0)).toBe(false);
  });

  test('fails when two runs in one minute around a finished scale-in read as a refused scale-out (R33)', () => {
    // 11:57 had two runs around a scale-in: 5 of 5 instances, then 4 of 4. ReadyReplicas (Minimum) and DesiredReplicas
    // (Maximum) pair 4 ready with 5 desired, which no run saw; PendingScaleOut, per run, shows nothing pending.
    const ready = [5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4];
    const desired = [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4];
    const o = observe(SM, sagemaker({ preferred: 98, fallback: 2 }, { preferred: 4 }, { preferred: 4 }),
      answer(SM, world(ready, desired, fill(0))), NOW_MS);
    expect(o.signals.preferred.capacityErrors!.some((v) => v !== null && v > 0)).toBe(false);
    // The same published minutes with a scale-out one run saw pending (PendingScaleOut 1): the rollback is read.
    const pending = [...fill(0, 9), 1, 0, 0];
    const rolled = observe(SM, sagemaker({ preferred: 98, fallback: 2 }, { preferred: 4 }, { preferred: 4 }),
      answer(SM, world(ready, desired, pending)), NOW_MS);
    expect(rolled.signals.preferred.capacityErrors!.filter((v) => v === 1)).toHaveLength(1);
  });

  test('fails when an upgrade forgets the refusals of the hour before: periods without PendingScaleOut read desired - ready', () => {
    // Published by a reconciler without PendingScaleOut up to 11:56; the rollback at 11:53 stays a capacity error.
    const ready = fill(3);
    const desired = [3, 3, 3, 3, 5, 3, 3, 3, 3, 3, 3, 3];
    const o = observe(SM, sagemaker({ preferred: 98, fallback: 2 }), answer(SM, world(ready, desired, [...fill(null, 9), 0, 0, 0])), NOW_MS);
    expect(o.signals.preferred.capacityErrors!.filter((v) => v === 1)).toHaveLength(1);
  });

  test('fails when a run does not publish what it saw pending: PendingScaleOut = desired - ready, SageMaker only', () => {
    const pendingOfRun = (s: ReturnType<typeof step>, config: ReconcilerConfig) => runRecords(config, s, { action: 'unchanged' }, NOW_MS)
      .filter((r) => 'PendingScaleOut' in r).map((r) => [r.CapacityClass, r.PendingScaleOut]);
    const live = (desired: number) => sagemaker({ preferred: 98, fallback: 2 }, { preferred: desired }, { preferred: 3 });
    expect(pendingOfRun(step(SM, live(5), answer(SM, world(fill(3), fill(3))), NOW_MS), SM)).toEqual([['preferred', 2], ['fallback', 0]]);
    expect(pendingOfRun(step(SM, live(2), answer(SM, world(fill(3), fill(3))), NOW_MS), SM)).toEqual([['preferred', 0], ['fallback', 0]]);
    const w: World = {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(5), ...steady },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), ...steady },
      },
    };
    expect(pendingOfRun(step(ALB, alb({ inf2: 98, g6: 2 }), answer(ALB, w), NOW_MS), ALB)).toEqual([]);
  });

  test('EKS: an HPA that drops pending pods after its load fell is not a refusal (no derived capacity errors)', () => {
    const w: World = {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: [3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 3], ...steady },
        g6: { readyReplicas: fill(1), desiredReplicas: fill(1), ...steady },
      },
    };
    const o = observe(ALB, alb({ inf2: 98, g6: 2 }), answer(ALB, w), NOW_MS);
    expect(o.signals.inf2.capacityErrors?.some((v) => v !== null && v > 0) ?? false).toBe(false);
  });
});

describe('capacity errors newer than the metric delay, and the alarm that triggered the run', () => {
  // EKS with the Karpenter filter metric per NodePool: the answer's periods run to 11:59; the signal windows end at 11:58.
  const EKS: ReconcilerConfig = { ...ALB, karpenterCapacityErrors: true };
  const loaded = (errors: Series): World => ({
    mode: fill(0),
    classes: {
      // 3 inf2 replicas carry 900 tokens/s; the demand is 1,000: the preferred class alone is short.
      inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(980)), capacityErrors: errors },
      g6: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(20)) },
    },
  });
  const inf2Alarm = (value: string, dimensions: Record<string, string> = {}, reasonData = '{"version":"1.0","recentDatapoints":[2.0],"threshold":1.0}') => ({
    'detail-type': ALARM_STATE_CHANGE,
    detail: {
      state: { value, reasonData },
      configuration: { metrics: [{ metricStat: { metric: { namespace: KARPENTER_CAPACITY_NAMESPACE, name: 'InsufficientCapacity/prod/inf2', dimensions } } }] },
    },
  });

  test('fails when a capacity error CloudWatch already has is ignored for two periods: it counts in the newest slot', () => {
    const o = observe(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded([...fill(null, 11), 2])), NOW_MS);
    const errors = o.signals.inf2.capacityErrors!;
    expect(errors.at(-1)).toBe(2);
    expect(errors.slice(0, -1).every((v) => v === null)).toBe(true);
    const s = decided(step(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded([...fill(null, 11), 2])), NOW_MS));
    expect(s.decision.mode).toBe('capacity');
    expect(s.decision.reason.triggers).toContain('capacity-errors');
  });

  test('an error inside the window stays in its own period, and one after it adds to the newest: never recovery', () => {
    const window = observe(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded([...fill(null, 5), 1, ...fill(null, 4), 3, 1])), NOW_MS)
      .signals.inf2.capacityErrors!;
    // 11:53 in its own slot; 11:58 and 11:59 (3 + 1) past the window's last slot, 11:57.
    expect(window.slice(-6)).toEqual([null, 1, null, null, null, 4]);
    const calm = observe(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded(fill(null))), NOW_MS).signals.inf2.capacityErrors!;
    expect(calm.every((v) => v === null)).toBe(true);
  });

  test('fails when a run triggered by a capacity alarm does not act on it: the alarm counts as an error of its class', () => {
    expect(alarmedClasses(EKS, inf2Alarm('ALARM'))).toEqual(['inf2']);
    const before = decided(step(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded(fill(null))), NOW_MS));
    expect(before.decision.mode).toBe('cost');
    const s = decided(step(EKS, alb({ inf2: 98, g6: 2 }), answer(EKS, loaded(fill(null))), NOW_MS, undefined, alarmedClasses(EKS, inf2Alarm('ALARM'))));
    expect(s.decision.mode).toBe('capacity');
    expect(s.observation.signals.inf2.capacityErrors!.at(-1)).toBe(1);
    expect(s.observation.signals.g6.capacityErrors!.every((v) => v === null)).toBe(true);
  });

  test('an alarm back to OK, on another metric or on several, a scheduled run and a run without errors signals name no class', () => {
    expect(alarmedClasses(EKS, inf2Alarm('OK'))).toEqual([]);
    expect(alarmedClasses(EKS, inf2Alarm('INSUFFICIENT_DATA'))).toEqual([]);
    expect(alarmedClasses(EKS, inf2Alarm('ALARM', { NodePool: 'inf2' }))).toEqual([]);
    expect(alarmedClasses(EKS, { 'detail-type': 'Scheduled Event' })).toEqual([]);
    expect(alarmedClasses(EKS, undefined)).toEqual([]);
    expect(alarmedClasses(ALB, inf2Alarm('ALARM'))).toEqual([]);
    // ALARM without a datapoint that saw an error: an alarm on the same metric with another comparison, a hand-set
    // state (set-alarm-state, whose reason data is the caller's), reason data that does not parse.
    expect(alarmedClasses(EKS, inf2Alarm('ALARM', {}, '{"version":"1.0","recentDatapoints":[0.0],"threshold":1.0}'))).toEqual([]);
    expect(alarmedClasses(EKS, inf2Alarm('ALARM', {}, '{"game-day":true}'))).toEqual([]);
    expect(alarmedClasses(EKS, { ...inf2Alarm('ALARM'), detail: { ...inf2Alarm('ALARM').detail, state: { value: 'ALARM' } } })).toEqual([]);
    expect(alarmedClasses(EKS, inf2Alarm('ALARM', {}, 'not json'))).toEqual([]);
    // A metric without dimensions may come without the key.
    const bare = inf2Alarm('ALARM');
    const { dimensions: _none, ...metric } = bare.detail.configuration.metrics[0].metricStat.metric;
    expect(alarmedClasses(EKS, { ...bare, detail: { ...bare.detail, configuration: { metrics: [{ metricStat: { metric } }] } } })).toEqual(['inf2']);
    // A metric-math alarm over two classes' errors does not say which one fired.
    const both = inf2Alarm('ALARM');
    const metrics = [...both.detail.configuration.metrics, { metricStat: { metric: { ...both.detail.configuration.metrics[0].metricStat.metric, name: 'InsufficientCapacity/prod/g6' } } }];
    expect(alarmedClasses(EKS, { ...both, detail: { ...both.detail, configuration: { metrics } } })).toEqual([]);
  });

  test('SageMaker: errors past the window count in the slot of the counts DescribeEndpoint reports now', () => {
    const config: ReconcilerConfig = {
      ...SM, signals: { preferred: { capacityErrors: { namespace: 'Serving', metricName: 'InsufficientCapacity', dimensions: {}, stat: 'Sum' } } },
    };
    const w = (errors: Series): World => ({
      mode: fill(0),
      classes: {
        preferred: {
          readyReplicas: fill(3), desiredReplicas: fill(3), pendingScaleOut: fill(0), servedTokensPerSecond: fill(perMinute(400)),
          capacityErrors: errors,
        },
        fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), pendingScaleOut: fill(0), servedTokensPerSecond: fill(perMinute(10)) },
      },
    });
    const errorsOf = (errors: Series) => observe(config, sagemaker({ preferred: 98, fallback: 2 }), answer(config, w(errors)), NOW_MS)
      .signals.preferred.capacityErrors!;
    // The window's slots hold 11:49-11:57 and DescribeEndpoint's now: 11:58 and 11:59 count in the last (the derived
    // rollback window reads 0 where no refusal was seen).
    expect(errorsOf([...fill(null, 10), 1, 1]).slice(-2)).toEqual([0, 2]);
    expect(errorsOf([...fill(null, 9), 1, null, null]).slice(-2)).toEqual([1, 0]);
    expect(alarmedClasses(config, {
      'detail-type': ALARM_STATE_CHANGE,
      detail: { state: { value: 'ALARM', reasonData: '{"recentDatapoints":[1.0]}' }, configuration: { metrics: [{ metricStat: { metric: { namespace: 'Serving', name: 'InsufficientCapacity', dimensions: {} } } }] } },
    })).toEqual(['preferred']);
  });
});

describe('a class with no ready replica is empty, not silent (review R39)', () => {
  test('SageMaker: the published ReadyReplicas of each period decide, not the live count DescribeEndpoint gives now', () => {
    // The fallback variant lost its instances in the newest signal period (11:57) and has one again now.
    const w = (fallbackReady: Series): World => ({
      mode: fill(0),
      classes: {
        preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), pendingScaleOut: fill(0), servedTokensPerSecond: fill(perMinute(400)) },
        fallback: {
          readyReplicas: fallbackReady, desiredReplicas: fill(1), pendingScaleOut: fill(0),
          servedTokensPerSecond: [...fill(perMinute(100), 9), null, null, null],
        },
      },
    });
    const target = sagemaker({ preferred: 50, fallback: 50 }, {}, { fallback: 1 });
    const empty = observe(SM, target, answer(SM, w([...fill(1, 9), 0, 0, 0])), NOW_MS).demandTokensPerSecond;
    expect(empty.at(-1)).toBeCloseTo(400, 6);
    // With a replica ready in that period its silence is missing data: the period's demand is unknown.
    const silent = observe(SM, target, answer(SM, w([...fill(1, 9), 1, 0, 0])), NOW_MS).demandTokensPerSecond;
    expect(silent.at(-1)).toBeNull();
  });
});

describe('instances per pool of a SageMaker variant (review R209)', () => {
  const one = [cls('inf2', 0, 'ml.inf2.xlarge', 300, 0.76)];
  const two = [cls('l40s', 0, 'ml.g6e.xlarge', 600, 2.6), cls('a10g', 1, 'ml.g5.xlarge', 400, 1.4)];
  test('fails when a one-class variant without InstancePools (rendered with a plain InstanceType) counts no instances', () => {
    expect(instancesByType(one, { currentInstanceCount: 3 })).toEqual({ 'ml.inf2.xlarge': 3 });
  });
  test('the pools DescribeEndpoint lists are taken as they are, one entry or several', () => {
    expect(instancesByType(one, { currentInstanceCount: 3, pools: [{ instanceType: 'ml.inf2.xlarge', count: 3 }] })).toEqual({ 'ml.inf2.xlarge': 3 });
    const pools = [{ instanceType: 'ml.g6e.xlarge', count: 2 }, { instanceType: 'ml.g5.xlarge', count: 4 }];
    expect(instancesByType(two, { currentInstanceCount: 6, pools })).toEqual({ 'ml.g6e.xlarge': 2, 'ml.g5.xlarge': 4 });
  });
  test('no split is invented: several classes without pools, or a variant the facts do not name, count none', () => {
    expect(instancesByType(two, { currentInstanceCount: 6 })).toEqual({});
    expect(instancesByType(undefined, { currentInstanceCount: 2 })).toEqual({});
  });
  test('observations name a one-class variant\'s count by its class, from those counts', () => {
    const facts = SM.facts as SageMakerRoutingFacts;
    const target: TargetState = {
      weights: { preferred: 98, fallback: 2 }, present: ['preferred', 'fallback'],
      replicas: { preferred: { ready: 3, desired: 4 }, fallback: { ready: 1, desired: 1 } },
      pools: Object.fromEntries(facts.variants.map((v, i) => [v.variantName, instancesByType(v.classes, { currentInstanceCount: [3, 1][i] })])),
    };
    expect(routingTarget(facts).observations(facts, target, {})).toEqual({
      preferred: { ready: 3, desired: 4, pools: { inf2: 3 } },
      fallback: { ready: 1, desired: 1, pools: { g5: 1 } },
    });
  });
});

describe('replica floors', () => {
  // The newest published demand period (12:00 - 2 min delay - 1 = 11:57, the 10th) is missing: the tick holds everything.
  const withGap = (v: number) => fill(v).map((x, i) => (i === 9 ? null : x));
  const holding: World = {
    mode: fill(1),
    classes: {
      inf2: { readyReplicas: fill(3), desiredReplicas: fill(8), servedTokensPerSecond: withGap(perMinute(1500)) },
      g6: { readyReplicas: fill(4), desiredReplicas: fill(4), servedTokensPerSecond: withGap(perMinute(500)) },
    },
  };

  test('fails when a tick that holds everything publishes no floor on EKS: the floors in force are published again', () => {
    const world = { ...holding, floors: { inf2: fill(0), g6: [...fill(null, 10), 6, null] } };
    const s = decided(step(ALB, alb({ inf2: 60, g6: 40 }), answer(ALB, world), NOW_MS));
    expect(s.decision.reason.code).toBe('missing-data');
    expect(s.decision.replicaFloors).toBeNull();
    expect(s.floors).toEqual({ inf2: 0, g6: 6 });
    const emf = runRecords(ALB, s, { action: 'unchanged' }, NOW_MS).filter((r) => r.CapacityClass === 'g6' && 'RouteWeight' in r);
    expect(emf).toEqual([expect.objectContaining({ ReplicaFloor: 6 })]);
  });

  test('fails when a floor above the route maximum is published or written: floors are capped at it', () => {
    const world = { ...holding, floors: { inf2: fill(0), g6: fill(40) } };
    const s = decided(step(ALB, alb({ inf2: 60, g6: 40 }), answer(ALB, world), NOW_MS));
    expect(s.floors).toEqual({ inf2: 0, g6: 12 });
  });

  /**
   * A SageMaker tick that holds everything (a gap in the newest period), so the floors in force from the previous run
   * (the fallback's 4) are what it writes.
   */
  function holdingFloorsInForce(): { world: World; memory: RunMemory } {
    const period = Math.floor(NOW_MS / 60_000) * 60;
    return {
      world: {
        mode: fill(1),
        classes: {
          preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: withGap(perMinute(900)) },
          fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: withGap(perMinute(250)) },
        },
      },
      memory: {
        period: period - 60, floors: { preferred: 0, fallback: 4 },
        state: { mode: 'capacity', weights: { preferred: 75, fallback: 25 }, modeSince: period - 600, ramping: false },
      },
    };
  }

  test('SageMaker: floors in force above a MaxCapacity lowered since are written only up to it', () => {
    // The decision plans within each variant's live MaxCapacity (the policy classes' maxReplicas); a tick that holds
    // everything writes the floors in force instead, published before the operator lowered the fallback's maximum to 2.
    const { world, memory } = holdingFloorsInForce();
    const target: TargetState = {
      ...sagemaker({ preferred: 75, fallback: 25 }), scalingBounds: { preferred: { min: 1, max: 10 }, fallback: { min: 1, max: 2 } },
    };
    const s = decided(step(SM, target, answer(SM, world), NOW_MS, memory));
    expect(s.decision.reason.code).toBe('missing-data');
    expect(s.floors).toEqual({ preferred: 0, fallback: 4 });
    expect(s.plan).toEqual({
      action: 'write', write: { kind: 'capacity', route: 'fallback', from: 1, to: 2, floor: 4 },
      detail: 'desired instances of fallback raised from 1 to 2, its scalable target\'s MaxCapacity (replica floor 4)',
    });
  });

  test('SageMaker: a run whose bounds read failed writes no capacity, whatever bounds its target carries', () => {
    // The same floors in force as above, the bounds allowing them; the read failed (`capacityUnwritable`). The Lambda's
    // reader leaves the bounds empty then, but the step must not depend on it.
    const { world, memory } = holdingFloorsInForce();
    const target: TargetState = {
      ...sagemaker({ preferred: 75, fallback: 25 }), scalingBounds: { preferred: { min: 1, max: 10 }, fallback: { min: 1, max: 10 } },
      capacityUnwritable: 'no capacity write this run: DescribeScalableTargets failed (AccessDeniedException: denied)',
    };
    const s = decided(step(SM, target, answer(SM, world), NOW_MS, memory));
    expect(s.floors).toEqual({ preferred: 0, fallback: 4 });
    expect(s.plan).toEqual({ action: 'unchanged', detail: target.capacityUnwritable });
  });

  test('the preferred class\'s standing ask is published as it is; a fallback\'s floor is raised past the HPA tolerance', () => {
    // Raised to 23, an ask of 21 would stick: the HPA ignores the next floor of 21 within its tolerance of 23 replicas,
    // and 21 ready against 23 desired would read as a shortage the ask itself made.
    const facts = ALB.facts as Extract<ReconcilerConfig['facts'], { kind: 'alb' }>;
    const wide: ReconcilerConfig = { ...ALB, facts: { ...facts, targets: [albTarget('inf2', 0, 300, 0.76, 30), albTarget('g6', 1, 200, 0.8, 30)] } };
    const world: World = {
      mode: fill(1),
      classes: {
        inf2: { readyReplicas: fill(20), desiredReplicas: fill(20), servedTokensPerSecond: withGap(perMinute(1500)) },
        g6: { readyReplicas: fill(20), desiredReplicas: fill(20), servedTokensPerSecond: withGap(perMinute(500)) },
      },
      floors: { inf2: fill(21), g6: fill(21) },
    };
    const s = decided(step(wide, alb({ inf2: 60, g6: 40 }), answer(wide, world), NOW_MS));
    expect(s.decision.preferredClass).toBe('inf2');
    expect(s.floors).toEqual({ inf2: 21, g6: 23 });
  });

  test('fails when the HPA would ignore the floor: within its 10% tolerance the least count above it is published', () => {
    // ratio = floor / current; (1 - 0.1) <= ratio <= (1 + 0.1) is ignored.
    expect(hpaHonouredFloor(11, 10)).toBe(12);
    expect(hpaHonouredFloor(22, 20)).toBe(23);
    expect(hpaHonouredFloor(12, 11)).toBe(13);
    expect(hpaHonouredFloor(12, 10)).toBe(12);
    expect(hpaHonouredFloor(3, 2)).toBe(3);
    expect(hpaHonouredFloor(8, 10)).toBe(8);
    expect(hpaHonouredFloor(5, null)).toBe(5);
    for (let current = 1; current <= 200; current++) {
      for (let floor = current + 1; floor <= current + 25; floor++) {
        const published = hpaHonouredFloor(floor, current);
        // The HPA acts on it (outside the tolerance) and it is never below the floor.
        expect(published / current > 1.1 || published === floor && floor / current > 1.1).toBe(true);
        expect(published).toBeGreaterThanOrEqual(floor);
      }
    }
  });
});

describe('SageMaker, capacity mode: a fallback the event grew is lowered to what the routing needs (capacityToLower)', () => {
  // The preferred variant is back (6 of 6 ready for the last 4 periods, 3 before: not yet healthy for the stabilization
  // window, so the mode stays capacity); it carries the demand, so the fallback is routed its warm floor (2%) and needs
  // one instance at its scaling target, where it runs 6.
  const recovered = (mode: number): World => ({
    mode: fill(mode),
    classes: {
      preferred: { readyReplicas: [...fill(3, 8), ...fill(6, 4)], desiredReplicas: fill(6), servedTokensPerSecond: fill(perMinute(1470)) },
      fallback: { readyReplicas: fill(6), desiredReplicas: fill(6), servedTokensPerSecond: fill(perMinute(30)) },
    },
  });
  const bounds = (fallbackMin = 1) => ({ preferred: { min: 1, max: 10 }, fallback: { min: fallbackMin, max: 10 } });
  const target = (over: Partial<TargetState> = {}, fallback = { ready: 6, desired: 6 }): TargetState => ({
    ...sagemaker({ preferred: 98, fallback: 2 }, { preferred: 6, fallback: fallback.desired }, { preferred: 6, fallback: fallback.ready }),
    scalingBounds: bounds(), ...over,
  });

  test('fails when the fallback keeps instances its routed share does not need: it is lowered to the need, in one write', () => {
    const s = decided(step(SM, target(), answer(SM, recovered(1)), NOW_MS));
    expect(s.decision).toMatchObject({ mode: 'capacity', weightsChanged: false, deficitTokensPerSecond: 0 });
    expect(s.decision.replicaNeeds).toEqual({ preferred: 6, fallback: 1 });
    expect(s.plan).toEqual({
      action: 'write', write: { kind: 'capacity', route: 'fallback', from: 6, to: 1 },
      detail: 'desired instances of fallback lowered from 6 to 1: what the routing needs at the window\'s peak demand',
    });
  });

  test('fails when the lowering goes below the scalable target\'s MinCapacity, or writes without bounds read', () => {
    expect(decided(step(SM, target({ scalingBounds: bounds(4) }), answer(SM, recovered(1)), NOW_MS)).plan)
      .toMatchObject({ action: 'write', write: { kind: 'capacity', route: 'fallback', from: 6, to: 4 } });
    expect(decided(step(SM, target({ scalingBounds: undefined }), answer(SM, recovered(1)), NOW_MS)).plan).toEqual({ action: 'unchanged' });
    const unread = 'no capacity write this run: DescribeScalableTargets failed (ThrottlingException)';
    expect(decided(step(SM, target({ capacityUnwritable: unread }), answer(SM, recovered(1)), NOW_MS)).plan).toEqual({ action: 'unchanged', detail: unread });
  });

  test('fails when a fallback scale-out in progress is lowered: only a settled variant is', () => {
    const s = decided(step(SM, target({}, { ready: 5, desired: 6 }), answer(SM, recovered(1)), NOW_MS));
    expect(s.plan).toEqual({ action: 'unchanged' });
  });

  test('fails when cost mode lowers a fallback: there its count is its own target tracking\'s', () => {
    const s = decided(step(SM, target(), answer(SM, recovered(0)), NOW_MS));
    expect(s.decision.mode).toBe('cost');
    expect(s.decision.replicaNeeds).toBeNull();
    expect(s.plan).toEqual({ action: 'unchanged' });
  });

  test('fails when the preferred class is lowered, a deficit is ignored, or a replica floor is undercut (the rule itself)', () => {
    const facts = SM.facts as SageMakerRoutingFacts;
    const replicas = { preferred: { ready: 8, desired: 8 }, fallback: { ready: 6, desired: 6 } };
    const decision = { mode: 'capacity' as const, deficitTokensPerSecond: 0, preferredClass: 'preferred', replicaNeeds: { preferred: 2, fallback: 1 } };
    expect(capacityToLower(facts, decision, null, replicas, bounds())).toEqual({ name: 'fallback', from: 6, to: 1 });
    expect(capacityToLower(facts, { ...decision, deficitTokensPerSecond: 10 }, null, replicas, bounds())).toBeUndefined();
    expect(capacityToLower(facts, decision, { preferred: 0, fallback: 5 }, replicas, bounds())).toEqual({ name: 'fallback', from: 6, to: 5 });
    expect(capacityToLower(facts, decision, null, { ...replicas, fallback: { ready: 1, desired: 1 } }, bounds())).toBeUndefined();
    // A MinCapacity of 0 and no need: one instance stays (a variant at zero is documented for inference components only).
    expect(capacityToLower(facts, { ...decision, replicaNeeds: { preferred: 2, fallback: 0 } }, null, replicas, bounds(0)))
      .toEqual({ name: 'fallback', from: 6, to: 1 });
    // A variant of several pools is left to its target tracking: a scale-in releases its lowest-priority pool first.
    const pooled: SageMakerRoutingFacts = {
      ...facts, variants: [facts.variants[0], { variantName: 'fallback', classes: [cls('g5', 1, 'ml.g5.xlarge', 250, 1.0), cls('g6', 2, 'ml.g6.xlarge', 200, 0.9)] }],
    };
    expect(capacityToLower(pooled, decision, null, replicas, bounds())).toBeUndefined();
  });

  test('fails when the need follows the plan below the weights in force: the larger share is kept (review R218)', () => {
    // The weights in force give the fallback 30% (a write the dead band or the period held back); the plan gives it its
    // warm floor. At 1500 tokens/s the 30% are 450 tokens/s, 3 instances at its target (250 / 1.2 each), not 1.
    const s = decided(step(SM, target({ weights: { preferred: 70, fallback: 30 } }), answer(SM, recovered(1)), NOW_MS));
    expect(s.decision.replicaNeeds?.fallback).toBe(3);
  });

  test('fails when a burst in the stabilization window is forgotten: the need is sized on the window\'s peak', () => {
    // Demand was 2430 tokens/s eight periods ago: at that peak the preferred class's 6 (1800 tokens/s) leave 630 to the
    // fallback, 3.02 instances at its target (250 / 1.2 tokens/s each), so it keeps 4 of its 6.
    const world = recovered(1);
    const served = [...fill(perMinute(1470), 3), perMinute(2400), ...fill(perMinute(1470), 8)];
    const bursty: World = { ...world, classes: { ...world.classes, preferred: { ...world.classes.preferred, servedTokensPerSecond: served } } };
    const s = decided(step(SM, target(), answer(SM, bursty), NOW_MS));
    expect(s.decision.replicaNeeds?.fallback).toBe(4);
    expect(s.plan).toMatchObject({ action: 'write', write: { kind: 'capacity', route: 'fallback', from: 6, to: 4 } });
  });
});

describe('run memory: a second run before CloudWatch shows the first', () => {
  // Capacity mode for the whole window, the preferred variant healthy: the return ramps 10 points a period.
  const world: World = {
    mode: fill(1),
    classes: {
      preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(500)) },
      fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(100)) },
    },
  };

  // What the run of the period before left in this environment: capacity mode, the return not yet taken.
  const warm = (): RunMemory => {
    const rebuilt = decided(step(SM, sagemaker({ preferred: 78, fallback: 22 }), answer(SM, world), NOW_MS));
    const { lastStepAt: _, ...state } = rebuilt.observation.previous;
    return { period: rebuilt.observation.query.now - 60, state, floors: null };
  };

  test('fails when a second run seconds later takes a second ramp step in the same period', () => {
    const first = decided(step(SM, sagemaker({ preferred: 78, fallback: 22 }), answer(SM, world), NOW_MS, warm()));
    expect(first.plan).toMatchObject({ action: 'write', write: { kind: 'weights', weights: { preferred: 88, fallback: 12 } } });
    const memory = rememberRun(first, { action: 'applied' });
    // 10 s later: the target holds 88/12, CloudWatch has not ingested the first run's PolicyMode yet.
    const second = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, world, NOW_MS + 10_000), NOW_MS + 10_000, memory));
    expect(second.plan).toEqual({ action: 'unchanged' });
    // The next period steps again.
    const next = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, world, NOW_MS + 60_000), NOW_MS + 60_000, rememberRun(second, { action: 'unchanged' }, memory)));
    expect(next.plan).toMatchObject({ action: 'write', write: { weights: { preferred: 98, fallback: 2 } } });
  });

  test('fails when a cold start right after a ramp step takes another in the same period (review R238)', () => {
    // A run in a new execution environment 10 s after the step (an alarm run, a duplicated event): no memory, and
    // CloudWatch shows capacity mode still. It returns to cost mode with the weights in force, as the first run did.
    const cold = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, world, NOW_MS + 10_000), NOW_MS + 10_000));
    expect(cold.plan).toEqual({ action: 'unchanged' });
    expect(cold.decision).toMatchObject({ mode: 'cost', weights: { preferred: 88, fallback: 12 }, reason: { code: 'return-to-cost' } });
    expect(cold.observation.previous.lastStepAt).toBe(cold.observation.query.now);
    // Mid-ramp (PolicyRamping published), the same: the step is held, and the audit line says why.
    const ramping: World = { ...world, mode: [...fill(1, 6), ...fill(0, 6)], ramping: [...fill(0, 6), ...fill(1, 6)] };
    const mid = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, ramping), NOW_MS));
    expect(mid.plan).toEqual({ action: 'unchanged' });
    expect(mid.decision.reason.message).toMatch(/^Ramp step already taken in this period/);
    // Warm, the same run steps: the hold is the cold start's alone, and lasts its period.
    const warmMid = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, ramping), NOW_MS, {
      period: mid.observation.query.now - 60, state: { ...mid.observation.previous, lastStepAt: undefined }, floors: null,
    }));
    expect(warmMid.plan).toMatchObject({ action: 'write', write: { weights: { preferred: 98, fallback: 2 } } });
    const next = decided(step(SM, sagemaker({ preferred: 88, fallback: 12 }), answer(SM, ramping, NOW_MS + 60_000), NOW_MS + 60_000,
      rememberRun(mid, { action: 'unchanged' })));
    expect(next.plan).toMatchObject({ action: 'write', write: { weights: { preferred: 98, fallback: 2 } } });
  });

  test('a cold start holds the step also when none was taken: no datapoint can show that none was', () => {
    // The run of the previous period was the last; a cold start cannot tell this from a step seconds ago whose EMF
    // CloudWatch has not ingested (the answers are the same): the ramp waits one period after each cold start.
    const cold = decided(step(SM, sagemaker({ preferred: 78, fallback: 22 }), answer(SM, world), NOW_MS));
    expect(cold.plan).toEqual({ action: 'unchanged' });
    expect(cold.decision.weights).toEqual({ preferred: 78, fallback: 22 });
  });

  test('fails when a memory older than the period before vouches for the state: another environment may have stepped since (review R242)', () => {
    // The same return as the warm test above, but the memory is two periods old: a run elsewhere in between may have
    // stepped, its datapoints not yet readable, so the run holds as a cold start does, and its audit line says so.
    const stale: RunMemory = { ...warm(), period: warm().period! - 60 };
    const held = decided(step(SM, sagemaker({ preferred: 78, fallback: 22 }), answer(SM, world), NOW_MS, stale));
    expect(held.plan).toEqual({ action: 'unchanged' });
    expect(held.decision.reason.message).toMatch(/First step held: a step may already have been taken in this period\.$/);
    // The memory of the period before still vouches: the same run steps.
    const fresh = decided(step(SM, sagemaker({ preferred: 78, fallback: 22 }), answer(SM, world), NOW_MS, warm()));
    expect(fresh.plan).toMatchObject({ action: 'write', write: { kind: 'weights', weights: { preferred: 88, fallback: 12 } } });
  });

  // In capacity mode, the preferred variant asking for 6 with 3 ready: a fallback floor to write.
  const shortage: World = {
    mode: fill(1),
    classes: {
      preferred: { readyReplicas: fill(3), desiredReplicas: fill(6), servedTokensPerSecond: fill(perMinute(950)) },
      fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(250)) },
    },
  };

  test('one write of each kind per period: a capacity write follows a weights write in its period, a second of a kind waits', () => {
    const target = sagemaker({ preferred: 75, fallback: 25 }, { preferred: 6, fallback: 1 });
    const fresh = decided(step(SM, target, answer(SM, shortage), NOW_MS));
    expect(fresh.plan).toMatchObject({ action: 'write', write: { kind: 'capacity', route: 'fallback', to: 2 } });
    const period = fresh.observation.query.now;
    const wrote = (...kinds: Array<'weights' | 'capacity'>): RunMemory => ({ period, state: fresh.observation.previous, wrote: kinds, floors: null });
    // The endpoint is InService again after the weights' update (SageMaker's run on that state change): the raise goes.
    expect(decided(step(SM, target, answer(SM, shortage), NOW_MS + 15_000, wrote('weights'))).plan)
      .toMatchObject({ action: 'write', write: { kind: 'capacity', route: 'fallback', to: 2 } });
    // A second raise in the period (a repeated event, an alarm run) waits for the next period.
    const after = decided(step(SM, target, answer(SM, shortage), NOW_MS + 15_000, wrote('weights', 'capacity')));
    expect(after.plan).toEqual({ action: 'skipped', detail: 'a capacity write was already made in this period; the next period writes' });
    // The held write is counted as deferred (WritesDeferred), as a write an Updating endpoint refuses is.
    const serviceRecord = (s: StepDecision, outcome: RunOutcome) => runRecords(SM, s, outcome, NOW_MS).find((r) => 'WritesDeferred' in r);
    expect(serviceRecord(after, { action: 'skipped', detail: 'held' })).toMatchObject({ WritesDeferred: 1, WeightChanges: 0 });
    expect(serviceRecord(fresh, { action: 'applied' })).toMatchObject({ WritesDeferred: 0 });
    const nextPeriod = decided(step(SM, target, answer(SM, shortage, NOW_MS + 60_000), NOW_MS + 60_000, wrote('weights', 'capacity')));
    expect(nextPeriod.plan).toMatchObject({ action: 'write', write: { kind: 'capacity' } });
    // The run memory keeps every kind written in the period, and starts again in the next.
    const applied = rememberRun(fresh, { action: 'applied' }, wrote('weights'));
    expect(applied?.wrote).toEqual(['weights', 'capacity']);
    expect(rememberRun(nextPeriod, { action: 'unchanged' }, applied)?.wrote).toBeUndefined();
  });

  test('changed weights the period already wrote are held, and the run makes the capacity write instead', () => {
    // The cost plan's weights in force: the shortage plans new weights and a fallback floor.
    const target = sagemaker({ preferred: 98, fallback: 2 }, { preferred: 6, fallback: 1 });
    const fresh = decided(step(SM, target, answer(SM, shortage), NOW_MS));
    expect(fresh.plan).toMatchObject({ action: 'write', write: { kind: 'weights' } });
    const period = fresh.observation.query.now;
    const wrote = (...kinds: Array<'weights' | 'capacity'>): RunMemory => ({ period, state: fresh.observation.previous, wrote: kinds, floors: null });
    const held = decided(step(SM, target, answer(SM, shortage), NOW_MS + 15_000, wrote('weights')));
    expect(held.plan).toMatchObject({ action: 'write', write: { kind: 'capacity', route: 'fallback', to: 2 } });
    // The weights in force stay the target's, and the run records those, not the ones it held.
    expect(weightsInForce(held, { action: 'applied' })).toEqual({ preferred: 98, fallback: 2 });
    expect(rememberRun(held, { action: 'applied' }, wrote('weights'))?.state?.weights).toEqual({ preferred: 98, fallback: 2 });
    // Both kinds written in the period: nothing more until the next one.
    expect(decided(step(SM, target, answer(SM, shortage), NOW_MS + 15_000, wrote('weights', 'capacity'))).plan)
      .toEqual({ action: 'skipped', detail: 'a capacity write was already made in this period; the next period writes' });
  });

  test('a run that went on without a read counts a DegradedReads datapoint, and its audit line names the read, skipped or not', () => {
    const unread = 'no capacity write this run: DescribeScalableTargets failed (AccessDeniedException: denied)';
    const serviceRecord = (s: StepDecision, outcome: RunOutcome) => runRecords(SM, s, outcome, NOW_MS).find((r) => 'DegradedReads' in r);
    // The cost plan's weights in force: the shortage plans a weights write, which an Updating endpoint skips.
    const base = sagemaker({ preferred: 98, fallback: 2 }, { preferred: 6, fallback: 1 });
    for (const [notWritable, degraded] of [[undefined, false], ['endpoint llm is Updating', false], [undefined, true], ['endpoint llm is Updating', true]] as const) {
      const target: TargetState = { ...base, ...(notWritable ? { notWritable } : {}), ...(degraded ? { capacityUnwritable: unread } : {}) };
      const s = decided(step(SM, target, answer(SM, shortage), NOW_MS));
      const outcome: RunOutcome = s.plan.action === 'skipped' ? { action: 'skipped', detail: s.plan.detail } : { action: 'applied' };
      expect(serviceRecord(s, outcome)).toMatchObject({ DegradedReads: degraded ? 1 : 0 });
      if (notWritable) expect(s.plan).toMatchObject({ action: 'skipped', detail: degraded ? `${notWritable}; ${unread}` : notWritable });
    }
    // A write already made in the period: skipped, and the unread bounds named as well.
    const first = decided(step(SM, base, answer(SM, shortage), NOW_MS));
    const wroteWeights: RunMemory = { period: first.observation.query.now, state: first.observation.previous, wrote: ['weights'], floors: null };
    const held = decided(step(SM, { ...base, capacityUnwritable: unread }, answer(SM, shortage), NOW_MS + 15_000, wroteWeights));
    expect(held.plan).toMatchObject({ action: 'skipped', detail: expect.stringMatching(/already made in this period.*; no capacity write this run: DescribeScalableTargets failed/) });
    expect(serviceRecord(held, { action: 'skipped', detail: held.plan.action === 'skipped' ? held.plan.detail : '' })).toMatchObject({ DegradedReads: 1 });
  });
});

describe('cold start: the capacity event outlives the PolicyMode window', () => {
  // The preferred variant is stuck at 3 of 5 replicas (a relapse of a shortage that began hours ago); the fallback's 2
  // ready replicas carry the rest of the 950 tokens/s. Cost mode for the whole window: the last return was 2 h ago.
  const relapse: World = {
    mode: fill(0),
    classes: {
      preferred: { readyReplicas: fill(3), desiredReplicas: fill(5), servedTokensPerSecond: fill(perMinute(700)) },
      fallback: { readyReplicas: fill(2), desiredReplicas: fill(2), servedTokensPerSecond: fill(perMinute(250)) },
    },
  };
  const target = sagemaker({ preferred: 74, fallback: 26 }, { preferred: 5, fallback: 2 }, { preferred: 3, fallback: 2 });
  const now = Math.floor(NOW_MS / 60_000) * 60;
  // The warm Lambda's memory: two entries 3 h and 2.5 h ago, the event kept open by the losses since.
  const warm: RunMemory = {
    period: now - 60,
    state: { mode: 'cost', weights: { preferred: 74, fallback: 26 }, modeSince: now - 7200, ramping: false, entries: [now - 10_800, now - 9000] },
    floors: null,
  };

  test('fails when a cold-started Lambda forgets an event older than its window: it rebuilds the entries the warm one keeps', () => {
    const hot = decided(step(SM, target, answer(SM, relapse), NOW_MS, warm));
    // Within the event, a relapse the ready classes absorb re-enters nothing.
    expect(hot.decision).toMatchObject({ mode: 'cost', reason: { code: 'cost-plan' } });
    expect(hot.decision.reason.message).toContain('Not re-entering capacity mode');
    // The count the warm runs published with their decisions, read back by a cold start.
    const cold = decided(step(SM, target, answer(SM, { ...relapse, eventEntries: fill(2) }), NOW_MS));
    expect(cold.decision).toEqual(hot.decision);
    expect(cold.observation.previous.entries).toHaveLength(2);
    // Without the published count the window alone shows no entry: the relapse would be a fresh event.
    const blind = decided(step(SM, target, answer(SM, relapse), NOW_MS));
    expect(blind.decision).toMatchObject({ mode: 'capacity', reason: { code: 'enter-capacity' } });
  });

  test('the count a run publishes is the series the next run queries: CapacityEventEntries, [Service], after the decision', () => {
    const hot = decided(step(SM, target, answer(SM, relapse), NOW_MS, warm));
    const { batch } = metricQuery(SM, NOW_MS);
    const query = batch.queries.find((q) => q.Id === batch.index.find((e) => e.signal === 'eventEntries')!.id)!.MetricStat!;
    expect(query).toEqual({
      Metric: { Namespace: 'CapacityAwareInference', MetricName: 'CapacityEventEntries', Dimensions: [{ Name: 'Service', Value: 'chat' }] },
      Period: 60,
      Stat: 'Maximum',
    });
    const record = runRecords(SM, hot, { action: 'unchanged' }, NOW_MS).find((r) => query.Metric.MetricName in r)!;
    const directives = (record._aws as { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> })
      .CloudWatchMetrics.filter((d) => d.Metrics.some((m) => m.Name === query.Metric.MetricName));
    expect(directives).toEqual([expect.objectContaining({ Namespace: query.Metric.Namespace, Dimensions: [['Service']] })]);
    expect(record).toMatchObject({ Service: 'chat', CapacityEventEntries: 2 });
    // An event that has ended publishes 0, so a cold start does not revive it.
    const ended = decided(step(SM, target, answer(SM, relapse), NOW_MS, { ...warm, state: { ...warm.state!, entries: undefined } }));
    expect(ended.decision.mode).toBe('capacity');
    expect(runRecords(SM, ended, { action: 'applied' }, NOW_MS).find((r) => 'CapacityEventEntries' in r)).toMatchObject({ CapacityEventEntries: 1 });
  });
});

describe('an emptied target group: ALB publishes no HealthyHostCount for it, the live target health says it is empty', () => {
  // inf2 lost every pod six periods ago: no HealthyHostCount and no RequestCount since (cds-snc/forms-terraform#918); the
  // signal windows end two periods before the world's (the metric delay), so four of those periods are read.
  const gone = fill(null, 6);
  const emptied: World = {
    mode: fill(0),
    classes: {
      inf2: { readyReplicas: [...fill(3, 6), ...gone], desiredReplicas: fill(3), servedTokensPerSecond: [...fill(perMinute(390), 6), ...gone] },
      g6: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
    },
  };
  const withHealth = (healthyTargets?: Record<string, number | null>): TargetState => ({
    ...alb({ inf2: 98, g6: 2 }), ...(healthyTargets ? { healthyTargets } : {}),
  });

  test('fails when a class with no healthy target holds the weights as missing data', () => {
    const s = decided(step(ALB, withHealth({ inf2: 0, g6: 1 }), answer(ALB, emptied), NOW_MS));
    expect(s.observation.signals.inf2.readyReplicas.slice(-5)).toEqual([3, 0, 0, 0, 0]);
    // Empty, not silent: the newest periods' demand is g6's alone, not missing.
    expect(s.observation.demandTokensPerSecond.slice(-4)).toEqual(fill(10, 4));
    expect(s.decision.reason.code).not.toBe('missing-data');
    expect(s.decision.weights.inf2).toBeLessThan(98);
    const records = runRecords(ALB, s, { action: 'applied' }, NOW_MS);
    expect(records.find((r) => r.audit === 'routing-decision')!.healthyTargets).toEqual({ inf2: 0, g6: 1 });
    // Published: the live counts as HealthyTargets, and ReadyReplicas 0 (the window's newest, its gap filled) beside
    // the newest desired count, so the ReplicaShortage alarm sees 3 - 0.
    const inf2 = records.find((r) => r.CapacityClass === 'inf2' && 'ReadyReplicas' in r);
    expect(inf2).toMatchObject({ ReadyReplicas: 0, DesiredReplicas: 3, HealthyTargets: 0 });
  });

  test('a run that fails after reading the target prints the health it read, as a decided run does', () => {
    // g6's target group has left the listener: the facts no longer match, so the run cannot decide.
    const target: TargetState = {
      ...alb({ inf2: 100 }), healthyTargets: { inf2: 0, g6: null }, healthUnread: 'DescribeTargetHealth failed (g6: TargetGroupNotFound: gone)',
    };
    const s = step(ALB, target, answer(ALB, emptied), NOW_MS);
    expect(s).toMatchObject({ ok: false, reason: 'target-mismatch' });
    expect(runRecords(ALB, s, { action: 'failed' }, NOW_MS).find((r) => r.audit === 'routing-decision')).toMatchObject({
      apply: { action: 'failed', reason: 'target-mismatch' },
      weights: { inf2: 100 },
      healthyTargets: { inf2: 0, g6: null },
      healthUnread: 'DescribeTargetHealth failed (g6: TargetGroupNotFound: gone)',
    });
  });

  test.each([
    ['healthy targets now (the metric is late, not gone)', { inf2: 2, g6: 1 }],
    ['a failed health read', { inf2: null, g6: 1 }],
    ['no health read (SageMaker-like, or a reader before this change)', undefined],
  ])('missing stays unknown with %s: the weights are held', (_, health) => {
    const s = decided(step(ALB, withHealth(health), answer(ALB, emptied), NOW_MS));
    expect(s.observation.signals.inf2.readyReplicas.slice(-5)).toEqual([3, ...fill(null, 4)]);
    expect(s.decision.reason.code).toBe('missing-data');
    expect(s.decision.weights).toEqual({ inf2: 98, g6: 2 });
  });

  test('the counts earlier runs saw live fill the gap: a returning class holds nothing, a late metric reads what was there', () => {
    const seen = (values: Series): World => ({
      ...emptied, classes: { ...emptied.classes, inf2: { ...emptied.classes.inf2, readyReplicasSeen: values } },
    });
    // Emptied, and back with two pods now: the gap is the zeros the runs counted, not missing data.
    const back = decided(step(ALB, withHealth({ inf2: 2, g6: 1 }), answer(ALB, seen([...fill(3, 6), ...fill(0, 5), 2])), NOW_MS));
    expect(back.observation.signals.inf2.readyReplicas.slice(-5)).toEqual([3, 0, 0, 0, 0]);
    expect(back.decision.reason.code).not.toBe('missing-data');
    // HealthyHostCount late while the pods were there: the runs' counts stand in for it.
    const late = decided(step(ALB, withHealth({ inf2: 3, g6: 1 }), answer(ALB, seen(fill(3))), NOW_MS));
    expect(late.observation.signals.inf2.readyReplicas.slice(-5)).toEqual(fill(3, 5));
    // A period reads the lower of the counts seen at its start and at the next one's (HealthyHostCount is a Minimum).
    expect(seenWhereUnpublished([2, null, 1, null, null], [5, 4, 5, null, 3, 1])).toEqual([2, 4, 1, 3, 1]);
  });

  test('the plan routes on the healthy targets the run counted (readyNow); a failed read leaves the window\'s count', () => {
    const back = decided(step(ALB, withHealth({ inf2: 2, g6: null }), answer(ALB, emptied), NOW_MS));
    expect(back.observation.signals.inf2.readyNow).toBe(2);
    expect(back.observation.signals.g6).not.toHaveProperty('readyNow');
    // The window keeps what CloudWatch published: the evidence rules read it.
    expect(back.observation.signals.inf2.readyReplicas.slice(-5)).toEqual([3, ...fill(null, 4)]);
  });

  test('only the trailing gap reads 0: an earlier missing period stays missing', () => {
    expect(emptyWhereUnpublished([2, null, 2, null, null], 0)).toEqual([2, null, 2, 0, 0]);
    expect(emptyWhereUnpublished([2, null, 2, 1], 0)).toEqual([2, null, 2, 1]);
    expect(emptyWhereUnpublished([null, null], 0)).toEqual([0, 0]);
    expect(emptyWhereUnpublished([2, null], 1)).toEqual([2, null]);
  });
});

// Review R108: a stack update that replaces the endpoint configuration updates the function and the endpoint in no fixed
// order, so for a while the facts describe one configuration and the endpoint runs another.
describe('facts of another endpoint configuration than the endpoint runs: the run defers before any route is checked', () => {
  const NEW: ReconcilerConfig = { ...SM, facts: { ...SM.facts, endpointConfigName: 'llm-config-new' } as ReconcilerConfig['facts'] };
  const on = (config: string | undefined, target: TargetState): TargetState => ({ ...target, ...(config ? { endpointConfigName: config } : {}) });
  const serving: World = {
    mode: fill(0),
    classes: {
      preferred: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(490)) },
      fallback: { readyReplicas: fill(1), desiredReplicas: fill(1), servedTokensPerSecond: fill(perMinute(10)) },
    },
  };
  const expectDeferred = (s: ReturnType<typeof step>) => {
    expect(s).toMatchObject({ ok: false, deferred: true });
    if (s.ok) throw new Error('decided');
    expect(s.detail).toBe("weights unchanged: endpoint llm runs endpoint configuration 'llm-config-old', not 'llm-config-new' that the routing "
      + 'facts describe (a deployment is replacing it, or the endpoint was updated outside this stack); weights are written once they match');
    // Counted like the deployment-under-way deferral: a Decisions datapoint (the heartbeat), a skipped audit line, no failure.
    const records = runRecords(NEW, s, { action: 'skipped', detail: s.detail }, NOW_MS);
    expect(records.filter((r) => 'ReconcilerFailures' in r)).toEqual([]);
    expect(records).toContainEqual(expect.objectContaining({ Reason: 'deployment-under-way', Decisions: 1 }));
    expect(records.filter((r) => r.audit === 'routing-decision')).toEqual([expect.objectContaining({ apply: { action: 'skipped', detail: s.detail } })]);
  };

  test('fails when the old configuration\'s removed variant is zeroed from the new facts (the write would hold the endpoint Updating)', () => {
    const old = { ...sagemaker({ preferred: 98, fallback: 2 }), weights: { preferred: 90, fallback: 2, retired: 8 }, present: ['preferred', 'fallback', 'retired'] };
    expectDeferred(step(NEW, on('llm-config-old', old), answer(NEW, serving), NOW_MS));
    // The same endpoint on the facts' configuration, facts without the field, or a read without it: zeroed as before.
    const zeroes = (config: ReconcilerConfig, target: TargetState) =>
      expect(decided(step(config, target, answer(config, serving), NOW_MS)).plan).toMatchObject({ action: 'write', write: { kind: 'weights', zeroed: ['retired'] } });
    zeroes(NEW, on('llm-config-new', old));
    zeroes(SM, on('llm-config-old', old));
    zeroes(NEW, on(undefined, old));
    // An endpoint that needs an operator still pages, whatever configuration it runs.
    expect(step(NEW, { ...on('llm-config-old', old), unavailable: 'endpoint llm is Failed' }, answer(NEW, serving), NOW_MS))
      .toMatchObject({ ok: false, reason: 'target-unavailable' });
  });

  test('fails when a variant only the new configuration has fails the run as a target mismatch instead of deferring', () => {
    const old = { ...sagemaker({ preferred: 100 }), present: ['preferred'] };
    expectDeferred(step(NEW, on('llm-config-old', old), answer(NEW, serving), NOW_MS));
  });

  test('fails when new weights (a price or envelope change) are written to the old configuration', () => {
    // The cost plan of the new facts differs from the weights in force: a write is due on the configuration they describe.
    const inForce = on('llm-config-old', sagemaker({ preferred: 50, fallback: 50 }));
    expect(decided(step(NEW, { ...inForce, endpointConfigName: 'llm-config-new' }, answer(NEW, serving), NOW_MS)).plan.action).toBe('write');
    expectDeferred(step(NEW, inForce, answer(NEW, serving), NOW_MS));
  });

  // Review R110: a deferral that never ends (the endpoint updated outside the stack, an update failed while it stayed
  // InService) froze the weights with the heartbeat beating. Runs from NOW_MS, each finding the endpoint on another
  // configuration writable ('other'), on another one Updating ('updating'), or on the facts' own ('match').
  describe('bounded: another configuration found writable for longer than a deployment leaves it fails the run (R110)', () => {
    type Seen = 'other' | 'updating' | 'match';
    const every60 = (from: number, to: number, seen: Seen): Array<[number, Seen]> =>
      Array.from({ length: (to - from) / 60 + 1 }, (_, i) => [from + i * 60, seen]);
    const runs = (seen: ReadonlyArray<[number, Seen]>) => {
      let memory: RunMemory | undefined;
      return seen.map(([t, what]) => {
        const base = sagemaker({ preferred: 98, fallback: 2 });
        const updating = { notWritable: 'endpoint llm is Updating; weights are written on a later tick' };
        const target = what === 'match' ? on('llm-config-new', base) : { ...on('llm-config-old', base), ...(what === 'updating' ? updating : {}) };
        const s = step(NEW, target, answer(NEW, serving, NOW_MS + t * 1000), NOW_MS + t * 1000, memory);
        memory = rememberRun(s, { action: s.ok ? 'applied' : 'skipped' }, memory);
        return { t, s, verdict: s.ok ? 'decided' : s.deferred ? 'deferred' : s.reason };
      });
    };
    const firstFailure = (rs: ReturnType<typeof runs>) => rs.find((r) => r.verdict !== 'deferred' && r.verdict !== 'decided');

    test('fails when a writable endpoint on another configuration defers for ever instead of failing target-mismatch after 15 minutes', () => {
      const rs = runs(every60(0, 960, 'other'));
      expect(rs.slice(0, 15).map((r) => r.verdict)).toEqual(Array(15).fill('deferred'));
      const failed = firstFailure(rs)!;
      expect(failed.t).toBe(900);
      if (failed.s.ok) throw new Error('decided');
      expect(failed.s.detail).toBe("weights unchanged: endpoint llm runs endpoint configuration 'llm-config-old', not 'llm-config-new' that the "
        + 'routing facts describe (a deployment is replacing it, or the endpoint was updated outside this stack); weights are written once they '
        + 'match; so for 900 s with the endpoint InService, longer than a deployment leaves it (900 s): the endpoint was updated outside this '
        + 'stack, or its update failed or was rolled back. A stack update with an unchanged template changes nothing: run aws sagemaker '
        + 'update-endpoint --endpoint-name <the endpoint> --endpoint-config-name <the configuration the facts describe> '
        + '--retain-all-variant-properties once the cause is fixed, or deploy a changed template');
      // A normal failure: the failure datapoint the alarm watches, no heartbeat datapoint; and the next run fails too.
      const records = runRecords(NEW, failed.s, { action: 'failed', reason: 'target-mismatch', detail: failed.s.detail }, NOW_MS + 900_000);
      expect(records).toContainEqual(expect.objectContaining({ Reason: 'target-mismatch', ReconcilerFailures: 1 }));
      expect(records.filter((r) => 'Decisions' in r)).toEqual([]);
      expect(rs[16]).toMatchObject({ t: 960, verdict: 'target-mismatch', s: { detail: expect.stringContaining('so for 960 s') } });
    });

    test('fails when time the endpoint spends Updating counts towards the bound, or clears what was counted before it', () => {
      // 600 s writable, 20 minutes Updating (a blue/green update), then writable on another configuration again.
      const rs = runs([...every60(0, 600, 'other'), ...every60(660, 1800, 'updating'), ...every60(1860, 2220, 'other')]);
      // Counted: 600 s before the update, and from its end (1860) on: 900 s at 2160.
      expect(firstFailure(rs)).toMatchObject({ t: 2160, s: { reason: 'target-mismatch', detail: expect.stringContaining('so for 900 s') } });
    });

    test('fails when a run that finds the facts\' configuration leaves the count running', () => {
      const rs = runs([...every60(0, 840, 'other'), [900, 'match'], ...every60(960, 1860, 'other')]);
      expect(rs.find((r) => r.t === 900)!.verdict).toBe('decided');
      // Counted again from 960: 900 s at 1860.
      expect(firstFailure(rs)).toMatchObject({ t: 1860, s: { reason: 'target-mismatch', detail: expect.stringContaining('so for 900 s') } });
    });
  });
});

describe('audit records: each fits one CloudWatch Logs event (review R238)', () => {
  test('fails when the most variants, each with every window at MAX_WINDOW_PERIODS of the longest numbers, pass the bound', () => {
    // SageMaker's variant names run to 63 characters; the longest JSON number is 24 (17 digits, sign, point, exponent).
    const name = (i: number) => `v${i}-`.padEnd(63, 'x');
    const variants = Array.from({ length: SAGEMAKER_ENDPOINT_LIMITS.maxVariants }, (_, i) => ({
      variantName: name(i), classes: [cls(`pool${i}`, i, 'ml.g5.xlarge', 250, 1 + i / 10)],
    }));
    // The capacity-loss memory sets the policy window (policyWindowPeriods): here at its bound.
    const grace = Math.ceil(resolvePolicyConfig({}).provisioningGraceSeconds / 60);
    const config: ReconcilerConfig = {
      ...SM, facts: { ...(SM.facts as SageMakerRoutingFacts), variants }, policy: { reentryMemorySeconds: (MAX_WINDOW_PERIODS + 1 - grace) * 60 },
    };
    const periods = policyWindowPeriods(resolvePolicyConfig(config.policy));
    expect(periods).toBe(MAX_WINDOW_PERIODS);
    const names = variants.map((v) => v.variantName);
    const target: TargetState = {
      weights: Object.fromEntries(names.map((n) => [n, 10])),
      pools: Object.fromEntries(names.map((n) => [n, { 'ml.g5.xlarge': 3 }])),
      replicas: Object.fromEntries(names.map((n) => [n, { ready: 3, desired: 3 }])),
      present: names,
    };
    const s = decided(step(config, target, [], NOW_MS));
    const longest = -2.2250738585072014e-308;
    expect(JSON.stringify(longest)).toHaveLength(24);
    const full = () => Array.from({ length: periods }, () => longest);
    const windows = ['readyReplicas', 'desiredReplicas', 'capacityErrors', 'latencyP95Ms', 'servedTokensPerSecond', 'rejectedTokensPerSecond'] as const;
    // Every window the run hands the policy is one of these.
    for (const signals of Object.values(s.input.signals)) {
      for (const [key, value] of Object.entries(signals)) if (Array.isArray(value)) expect(windows).toContain(key);
    }
    const worst: ClassSignals = {
      ...Object.fromEntries(windows.map((w) => [w, full()])) as unknown as ClassSignals, readyNow: longest, servedIncludesRejected: true,
    };
    const heavy: StepDecision = {
      ...s, input: { ...s.input, signals: Object.fromEntries(names.map((n) => [n, worst])), demandTokensPerSecond: full() },
    };
    const audit = runRecords(config, heavy, { action: 'applied' }, NOW_MS).filter((r) => r.audit !== undefined);
    expect(audit.map((r) => r.audit)).toEqual(['routing-decision', ...names.map(() => 'routing-inputs')]);
    // As the Lambda prints it: the Node.js runtime's prefix (timestamp, request id, level), the handler's fields.
    const printed = (r: Record<string, unknown>) => `2026-11-30T12:00:30.000Z\t${'0'.repeat(36)}\tINFO\t` + JSON.stringify({
      trigger: 'CloudWatch Alarm State Change', ...r, ...(r.audit === 'routing-decision' ? { alarmEvidence: names } : {}),
    });
    for (const r of audit) {
      expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(AUDIT_RECORD_MAX_BYTES);
      expect(Buffer.byteLength(printed(r))).toBeLessThanOrEqual(256 * 1024 - 26);
    }
    // Every value the decision read is on a record, linked to its decision by the run.
    const [decision, ...inputs] = audit;
    expect(decision).toMatchObject({ run: '2026-11-30T12:00:30.000Z', inputs: { demandTokensPerSecond: full() } });
    expect(inputs).toEqual(names.map((n) => ({ audit: 'routing-inputs', run: decision.run, now: decision.now, class: n, signals: worst })));
    // On one line, as before, they would not fit.
    expect(inputs.reduce((bytes, r) => bytes + Buffer.byteLength(JSON.stringify(r.signals)), 0)).toBeGreaterThan(4 * AUDIT_RECORD_MAX_BYTES);
  });
});
