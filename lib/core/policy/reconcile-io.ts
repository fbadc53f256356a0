/**
 * The pure parts of a reconciler run: the GetMetricData batch to send, the signal windows its answer gives, the policy
 * state rebuilt from the reconciler's own decision metrics, and the EMF record and audit line to print. Kept out of
 * the handler so they are unit-tested without mocks and shared with anything else that replays decisions.
 */
import { DECISION_DIMENSIONS, DECISION_METRICS } from './decision-metrics';
import { initialPolicyState } from './decide';
import { type SignalPlan, type ClassSignalSources } from './signal-sources';
import { type SignalSource } from './reconciler-config';
import { type ClassSignals, type PolicyDecision, type PolicyInput, type PolicyState, type SignalWindow } from './types';

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
  readonly signal: SignalName | 'mode' | 'ramping';
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
  add(plan.own.ramping, 'ramping');
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
 * The policy state as the last runs left it: mode from the newest `PolicyMode` datapoint, entered when that value's
 * trailing run began, ramping from `PolicyRamping`; weights are those the target holds now. Without any decision
 * history (first run, metric outage) it falls back to `initialPolicyState`, which only errs toward capacity.
 */
export function rebuildState(
  mode: SignalWindow,
  ramping: SignalWindow,
  weights: Readonly<Record<string, number>>,
  frame: WindowFrame,
  now: number,
): PolicyState {
  let last = -1;
  for (let i = mode.length - 1; i >= 0; i--) {
    if (mode[i] !== null) {
      last = i;
      break;
    }
  }
  if (last < 0) return initialPolicyState(weights, now);
  const value = mode[last]! >= 0.5 ? 1 : 0;
  let first = last;
  while (first > 0 && (mode[first - 1] === null || (mode[first - 1]! >= 0.5 ? 1 : 0) === value)) first--;
  // A run reaching the start of the window is at least that old.
  return {
    mode: value === 1 ? 'capacity' : 'cost',
    weights,
    modeSince: frame.start + first * frame.periodSeconds,
    ramping: value === 0 && (ramping[last] ?? 0) >= 0.5,
  };
}

/** The EMF record of one decision: one JSON log line that CloudWatch turns into the decision metrics. */
export function decisionEmf(
  decision: PolicyDecision,
  next: PolicyState,
  namespace: string,
  service: string,
  timestampMs: number,
  observedReplicas: Readonly<Record<string, { ready: number; desired: number }>> = {},
): Array<Record<string, unknown>> {
  const { service: S, class: C, reason: R } = DECISION_DIMENSIONS;
  const base = (dimensions: string[][], metrics: string[], fields: Record<string, unknown>) => ({
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: dimensions, Metrics: metrics.map((Name) => ({ Name, Unit: 'None' })) }],
    },
    [S]: service,
    ...fields,
  });
  const records: Array<Record<string, unknown>> = [
    base([[S]], [DECISION_METRICS.mode, DECISION_METRICS.ramping, DECISION_METRICS.fallbackShare], {
      [DECISION_METRICS.mode]: decision.mode === 'capacity' ? 1 : 0,
      [DECISION_METRICS.ramping]: next.ramping ? 1 : 0,
      [DECISION_METRICS.fallbackShare]: decision.fallbackShare,
    }),
    base([[S, R]], [DECISION_METRICS.decisions], { [R]: decision.reason.code, [DECISION_METRICS.decisions]: 1 }),
  ];
  for (const [className, weight] of Object.entries(decision.weights)) {
    const observed = observedReplicas[className];
    const metrics: string[] = [DECISION_METRICS.routeWeight];
    const fields: Record<string, unknown> = { [C]: className, [DECISION_METRICS.routeWeight]: weight };
    if (observed) {
      metrics.push(DECISION_METRICS.readyReplicas, DECISION_METRICS.desiredReplicas);
      fields[DECISION_METRICS.readyReplicas] = observed.ready;
      fields[DECISION_METRICS.desiredReplicas] = observed.desired;
    }
    records.push(base([[S, C]], metrics, fields));
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
