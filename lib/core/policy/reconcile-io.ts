/**
 * The pure parts of a reconciler run: the GetMetricData batch to send, the signal windows its answer gives, the policy
 * state rebuilt from the reconciler's own decision metrics, and the EMF record and audit line to print. Kept out of
 * the handler so they are unit-tested without mocks and shared with anything else that replays decisions.
 */
import { Dim, Metrics, POLICY_MODE_VALUE } from '../metrics';
import { initialPolicyState } from './decide';
import { type SignalPlan, type ClassSignalSources } from './signal-sources';
import { type SignalSource } from './reconciler-config';
import { type ClassSignals, type PolicyConfig, type PolicyDecision, type PolicyInput, type PolicyState, type SignalWindow } from './types';

/** The shape of a GetMetricData `MetricDataQuery` (structurally compatible with the SDK's type). */
export interface MetricQuery {
  readonly Id: string;
  readonly ReturnData: boolean;
  readonly Expression?: string;
  readonly Period?: number;
  readonly MetricStat?: {
    readonly Metric: { readonly Namespace: string; readonly MetricName: string; readonly Dimensions: Array<{ Name: string; Value: string }> };
    readonly Period: number;
    readonly Stat: string;
  };
}

/** The shape of one GetMetricData `MetricDataResult`. */
export interface MetricResult {
  readonly Id?: string;
  readonly Timestamps?: Date[];
  readonly Values?: number[];
}

type SignalName = keyof ClassSignalSources;

/** Which query answers which signal. */
export interface QueryBatch {
  readonly queries: MetricQuery[];
  readonly index: ReadonlyArray<QueryIndexEntry>;
}

export interface QueryIndexEntry {
  readonly id: string;
  /** Routed class the query belongs to; absent for the reconciler's own state metrics. */
  readonly className?: string;
  readonly signal: SignalName | 'mode';
  readonly scale: number;
}

export function buildQueryBatch(plan: SignalPlan, periodSeconds: number): QueryBatch {
  const queries: MetricQuery[] = [];
  const index: QueryIndexEntry[] = [];
  const add = (source: SignalSource, signal: QueryIndexEntry['signal'], className?: string) => {
    const id = `q${queries.length}`;
    if ('expression' in source) {
      queries.push({ Id: id, Expression: source.expression, Period: periodSeconds, ReturnData: true });
    } else {
      const m = source.metric;
      queries.push({
        Id: id,
        ReturnData: true,
        MetricStat: {
          Metric: {
            Namespace: m.namespace,
            MetricName: m.metricName,
            Dimensions: Object.entries(m.dimensions).map(([Name, Value]) => ({ Name, Value })),
          },
          Period: periodSeconds,
          Stat: m.stat,
        },
      });
    }
    index.push({ id, className, signal, scale: source.scale ?? 1 });
  };
  for (const [className, sources] of Object.entries(plan.classes)) {
    for (const [signal, source] of Object.entries(sources) as Array<[SignalName, SignalSource | undefined]>) {
      if (source) add(source, signal, className);
    }
  }
  add(plan.own.mode, 'mode');
  return { queries, index };
}

/** Slots of a window: `slots` periods, the first starting at `start` (epoch seconds). */
export interface WindowFrame {
  readonly start: number;
  readonly periodSeconds: number;
  readonly slots: number;
}

/** One window per query id, datapoints placed in their period's slot (missing ones stay null), scaled. */
export function windowsFromResults(results: readonly MetricResult[], batch: QueryBatch, frame: WindowFrame): Map<string, Array<number | null>> {
  const out = new Map<string, Array<number | null>>();
  for (const { id } of batch.index) out.set(id, Array.from({ length: frame.slots }, () => null));
  const scales = new Map(batch.index.map((e) => [e.id, e.scale]));
  for (const r of results) {
    const window = r.Id ? out.get(r.Id) : undefined;
    if (!window) continue;
    (r.Timestamps ?? []).forEach((ts, i) => {
      const slot = Math.floor((ts.getTime() / 1000 - frame.start) / frame.periodSeconds);
      const value = r.Values?.[i];
      if (slot >= 0 && slot < frame.slots && typeof value === 'number' && Number.isFinite(value)) window[slot] = value * scales.get(r.Id!)!;
    });
  }
  return out;
}

/** Per-class signal windows, plus total demand (served + rejected; a period with no datapoint from any class is missing). */
export function assembleSignals(
  windows: Map<string, Array<number | null>>,
  batch: QueryBatch,
  classNames: readonly string[],
  slots: number,
): { signals: Record<string, ClassSignals>; demand: SignalWindow } {
  const signals: Record<string, Record<string, SignalWindow>> = Object.fromEntries(classNames.map((n) => [n, {}]));
  for (const e of batch.index) {
    if (e.className && signals[e.className]) signals[e.className][e.signal] = windows.get(e.id)!;
  }
  const demand: Array<number | null> = [];
  for (let s = 0; s < slots; s++) {
    let sum: number | null = null;
    for (const n of classNames) {
      for (const key of ['servedTokensPerSecond', 'rejectedTokensPerSecond']) {
        const v = signals[n][key]?.[s];
        if (typeof v === 'number') sum = (sum ?? 0) + v;
      }
    }
    demand.push(sum);
  }
  const typed: Record<string, ClassSignals> = {};
  for (const n of classNames) {
    typed[n] = { readyReplicas: [], desiredReplicas: [], ...signals[n] } as ClassSignals;
  }
  return { signals: typed, demand };
}

/**
 * The policy state as the last runs left it: the mode from the newest `PolicyMode` datapoint, entered when that
 * value's trailing run began; the weights the target holds now. A return ramp needs at most 1 / rampStepShare ticks,
 * so cost mode entered less than twice that long ago (slack for ticks that could not write) counts as still ramping;
 * a ramp that already reached the plan ends at once. Without any decision history (first run, metric outage) it
 * falls back to `initialPolicyState`, which errs toward capacity, never toward availability.
 */
export function rebuildState(
  mode: SignalWindow,
  weights: Readonly<Record<string, number>>,
  frame: WindowFrame,
  now: number,
  config: PolicyConfig,
): PolicyState {
  const isCapacity = (v: number) => v >= (POLICY_MODE_VALUE.cost + POLICY_MODE_VALUE.capacity) / 2;
  let last = -1;
  for (let i = mode.length - 1; i >= 0 && last < 0; i--) if (mode[i] !== null) last = i;
  if (last < 0) return initialPolicyState(weights, now);
  const capacity = isCapacity(mode[last]!);
  let first = last;
  // Gaps inside the run do not end it; a run reaching the start of the window is at least that old.
  while (first > 0 && (mode[first - 1] === null || isCapacity(mode[first - 1]!) === capacity)) first--;
  const modeSince = frame.start + first * frame.periodSeconds;
  const rampTicks = Math.ceil(1 / config.rampStepShare);
  return {
    mode: capacity ? 'capacity' : 'cost',
    weights,
    modeSince,
    // Only a visible capacity-to-cost transition starts a ramp; a cost run filling the whole window is older than it.
    ramping: !capacity && first > 0 && now - modeSince < 2 * rampTicks * config.periodSeconds,
  };
}

/**
 * The EMF records of one decision (metric names and dimensions from the metric contract, lib/core/metrics.ts): one
 * JSON log line each, which CloudWatch turns into metrics. Weights and fallback share are percentages.
 */
export function decisionEmf(
  decision: PolicyDecision,
  service: string,
  timestampMs: number,
  weightTotal: number,
  written: boolean,
  observedReplicas: Readonly<Record<string, { ready: number; desired: number }>> = {},
): Array<Record<string, unknown>> {
  const record = (dimensions: string[], metrics: Array<{ name: string; unit: string; value: number }>, fields: Record<string, string> = {}) => ({
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [{
        Namespace: Metrics.policyMode.namespace,
        Dimensions: [dimensions],
        Metrics: metrics.map((m) => ({ Name: m.name, Unit: m.unit })),
      }],
    },
    [Dim.SERVICE]: service,
    ...fields,
    ...Object.fromEntries(metrics.map((m) => [m.name, m.value])),
  });
  const metric = (spec: { name: string; unit: string }, value: number) => ({ name: spec.name, unit: spec.unit, value });
  const records: Array<Record<string, unknown>> = [
    record([Dim.SERVICE], [
      metric(Metrics.policyMode, POLICY_MODE_VALUE[decision.mode]),
      metric(Metrics.fallbackShareRequests, decision.fallbackShare * 100),
      metric(Metrics.weightChanges, written ? 1 : 0),
    ]),
    record([Dim.SERVICE, Dim.REASON], [metric(Metrics.decisions, 1)], { [Dim.REASON]: decision.reason.code }),
  ];
  for (const [className, weight] of Object.entries(decision.weights)) {
    const observed = observedReplicas[className];
    records.push(record([Dim.SERVICE, Dim.CLASS], [
      metric(Metrics.routeWeight, (weight / weightTotal) * 100),
      ...(observed ? [metric(Metrics.readyReplicas, observed.ready), metric(Metrics.desiredReplicas, observed.desired)] : []),
    ], { [Dim.CLASS]: className }));
  }
  return records;
}

/** The structured audit line of one decision: what was seen, what was decided, why. */
export function auditLine(
  input: PolicyInput,
  previous: PolicyState,
  decision: PolicyDecision,
  next: PolicyState,
  applied: { readonly action: 'applied' | 'unchanged' | 'skipped' | 'failed'; readonly detail?: string },
): Record<string, unknown> {
  return {
    audit: 'routing-decision',
    now: new Date(input.now * 1000).toISOString(),
    mode: decision.mode,
    weights: decision.weights,
    reason: decision.reason,
    fallbackShare: decision.fallbackShare,
    requiredTokensPerSecond: decision.requiredTokensPerSecond,
    readyTokensPerSecond: decision.readyTokensPerSecond,
    preferredClass: decision.preferredClass,
    apply: applied,
    previous,
    next,
    inputs: { classes: input.classes, signals: input.signals, demandTokensPerSecond: input.demandTokensPerSecond },
  };
}
