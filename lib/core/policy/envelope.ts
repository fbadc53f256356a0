import { tail } from './evidence';
import { type ClassSignals, type PolicyClass } from './types';

/**
 * The envelope a class has shown it delivers, tokens per second per ready replica: its declared envelope, lowered to
 * what it actually delivered in the periods in which it was saturated within the window.
 *
 * Why: the plan fills each class up to ready replicas x envelope and spreads what is left in proportion to that
 * capacity. A class slower than its declared envelope (another instance generation, a degraded host, a slower model
 * server build) is then routed more than it can serve, and with an admission limit it sheds the excess (429/503). What
 * it delivered while shedding is what it can deliver; planning it at that rate sends the rest to classes that still
 * have room (the cheaper ones first), and sizes its replica floors for its real speed.
 *
 * A period counts only when the class was offered at least its declared capacity (delivered plus rejected >= ready
 * replicas x declared envelope) and shed in it (rejected > 0): shedding below the declared capacity (a burst within the
 * period) says nothing about the envelope. A class without an admission limit answers late instead of shedding; its
 * offered load is not observable (the load balancer counts answers, not arrivals), so it is not measured: its declared
 * envelope stands. Delivered is served minus rejected where the platform's served count includes the rejected requests
 * (ALB RequestCount, `servedIncludesRejected`). Ready replicas are the period's datapoint (ALB HealthyHostCount
 * Minimum): replicas that served part of the period count as not there, so a period errs high, towards the declared
 * envelope. The saturated periods are pooled (delivered over replica-periods), so one period measured high or low
 * does not decide. Never above the declared envelope: the policy never plans a class faster than its owner measured
 * it; with no saturated period in the window the declared envelope stands.
 */
export function deliveredEnvelope(cls: PolicyClass, signals: ClassSignals | undefined, periods: number): number {
  const declared = cls.tokensPerSecondPerReplica;
  if (!signals?.servedTokensPerSecond || !signals.rejectedTokensPerSecond) return declared;
  const served = tail(signals.servedTokensPerSecond, periods);
  const rejected = tail(signals.rejectedTokensPerSecond, periods);
  const ready = tail(signals.readyReplicas, periods);
  let deliveredSum = 0;
  let replicaPeriods = 0;
  for (let i = 0; i < periods; i++) {
    const r = ready[i];
    const s = served[i];
    if (r === null || r < 1 || s === null) continue;
    const shed = rejected[i] ?? 0;
    const delivered = Math.max(0, signals.servedIncludesRejected ? s - shed : s);
    const offered = delivered + shed;
    if (!(shed > 0) || offered < r * declared) continue;
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
export function asDelivered(cls: PolicyClass, signals: ClassSignals | undefined, periods: number): PolicyClass {
  const envelope = deliveredEnvelope(cls, signals, periods);
  return envelope === cls.tokensPerSecondPerReplica ? cls : { ...cls, tokensPerSecondPerReplica: envelope };
}
