/**
 * The pure parts of a reconciler run: the GetMetricData batch to send, the signal windows its answer gives, the policy
 * state rebuilt from the reconciler's own decision metrics, and the EMF record and audit line to print. Kept out of
 * the handler so they are unit-tested without mocks and shared with anything else that replays decisions.
 */
import { classDimensions, Dim, emfRecord, Metrics, POLICY_MODE_VALUE, serviceDimensions } from '../metrics';
import { type RoutingFacts } from '../routing-facts';
import { initialPolicyState } from './decide';
import { policyClassProblems, policyConfigProblems, resolvePolicyConfig } from './defaults';
import { policyClassesFromFacts } from './from-facts';
import { type SignalPlan, type ClassSignalSources } from './signal-sources';
import { type ReconcilerConfig, type SignalSource } from './reconciler-config';
import { type ClassSignals, type PolicyClass, type PolicyConfig, type PolicyDecision, type PolicyInput, type PolicyState, type SignalWindow } from './types';

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

/**
 * Classes holding at most this share of the weights in force may have no demand datapoint in a period (a warm-floor
 * class can see no request in a quiet minute): their demand counts as 0. A period in which classes holding more of the
 * weight are silent while others report is missing, not low: reading it as low demand would keep cost mode during a
 * shortage.
 */
export const SILENT_WEIGHT_SHARE = 0.05;

/**
 * Per-class signal windows, plus total demand (served + rejected). A period with no datapoint from any class is
 * missing; so is one where classes holding more than `SILENT_WEIGHT_SHARE` of `weights` (the weights in force) have
 * no datapoint while others have one. Without `weights`, any silent class makes the period missing.
 */
export function assembleSignals(
  windows: Map<string, Array<number | null>>,
  batch: QueryBatch,
  classNames: readonly string[],
  slots: number,
  weights?: Readonly<Record<string, number>>,
): { signals: Record<string, ClassSignals>; demand: SignalWindow } {
  const signals: Record<string, Record<string, SignalWindow>> = Object.fromEntries(classNames.map((n) => [n, {}]));
  for (const e of batch.index) {
    if (e.className && signals[e.className]) signals[e.className][e.signal] = windows.get(e.id)!;
  }
  const demandKeys = ['servedTokensPerSecond', 'rejectedTokensPerSecond'];
  // Only classes with a demand query can report demand; the others are never "silent".
  const reporting = classNames.filter((n) => demandKeys.some((k) => signals[n][k] !== undefined));
  const totalWeight = reporting.reduce((a, n) => a + Math.max(0, weights?.[n] ?? 0), 0);
  const demand: Array<number | null> = [];
  for (let s = 0; s < slots; s++) {
    let sum: number | null = null;
    let silentWeight = 0;
    let silent = 0;
    for (const n of reporting) {
      let reported = false;
      for (const key of demandKeys) {
        const v = signals[n][key]?.[s];
        if (typeof v === 'number') {
          sum = (sum ?? 0) + v;
          reported = true;
        }
      }
      if (!reported) {
        silent++;
        silentWeight += Math.max(0, weights?.[n] ?? 0);
      }
    }
    const tooSilent = weights === undefined || totalWeight <= 0 ? silent > 0 : silentWeight / totalWeight > SILENT_WEIGHT_SHARE;
    demand.push(sum !== null && tooSilent ? null : sum);
  }
  const typed: Record<string, ClassSignals> = {};
  for (const n of classNames) {
    typed[n] = { readyReplicas: [], desiredReplicas: [], ...signals[n] } as ClassSignals;
  }
  return { signals: typed, demand };
}

/**
 * The policy state as the last runs left it: the mode from the newest `PolicyMode` datapoint, entered when that
 * value's trailing run began; the ramp from `PolicyRamping` at the same period; the weights the target holds now.
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
  // Capacity-mode entries visible in the window (cost-to-capacity transitions): the return hold grows with them.
  const entries: number[] = [];
  let previousValue: boolean | undefined;
  mode.forEach((v, i) => {
    if (v === null) return;
    const c = isCapacity(v);
    if (c && previousValue === false) entries.push(frame.start + i * frame.periodSeconds);
    previousValue = c;
  });
  return {
    mode: capacity ? 'capacity' : 'cost',
    weights,
    modeSince,
    ramping: isRamping,
    ...(entries.length > 0 ? { entries } : {}),
    ...(lastStepAt !== undefined ? { lastStepAt } : {}),
  };
}

/** What the reconciler saw of one routed class this run, for the EMF records. */
export interface RouteObservation {
  /** Ready and desired replicas (SageMaker: instances of the variant, from DescribeEndpoint). */
  readonly ready: number;
  readonly desired: number;
  /** SageMaker: ready instances per instance pool, by the pool's capacity class name. */
  readonly pools?: Readonly<Record<string, number>>;
}

/**
 * The EMF records of one decision, built with the metric contract's `emfRecord` (lib/core/metrics.ts): mode, ramp,
 * planned fallback shares and weight changes per service; the decision by reason; weight (and, where the reconciler
 * observed them, replicas) per routed class; on SageMaker also ready instances per pool class.
 */
export function decisionEmf(
  decision: PolicyDecision,
  next: PolicyState,
  input: PolicyInput,
  service: string,
  timestampMs: number,
  weightTotal: number,
  written: boolean,
  observed: Readonly<Record<string, RouteObservation>> = {},
): Array<Record<string, unknown>> {
  const total = Object.values(decision.weights).reduce((a, b) => a + b, 0) || weightTotal;
  const tps = new Map(input.classes.map((c) => [c.name, c.tokensPerSecondPerReplica]));
  const tokenWeight = (name: string) => (decision.weights[name] ?? 0) * (tps.get(name) ?? 0);
  const tokenTotal = Object.keys(decision.weights).reduce((a, n) => a + tokenWeight(n), 0);
  const preferred = decision.preferredClass;
  const records: Array<Record<string, unknown>> = [
    emfRecord(timestampMs, serviceDimensions(service), [
      { spec: Metrics.policyMode, value: POLICY_MODE_VALUE[decision.mode] },
      { spec: Metrics.policyRamping, value: next.ramping ? 1 : 0 },
      { spec: Metrics.fallbackShareRequests, value: ((total - (decision.weights[preferred] ?? 0)) / total) * 100 },
      { spec: Metrics.fallbackShareTokens, value: tokenTotal > 0 ? (1 - tokenWeight(preferred) / tokenTotal) * 100 : 0 },
      { spec: Metrics.weightChanges, value: written ? 1 : 0 },
    ]),
    emfRecord(timestampMs, { ...serviceDimensions(service), [Dim.REASON]: decision.reason.code }, [
      { spec: Metrics.decisions, value: 1 },
    ]),
  ];
  for (const [className, weight] of Object.entries(decision.weights)) {
    const seen = observed[className];
    records.push(emfRecord(timestampMs, classDimensions(service, className), [
      { spec: Metrics.routeWeight, value: (weight / total) * 100 },
      ...(seen ? [{ spec: Metrics.readyReplicas, value: seen.ready }, { spec: Metrics.desiredReplicas, value: seen.desired }] : []),
    ]));
    for (const [poolClass, ready] of Object.entries(seen?.pools ?? {})) {
      // A variant named like its only pool class is the same replicas: one series, not two.
      if (poolClass === className) continue;
      records.push(emfRecord(timestampMs, classDimensions(service, poolClass), [{ spec: Metrics.readyReplicas, value: ready }]));
    }
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

// ---------------------------------------------------------------------------------------------------------------
// Faults: what a run checks before it trusts its inputs, and what a failed run records
// ---------------------------------------------------------------------------------------------------------------

/** Why a run failed: the `Reason` dimension of `ReconcilerFailures`. */
export type FailureReason = 'aws-error' | 'invalid-config' | 'target-mismatch' | 'internal-error';

/**
 * Every problem of the configuration the function received (the construct validated it at synth, but the
 * environment can be edited, and JSON turns NaN and Infinity into null): finite facts, valid policy, a service name.
 */
export function reconcilerConfigProblems(config: ReconcilerConfig): string[] {
  const problems: string[] = [];
  if (!config || typeof config !== 'object' || !config.facts) return ['configuration: missing or without routing facts'];
  if (typeof config.service !== 'string' || config.service.length === 0) problems.push(`service: ${String(config.service)} (a non-empty string)`);
  if (!(Number.isFinite(config.tokensPerRequest) && config.tokensPerRequest > 0)) {
    problems.push(`tokensPerRequest: ${String(config.tokensPerRequest)} (a finite number > 0)`);
  }
  if (!(Number.isFinite(config.metricDelaySeconds) && config.metricDelaySeconds >= 0)) {
    problems.push(`metricDelaySeconds: ${String(config.metricDelaySeconds)} (a finite number >= 0)`);
  }
  problems.push(...policyConfigProblems(resolvePolicyConfig(config.policy)).map((p) => `policy: ${p}`));
  const facts = config.facts;
  const routed = facts.kind === 'alb' ? facts.targets : facts.kind === 'sagemaker' ? facts.variants : undefined;
  if (!Array.isArray(routed) || routed.length === 0) {
    problems.push('facts: no routed targets');
    return problems;
  }
  if (facts.kind === 'sagemaker' && facts.variants.some((v) => !Array.isArray(v.classes) || v.classes.length === 0)) {
    problems.push('facts: a variant without pools');
    return problems;
  }
  problems.push(...policyClassProblems(policyClassesFromFacts(facts, config.placement)).map((p) => `facts: ${p}`));
  return problems;
}

/** The routed names (ALB: class names; SageMaker: variant names) of the facts. */
export function routedNames(facts: RoutingFacts): string[] {
  return facts.kind === 'alb' ? facts.targets.map((t) => t.class.name) : facts.variants.map((v) => v.variantName);
}

/**
 * The routed targets of the facts that the live target does not hold (a renamed or removed SageMaker variant, a
 * target group no longer in the listener's forward action). Writing a weight for one would fail or, worse, route to
 * something that does not exist: the run must hold and say so.
 */
export function missingTargets(facts: RoutingFacts, present: readonly string[]): string[] {
  const have = new Set(present);
  return routedNames(facts).filter((n) => !have.has(n));
}

/** The EMF record of a failed run: `ReconcilerFailures` by reason and in the service rollup. No `Decisions`: none was made. */
export function failureEmf(service: string, reason: FailureReason, timestampMs: number): Record<string, unknown> {
  return emfRecord(timestampMs, { ...serviceDimensions(service), [Dim.REASON]: reason }, [{ spec: Metrics.reconcilerFailures, value: 1 }]);
}

/** The audit line of a run that failed before (or instead of) applying a decision. */
export function failureAuditLine(
  nowSeconds: number,
  reason: FailureReason,
  detail: string,
  context: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const now = Number.isFinite(nowSeconds) ? new Date(nowSeconds * 1000).toISOString() : String(nowSeconds);
  return { audit: 'routing-decision', now, apply: { action: 'failed', reason, detail }, ...context };
}

/**
 * The invariants a write must keep, whatever decide() returned: a finite, non-negative weight for exactly the routed
 * classes, not all zero, and zero for every class the placement policy forbids. A run that would break one writes
 * nothing and fails loudly instead.
 */
export function weightInvariantProblems(weights: Readonly<Record<string, number>>, classes: readonly PolicyClass[]): string[] {
  const problems: string[] = [];
  const names = new Set(classes.map((c) => c.name));
  for (const name of Object.keys(weights)) if (!names.has(name)) problems.push(`a weight for '${name}', which is no routed target`);
  for (const c of classes) {
    const w = weights[c.name];
    if (!(typeof w === 'number' && Number.isFinite(w) && w >= 0)) problems.push(`weight of '${c.name}' is ${String(w)}`);
    else if (w > 0 && !c.placementAllowed) problems.push(`weight ${w} for '${c.name}', which the placement policy forbids`);
  }
  if (classes.every((c) => !(weights[c.name] > 0))) problems.push('every weight is 0');
  return problems;
}
