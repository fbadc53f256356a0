import { LATENCY_BUCKETS, histogramPercentile } from './histogram';
import { availabilityAt, type CapacityEvent, poolsOf, routedScenario, type ScenarioInstance, type SimClass } from './model';
import { reconcilerReadDelaySeconds } from './platform';
import { type RunResult } from './simulator';

/** The metrics of one run (BENCHMARKS.md, "What the columns mean"). Times in seconds, shares in 0..1, costs in USD. */
export interface RunMetrics {
  readonly arrivals: number;
  /** SLO-meeting requests over all arrivals (rejections count as misses). */
  readonly sloAttainment: number;
  /** SLO-meeting requests over admitted requests. */
  readonly sloAttainmentAdmitted: number;
  /** SLO-meeting output tokens per second. */
  readonly goodputTokensPerSecond: number;
  readonly costUsd: number;
  /** Of which fallback classes (standby included). */
  readonly fallbackCostUsd: number;
  readonly usdPerMillionTokensServed: number;
  readonly usdPerMillionSloTokens: number;
  readonly rejectedShare: number;
  /** Rejections above the unavoidable share max(0, 1 - capacity/demand), per 5-minute window, over all arrivals. */
  readonly excessRejectedShare: number;
  /**
   * Per capacity event: from the first minute with a deficit (onset at the earliest) until the fallbacks (a variant's
   * lower pools too, when its priority-1 pool is the short one) carry 90% of it, or of their ceiling where that is
   * less, on trailing 3-minute means (NaN: no deficit arose that the fallbacks could take; Infinity: never within the
   * event).
   */
  readonly timeToFallbackSeconds: number;
  /**
   * Metric period + metric delay + control period + fallback provisioning (the fastest carrier's: another class, or the
   * short variant's lower pool): nothing can react faster.
   */
  readonly physicalFloorSeconds: number;
  /** Restoration until cost per token is within 5% of the pre-event level (NaN: never within the run). */
  readonly timeToReturnSeconds: number;
  readonly modeChanges: number;
  readonly modeChangesPerEvent: number;
  /** Sum over ticks of half the L1 distance between consecutive weight vectors. */
  readonly totalWeightVariation: number;
  readonly latencyP50Seconds: number;
  readonly latencyP95Seconds: number;
  readonly latencyP99Seconds: number;
  /** Largest relative deviation from Little's law over classes with traffic. */
  readonly littleLawMaxError: number;
}

const WINDOW_MINUTES = 5;
/** Minutes of the trailing means on which time to fallback judges demand, deficit and what the fallbacks carry. */
const DEFICIT_SMOOTHING_MINUTES = 3;

function sum(a: Float64Array, from = 0, to = a.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += a[i];
  return s;
}

/** Sum over classes of one minute. */
function minuteTotal(a: Float64Array, k: number, m: number, only?: (ci: number) => boolean): number {
  let s = 0;
  for (let ci = 0; ci < k; ci++) if (!only || only(ci)) s += a[m * k + ci];
  return s;
}

export function computeMetrics(run: RunResult, given: ScenarioInstance): RunMetrics {
  // Per routed column, as the run was simulated (a SageMaker variant with several pools is one column).
  const scenario = routedScenario(given);
  const s = run.series;
  const classes = scenario.classes;
  const arrivals = sum(s.demandRequests);
  const admitted = sum(s.admitted);
  const sloMet = sum(s.sloMetRequests);
  const sloTokens = sum(s.sloMetTokens);
  const served = sum(s.servedTokens);
  const rejected = sum(s.rejected);
  const cost = costOf(run);
  const preferred = classes.reduce((best, c, i) => (c.preferenceRank < classes[best].preferenceRank ? i : best), 0);
  // A variant's lower-priority pools are its fallback inside it.
  let lowerPools = 0;
  for (let m = 0; m < s.minutes; m++) lowerPools += s.lowerPoolCostUsd[m * s.classCount + preferred];
  const fallbackCost = costOf(run, (ci) => ci !== preferred) + lowerPools;
  const excess = excessRejections(run, scenario);
  const reactions = eventReactions(run, scenario);
  const events = scenario.capacityEvents ?? [];
  const stability = routingStability(run);
  const all = overallLatency(run);

  return {
    arrivals,
    sloAttainment: arrivals > 0 ? sloMet / arrivals : 1,
    sloAttainmentAdmitted: admitted > 0 ? sloMet / admitted : 1,
    goodputTokensPerSecond: sloTokens / scenario.durationSeconds,
    costUsd: cost,
    fallbackCostUsd: fallbackCost,
    usdPerMillionTokensServed: served > 0 ? (cost / served) * 1e6 : NaN,
    usdPerMillionSloTokens: sloTokens > 0 ? (cost / sloTokens) * 1e6 : NaN,
    rejectedShare: arrivals > 0 ? rejected / arrivals : 0,
    excessRejectedShare: arrivals > 0 ? excess / arrivals : 0,
    timeToFallbackSeconds: meanOfDefined(reactions.timesToFallback),
    physicalFloorSeconds: reactions.floor,
    timeToReturnSeconds: meanOfDefined(reactions.timesToReturn),
    modeChanges: stability.modeChanges,
    modeChangesPerEvent: stability.modeChanges / Math.max(1, events.length),
    totalWeightVariation: stability.variation,
    latencyP50Seconds: histogramPercentile(all, 0, 0.5),
    latencyP95Seconds: histogramPercentile(all, 0, 0.95),
    latencyP99Seconds: histogramPercentile(all, 0, 0.99),
    littleLawMaxError: littleLawError(run),
  };
}

/** Replica cost in USD over the run, of the classes `only` accepts (all by default). */
function costOf(run: RunResult, only?: (ci: number) => boolean): number {
  const s = run.series;
  const k = s.classCount;
  let c = 0;
  for (let m = 0; m < s.minutes; m++) {
    for (let ci = 0; ci < k; ci++) if (!only || only(ci)) c += s.costUsd[m * k + ci];
  }
  return c;
}

/**
 * Rejected requests above the unavoidable share, summed over 5-minute windows. Unavoidable rejection per window: what
 * every class could carry at its envelope with all the capacity the cloud would hand out, against the window's demand.
 */
function excessRejections(run: RunResult, scenario: ScenarioInstance): number {
  const s = run.series;
  const k = s.classCount;
  const minutes = s.minutes;
  let excess = 0;
  for (let w = 0; w * WINDOW_MINUTES < minutes; w++) {
    const from = w * WINDOW_MINUTES;
    const to = Math.min(minutes, from + WINDOW_MINUTES);
    const demandTokens = sum(s.demandTokens, from, to) / ((to - from) * 60);
    let capacity = 0;
    scenario.classes.flatMap((column) => poolsOf(scenario, column)).forEach((c) => {
      let ceiling = Infinity;
      for (let m = from; m < to; m++) ceiling = Math.min(ceiling, poolCeiling(scenario, c, m * 60));
      capacity += ceiling;
    });
    const unavoidable = demandTokens > 0 ? Math.max(0, 1 - capacity / demandTokens) : 0;
    const windowArrivals = sum(s.demandRequests, from, to);
    let windowRejected = 0;
    for (let m = from; m < to; m++) windowRejected += minuteTotal(s.rejected, k, m);
    if (windowArrivals > 0) excess += Math.max(0, windowRejected / windowArrivals - unavoidable) * windowArrivals;
  }
  return excess;
}

/**
 * Tokens per second a pool could carry at `at`: every instance the cloud would hand out then, up to its maximum, at its
 * envelope times its speed. No policy can do better, so the unavoidable share of rejections and the part of a deficit
 * the fallbacks can be asked to carry are both measured against it.
 */
function poolCeiling(scenario: ScenarioInstance, pool: SimClass, at: number): number {
  const instances = Math.min(pool.maxReplicas, availabilityAt(scenario.availability?.[pool.name], at));
  return instances * pool.tokensPerSecondPerReplica * (scenario.speedFactors?.[pool.name] ?? 1);
}

/** Reaction to each capacity event (time to fallback, time to return) and the physical floor of the last one. */
function eventReactions(run: RunResult, scenario: ScenarioInstance):
  { timesToFallback: number[]; timesToReturn: number[]; floor: number } {
  const timesToFallback: number[] = [];
  const timesToReturn: number[] = [];
  let floor = NaN;
  const delay = reconcilerReadDelaySeconds(scenario);
  for (const ev of scenario.capacityEvents ?? []) {
    const short = shortageOf(scenario, ev);
    if (!short) continue;
    const provisioning = Math.min(...fallbackPools(scenario, short).map(({ pool }) => {
      const p = pool.provisioningSeconds;
      return typeof p === 'number' ? p : (p[0] + p[1]) / 2;
    }));
    floor = 60 + delay + 60 + provisioning;
    timesToFallback.push(timeToFallback(run, scenario, short, ev));
    timesToReturn.push(timeToReturn(run, ev));
  }
  return { timesToFallback, timesToReturn, floor };
}



/**
 * Where a capacity event's shortage is measured: the column that holds the short class, and whether the short class is
 * the priority-1 pool of a variant with several. Then the deficit is that pool's, and the variant's lower-priority pools
 * are its fallback inside the variant, carrying it as the other variants do: on insufficient capacity SageMaker "retries
 * with the next instance pool" (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html;
 * quoted at `provisionTimeoutSeconds`, lib/core/platform/control-loop.ts). A shortage of a lower pool, or of a column
 * with one pool, is measured on the whole column.
 */
interface Shortage {
  readonly ci: number;
  readonly firstPool: boolean;
}

function shortageOf(scenario: ScenarioInstance, ev: CapacityEvent): Shortage | undefined {
  const ci = scenario.classes.findIndex((c) => poolsOf(scenario, c).some((p) => p.name === ev.className));
  if (ci < 0) return undefined;
  const pools = poolsOf(scenario, scenario.classes[ci]);
  return { ci, firstPool: pools.length > 1 && pools[0].name === ev.className };
}

/** The pools that can carry a shortage: every pool of the other columns, and the short variant's lower pools. */
function fallbackPools(scenario: ScenarioInstance, short: Shortage): Array<{ readonly column: number; readonly pool: SimClass }> {
  return scenario.classes.flatMap((column, i) => {
    const pools = poolsOf(scenario, column);
    const carrying = i !== short.ci ? pools : short.firstPool ? pools.slice(1) : [];
    return carrying.map((pool) => ({ column: i, pool }));
  });
}

/**
 * From the first minute with a deficit of the short class until the fallbacks (`fallbackPools`) carry 90% of what of it
 * they could carry (NaN: no deficit arose that they could take; Infinity: never within the event). What they could
 * carry is capped at their ceiling (`poolCeiling`, summed over the carrying pools): where the cloud hands out fewer
 * fallback instances than the deficit needs (S2's capped fallbacks), the clock stops when they carry 90% of what they
 * can, as the clairvoyant references do, not never.
 */
function timeToFallback(run: RunResult, scenario: ScenarioInstance, short: Shortage, ev: CapacityEvent): number {
  const s = run.series;
  const k = s.classCount;
  const { ci, firstPool } = short;
  const carriers = fallbackPools(scenario, short);
  const columns = [...new Set(carriers.map((c) => c.column))];
  const carryingPools = new Map(columns.map((i) => [i, carriers.filter((c) => c.column === i).map((c) => c.pool)]));
  // The short variant's priority-1 pool runs at this speed: what its lower pools have ready is the rest of its own.
  const firstPoolSpeed = scenario.speedFactors?.[poolsOf(scenario, scenario.classes[ci])[0].name] ?? 1;
  const start = Math.floor(ev.onset / 60);
  const end = Math.min(s.minutes, Math.ceil(ev.restoration / 60));
  // The deficit is judged on trailing 3-minute means (a single noisy minute is not a deficit, for the policy or for
  // this metric), and the clock starts when a deficit first exists: onset, or later when demand only grows into the
  // shortage (P1's inf2 cap bites hours after the cap is set). Until then nothing needs to fall back.
  const mean3 = (f: (m: number) => number, m: number) => {
    let total = 0;
    let n = 0;
    for (let j = Math.max(start, m - DEFICIT_SMOOTHING_MINUTES + 1); j <= m; j++, n++) total += f(j);
    return n > 0 ? total / n : 0;
  };
  let sawDeficit = false;
  let clock = ev.onset;
  // What the short class has ready, at its envelope; what a carrying column serves, and has ready at its actual speed
  // (the short variant itself: its lower pools only).
  const shortCapacity = (j: number) => (firstPool ? s.firstPoolReadyCapacity[j * k + ci] : s.readyCapacity[j * k + ci]);
  const servedBy = (j: number, i: number) => (i === ci ? s.lowerPoolServedTokens[j * k + i] : s.servedTokens[j * k + i]);
  const readyAtSpeed = (j: number, i: number) =>
    s.readyCapacityAtSpeed[j * k + i] - (i === ci ? s.firstPoolReadyCapacity[j * k + i] * firstPoolSpeed : 0);
  // Per minute, as the demand and the ready capacity are; per carrying column, never below what it has ready at its
  // actual speed (replicas kept from before a cap count, though the cloud would hand out no more). Per column, not per
  // pool: a fallback variant with several pools, one of them above its cap, would be capped a little low (none in the
  // suite). A variant's pools share its maximum, which the simulator does not split; each pool's own is used, which
  // errs high (towards the deficit, never towards an easier target).
  const columnCeiling = (j: number, i: number) =>
    Math.max(readyAtSpeed(j, i), carryingPools.get(i)!.reduce((t, pool) => t + poolCeiling(scenario, pool, j * 60), 0));
  for (let m = start; m < end; m++) {
    const demand = mean3((j) => s.demandTokens[j], m);
    const preferredCapacity = mean3((j) => shortCapacity(j) * 60, m);
    const ceiling = mean3((j) => 60 * columns.reduce((sum, i) => sum + columnCeiling(j, i), 0), m);
    const deficit = Math.min(demand - preferredCapacity, ceiling);
    if (deficit <= 0.02 * demand) continue;
    if (!sawDeficit) clock = Math.max(ev.onset, (m - DEFICIT_SMOOTHING_MINUTES + 1) * 60);
    sawDeficit = true;
    const carried = mean3((j) => columns.reduce((sum, i) => sum + servedBy(j, i), 0), m);
    if (carried >= 0.9 * deficit) return (m + 1) * 60 - clock;
  }
  return sawDeficit ? Infinity : NaN;
}

/**
 * Time to return: pre-event cost per token over the 30 minutes before onset, then rolling 5-minute cost per token
 * after restoration until within 5% of it (NaN: never within the run).
 */
function timeToReturn(run: RunResult, ev: CapacityEvent): number {
  const s = run.series;
  const k = s.classCount;
  const minutes = s.minutes;
  const start = Math.floor(ev.onset / 60);
  const costPerToken = (from: number, to: number) => {
    let c = 0;
    let t = 0;
    for (let m = Math.max(0, from); m < Math.min(minutes, to); m++) {
      for (let i = 0; i < k; i++) c += s.costUsd[m * k + i];
      t += minuteTotal(s.servedTokens, k, m);
    }
    return t > 0 ? c / t : NaN;
  };
  const pre = costPerToken(start - 30, start);
  for (let m = Math.ceil(ev.restoration / 60) + WINDOW_MINUTES - 1; m < minutes; m++) {
    if (costPerToken(m - WINDOW_MINUTES + 1, m + 1) <= pre * 1.05) return (m + 1) * 60 - ev.restoration;
  }
  return NaN;
}

function meanOfDefined(xs: readonly number[]): number {
  const ok = xs.filter((x) => !Number.isNaN(x));
  return ok.length > 0 ? ok.reduce((a, b) => a + b, 0) / ok.length : NaN;
}

/** Mode changes, and the sum over ticks of half the L1 distance between consecutive weight vectors. */
function routingStability(run: RunResult): { modeChanges: number; variation: number } {
  const s = run.series;
  const k = s.classCount;
  let modeChanges = 0;
  let variation = 0;
  for (let m = 1; m < s.minutes; m++) {
    if (s.modes[m] !== s.modes[m - 1]) modeChanges++;
    let d = 0;
    for (let ci = 0; ci < k; ci++) d += Math.abs(s.weights[m * k + ci] - s.weights[(m - 1) * k + ci]);
    variation += d / 2;
  }
  return { modeChanges, variation };
}

/** The latency histogram of the whole run, every class and minute. */
function overallLatency(run: RunResult): Float64Array {
  const s = run.series;
  const all = new Float64Array(LATENCY_BUCKETS);
  for (let cell = 0; cell < s.minutes * s.classCount; cell++) {
    for (let b = 0; b < LATENCY_BUCKETS; b++) all[b] += s.latency[cell * LATENCY_BUCKETS + b];
  }
  return all;
}

/** Largest relative deviation from Little's law over classes with traffic. */
function littleLawError(run: RunResult): number {
  let little = 0;
  for (const l of run.little) {
    if (l.arrivalRate === 0) continue;
    const predicted = l.arrivalRate * l.meanTimeInSystem;
    little = Math.max(little, Math.abs(l.inSystem - predicted) / Math.max(predicted, 1e-12));
  }
  return little;
}
