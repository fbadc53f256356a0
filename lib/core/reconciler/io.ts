/**
 * The pure parts of a reconciler run: the GetMetricData batch to send, the signal windows its answer gives, the policy
 * state rebuilt from the reconciler's own decision metrics, and the EMF record and audit line to print. Kept out of
 * the handler so they are unit-tested without mocks and shared with anything else that replays decisions.
 */
import { classDimensions, Dim, emfRecord, Metrics, POLICY_MODE_VALUE, serviceDimensions } from '../metrics/contract';
import { initialPolicyState } from '../policy/decide';
import { finiteOrNull } from '../policy/evidence';
import { type SignalPlan } from './signal-sources';
import { type SignalSource } from './config';
import { type ClassSignalSources, type RouteObservation } from './targets/kind';

export { type RouteObservation } from './targets/kind';
export { capacitiesToRaise } from './targets/sagemaker';
import { type ClassSignals, type PolicyConfig, type PolicyDecision, type PolicyInput, type PolicyState, type SignalWindow } from '../policy/types';

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

type SignalName = Exclude<keyof ClassSignalSources, 'servedIncludesRejected'>;
/** The reconciler's own service-wide history, read back to rebuild the policy state (`rebuildState`). */
export type OwnSignal = 'mode' | 'ramping' | 'eventEntries';

/** Which query answers which signal. */
export interface QueryBatch {
  readonly queries: MetricQuery[];
  readonly index: ReadonlyArray<QueryIndexEntry>;
  /** Routed classes whose served signal already counts what their servers rejected (`ClassSignalSources`). */
  readonly servedIncludesRejected: readonly string[];
}

export interface QueryIndexEntry {
  readonly id: string;
  /** Routed class the query belongs to; absent for the reconciler's own mode, ramp and capacity-event metrics. */
  readonly className?: string;
  /** `floor`: the `ReplicaFloor` the reconciler last published for the class. */
  readonly signal: SignalName | OwnSignal | 'floor';
  readonly scale: number;
  /** Periods one datapoint stands for (a query over a longer period, `SignalSource.periodSeconds`). @default 1 */
  readonly span?: number;
}

export function buildQueryBatch(plan: SignalPlan, periodSeconds: number): QueryBatch {
  const queries: MetricQuery[] = [];
  const index: QueryIndexEntry[] = [];
  const add = (source: SignalSource, signal: QueryIndexEntry['signal'], className?: string) => {
    const id = `q${queries.length}`;
    const period = source.periodSeconds ?? periodSeconds;
    if ('expression' in source) {
      queries.push({ Id: id, Expression: source.expression, Period: period, ReturnData: true });
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
          Period: period,
          Stat: m.stat,
        },
      });
    }
    index.push({ id, className, signal, scale: source.scale ?? 1, ...(period !== periodSeconds ? { span: period / periodSeconds } : {}) });
  };
  const servedIncludesRejected: string[] = [];
  for (const [className, sources] of Object.entries(plan.classes)) {
    const { servedIncludesRejected: included, ...bySignal } = sources;
    if (included) servedIncludesRejected.push(className);
    for (const [signal, source] of Object.entries(bySignal) as Array<[SignalName, SignalSource | readonly SignalSource[] | undefined]>) {
      // Several sources of one signal (rejections in two status classes) are queried apart and summed in assembleSignals.
      for (const one of source === undefined ? [] : Array.isArray(source) ? source : [source as SignalSource]) add(one, signal, className);
    }
  }
  add(plan.own.mode, 'mode');
  add(plan.own.ramping, 'ramping');
  add(plan.own.eventEntries, 'eventEntries');
  for (const [className, source] of Object.entries(plan.own.floors)) add(source, 'floor', className);
  return { queries, index, servedIncludesRejected };
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
  const entries = new Map(batch.index.map((e) => [e.id, e]));
  for (const r of results) {
    const window = r.Id ? out.get(r.Id) : undefined;
    if (!window) continue;
    const { scale, span = 1 } = entries.get(r.Id!)!;
    (r.Timestamps ?? []).forEach((ts, i) => {
      const first = Math.floor((ts.getTime() / 1000 - frame.start) / frame.periodSeconds);
      const value = finiteOrNull(r.Values?.[i]);
      if (value === null) return;
      // A datapoint of a longer query period stands for every period it covers.
      for (let slot = first; slot < first + span; slot++) if (slot >= 0 && slot < frame.slots) window[slot] = value * scale;
    });
  }
  return out;
}

/** A class's policy signals as queried, with the history `observe` reads itself and does not hand the policy. */
export type AssembledSignals = ClassSignals & { readonly pendingScaleOut?: SignalWindow; readonly readyReplicasSeen?: SignalWindow };

/**
 * Per-class signal windows from one GetMetricData answer. Total demand is `demandWindow()` (lib/core/reconciler/faults.ts),
 * which also tells a silent class holding weight from a quiet one.
 */
export function assembleSignals(
  windows: Map<string, Array<number | null>>,
  batch: QueryBatch,
  classNames: readonly string[],
): { signals: Record<string, AssembledSignals>; servedIncludesRejected: readonly string[] } {
  const signals: Record<string, Record<string, SignalWindow>> = Object.fromEntries(classNames.map((n) => [n, {}]));
  for (const e of batch.index) {
    if (!e.className || !signals[e.className] || e.signal === 'floor') continue;
    const window = windows.get(e.id)!;
    const prior = signals[e.className][e.signal];
    // A second source of the same signal adds up per period; a period is missing only when every source misses it.
    signals[e.className][e.signal] = prior ? window.map((v, i) => (v === null ? prior[i] ?? null : v + (prior[i] ?? 0))) : window;
  }
  const typed: Record<string, AssembledSignals> = {};
  for (const n of classNames) {
    typed[n] = { readyReplicas: [], desiredReplicas: [], ...signals[n] } as AssembledSignals;
  }
  return { signals: typed, servedIncludesRejected: batch.servedIncludesRejected.filter((n) => classNames.includes(n)) };
}

/**
 * The policy state as the last runs left it: the mode from the newest `PolicyMode` datapoint, entered when that
 * value's trailing run began; the ramp from `PolicyRamping` and the capacity event's entries from
 * `CapacityEventEntries` at the same period (`rebuildEntries`); the weights the target holds now.
 * Without a ramp datapoint, a return ramp needs at most 1 / rampStepShare ticks, so cost mode entered less than twice
 * that long ago (slack for ticks that could not write) counts as still ramping; a ramp already at the plan ends at once.
 * Without any decision history (first run, metric outage) it falls back to `initialPolicyState`: capacity mode, which
 * may cost more for one stabilization window but never risks availability.
 */
export function rebuildState(
  mode: SignalWindow,
  ramping: SignalWindow,
  weights: Readonly<Record<string, number>>,
  frame: WindowFrame,
  now: number,
  config: PolicyConfig,
  eventEntries: SignalWindow = [],
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
  const isRamping = !capacity && (ramping[last] !== null && ramping[last] !== undefined
    ? ramping[last]! >= 0.5
    // Without the ramp flag: only a visible capacity-to-cost transition starts a ramp; a cost run filling the whole
    // window is older than any ramp.
    : first > 0 && now - modeSince < 2 * rampTicks * config.periodSeconds);
  // A frame may reach into the current period: a decision already recorded there (an earlier run in the same
  // period) took this period's ramp step, so this run must not take another.
  const lastSlotStart = frame.start + last * frame.periodSeconds;
  const lastStepAt = isRamping && lastSlotStart >= now ? lastSlotStart : undefined;
  const entries = rebuildEntries(mode.map((v) => (v === null ? null : isCapacity(v))), eventEntries[last] ?? null, frame);
  return {
    mode: capacity ? 'capacity' : 'cost',
    weights,
    modeSince,
    ramping: isRamping,
    ...(entries.length > 0 ? { entries } : {}),
    ...(lastStepAt !== undefined ? { lastStepAt } : {}),
  };
}

/**
 * The capacity event's entries (`PolicyState.entries`, oldest first) as the newest decision left them. Cost-to-capacity
 * transitions visible in the mode window are entries at their period. How many entries the event counts is published
 * with each decision (`CapacityEventEntries`, `count`): an event that outlasts the window (its preferred class kept
 * losing capacity, `eventEntries` in lib/core/policy/decide.ts) keeps them all, its entries older than the window
 * standing at the periods just before it (the policy reads only their number and order; `returnHold`). Without that
 * datapoint (a metric gap, or decisions of an earlier version), a window that opens in capacity mode holds one entry at
 * least that old.
 */
function rebuildEntries(capacity: ReadonlyArray<boolean | null>, count: number | null, frame: WindowFrame): number[] {
  const visible: number[] = [];
  let previous: boolean | null = null;
  capacity.forEach((c, i) => {
    if (c === null) return;
    if (c && previous === false) visible.push(frame.start + i * frame.periodSeconds);
    previous = c;
  });
  if (count === null) return capacity[0] === true ? [frame.start, ...visible] : visible;
  const n = Math.max(0, Math.round(count));
  const older = Math.max(0, n - visible.length);
  const beforeWindow = Array.from({ length: older }, (_, k) => frame.start - (older - k) * frame.periodSeconds);
  return [...beforeWindow, ...visible].slice(older + visible.length - n);
}

/** What one decision's EMF records are made of. */
export interface DecisionRecords {
  /** The decision, with the weights in force after the run (its own if written, else the target's). */
  readonly decision: PolicyDecision;
  /** The state recorded for the next run. */
  readonly next: PolicyState;
  readonly input: PolicyInput;
  readonly service: string;
  readonly timestampMs: number;
  readonly weightTotal: number;
  /** Whether this run wrote weights. */
  readonly written: boolean;
  /**
   * The run planned a write and could not make it now (`StepPlan` 'skipped': an endpoint not InService, a write of
   * the same kind already made in this period, or one the endpoint refused because another writer took it meanwhile).
   * Counted per run; a run with nothing new to write is not counted, even on an endpoint that is Updating.
   */
  readonly deferred?: boolean;
  /** The replica floors published this run, by routed name (null: none known, none published). */
  readonly floors: Readonly<Record<string, number>> | null;
  /** What the run saw of each route (replica counts, per-pool instances). */
  readonly observed?: Readonly<Record<string, RouteObservation>>;
  /**
   * Whether the run went on without a read it uses (`TargetState.capacityUnwritable`: SageMaker's scaling bounds, so no
   * capacity write; `healthUnread`: the ALB target health, so a class without ReadyReplicas datapoints stays unknown):
   * published as `DegradedReads`, which the Reconciler's `degradedReadsAlarm` watches. A run like that succeeds, so
   * nothing else would say that it keeps happening.
   */
  readonly degraded?: boolean;
  /** ALB: the healthy targets the run counted per route (`TargetState.healthyTargets`; null: the read failed). */
  readonly healthyTargets?: Readonly<Record<string, number | null>>;
  /**
   * Per route, whether the run saw a refused scale-out (1) or not (0): platforms that roll them back only (SageMaker),
   * which also get each observed route's `PendingScaleOut`, the history the refusal is read from.
   */
  readonly refused?: Readonly<Record<string, number>>;
}

/**
 * Instances a route asked for and does not have, as one look at its counts shows them (`PendingScaleOut`): what each
 * run publishes, and what `observe` reads for the live counts and for periods published before that metric existed.
 */
export function pendingScaleOut(counts: { readonly ready: number; readonly desired: number }): number {
  return Math.max(0, counts.desired - counts.ready);
}

/**
 * One run's `Decisions` datapoint, by its reason: the [Service] rollup is the heartbeat the ReconcilerHeartbeat alarm
 * counts, so every run that is not a failure writes exactly one, whether it decided (`decisionEmf`) or waited for a
 * deployment under way (`deferredEmf`, faults.ts).
 */
export function decisionsRecord(service: string, timestampMs: number, reason: string): Record<string, unknown> {
  return emfRecord(timestampMs, { ...serviceDimensions(service), [Dim.REASON]: reason }, [{ spec: Metrics.decisions, value: 1 }]);
}

/**
 * The EMF records of one decision, built with the metric contract's `emfRecord` (lib/core/metrics/contract.ts): mode, ramp,
 * planned fallback shares and weight changes per service; the decision by reason; weight (and, where the reconciler
 * observed them, replicas) per routed class; on SageMaker also ready instances per pool class.
 */
export function decisionEmf(r: DecisionRecords): Array<Record<string, unknown>> {
  const { decision, next, input, service, timestampMs, weightTotal, written, floors, observed = {}, refused, healthyTargets } = r;
  const { deferred = false, degraded = false } = r;
  const total = Object.values(decision.weights).reduce((a, b) => a + b, 0) || weightTotal;
  const tps = new Map(input.classes.map((c) => [c.name, c.tokensPerSecondPerReplica]));
  const tokenWeight = (name: string) => (decision.weights[name] ?? 0) * (tps.get(name) ?? 0);
  const tokenTotal = Object.keys(decision.weights).reduce((a, n) => a + tokenWeight(n), 0);
  const preferred = decision.preferredClass;
  const records: Array<Record<string, unknown>> = [
    emfRecord(timestampMs, serviceDimensions(service), [
      { spec: Metrics.policyMode, value: POLICY_MODE_VALUE[decision.mode] },
      { spec: Metrics.policyRamping, value: next.ramping ? 1 : 0 },
      // The event's entries outlive the PolicyMode window while the preferred class keeps losing capacity: published
      // so a cold start rebuilds them (`rebuildState`). Same record, so same timestamp and [Service] dimension set as
      // PolicyMode: CloudWatch Logs extracts each directive's metrics under its namespace and dimensions
      // (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html),
      // and `signalPlan` queries exactly that series (one more query of the run's one GetMetricData call, which takes
      // up to 500: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html).
      { spec: Metrics.capacityEventEntries, value: next.entries?.length ?? 0 },
      { spec: Metrics.fallbackShareRequests, value: ((total - (decision.weights[preferred] ?? 0)) / total) * 100 },
      { spec: Metrics.fallbackShareTokens, value: tokenTotal > 0 ? (1 - tokenWeight(preferred) / tokenTotal) * 100 : 0 },
      { spec: Metrics.weightChanges, value: written ? 1 : 0 },
      { spec: Metrics.writesDeferred, value: deferred ? 1 : 0 },
      { spec: Metrics.degradedReads, value: degraded ? 1 : 0 },
    ]),
    decisionsRecord(service, timestampMs, decision.reason.code),
  ];
  for (const [className, weight] of Object.entries(decision.weights)) {
    const seen = observed[className];
    records.push(emfRecord(timestampMs, classDimensions(service, className), [
      { spec: Metrics.routeWeight, value: (weight / total) * 100 },
      // Published every run (0 = no floor; on a tick that holds everything, the floors in force), so a KEDA trigger
      // reading it never lacks a datapoint while the loop runs.
      ...(floors ? [{ spec: Metrics.replicaFloor, value: floors[className] ?? 0 }] : []),
      ...(seen ? [{ spec: Metrics.readyReplicas, value: seen.ready }, { spec: Metrics.desiredReplicas, value: seen.desired }] : []),
      ...(refused && seen ? [{ spec: Metrics.pendingScaleOut, value: pendingScaleOut(seen) }] : []),
      ...(refused?.[className] !== undefined ? [{ spec: Metrics.refusedScaleOuts, value: refused[className] }] : []),
      ...(typeof healthyTargets?.[className] === 'number' ? [{ spec: Metrics.healthyTargets, value: healthyTargets[className]! }] : []),
    ]));
    for (const [poolClass, ready] of Object.entries(seen?.pools ?? {})) {
      // A variant named like its only pool class is the same replicas: one series, not two.
      if (poolClass === className) continue;
      records.push(emfRecord(timestampMs, classDimensions(service, poolClass), [{ spec: Metrics.readyReplicas, value: ready }]));
    }
  }
  return records;
}

/**
 * The size every audit record keeps to, in bytes: CloudWatch Logs' former event bound of 256 KB less the 26 bytes
 * PutLogEvents counts per event ("the sum of all event messages in UTF-8, plus 26 bytes for each log event"), less 1 KB
 * for what the Lambda adds to the line (its runtime's timestamp, request id and level; the handler's `trigger` and
 * `alarmEvidence`). PutLogEvents now takes events up to 1 MB ("Each log event can be no larger than 1 MB",
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_InputLogEvent.html), but what Lambda does
 * with a longer stdout line is not documented (unconfirmed; reported: split into several events at 2^18 - 26 bytes,
 * each no longer JSON, https://stackoverflow.com/questions/77175643), so the records keep to the older bound.
 */
export const AUDIT_RECORD_MAX_BYTES = 256 * 1024 - 26 - 1024;

/**
 * The structured audit line of one decision: what was seen, what was decided, why. Each class's signal windows are on
 * a record of their own (`auditInputLines`) with the same `run` (the run's start): a window spans the whole policy
 * window, up to MAX_WINDOW_PERIODS periods, so all classes on one line could pass AUDIT_RECORD_MAX_BYTES.
 */
export function auditLine(
  input: PolicyInput,
  previous: PolicyState,
  decision: PolicyDecision,
  next: PolicyState,
  applied: { readonly action: 'applied' | 'unchanged' | 'skipped' | 'failed'; readonly detail?: string },
  floorsPublished: Readonly<Record<string, number>> | null,
  run: string,
): Record<string, unknown> {
  return {
    audit: 'routing-decision',
    run,
    now: new Date(input.now * 1000).toISOString(),
    mode: decision.mode,
    weights: decision.weights,
    reason: decision.reason,
    fallbackShare: decision.fallbackShare,
    requiredTokensPerSecond: decision.requiredTokensPerSecond,
    readyTokensPerSecond: decision.readyTokensPerSecond,
    preferredClass: decision.preferredClass,
    replicaFloors: decision.replicaFloors,
    floorsPublished,
    apply: applied,
    previous,
    next,
    inputs: { classes: input.classes, demandTokensPerSecond: input.demandTokensPerSecond },
  };
}

/**
 * The signal windows the decision read, one record per class (`audit: 'routing-inputs'`), each with its decision
 * line's `run`. A finite number prints in at most 24 characters (JSON.stringify's shortest round trip: 17 significant
 * digits, sign, point, exponent), so a class's six windows of at most MAX_WINDOW_PERIODS periods take at most
 * 6 x 1,440 x 25 = 216,000 bytes: one record stays within AUDIT_RECORD_MAX_BYTES whatever the number of classes.
 */
export function auditInputLines(input: PolicyInput, run: string): Array<Record<string, unknown>> {
  const now = new Date(input.now * 1000).toISOString();
  return Object.entries(input.signals).map(([name, signals]) => ({ audit: 'routing-inputs', run, now, class: name, signals }));
}
