/**
 * The pure fault handling of a reconciler run: what a run checks before it trusts the live target, the demand rule for
 * classes without a datapoint, the invariants every write keeps, and what a failed run records. The simulator runs the
 * same rules (through `observe()` and `step()`), so they are part of what BENCHMARKS.md measures. The check of the
 * configuration the function received is lib/core/validation/reconciler-config.ts: the simulator builds its
 * configuration itself and never runs it, and with it here every Reconciler rule was in the benchmark's import closure.
 */
import { Dim, emfRecord, Metrics, serviceDimensions } from '../metrics/contract';
import { finiteOrNull } from '../policy/evidence';
import { decisionsRecord } from './io';
import { type ClassSignals, type PolicyClass, type SignalWindow } from '../policy/types';
import { type RoutingFacts } from './routing-facts';
import { routingTarget } from './targets';

/**
 * The service name on its own, so that a run whose configuration cannot even be parsed still reports its failure
 * under the right `Service` dimension.
 */
export const RECONCILER_SERVICE_ENV = 'RECONCILER_SERVICE';

/**
 * Classes holding at most this share of the weights in force may have no demand datapoint in a period (a warm-floor
 * class can see no request in a quiet minute): their demand counts as 0. A period in which classes holding more of the
 * weight are silent while others report is missing, not low: reading it as low demand would keep cost mode during a
 * shortage. The exception is a class with no ready replica (`demandWindow`): its demand is read as 0, so for the
 * periods until the run moves its weight, what is routed to it is lost uncounted (the load balancer answers it
 * itself), and demand reads low by that much; reading it as missing held the weight on the empty class instead.
 */
export const SILENT_WEIGHT_SHARE = 0.05;

/**
 * Total demand (tokens/s) per period from per-class windows: served + rejected, or served alone for a class whose
 * served signal already counts the rejected requests (`servedIncludesRejected`: ALB RequestCount, SageMaker Invocations). A class reports in a
 * period when its served signal has a datapoint, or its rejected signal a positive one: a rejection count of 0 with no
 * served datapoint (SageMaker publishes Invocation5XXErrors as 0 per request, so it can be present while Invocations
 * is missing) is a silent class, not one with no demand. A period with no report from any class is missing; so is one
 * where classes holding more than `SILENT_WEIGHT_SHARE` of `weights` (the weights in force) are silent while others
 * report. Without `weights`, any silent class makes the period missing. A class whose ready replicas read 0 in the
 * period (`readyReplicas`, aligned with the demand windows) is not silent but empty: no server of it could count a
 * request (what the load balancer routed there is lost before any does), and an engine counter with no pod to scrape
 * publishes nothing. Read as missing, its silence would hold the weights on it for as long as it has no replica.
 */
export function demandWindow(
  signals: Readonly<Record<string, ClassSignals>>,
  classNames: readonly string[],
  slots: number,
  weights?: Readonly<Record<string, number>>,
  servedIncludesRejected: ReadonlySet<string> = new Set(),
  readyReplicas: Readonly<Record<string, SignalWindow>> = {},
): SignalWindow {
  // Only classes with a demand query can report demand; the others are never "silent".
  const reporting = classNames.filter((n) => signals[n]?.servedTokensPerSecond !== undefined || signals[n]?.rejectedTokensPerSecond !== undefined);
  const totalWeight = reporting.reduce((a, n) => a + Math.max(0, weights?.[n] ?? 0), 0);
  const demand: Array<number | null> = [];
  for (let s = 0; s < slots; s++) {
    let sum: number | null = null;
    let silentWeight = 0;
    let silent = 0;
    for (const n of reporting) {
      const served = finiteOrNull(signals[n].servedTokensPerSecond?.[s]);
      const rejected = finiteOrNull(signals[n].rejectedTokensPerSecond?.[s]);
      if (served === null && !(rejected !== null && rejected > 0)) {
        if (finiteOrNull(readyReplicas[n]?.[s]) === 0) continue;
        silent++;
        silentWeight += Math.max(0, weights?.[n] ?? 0);
        continue;
      }
      const counted = served !== null && servedIncludesRejected.has(n) ? served : (served ?? 0) + (rejected ?? 0);
      sum = (sum ?? 0) + counted;
    }
    const tooSilent = weights === undefined || totalWeight <= 0 ? silent > 0 : silentWeight / totalWeight > SILENT_WEIGHT_SHARE;
    demand.push(sum !== null && tooSilent ? null : sum);
  }
  return demand;
}

/** Why a run failed: the `Reason` dimension of `ReconcilerFailures`. */
export type FailureReason = 'aws-error' | 'timeout' | 'invalid-config' | 'target-mismatch' | 'target-unavailable' | 'internal-error';

/** The routed names (ALB: class names; SageMaker: variant names) of the facts. */
export function routedNames(facts: RoutingFacts): string[] {
  return routingTarget(facts).routes(facts).map((r) => r.name);
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

/** The `Decisions` reason of a run that waits for a deployment under way (`StepFailure.deferred`). */
export const DEPLOYMENT_UNDER_WAY = 'deployment-under-way';

/** The heartbeat of a run that could not decide but did not fail: one `Decisions` datapoint, by its reason. */
export function deferredEmf(service: string, timestampMs: number): Record<string, unknown> {
  return decisionsRecord(service, timestampMs, DEPLOYMENT_UNDER_WAY);
}

/** The audit line of a run that could not decide but did not fail (`StepFailure.deferred`). */
export function skippedAuditLine(nowSeconds: number, detail: string, context: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return { audit: 'routing-decision', now: auditTime(nowSeconds), apply: { action: 'skipped', detail }, ...context };
}

function auditTime(nowSeconds: number): string {
  return Number.isFinite(nowSeconds) ? new Date(nowSeconds * 1000).toISOString() : String(nowSeconds);
}

/** The audit line of a run that failed before (or instead of) applying a decision. */
export function failureAuditLine(
  nowSeconds: number,
  reason: FailureReason,
  detail: string,
  context: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return { audit: 'routing-decision', now: auditTime(nowSeconds), apply: { action: 'failed', reason, detail }, ...context };
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

