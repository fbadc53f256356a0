import { type ClassState } from './class-state';
import { LATENCY_BUCKETS, histogramPercentile } from './histogram';
import { type ClassDatapoint, type DemandDatapoint, type SimClass } from './model';
import { demandOf, demandReading, measuredMinute, type PlatformModel } from './platform';
import { normalise } from './policy';
import { type RunSeries } from './run-series';

/**
 * Minutes of published history each observation carries, the steady operation before time 0 included: an hour.
 * Baselines read the newest datapoint; the library's simulated Reconciler queries the run's published metrics itself,
 * over its own window (`policyWindowPeriods`, 124 periods at the defaults), the steady state before time 0 included.
 */
export const WINDOW_MINUTES = 60;

/** When CloudWatch publishes: each 60 s datapoint `delaySeconds` after its minute ends, none during an outage. */
export class Publication {
  constructor(readonly delaySeconds: number, private readonly outages: ReadonlyArray<{ readonly from: number; readonly to: number }>) {}

  /** Whether a datapoint that becomes visible at `at` is published at all (a gap, not a zero, during an outage). */
  survives(at: number): boolean {
    return !this.outages.some((o) => at >= o.from && at < o.to);
  }

  /** Whether minute `m`'s datapoint can be read at `now`. */
  readable(m: number, now: number): boolean {
    const at = (m + 1) * 60 + this.delaySeconds;
    return at <= now && this.survives(at);
  }
}

/**
 * The Reconciler's view of the metrics: 60 s datapoints of each class and of the service's demand, as CloudWatch
 * publishes them, of periods that ended at least the Reconciler's metric delay ago (`cutSeconds`). Demand is what the
 * deployed Reconciler measures (`demandWindow`, lib/core/reconciler/faults.ts), over every class: the requests that
 * reached its replicas (ALB RequestCount and SageMaker Invocations, both including the ones its server rejected) x the
 * declared tokens per request, or, where the Reconciler reads the engine's token counter, the
 * tokens it served plus its rejected requests x the declared tokens per request (`demandReading`). Before time 0
 * it holds an hour of synthetic steady-state history, so policies and autoscalers start from steady operation.
 */
export class MetricHistory {
  /** Per class, the published datapoints of the last `WINDOW_MINUTES` minutes, oldest first. */
  readonly classes: Array<Array<ClassDatapoint | undefined>>;
  readonly demand: Array<DemandDatapoint | undefined> = [];
  /** Per class, requests per minute before time 0 (steady state). */
  readonly initialRequests: number[];
  /** Per class, a datapoint of the steady state before time 0. */
  readonly steady: ClassDatapoint[];
  private publishedUpTo = -1;
  private readonly specs: readonly SimClass[];

  constructor(
    private readonly series: RunSeries,
    private readonly publication: Publication,
    private readonly cutSeconds: number,
    private readonly tokensPerRequest: number,
    private readonly platform: PlatformModel,
    states: readonly ClassState[],
    initialDemandTokens: number,
    meanOut: number,
  ) {
    this.specs = states.map((cs) => cs.spec);
    const capacityShares = normalise(states.map((cs) => cs.readyCapacity()));
    this.initialRequests = capacityShares.map((share) => (initialDemandTokens * share) / meanOut);
    this.classes = states.map((cs, ci) => {
      const out: Array<ClassDatapoint | undefined> = [];
      for (let m = -WINDOW_MINUTES; m < 0; m++) {
        const tokens = initialDemandTokens * capacityShares[ci];
        const requests = tokens / meanOut;
        out.push({
          minute: m, routedRequests: requests, targetedRequests: requests, serverRejected: 0, routedTokens: tokens, admitted: requests,
          rejected: 0, rejectedTokens: 0, completed: requests, servedTokens: tokens, sloMetRequests: requests, latencyP95Seconds: 0,
          readyReplicas: cs.readyCount, desiredReplicas: cs.desired, pendingReplicas: 0, capacityErrors: 0, interruptionNotices: 0,
        });
      }
      return out;
    });
    this.steady = this.classes.map((w) => w[w.length - 1]!);
    const requests = this.steady.reduce((a, d) => a + d.targetedRequests, 0);
    const tokens = this.steady.reduce((a, d, ci) => a + demandOf(demandReading(platform, states[ci].spec, d, tokensPerRequest)), 0);
    for (let m = -WINDOW_MINUTES; m < 0; m++) this.demand.push({ minute: m, requests, tokens });
  }

  /** Publishes the datapoints of the periods that ended at least `cutSeconds` (and their publication delay) ago. */
  publish(now: number): void {
    const s = this.series;
    const k = s.classCount;
    const visibleUpTo = Math.floor((now - Math.max(this.cutSeconds, this.publication.delaySeconds)) / 60) - 1;
    for (let m = this.publishedUpTo + 1; m <= Math.min(visibleUpTo, s.minutes - 1); m++) {
      const ok = this.publication.survives((m + 1) * 60 + this.publication.delaySeconds);
      let requests = 0;
      let tokens = 0;
      this.classes.forEach((window, ci) => {
        const cell = m * k + ci;
        const minute = measuredMinute(s, cell);
        const { targetedRequests: targeted, serverRejected } = minute;
        requests += targeted;
        tokens += demandOf(demandReading(this.platform, this.specs[ci], minute, this.tokensPerRequest));
        window.push(ok ? {
          minute: m,
          routedRequests: s.routedRequests[cell], targetedRequests: targeted, serverRejected, routedTokens: s.routedTokens[cell],
          admitted: s.admitted[cell], rejected: s.rejected[cell], rejectedTokens: s.rejectedTokens[cell], completed: s.completed[cell],
          servedTokens: s.servedTokens[cell], sloMetRequests: s.sloMetRequests[cell],
          latencyP95Seconds: histogramPercentile(s.latency.subarray(cell * LATENCY_BUCKETS), 0, 0.95),
          // EKS: HealthyHostCount's Minimum, as the Reconciler reads it; SageMaker: the count at the minute's close.
          readyReplicas: this.platform.targetGroupHealth ? s.minReadyReplicas[cell] : s.readyReplicas[cell],
          desiredReplicas: s.desiredReplicas[cell], pendingReplicas: s.pendingReplicas[cell],
          capacityErrors: s.capacityErrors[cell], interruptionNotices: s.interruptionNotices[cell],
        } : undefined);
        if (window.length > WINDOW_MINUTES) window.shift();
      });
      this.demand.push(ok ? { minute: m, requests, tokens } : undefined);
      if (this.demand.length > WINDOW_MINUTES) this.demand.shift();
      this.publishedUpTo = m;
    }
  }

  /** Requests that reached class `ci`'s replicas in minute `m` (steady state before time 0). */
  targetedRequests(ci: number, m: number): number {
    if (m < 0) return this.initialRequests[ci];
    return measuredMinute(this.series, m * this.series.classCount + ci).targetedRequests;
  }
}
