import { type ClassSignals, type PolicyConfig, type SignalWindow, type TriggerCode } from './types';

/** A datapoint's value, or null when it is missing (null, undefined, NaN, infinite: what GetMetricData never returns). */
export function finiteOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The newest datapoint, or null when it is missing. */
export function latest(window: SignalWindow | undefined): number | null {
  if (!window || window.length === 0) return null;
  return finiteOrNull(window[window.length - 1]);
}

/** The newest `n` datapoints, oldest first, padded with nulls in front when the window is shorter. */
export function tail(window: SignalWindow | undefined, n: number): Array<number | null> {
  const out: Array<number | null> = [];
  const w = window ?? [];
  for (let i = w.length - n; i < w.length; i++) {
    out.push(i >= 0 ? finiteOrNull(w[i]) : null);
  }
  return out;
}

function periods(seconds: number, config: PolicyConfig): number {
  return Math.max(1, Math.ceil(seconds / config.periodSeconds));
}

/**
 * Evidence that a class cannot get capacity (docs/reconciler.md, "The policy"), from its own signals:
 * - `capacity-errors`: a launch failed for lack of capacity within the lookback;
 * - `replicas-not-ready`: desired above ready in every period of the grace window *and no progress* (ready did not
 *   grow over the window): a scale-out in progress makes replicas ready, a shortage does not. The window is
 *   `graceSeconds`: the policy's grace, or a fallback's own (`PolicyClass.provisioningGraceSeconds`);
 * - `latency-breach`: p95 above the SLO for consecutive periods.
 * Missing datapoints never raise evidence. Demand above ready capacity is *not* evidence: that is autoscaling lag.
 */
export function shortageEvidence(
  signals: ClassSignals | undefined, config: PolicyConfig, graceSeconds: number = config.provisioningGraceSeconds,
): TriggerCode[] {
  const triggers: TriggerCode[] = [];
  if (tail(signals?.capacityErrors, periods(config.capacityErrorLookbackSeconds, config)).some((v) => v !== null && v > 0)) {
    triggers.push('capacity-errors');
  }
  const grace = periods(graceSeconds, config);
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

/** The known datapoints of the planning window (missing ones dropped, negatives read as 0). */
function knownDemand(demand: SignalWindow, config: PolicyConfig): number[] {
  return tail(demand, config.demandWindowPeriods).filter((v): v is number => v !== null).map((v) => Math.max(0, v));
}

/**
 * The demand the plan is made for: the `demandQuantile` of the newest `demandWindowPeriods` datapoints (missing ones
 * skipped; linear interpolation between order statistics). Null when none of them is known.
 */
export function plannedDemand(demand: SignalWindow, config: PolicyConfig): number | null {
  return quantileOf(knownDemand(demand, config), config.demandQuantile);
}

/** The `q` quantile of `values` (linear interpolation between order statistics); null when there are none. */
function quantileOf(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * Demand that lasted at least two periods of the planning window: its second-highest known datapoint (the only one when
 * just one is known), never above the planned demand. Replica floors published to the class's own autoscaler (EKS) are
 * sized on it (SageMaker's on `typicalDemand`): replicas arrive minutes after they are asked for, so a one-minute
 * spike, which the engines' queues absorb or their admission limits shed, must not buy replicas that come up after it
 * has passed; a rise that lasts is seen one period later than the plan sees it.
 */
export function sustainedDemand(demand: SignalWindow, config: PolicyConfig): number | null {
  const planned = plannedDemand(demand, config);
  if (planned === null) return null;
  const known = knownDemand(demand, config).sort((a, b) => b - a);
  return Math.min(planned, known[Math.min(1, known.length - 1)]);
}

/**
 * The demand most periods of the planning window see: the median of its known datapoints (the mean of the middle two
 * when their number is even), never above the sustained demand. What a floor the platform's own autoscaler can undo is
 * sized on (`floorDemand` in decide.ts): an autoscaler that scales in after every datapoint of a long window fell
 * below its threshold keeps a count sized for the median, and takes back a count sized for the bursts.
 */
export function typicalDemand(demand: SignalWindow, config: PolicyConfig): number | null {
  const sustained = sustainedDemand(demand, config);
  return sustained === null ? null : Math.min(sustained, quantileOf(knownDemand(demand, config), 0.5)!);
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

/**
 * Periods in which a class showed it could not get capacity: a capacity error in that period, or desired above ready
 * in every period of the grace window ending there without progress (the per-period form of `shortageEvidence`'s
 * capacity triggers; latency is left out: a slow minute is not a lost offering). Missing data is not a loss.
 */
function lostPeriods(signals: ClassSignals | undefined, n: number, config: PolicyConfig): boolean[] {
  const grace = periods(config.provisioningGraceSeconds, config);
  const errors = tail(signals?.capacityErrors, n);
  const ready = tail(signals?.readyReplicas, n + grace - 1);
  const desired = tail(signals?.desiredReplicas, n + grace - 1);
  return errors.map((e, i) => {
    if (e !== null && e > 0) return true;
    const from = i;
    const to = i + grace - 1;
    for (let j = from; j <= to; j++) if (ready[j] === null || desired[j] === null || !(desired[j]! > ready[j]!)) return false;
    return ready[to]! <= ready[from]!;
  });
}

/**
 * How long a class must have shown no capacity loss before a return to cost mode counts on it, judged on the newest
 * `reentryMemorySeconds` of its own signals. Losses closer together than the capacity-error lookback are one episode
 * (Karpenter retries an unavailable offering every 3 minutes, so a steady shortage is one long episode). One episode,
 * or none: the stabilization window. Two or more (capacity lost, regained, lost again) mean the class flaps: it must
 * stay loss-free for longer than it ever stayed loss-free between losses (twice the longest quiet gap, so one more
 * quiet stretch of the same length is not mistaken for recovery), and at least one stabilization window per episode
 * doubling, at most `maxReturnHoldSeconds`. Also returns the periods since the newest loss.
 */
export function flapStability(signals: ClassSignals | undefined, config: PolicyConfig):
  { episodes: number; requiredQuietSeconds: number; quietSeconds: number } {
  const n = periods(config.reentryMemorySeconds, config);
  const lost = lostPeriods(signals, n, config);
  const merge = periods(config.capacityErrorLookbackSeconds, config);
  let episodes = 0;
  let longestGap = 0;
  let last = -1;
  lost.forEach((l, i) => {
    if (!l) return;
    const gap = last < 0 ? Infinity : i - last - 1;
    if (gap > merge) {
      episodes++;
      if (last >= 0) longestGap = Math.max(longestGap, gap);
    }
    last = i;
  });
  const quietSeconds = (last < 0 ? n : n - 1 - last) * config.periodSeconds;
  const requiredQuietSeconds = episodes < 2 ? config.stabilizationWindowSeconds : Math.min(config.maxReturnHoldSeconds,
    Math.max(doubledWindow(config, episodes - 1), 2 * longestGap * config.periodSeconds));
  return { episodes, requiredQuietSeconds, quietSeconds };
}

/**
 * The stabilization window doubled `times` times: the one growth law of the policy's waits (a flapping class's quiet
 * time in `flapStability`, the return hold in `returnHold`, the growth retry's backoff in `retriesGrowth`), each
 * bounding or combining it as it needs. The exponent stops at 30 so a long history cannot overflow to Infinity.
 */
export function doubledWindow(config: PolicyConfig, times: number): number {
  return config.stabilizationWindowSeconds * Math.pow(2, Math.min(Math.max(0, times), 30));
}

/**
 * Whether a class has been seen to get back the capacity it was refused, judged on the newest `reentryMemorySeconds`
 * of its own signals: since its newest capacity loss (`lostPeriods`), its ready replicas reached the count it was
 * asking for in that period (its desired replicas then, or the ask of a scale-out rolled back then, `refusedAsks`). A
 * class that merely stopped asking (demand fell, or it carries what it has) shows no error and no desired > ready,
 * which looks healthy but proves nothing: capacity it was refused may still be missing, and the next scale-out fails
 * again. Recovery has to be seen, not assumed; a class that has shown no loss for the whole memory counts as recovered
 * (its need fell away; an event ends after as long).
 */
export function recoverySeen(signals: ClassSignals | undefined, config: PolicyConfig):
  { seen: boolean; asked: number | null; lostSecondsAgo: number | null } {
  const n = periods(config.reentryMemorySeconds, config);
  const lost = lostPeriods(signals, n, config);
  const last = lost.lastIndexOf(true);
  if (last < 0) return { seen: true, asked: null, lostSecondsAgo: null };
  const ready = tail(signals?.readyReplicas, n);
  // A rolled-back scale-out's ask where the platform reports one (`refusedAsks`): the desired count has fallen back.
  const counts = [tail(signals?.desiredReplicas, n)[last], tail(signals?.refusedAsks, n)[last]]
    .filter((v): v is number => v !== null);
  const asked = counts.length > 0 ? Math.max(...counts) : null;
  const lostSecondsAgo = (n - 1 - last) * config.periodSeconds;
  if (asked === null) return { seen: true, asked, lostSecondsAgo };
  const seen = ready.slice(last + 1).some((r) => r !== null && r >= asked);
  return { seen, asked, lostSecondsAgo };
}
