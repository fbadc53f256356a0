import { type ClassSignals, type PolicyConfig, type SignalWindow, type TriggerCode } from './types';

/** The newest datapoint, or null when it is missing. */
export function latest(window: SignalWindow | undefined): number | null {
  if (!window || window.length === 0) return null;
  const value = window[window.length - 1];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The newest `n` datapoints, oldest first, padded with nulls in front when the window is shorter. */
export function tail(window: SignalWindow | undefined, n: number): Array<number | null> {
  const out: Array<number | null> = [];
  const w = window ?? [];
  for (let i = w.length - n; i < w.length; i++) {
    const value = i >= 0 ? w[i] : null;
    out.push(typeof value === 'number' && Number.isFinite(value) ? value : null);
  }
  return out;
}

function periods(seconds: number, config: PolicyConfig): number {
  return Math.max(1, Math.ceil(seconds / config.periodSeconds));
}

/**
 * Evidence that a class cannot get capacity (ARCHITECTURE.md 3.4), from its own signals:
 * - `capacity-errors`: a launch failed for lack of capacity within the lookback;
 * - `replicas-not-ready`: desired above ready in every period of the grace window *and no progress* (ready did not
 *   grow over the window): a scale-out in progress makes replicas ready, a shortage does not;
 * - `latency-breach`: p95 above the SLO for consecutive periods.
 * Missing datapoints never raise evidence. Demand above ready capacity is *not* evidence: that is autoscaling lag.
 */
export function shortageEvidence(signals: ClassSignals | undefined, config: PolicyConfig): TriggerCode[] {
  const triggers: TriggerCode[] = [];
  if (tail(signals?.capacityErrors, periods(config.capacityErrorLookbackSeconds, config)).some((v) => v !== null && v > 0)) {
    triggers.push('capacity-errors');
  }
  const grace = periods(config.provisioningGraceSeconds, config);
  const ready = tail(signals?.readyReplicas, grace);
  const desired = tail(signals?.desiredReplicas, grace);
  const behind = ready.every((r, i) => r !== null && desired[i] !== null && desired[i]! > r);
  if (behind && ready[ready.length - 1]! <= ready[0]!) triggers.push('replicas-not-ready');
  const slo = config.latencySloP95Ms;
  if (slo !== undefined && tail(signals?.latencyP95Ms, config.latencyBreachPeriods).every((v) => v !== null && v > slo)) {
    triggers.push('latency-breach');
  }
  return triggers;
}

/**
 * The demand the plan is made for: the `demandQuantile` of the newest `demandWindowPeriods` datapoints (missing ones
 * skipped; linear interpolation between order statistics). Null when none of them is known.
 */
export function plannedDemand(demand: SignalWindow, config: PolicyConfig): number | null {
  const known = tail(demand, config.demandWindowPeriods).filter((v): v is number => v !== null).map((v) => Math.max(0, v));
  if (known.length === 0) return null;
  known.sort((a, b) => a - b);
  const pos = config.demandQuantile * (known.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(known.length - 1, lo + 1);
  return known[lo] + (known[hi] - known[lo]) * (pos - lo);
}

/**
 * A deficit autoscaling had time to fix and has not: in every period of the grace window, demand exceeded the ready
 * token capacity of `classes` (ready replicas x envelope) and that capacity did not grow over the window.
 */
export function sustainedDeficit(
  demand: SignalWindow,
  classes: ReadonlyArray<{ readonly tokensPerSecond: number; readonly signals: ClassSignals | undefined }>,
  config: PolicyConfig,
): boolean {
  const grace = periods(config.provisioningGraceSeconds, config);
  const d = tail(demand, grace);
  const readyTails = classes.map((c) => tail(c.signals?.readyReplicas, grace));
  const capacity = (i: number): number | null => {
    let sum = 0;
    for (let c = 0; c < classes.length; c++) {
      const r = readyTails[c][i];
      if (r === null) return null;
      sum += r * classes[c].tokensPerSecond;
    }
    return sum;
  };
  for (let i = 0; i < grace; i++) {
    const cap = capacity(i);
    if (d[i] === null || cap === null || !(d[i]! > cap)) return false;
  }
  return capacity(grace - 1)! <= capacity(0)!;
}

/**
 * Whether the preferred class was healthy in every one of the newest `n` periods: no capacity error, ready replicas
 * known and at least the desired ones, latency (when reported) within the SLO. A period with unknown replica counts is
 * not healthy: recovery has to be seen, not assumed.
 */
export function healthyThroughout(signals: ClassSignals | undefined, n: number, config: PolicyConfig): boolean {
  const errors = tail(signals?.capacityErrors, n);
  const ready = tail(signals?.readyReplicas, n);
  const desired = tail(signals?.desiredReplicas, n);
  const latency = tail(signals?.latencyP95Ms, n);
  const slo = config.latencySloP95Ms;
  for (let i = 0; i < n; i++) {
    if ((errors[i] ?? 0) > 0) return false;
    if (ready[i] === null || desired[i] === null || ready[i]! < desired[i]!) return false;
    if (slo !== undefined && latency[i] !== null && latency[i]! > slo) return false;
  }
  return true;
}

export function windowPeriods(seconds: number, config: PolicyConfig): number {
  return periods(seconds, config);
}
