/**
 * What one reconciler run sees, derived exactly as the deployed Lambda derives it: the GetMetricData window to ask for
 * (`metricQuery`), and from its answer and the routing target's state the policy's input (`observe`): per-class signal
 * windows cut at the metric delay (capacity errors newer than that, and the one an alarm-triggered run was called
 * for, counted in the newest period: evidence, never recovery), total demand (served + rejected requests or tokens,
 * requests x the declared mean tokens where the engine does not count tokens, a silent class holding weight read as
 * missing, not as zero, unless it had no ready replica), the
 * policy state rebuilt from the reconciler's own decision metrics (or from the memory of a run earlier in the period,
 * which CloudWatch may not have ingested yet; rebuilt, it counts this period's ramp step as taken), and the replica
 * floors in force.
 *
 * Plain data in, plain data out, no clock and no I/O: the Lambda calls it with what AWS answered, a simulator with
 * metric windows as CloudWatch would publish them.
 */
import { type PolicyClass, type PolicyConfig, type PolicyState, type SignalWindow, type ClassSignals } from '../policy/types';
import { policyWindowPeriods, resolvePolicyConfig } from '../policy/defaults';
import { finiteOrNull } from '../policy/evidence';
import { historyPeriodMultiple, LAMBDA_MAX_TIMEOUT_SECONDS } from '../platform/limits';
import { leastCommonMultiple, type ReconcilerConfig } from './config';
import { demandWindow } from './faults';
import {
  assembleSignals, buildQueryBatch, type MetricResult, type OwnSignal, pendingScaleOut, type QueryBatch, rebuildState, type WindowFrame,
  windowsFromResults,
} from './io';
import { type RunMemory } from './memory';
import { signalPlan } from './signal-sources';
import { routingTarget, type TargetState } from './targets';

/** The GetMetricData request of one run: the queries and the time range, and how its answer maps to periods. */
export interface MetricWindowQuery {
  /** The queries (`MetricDataQueries`) and which signal each answers. */
  readonly batch: QueryBatch;
  /** `StartTime` and `EndTime`, epoch seconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** The periods of the answer: external signals use the first `signalSlots`, the reconciler's own history all. */
  readonly frame: WindowFrame;
  readonly signalSlots: number;
  /** Start (epoch seconds) of the current period: the `now` the policy decides at. */
  readonly now: number;
  readonly policy: PolicyConfig;
  /**
   * Each fallback's own provisioning grace, by routed name (`ReconcilerConfig.fallbackGraceSeconds`): set on the classes
   * the run hands the policy, and counted in the window's length.
   */
  readonly classGraces: Readonly<Record<string, number>>;
}

/**
 * The window one run at `nowMs` (epoch milliseconds) reads. External signals end `metricDelaySeconds` ago (CloudWatch
 * publishes a period late); the reconciler's own history runs to the end of the current period, so a decision an
 * earlier run recorded in this period is seen (the ramp bound is per period, however many runs share it).
 */
export function metricQuery(config: ReconcilerConfig, nowMs: number): MetricWindowQuery {
  const policy = resolvePolicyConfig(config.policy);
  const period = policy.periodSeconds;
  const now = Math.floor(nowMs / 1000 / period) * period;
  const classGraces = config.fallbackGraceSeconds ?? {};
  const signalSlots = policyWindowPeriods(policy, Object.values(classGraces));
  const signalsEnd = Math.floor((nowMs / 1000 - config.metricDelaySeconds) / period) * period;
  const start = signalsEnd - signalSlots * period;
  const frame: WindowFrame = { start, periodSeconds: period, slots: (now - start) / period + 1 };
  const batch = buildQueryBatch(signalPlan(config, period), period);
  const startTime = queryStart(batch, start, signalsEnd, nowMs / 1000);
  return { batch, startTime, endTime: now + period, frame, signalSlots, now, policy, classGraces };
}

/**
 * The `StartTime` of a run's query. CloudWatch cuts each query's answer into periods from StartTime on ("Both
 * GetMetricStatistics and GetMetricData return timestamps aligned to the provided StartTime", a user's answer on
 * boto/boto3#3457; the API reference rounds StartTime down to the minute within 15 days; `windowsFromResults` reads
 * the answer so), so a source read over a longer period than the reconciler's (a counter scraped less often than
 * every period, `counterPerSecond`) ends a bucket at `signalsEnd` only when the window is a whole number of its
 * periods. Otherwise the bucket over the newest signal periods runs past `signalsEnd`, up to now or beyond: its sum is
 * partial, divided by the full period and copied into the newest slots, a demand that reads low every run (review
 * R256: 300 s periods, a 120 s scrape and a 600 s grace read up to a third low). So the query starts earlier, by what
 * makes the window a whole number of every query's period; the frame still starts at `start` (`windowsFromResults`
 * drops the datapoints before it, and a bucket over it fills the slots it covers), so every window, the reconciler's
 * own history included, covers the same periods as before. Where the earlier start would reach back past a bound
 * beyond which GetMetricData answers only periods of a coarser multiple than these (`historyPeriodMultiple`: a window
 * of about 15 days), the query starts at `start` and the newest bucket may read low, as before: missing data
 * otherwise. The game day's report reads its window the same way (`observeWindow`, bin/game-day.ts).
 */
export function queryStart(batch: QueryBatch, start: number, signalsEnd: number, nowSeconds: number): number {
  const periods = batch.queries.map((q) => q.MetricStat?.Period ?? q.Period!);
  const whole = periods.reduce(leastCommonMultiple);
  const earlier = signalsEnd - Math.ceil((signalsEnd - start) / whole) * whole;
  // Judged at the latest the query can reach CloudWatch: within the run's Lambda timeout, at most Lambda's 900 s.
  const multiple = historyPeriodMultiple(nowSeconds + LAMBDA_MAX_TIMEOUT_SECONDS - earlier);
  return [earlier, ...periods].every((x) => x % multiple === 0) ? earlier : start;
}

/** What `observe` makes of one run's answers. */
export interface Observation {
  /** The query the answers belong to. */
  readonly query: MetricWindowQuery;
  /** One policy class per route, priced and sized by what the target runs now. */
  readonly classes: PolicyClass[];
  /**
   * Signal windows by routed name, ending at the newest published period; the newest replica counts come from the
   * target itself where it reports them (SageMaker DescribeEndpoint).
   */
  readonly signals: Record<string, ClassSignals>;
  /** Total demand, tokens per second, one value per period (null: missing). */
  readonly demandTokensPerSecond: SignalWindow;
  /** The policy state the previous runs left, with the weights the target holds now. */
  readonly previous: PolicyState;
  /** The replica floors in force (last published), by routed name; null when none is known. */
  readonly floorsInForce: Readonly<Record<string, number>> | null;
  /** Routes of the facts that the live target does not hold (a renamed variant, a removed target group). */
  readonly missingRoutes: string[];
  /**
   * Where the platform rolls refused scale-outs back (SageMaker), each route's `rolledBackScaleOuts` window, aligned with
   * its replica windows: already in its capacity errors, kept apart so the run can publish it (`RefusedScaleOuts`).
   */
  readonly refusedScaleOuts?: Readonly<Record<string, SignalWindow>>;
}

/**
 * One run's observation. `results` are the GetMetricData `MetricDataResults` of `metricQuery(config, nowMs)` (any
 * order, pages merged); `target` what the routing target holds; `memory` what the previous run in this execution
 * environment left (`rememberRun`), if any; `alarmed` the classes whose capacity-error alarm triggered this run
 * (`alarmedClasses`).
 */
export function observe(
  config: ReconcilerConfig,
  target: TargetState,
  results: readonly MetricResult[],
  nowMs: number,
  memory?: RunMemory,
  alarmed: readonly string[] = [],
): Observation {
  const query = metricQuery(config, nowMs);
  const { batch, frame, signalSlots, now, policy } = query;
  const kind = routingTarget(config.facts);
  const routes = kind.routes(config.facts);
  const names = routes.map((r) => r.name);
  const present = new Set(target.present);
  const classes = kind.policyClasses(config.facts, config.placement, target).map((c) =>
    (query.classGraces[c.name] === undefined ? c : { ...c, provisioningGraceSeconds: query.classGraces[c.name] }));
  const windows = windowsFromResults(results, batch, frame);
  const all = assembleSignals(windows, batch, names);
  // External signals end `metricDelaySeconds` ago; cut them there so a not-yet-published period is not read as missing.
  const cut = (w: ReadonlyArray<number | null> | undefined) => (w ?? []).slice(0, signalSlots);
  const includesRejected = new Set(all.servedIncludesRejected);
  const refusedScaleOuts: Record<string, SignalWindow> = {};
  // The published ready counts (an emptied target group's unpublished ones read 0), aligned with the demand windows.
  const readyAsPublished = Object.fromEntries(names.map((n) => {
    const s = all.signals[n];
    const published = seenWhereUnpublished(cut(s.readyReplicas), s.readyReplicasSeen);
    return [n, emptyWhereUnpublished(published, target.healthyTargets?.[n])];
  }));
  const signals: Record<string, ClassSignals> = Object.fromEntries(names.map((n) => {
    const s = all.signals[n];
    const observed = target.replicas[n];
    const withNow = (w: ReadonlyArray<number | null>, value: number | undefined) => (value === undefined ? cut(w) : [...cut(w).slice(1), value]);
    const readyReplicas = withNow(readyAsPublished[n], observed?.ready);
    const desiredReplicas = withNow(s.desiredReplicas, observed?.desired);
    // Aligned with the replica windows, which end with the counts the target reports now (no capacity-error datapoint yet).
    const aligned = s.capacityErrors && (observed ? [...cut(s.capacityErrors).slice(1), null] : cut(s.capacityErrors));
    const reported = aligned && withFreshErrors(aligned, s.capacityErrors!.slice(signalSlots) as SignalWindow, alarmed.includes(n));
    // Aligned with the replica windows too: a missing series is all missing periods, not a shorter window.
    const pending = () => withNow(s.pendingScaleOut ?? Array.from({ length: signalSlots }, () => null), observed && pendingScaleOut(observed));
    const published = kind.scaleOutsRollBack ? pending() : undefined;
    const rolledBack = published && rolledBackScaleOuts(readyReplicas, pendingScaleOuts(published, readyReplicas, desiredReplicas));
    if (rolledBack) refusedScaleOuts[n] = rolledBack;
    const refusedAsks = rolledBack && refusedAsksOf(readyReplicas, published!, rolledBack);
    const capacityErrors = rolledBack ? withRolledBackScaleOuts(reported, rolledBack) : reported;
    // ALB: the healthy targets this run counted, newer than any published period (SageMaker's window ends with its own).
    const healthyNow = observed ? null : finiteOrNull(target.healthyTargets?.[n]);
    return [n, {
      readyReplicas,
      ...(healthyNow !== null ? { readyNow: healthyNow } : {}),
      desiredReplicas,
      ...(capacityErrors ? { capacityErrors } : {}),
      ...(refusedAsks?.some(known) ? { refusedAsks } : {}),
      ...(s.latencyP95Ms ? { latencyP95Ms: cut(s.latencyP95Ms) } : {}),
      ...(s.servedTokensPerSecond ? { servedTokensPerSecond: cut(s.servedTokensPerSecond) } : {}),
      ...(s.rejectedTokensPerSecond ? { rejectedTokensPerSecond: cut(s.rejectedTokensPerSecond) } : {}),
      ...(includesRejected.has(n) ? { servedIncludesRejected: true } : {}),
    }];
  }));
  // A class holding weight that reports no demand while others do is missing data, not low demand, unless it had no
  // ready replica (the published counts, aligned with the demand windows, not the live ones).
  const demand = demandWindow(signals, names, signalSlots, target.weights, includesRejected, readyAsPublished);
  // The run's own history (mode, ramp, entries, floors) over the policy's window only: a fallback's longer grace
  // lengthens the replica counts read, not how far back a rebuilt state or a floor in force may come from (review R263).
  const older = signalSlots - policyWindowPeriods(policy);
  const ownFrame: WindowFrame = { ...frame, start: frame.start + older * frame.periodSeconds, slots: frame.slots - older };
  const ownWindows = new Map([...windows].map(([id, w]) => [id, w.slice(older)]));
  const own = (signal: OwnSignal) => ownWindows.get(batch.index.find((e) => e.signal === signal)!.id)!;
  const remembered = fromMemory(memory, own('mode'), ownFrame, now, policy);
  const previous = remembered
    ? { ...remembered, weights: target.weights }
    : stepAssumed(rebuildState(own('mode'), own('ramping'), target.weights, ownFrame, now, policy, own('eventEntries')), now);
  return {
    query,
    classes,
    signals,
    demandTokensPerSecond: demand,
    previous,
    floorsInForce: floorsInForce(memory, ownWindows, batch, ownFrame, now, policy),
    missingRoutes: names.filter((n) => !present.has(n)),
    ...(kind.scaleOutsRollBack ? { refusedScaleOuts } : {}),
  };
}

/**
 * A ready-replica window whose unpublished periods read what the reconciler itself saw live (ALB: the healthy targets
 * each run counted, published as its HealthyTargets), so a class that lost every pod reads 0 through its gap on every
 * later run too, also once it has targets again (its loss periods stay losses: the policy's flap and recovery rules
 * count them). A period reads the lower of the counts seen at its start and at the next one's (`seen` runs past the
 * window: the reconciler's own history is read to the current period), as HealthyHostCount's Minimum would: the
 * period in which the pods went had them at its start.
 */
export function seenWhereUnpublished(window: SignalWindow, seen: SignalWindow | undefined): SignalWindow {
  if (!seen) return window;
  return window.map((v, i) => {
    const known = [seen[i], seen[i + 1]].map(finiteOrNull).filter((x): x is number => x !== null);
    return finiteOrNull(v) ?? (known.length > 0 ? Math.min(...known) : null);
  });
}

/**
 * A ready-replica window whose newest unpublished periods read 0 when the target has no healthy target now. ALB
 * publishes no HealthyHostCount for a target group whose targets are all gone ("both the HealthyHostCount and
 * UnHealthyHostCount metrics are not available", cds-snc/forms-terraform#918, the one report found; the metric's
 * documentation says only "Reported if health checks are enabled", load-balancer-cloudwatch-metrics.html), so a class
 * that lost every pod would read as missing data, and a missing ready count holds every weight (decide's missing-data
 * rule) on the class that has nothing to serve them. The trailing gap, not only the newest period: the target group
 * may have emptied any time since the last datapoint, and the live read says it is empty now. A class with healthy
 * targets now, or whose health read failed (`null`), keeps its gaps: missing is still unknown there. Mostly the
 * reconciler's own counts (`seenWhereUnpublished`) have already filled the gap; this covers the periods no run
 * published one for (the first runs after a deploy, failed runs). Where CloudWatch is later than the metric delay, the
 * live "empty" also covers periods in which the class still had targets (its demand reads 0 there rather than
 * missing, the safe side once it is empty).
 */
export function emptyWhereUnpublished(window: SignalWindow, healthyNow: number | null | undefined): SignalWindow {
  if (healthyNow !== 0) return window;
  const out = [...window];
  for (let i = out.length - 1; i >= 0 && finiteOrNull(out[i]) === null; i--) out[i] = 0;
  return out;
}

/**
 * A capacity-error window with the evidence newer than it added to its newest slot: the errors of the periods past the
 * metric delay that CloudWatch already has (the query reads to the current period for the reconciler's own history,
 * so they are in the answer), and one for an alarm on the class's capacity errors that has just triggered this run
 * (`alarmedClasses`). Capacity errors only ever count against a class, so reading them early is safe: a period not
 * yet published (or published in part) reads as missing or lower, never as recovery. Counted in the newest slot they
 * never look older than they are, so no lookback forgets them sooner; later runs read them in their own periods.
 */
export function withFreshErrors(window: SignalWindow, newer: SignalWindow, alarmed: boolean): SignalWindow {
  let fresh = alarmed ? 1 : 0;
  for (const v of newer) fresh += Math.max(0, finiteOrNull(v) ?? 0);
  if (fresh === 0 || window.length === 0) return window;
  const last = window.length - 1;
  return [...window.slice(0, last), Math.max(0, finiteOrNull(window[last]) ?? 0) + fresh];
}

/**
 * The state a run earlier in this execution environment left, when CloudWatch has not yet shown it: its period is at
 * least as new as the newest `PolicyMode` datapoint, and it is this period or the one before. EMF metrics reach
 * GetMetricData seconds to minutes after the run that printed them; without this, a second run seconds after a ramp
 * step would take another step in the same period. An older memory vouches for nothing: another environment may have
 * run (and stepped) in the periods since, its datapoints not yet readable (review R242), so such a run is treated as a
 * cold start (`stepAssumed`).
 */
function fromMemory(
  memory: RunMemory | undefined,
  mode: SignalWindow,
  frame: WindowFrame,
  now: number,
  policy: PolicyConfig,
): PolicyState | undefined {
  if (memory?.period === undefined || memory.period < now - policy.periodSeconds || !withinWindow(memory.period, now, policy)) return undefined;
  let last = -1;
  for (let i = mode.length - 1; i >= 0 && last < 0; i--) if (mode[i] !== null) last = i;
  const newestRecorded = last < 0 ? -Infinity : frame.start + last * frame.periodSeconds;
  return memory.period >= newestRecorded ? memory.state : undefined;
}

/**
 * A state rebuilt from the reconciler's own metrics, with this period's ramp step counted as taken. The bound of one
 * ramp step per period has two records: the run memory of this execution environment (`fromMemory`) and the runs' own
 * `PolicyMode` / `PolicyRamping` datapoints, which GetMetricData shows only after ingestion. A run no memory vouches for
 * (a cold start; Lambda: "you should assume that the environment exists only for a single invocation",
 * https://docs.aws.amazon.com/lambda/latest/operatorguide/statelessness-functions.html) cannot tell whether a run of
 * this period in another environment stepped seconds ago: an alarm run, the SageMaker run on IN_SERVICE, or an event
 * EventBridge delivered twice. No datapoint it reads can rule that out, since the missing datapoint is the evidence, so
 * it holds the step: the ramp (or a return's first step: the mode turns to cost, the weights hold) waits one period
 * after each cold start, the fail-safe side (review R238).
 */
function stepAssumed(rebuilt: PolicyState, now: number): PolicyState {
  return { ...rebuilt, lastStepAt: now };
}

/**
 * The floors last published: this environment's memory if newer, else the newest `ReplicaFloor` datapoint per route;
 * either within the stabilization window only. A floor is sized on the planning window's demand, and KEDA's trigger
 * reads the newest datapoint of three periods, so an older one is in force nowhere: republished after a gap in runs, it
 * would hold replicas sized on demand of up to the run's whole history ago (two hours with the default re-entry memory;
 * review R268).
 */
function floorsInForce(
  memory: RunMemory | undefined,
  windows: Map<string, Array<number | null>>,
  batch: QueryBatch,
  frame: WindowFrame,
  now: number,
  policy: PolicyConfig,
): Readonly<Record<string, number>> | null {
  const entries = batch.index.filter((e) => e.signal === 'floor' && e.className !== undefined);
  const since = now - policy.stabilizationWindowSeconds;
  let newest = -Infinity;
  const read: Record<string, number> = {};
  for (const e of entries) {
    const w = windows.get(e.id) ?? [];
    for (let i = w.length - 1; i >= 0 && frame.start + i * frame.periodSeconds >= since; i--) {
      if (w[i] === null) continue;
      read[e.className!] = w[i]!;
      newest = Math.max(newest, frame.start + i * frame.periodSeconds);
      break;
    }
  }
  const period = memory?.period;
  const remembered = period !== undefined && withinWindow(period, now, policy) && period >= since ? memory!.floors : undefined;
  if (remembered !== undefined && period! >= newest) return remembered;
  return Object.keys(read).length > 0 ? read : null;
}

/** Whether a memory's period is this period or an earlier one the policy window still covers. */
function withinWindow(period: number, now: number, policy: PolicyConfig): boolean {
  return period <= now && period >= now - policyWindowPeriods(policy) * policy.periodSeconds;
}

/**
 * The periods in which a scale-out ended without its replicas: a scale-out pending (`PendingScaleOut` > 0) in the
 * period before, none pending now, and no more ready replicas than before. On a platform that rolls a refused
 * scale-out back (`RoutingTarget.scaleOutsRollBack`: SageMaker's `RollingBack` after the provisioning timeout), that is
 * the sign of a capacity refusal it gives (a scale-out whose instances failed their health check rolls back too:
 * falling back is right either way); an Updating endpoint takes no other update that could lower the count meanwhile.
 * Pending is read from one metric published per run, not from `DesiredReplicas` (Maximum) against `ReadyReplicas`
 * (Minimum): two runs in one period around a finished scale-in (5 of 5, then 4 of 4) would pair 5 desired with 4 ready
 * and read a scale-out that never was. Sampled once a run: target tracking asking again before the next run, or a
 * missing datapoint, can hide a rollback, and then only the grace rule sees the shortage. 1 in such a period, 0 where
 * the counts are known, null where not.
 */
export function rolledBackScaleOuts(ready: SignalWindow, pending: SignalWindow): SignalWindow {
  return ready.map((r, i) => {
    const p = pending[i];
    if (!known(r) || !known(p)) return null;
    const [r0, p0] = [ready[i - 1], pending[i - 1]];
    return i > 0 && known(r0) && known(p0) && p0 > 0 && p === 0 && r <= r0 ? 1 : 0;
  });
}

/**
 * Each period's pending scale-out: the `PendingScaleOut` its runs published, or, for a period published before the
 * reconciler had that metric (the first policy window after an upgrade), desired - ready, so that refusals seen
 * before the upgrade stay in the loss memory. That older reading can pair two runs' counts (see `rolledBackScaleOuts`).
 */
function pendingScaleOuts(published: SignalWindow, ready: SignalWindow, desired: SignalWindow): SignalWindow {
  return ready.map((r, i) => {
    const p = published[i];
    if (known(p)) return p;
    const d = desired[i];
    return known(r) && known(d) ? pendingScaleOut({ ready: r, desired: d }) : null;
  });
}

/**
 * The count each rolled-back scale-out asked for, in its period (`ClassSignals.refusedAsks`): the ready replicas plus the
 * `PendingScaleOut` published the period before (a lower bound: ReadyReplicas is that period's Minimum and the pending
 * count its Maximum, possibly from two runs, and the ask is never below their sum); null elsewhere, and where that
 * period's pending count is derived from desired - ready (before the upgrade that published it), which two runs around
 * a scale-in can misread. By the time a rollback is seen the desired count is back at the current one, so the period of
 * the loss recorded the class as asking for what it had, and the return to cost mode, which waits until the class has
 * had the replicas it was refused at its newest loss (`recoverySeen`, lib/core/policy/evidence.ts), found that at once:
 * traced on S3 SageMaker seed 3, L40S refused a 7th instance at minute 70 and the policy returned at minute 82 ("it has
 * had the 6 replicas it was refused"), to re-enter at 94 while the shortage lasted until 124. A window of its own, not a
 * raised desired count: the other evidence rules (desired above ready, the loss memory) and the audit line read the
 * counts as published.
 */
function refusedAsksOf(ready: SignalWindow, publishedPending: SignalWindow, rolledBack: SignalWindow): SignalWindow {
  return rolledBack.map((v, i) => (v === 1 && known(publishedPending[i - 1]) ? ready[i - 1]! + publishedPending[i - 1]! : null));
}

/** A route's capacity errors with its rolled-back scale-outs added (the larger of the two per period). */
function withRolledBackScaleOuts(reported: SignalWindow | undefined, rolledBack: SignalWindow): SignalWindow {
  return rolledBack.map((v, i) => {
    const values = [v, reported?.[i]].filter(known);
    return values.length > 0 ? Math.max(...values) : null;
  });
}

function known(v: number | null | undefined): v is number {
  return finiteOrNull(v) !== null;
}
