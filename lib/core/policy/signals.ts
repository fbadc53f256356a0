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
 * The triggers the preferred class raises by itself (capacity errors, replicas not ready beyond the grace period,
 * latency above the SLO for consecutive periods). Missing datapoints never raise a trigger.
 */
export function preferredClassTriggers(signals: ClassSignals | undefined, config: PolicyConfig): TriggerCode[] {
  const triggers: TriggerCode[] = [];
  if (tail(signals?.capacityErrors, periods(config.capacityErrorLookbackSeconds, config)).some((v) => v !== null && v > 0)) {
    triggers.push('capacity-errors');
  }
  const grace = periods(config.provisioningGraceSeconds, config);
  const ready = tail(signals?.readyReplicas, grace);
  const desired = tail(signals?.desiredReplicas, grace);
  if (ready.every((r, i) => r !== null && desired[i] !== null && desired[i]! > r)) triggers.push('replicas-not-ready');
  const slo = config.latencySloP95Ms;
  if (slo !== undefined && tail(signals?.latencyP95Ms, config.latencyBreachPeriods).every((v) => v !== null && v > slo)) {
    triggers.push('latency-breach');
  }
  return triggers;
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
