/**
 * What the game day's window looked like, from CloudWatch: the reconciler's own signals over the window (the same
 * GetMetricData batch the reconciler reads, `buildQueryBatch(signalPlan(...))`, placed per minute by
 * `windowsFromResults`), shaped as the simulator's chart series so that the simulator's report renders reality and
 * prediction the same way, and the few numbers to set beside the simulator's prediction of the same shortage.
 */
import { POLICY_MODE_VALUE } from '../metrics/contract';
import { type ClassSignals } from '../policy/types';
import { demandWindow } from '../reconciler/faults';
import { seenWhereUnpublished } from '../reconciler/observe';
import { type QueryBatch } from '../reconciler/io';
import { type ChartSeries } from '../report/chart-series';
import { replicaCostUsd } from '../report/cost';

const value = (w: ReadonlyArray<number | null> | undefined, i: number) => w?.[i] ?? NaN;

/**
 * The series of a window, from the windows `windowsFromResults` built for `batch`: the simulator's chart series, so one
 * report renders both. Only the p95 latency is observed (the reconciler reads a p95); p50 and p99 are NaN.
 */
export function observedSeries(batch: QueryBatch, windows: ReadonlyMap<string, ReadonlyArray<number | null>>, slots: number): ChartSeries {
  const classNames = [...new Set(batch.index.flatMap((e) => (e.className ? [e.className] : [])))];
  // A class's signal, or with no class the reconciler's own (mode, event entries).
  const signal = (className: string | undefined, name: string) => {
    const id = batch.index.find((e) => e.className === className && e.signal === name)?.id;
    return id === undefined ? undefined : windows.get(id);
  };
  const modeWindow = signal(undefined, 'mode');
  const entriesWindow = signal(undefined, 'eventEntries');
  const series: ChartSeries & { eventEntries: number[] } = {
    classNames, share: [], readyReplicas: [], latency: [], modes: [], demandTokensPerSecond: [], rejectedShare: [], eventEntries: [],
  };
  // Demand as the reconciler derives it (served + rejected, or served alone where the served signal already counts the
  // rejections: ALB RequestCount, SageMaker Invocations), so the observed rejected share is the one the policy saw.
  // Ready counts as the reconciler reads them: ALB's gaps (no HealthyHostCount for an emptied target group) read the
  // healthy targets its runs counted.
  const ready = (c: string) => seenWhereUnpublished(signal(c, 'readyReplicas') ?? [], signal(c, 'readyReplicasSeen'));
  const windowsOf: Record<string, ClassSignals> = Object.fromEntries(classNames.map((c): [string, ClassSignals] => [c, {
    readyReplicas: ready(c),
    desiredReplicas: signal(c, 'desiredReplicas') ?? [],
    servedTokensPerSecond: signal(c, 'servedTokensPerSecond'),
    rejectedTokensPerSecond: signal(c, 'rejectedTokensPerSecond'),
  }]));
  const readyOf = Object.fromEntries(classNames.map((c) => [c, windowsOf[c].readyReplicas]));
  const demandWindowOfRun = demandWindow(windowsOf, classNames, slots, undefined, new Set(batch.servedIncludesRejected), readyOf);
  for (let m = 0; m < slots; m++) {
    const served = classNames.map((c) => value(signal(c, 'servedTokensPerSecond'), m));
    const rejected = classNames.map((c) => value(signal(c, 'rejectedTokensPerSecond'), m));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
    const totalServed = sum(served);
    const demand = demandWindowOfRun[m] ?? NaN;
    series.share.push(served.map((s) => (totalServed > 0 && Number.isFinite(s) ? s / totalServed : 0)));
    series.readyReplicas.push(classNames.map((c) => value(windowsOf[c].readyReplicas, m)));
    const p95 = Math.max(...classNames.map((c) => value(signal(c, 'latencyP95Ms'), m)).filter(Number.isFinite));
    series.latency.push([NaN, Number.isFinite(p95) ? p95 / 1000 : NaN, NaN]);
    const mode = value(modeWindow, m);
    series.modes.push(Number.isNaN(mode) ? '' : mode === POLICY_MODE_VALUE.capacity ? 'capacity' : 'cost');
    series.demandTokensPerSecond.push(demand);
    series.rejectedShare.push(demand > 0 ? Math.min(1, sum(rejected) / demand) : 0);
    series.eventEntries.push(value(entriesWindow, m));
  }
  return series;
}

/**
 * A class's capacity-error signal summed over slots [from, to] of a window, or undefined when the batch reads no such
 * signal for the class. A slot without a datapoint counts 0: the Karpenter capacity-error metric filters publish nothing
 * while no log line matches (lib/core/metrics/karpenter-capacity.ts). A datapoint of a longer query period fills each
 * slot it covers (`windowsFromResults`), so each slot counts its share of it.
 */
export function capacityErrorsDuring(
  batch: QueryBatch, windows: ReadonlyMap<string, ReadonlyArray<number | null>>, className: string, from: number, to: number,
): number | undefined {
  const entries = batch.index.filter((e) => e.className === className && e.signal === 'capacityErrors');
  if (entries.length === 0) return undefined;
  let sum = 0;
  for (const { id, span = 1 } of entries) {
    const window = windows.get(id) ?? [];
    for (let slot = Math.max(0, from); slot <= to && slot < window.length; slot++) sum += (window[slot] ?? 0) / span;
  }
  return sum;
}

/** The numbers of a window that the simulator also predicts. Minutes are slots of the series. */
export interface ObservedOutcome {
  /** Injection to the first minute in capacity mode (NaN: never). */
  readonly secondsToCapacityMode: number;
  /** Restore to the first minute back in cost mode (NaN: not within the window). */
  readonly secondsToCostMode: number;
  /** Rejected demand over the whole window (tokens). */
  readonly rejectedShare: number;
  /** The highest minute p95 latency of the window, seconds. */
  readonly peakLatencyP95Seconds: number;
  readonly modeChanges: number;
  /**
   * USD per class over the window: its ready replicas per period x the period x its price per replica-hour (NaN: no
   * price). A replica launching or draining is billed but not ready, so this is a lower bound of the list-price cost.
   */
  readonly costUsdByClass: Readonly<Record<string, number>>;
  /** Their sum (NaN when a class has no price). */
  readonly costUsd: number;
  /** Periods of the window without a ready-replicas datapoint for some class (not priced: the cost is lower by them). */
  readonly unpricedPeriods: number;
}

/**
 * Cost per class of a window, from its ready replicas per period at `usdPerReplicaHour` (by class name of the series),
 * with the formula the simulator prices its runs with (replicaCostUsd).
 */
export function observedCost(series: ChartSeries, usdPerReplicaHour: Readonly<Record<string, number>>, periodSeconds: number): {
  byClass: Record<string, number>; total: number; unpricedPeriods: number;
} {
  const byClass: Record<string, number> = {};
  let unpriced = 0;
  series.readyReplicas.forEach((ready) => {
    if (series.classNames.some((_, ci) => !Number.isFinite(ready[ci]))) unpriced++;
  });
  series.classNames.forEach((name, ci) => {
    const replicaSeconds = series.readyReplicas.reduce((s, ready) => s + (Number.isFinite(ready[ci]) ? ready[ci] * periodSeconds : 0), 0);
    byClass[name] = replicaCostUsd(replicaSeconds, usdPerReplicaHour[name] ?? NaN);
  });
  return { byClass, total: Object.values(byClass).reduce((a, b) => a + b, 0), unpricedPeriods: unpriced };
}

export function observedOutcome(
  series: ChartSeries, injectedMinute: number, restoredMinute: number, periodSeconds = 60, usdPerReplicaHour: Readonly<Record<string, number>> = {},
): ObservedOutcome {
  const firstFrom = (from: number, mode: string) => {
    for (let m = Math.max(0, from); m < series.modes.length; m++) if (series.modes[m] === mode) return (m - from) * periodSeconds;
    return NaN;
  };
  let demand = 0;
  let rejected = 0;
  series.demandTokensPerSecond.forEach((d, m) => {
    if (!Number.isFinite(d)) return; // a minute without a demand datapoint
    demand += d;
    rejected += d * series.rejectedShare[m];
  });
  const known = series.modes.filter((m) => m !== '');
  const cost = observedCost(series, usdPerReplicaHour, periodSeconds);
  return {
    secondsToCapacityMode: firstFrom(injectedMinute, 'capacity'),
    secondsToCostMode: firstFrom(restoredMinute, 'cost'),
    rejectedShare: demand > 0 ? rejected / demand : 0,
    peakLatencyP95Seconds: Math.max(...series.latency.map((l) => l[1]).filter(Number.isFinite)),
    modeChanges: known.slice(1).filter((m, i) => m !== known[i]).length,
    costUsdByClass: cost.byClass,
    costUsd: cost.total,
    unpricedPeriods: cost.unpricedPeriods,
  };
}

/** The measures of a window that a simulated run is read for too (`observedOutcome` over its chart series). */
export type WindowMeasures = Pick<ObservedOutcome, 'secondsToCapacityMode' | 'secondsToCostMode' | 'rejectedShare' | 'peakLatencyP95Seconds' | 'modeChanges'>;

/** The simulator's prediction of the same shortage (the library policy's means of a `cdk-capacity-sim run`). */
export interface PredictedOutcome {
  readonly timeToFallbackSeconds: number;
  readonly timeToReturnSeconds: number;
  readonly rejectedShare: number;
  readonly latencyP95Seconds: number;
  readonly modeChangesPerEvent: number;
  /** USD over the run as the simulator bills it (its costUsd: replicas alive, i.e. pending, ready or draining, at list price). */
  readonly costUsd: number;
  /**
   * The observed window's measures on the prediction: `observedOutcome` over each seed's run, means over seeds
   * (Infinity: a seed never got there). What the table compares, like with like. Absent for a --predicted results.json
   * (no per-minute run to read): the table then sets the simulator's own metrics above beside them, each difference named.
   */
  readonly asObserved?: WindowMeasures;
  /**
   * The observed cost's concept on the prediction: its ready replicas per period priced by `observedCost`, per routed
   * class and in total. Absent for a --predicted results.json (it has only the billed total).
   */
  readonly readyCostUsdByClass?: Readonly<Record<string, number>>;
  readonly readyCostUsd?: number;
}

export interface ComparisonRow {
  readonly measure: string;
  readonly observed: string;
  readonly predicted: string;
  /** The difference named: what it means, or why the two are not the same quantity. */
  readonly difference: string;
}

const fmt = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : v === Infinity ? 'never' : '-');
const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(2)}%` : '-');

function relative(observed: number, predicted: number, unit: string, scale = 1, digits = 0): string {
  if (!Number.isFinite(observed) || !Number.isFinite(predicted)) return 'not comparable (one side has no value)';
  const d = (observed - predicted) * scale;
  return `${d >= 0 ? '+' : ''}${d.toFixed(digits)} ${unit} observed vs predicted`;
}

/** Observed beside predicted, one row per measure, each difference named. */
export function compareOutcomes(o: ObservedOutcome, p: PredictedOutcome | undefined): ComparisonRow[] {
  return [...(p?.asObserved ? windowRows(o, p.asObserved) : simulatorRows(o, p)), ...costRows(o, p)];
}

/** Both sides read by `observedOutcome`: one definition per row. */
function windowRows(o: ObservedOutcome, p: WindowMeasures): ComparisonRow[] {
  return [
    {
      measure: 'time to fallback, s', observed: fmt(o.secondsToCapacityMode), predicted: fmt(p.secondsToCapacityMode),
      difference: `${relative(o.secondsToCapacityMode, p.secondsToCapacityMode, 's')}; both injection to the first period in capacity mode`,
    },
    {
      measure: 'time to return, s', observed: fmt(o.secondsToCostMode), predicted: fmt(p.secondsToCostMode),
      difference: `${relative(o.secondsToCostMode, p.secondsToCostMode, 's')}; both restore to the first period back in cost mode`,
    },
    {
      measure: 'rejected share', observed: pct(o.rejectedShare), predicted: pct(p.rejectedShare),
      difference: `${relative(o.rejectedShare, p.rejectedShare, 'percentage points', 100, 2)}; both each period's rejected share weighted by its demand `
        + '(CloudWatch\'s of tokens, the simulator\'s of requests)',
    },
    {
      measure: 'p95 latency, s', observed: fmt(o.peakLatencyP95Seconds, 2), predicted: fmt(p.peakLatencyP95Seconds, 2),
      difference: `${relative(o.peakLatencyP95Seconds, p.peakLatencyP95Seconds, 's', 1, 2)}; both the worst period's p95 `
        + '(observed: the slowest class\'s; simulated: every completion of the period)',
    },
    {
      measure: 'mode changes', observed: String(o.modeChanges), predicted: fmt(p.modeChanges, 1),
      difference: `${relative(o.modeChanges, p.modeChanges, 'changes', 1, 1)}; both over the window; more observed than predicted is flapping the simulator does not see`,
    },
  ];
}

/** A --predicted results.json (or none): the simulator's own metrics, each difference from the observed measure named. */
function simulatorRows(o: ObservedOutcome, p: PredictedOutcome | undefined): ComparisonRow[] {
  const none = 'no prediction given (--predicted)';
  return [
    {
      measure: 'time to fallback, s',
      observed: fmt(o.secondsToCapacityMode),
      predicted: p ? fmt(p.timeToFallbackSeconds) : '-',
      difference: p
        ? `${relative(o.secondsToCapacityMode, p.timeToFallbackSeconds, 's')}; observed is injection to capacity mode, the simulator's is deficit onset `
          + 'to 90% of it carried by fallbacks (so it includes provisioning): observed should be the smaller'
        : none,
    },
    {
      measure: 'time to return, s',
      observed: fmt(o.secondsToCostMode),
      predicted: p ? fmt(p.timeToReturnSeconds) : '-',
      difference: p
        ? `${relative(o.secondsToCostMode, p.timeToReturnSeconds, 's')}; observed is restore to cost mode, the simulator's is restoration to cost per token `
          + 'within 5% of before (the ramp included)'
        : none,
    },
    {
      measure: 'rejected share',
      observed: pct(o.rejectedShare),
      predicted: p ? pct(p.rejectedShare) : '-',
      difference: p ? `${relative(o.rejectedShare, p.rejectedShare, 'percentage points', 100, 2)} (observed: tokens over the window; simulated: arrivals over the run)` : none,
    },
    {
      measure: 'p95 latency, s',
      observed: fmt(o.peakLatencyP95Seconds, 2),
      predicted: p ? fmt(p.latencyP95Seconds, 2) : '-',
      difference: p ? `${relative(o.peakLatencyP95Seconds, p.latencyP95Seconds, 's', 1, 2)} (observed: the worst minute's p95; simulated: p95 of every completion)` : none,
    },
    {
      measure: 'mode changes',
      observed: String(o.modeChanges),
      predicted: p ? fmt(p.modeChangesPerEvent, 1) : '-',
      difference: p ? `${relative(o.modeChanges, p.modeChangesPerEvent, 'changes', 1, 1)}; more observed than predicted is flapping the simulator does not see` : none,
    },
  ];
}

const LIST_PRICE = 'at the serving record\'s list price per replica-hour, not your bill (no discounts, spot or savings plans)';

/**
 * The window's cost per class and in total, observed beside predicted. Compared like with like: ready replica-time on
 * both sides, priced by one function (observedCost); the simulator's billed cost (launching and draining replicas too)
 * is its own row, with no observed counterpart.
 */
function costRows(o: ObservedOutcome, p: PredictedOutcome | undefined): ComparisonRow[] {
  const usd = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : '-');
  const gap = o.unpricedPeriods > 0 ? `; ${o.unpricedPeriods} period(s) without a ready-replicas datapoint are not priced` : '';
  const diff = (observed: number, predicted: number | undefined) => {
    if (!p) return 'no prediction given (--predicted)';
    if (!Number.isFinite(observed)) return 'not comparable: the serving record gives a class no single price (instance pools at different prices?)';
    if (predicted === undefined) return 'not comparable: the prediction has only a total (a --predicted results.json)';
    return relative(observed, predicted, 'USD', 1, 2);
  };
  const rows = Object.entries(o.costUsdByClass).map(([name, observed]): ComparisonRow => ({
    measure: `cost ${name}, USD`, observed: usd(observed), predicted: usd(p?.readyCostUsdByClass?.[name]), difference: diff(observed, p?.readyCostUsdByClass?.[name]),
  }));
  if (p?.readyCostUsd === undefined) {
    // Only the billed total to set beside the observed ready cost: said to be two different quantities.
    rows.push({
      measure: 'cost total, USD', observed: usd(o.costUsd), predicted: usd(p?.costUsd),
      difference: p
        ? `${diff(o.costUsd, p.costUsd)}; not like for like: observed is ready replicas x period, the results.json's costUsd every replica alive `
          + `(pending, ready, draining), so observed is lower by the launching and draining replica-time; both ${LIST_PRICE}${gap}`
        : diff(o.costUsd, undefined),
    });
    return rows;
  }
  rows.push({
    measure: 'cost total, USD', observed: usd(o.costUsd), predicted: usd(p.readyCostUsd),
    difference: `${diff(o.costUsd, p.readyCostUsd)}; both sides ready replicas x period (a launching or draining replica, billed but not ready, is left out), ${LIST_PRICE}${gap}`,
  });
  rows.push({
    measure: 'predicted billed, USD', observed: '-', predicted: usd(p.costUsd),
    difference: 'the simulator\'s replicas alive (pending, ready, draining): launches and drains billed too; CloudWatch publishes no billed-replica count to set beside it',
  });
  return rows;
}
