import { tail } from './evidence';
import { type ClassSignals, type PolicyClass, type PolicyConfig } from './types';

/**
 * The envelope a class has shown it delivers, tokens per second per ready replica: its declared envelope, lowered to
 * what it actually delivered in a period in which it was saturated, the best such period of the signal window.
 *
 * Why: the plan fills each class up to ready replicas x envelope and spreads what is left in proportion to that
 * capacity. A class slower than its declared envelope (another instance generation, a degraded host, a model server
 * version with a slower kernel) is then routed more than it can serve: with an admission limit it sheds the excess
 * (429/503), without one it answers late. Either way that class is saturated, and what it delivered while saturated is
 * what it can deliver. Planning it at that rate sends the rest to classes that still have room (the cheaper ones
 * first), and sizes its replica floors for its real speed.
 *
 * A period counts as saturated only when the class was offered at least its declared capacity (served plus rejected
 * >= ready replicas x declared envelope) and, in that period, either shed requests (rejected > 0) or broke the latency
 * SLO (p95 above `latencySloP95Ms`, when one is set). A class offered less than its declared capacity says nothing
 * about its envelope, whatever it did: a burst within the period can shed below the mean rate. Delivered is served
 * minus rejected where the platform's served count includes the rejected requests (ALB RequestCount,
 * `servedIncludesRejected`). Ready replicas are the period's datapoint (ALB HealthyHostCount Minimum): replicas that
 * served part of the period count as not there, so the estimate errs high, towards the declared envelope. The best
 * saturated period of the window is taken (one busy minute measured low does not pin the class down), and the result
 * is never above the declared envelope: the policy never plans a class faster than its owner measured it. With no
 * saturated period in the window the declared envelope stands.
 */
export function deliveredEnvelope(cls: PolicyClass, signals: ClassSignals | undefined, config: PolicyConfig, periods: number): number {
  const declared = cls.tokensPerSecondPerReplica;
  if (!signals?.servedTokensPerSecond || !signals.rejectedTokensPerSecond) return declared;
  const served = tail(signals.servedTokensPerSecond, periods);
  const rejected = tail(signals.rejectedTokensPerSecond, periods);
  const ready = tail(signals.readyReplicas, periods);
  const latency = tail(signals.latencyP95Ms, periods);
  const slo = config.latencySloP95Ms;
  let deliveredSum = 0;
  let replicaPeriods = 0;
  for (let i = 0; i < periods; i++) {
    const r = ready[i];
    const s = served[i];
    if (r === null || r < 1 || s === null) continue;
    const shed = rejected[i] ?? 0;
    const delivered = Math.max(0, signals.servedIncludesRejected ? s - shed : s);
    const offered = delivered + shed;
    const breached = shed > 0 || (slo !== undefined && latency[i] !== null && latency[i]! > slo);
    if (!breached || offered < r * declared) continue;
    deliveredSum += delivered;
    replicaPeriods += r;
  }
  const best = replicaPeriods > 0 ? deliveredSum / replicaPeriods : null;
  // A class that delivered nothing while saturated (all shed) keeps a sliver of its envelope: it stays routable and
  // measurable, and the next saturated period can raise the estimate.
  return best === null ? declared : Math.min(declared, Math.max(best, declared * MIN_ENVELOPE_SHARE));
}

/** The lowest share of its declared envelope a class is ever planned at (see `deliveredEnvelope`). */
const MIN_ENVELOPE_SHARE = 0.1;

/** `cls` planned at the envelope it has shown (`deliveredEnvelope`) over the newest `periods` periods. */
export function asDelivered(cls: PolicyClass, signals: ClassSignals | undefined, config: PolicyConfig, periods: number): PolicyClass {
  const envelope = deliveredEnvelope(cls, signals, config, periods);
  return envelope === cls.tokensPerSecondPerReplica ? cls : { ...cls, tokensPerSecondPerReplica: envelope };
}
