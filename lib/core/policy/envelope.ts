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
 * (ALB RequestCount, SageMaker Invocations: `servedIncludesRejected`). Ready replicas are those present through the period
 * (`servingReplicas`): replicas that served part of it count as not there, so a period errs high, towards the declared
 * envelope. The saturated periods are pooled (delivered over replica-periods), so one period measured high or low
 * does not decide. Never above the declared envelope: the policy never plans a class faster than its owner measured
 * it; with no saturated period in the window the declared envelope stands.
 */
export function deliveredEnvelope(cls: PolicyClass, signals: ClassSignals | undefined, periods: number): number {
  const declared = cls.tokensPerSecondPerReplica;
  if (!signals?.servedTokensPerSecond || !signals.rejectedTokensPerSecond) return declared;
  const served = tail(signals.servedTokensPerSecond, periods);
  const rejected = tail(signals.rejectedTokensPerSecond, periods);
  // One more replica count than periods: a period is served by the replicas present at its start and at its end.
  const ready = tail(signals.readyReplicas, periods + 1);
  let deliveredSum = 0;
  let replicaPeriods = 0;
  for (let i = 0; i < periods; i++) {
    const r = servingReplicas(ready[i], ready[i + 1]);
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
  if (best === null || best >= declared * (1 - ENVELOPE_DEAD_BAND)) return declared;
  // A class that delivered nothing while saturated (all shed) keeps a sliver of its envelope: it stays routable and
  // measurable, and the next saturated period can raise the estimate.
  return Math.max(best, declared * MIN_ENVELOPE_SHARE);
}

/**
 * The replicas that served a whole period: the fewer of its count before and its own. Where a count is taken at the
 * end of its period (SageMaker's DescribeEndpoint history), replicas that came up during a shedding period would
 * otherwise be counted for all of it and read as a slower class; where it is the period's Minimum (ALB
 * HealthyHostCount), the previous one only errs towards the declared envelope.
 */
function servingReplicas(before: number | null, own: number | null): number | null {
  if (own === null) return null;
  return before === null ? own : Math.min(before, own);
}

/**
 * How far below its declared envelope a class must deliver, while saturated, before it is planned slower: 10%. A class
 * at its true envelope, offered about its capacity by bursty arrivals, sheds in the seconds a burst exceeds its queue
 * and idles in the gaps, so it delivers a few percent under its envelope in a period in which it shed. Without the
 * band that reads as a slower class: the plan then routes it less and keeps the lowered estimate for the whole window
 * (measured on the simulator: S2 and S5 on SageMaker, whose classes run at their declared speed, lost 0.3 pt of SLO).
 * A class clearly slower than declared (H3's fallbacks at 0.7x) is well outside the band.
 */
const ENVELOPE_DEAD_BAND = 0.1;

/** The lowest share of its declared envelope a class is ever planned at (see `deliveredEnvelope`). */
const MIN_ENVELOPE_SHARE = 0.1;

/** `cls` planned at the envelope it has shown (`deliveredEnvelope`) over the newest `periods` periods. */
export function asDelivered(cls: PolicyClass, signals: ClassSignals | undefined, periods: number): PolicyClass {
  const envelope = deliveredEnvelope(cls, signals, periods);
  return envelope === cls.tokensPerSecondPerReplica ? cls : { ...cls, tokensPerSecondPerReplica: envelope };
}
