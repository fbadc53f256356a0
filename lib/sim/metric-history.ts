import { type ClassState } from './class-state';
import { LATENCY_BUCKETS, histogramPercentile } from './histogram';
import { type ClassDatapoint, type DemandDatapoint } from './model';
import { normalise } from './policy';
import { type RunSeries } from './run-series';

/**
 * Minutes of published history each observation carries: the library's longest lookback (its re-entry memory, within
 * which it recognizes a flapping class; `policyWindowPeriods` of the defaults). Baselines read the newest datapoint.
 */
export const WINDOW_MINUTES = 60;

/**
 * The metrics pipeline: 60 s datapoints of each class and of the whole service, published `metricDelay` seconds after
 * their minute ends, none during a metric outage (a gap, not a zero). Before time 0 it holds an hour of synthetic
 * steady-state history, so policies and autoscalers start from steady operation.
 */
export class MetricHistory {
  /** Per class, the published datapoints of the last `WINDOW_MINUTES` minutes, oldest first. */
  readonly classes: Array<Array<ClassDatapoint | undefined>>;
  readonly demand: Array<DemandDatapoint | undefined> = [];
  private publishedUpTo = -1;

  constructor(
    private readonly series: RunSeries,
    private readonly metricDelay: number,
    private readonly outages: ReadonlyArray<{ readonly from: number; readonly to: number }>,
    states: readonly ClassState[],
    initialDemandTokens: number,
    meanOut: number,
  ) {
    const capacityShares = normalise(states.map((cs) => cs.readyCount * cs.spec.tokensPerSecondPerReplica));
    this.classes = states.map((cs, ci) => {
      const out: Array<ClassDatapoint | undefined> = [];
      for (let m = -WINDOW_MINUTES; m < 0; m++) {
        const tokens = initialDemandTokens * capacityShares[ci];
        const requests = tokens / meanOut;
        out.push({
          minute: m, routedRequests: requests, routedTokens: tokens, admitted: requests, rejected: 0, rejectedTokens: 0, completed: requests,
          servedTokens: tokens, sloMetRequests: requests, latencyP95Seconds: 0, readyReplicas: cs.readyCount,
          desiredReplicas: cs.desired, pendingReplicas: 0, capacityErrors: 0, interruptionNotices: 0,
        });
      }
      return out;
    });
    for (let m = -WINDOW_MINUTES; m < 0; m++) this.demand.push({ minute: m, requests: initialDemandTokens / meanOut, tokens: initialDemandTokens });
  }

  /** Publishes the datapoints whose delay has elapsed by `now`. */
  publish(now: number): void {
    const s = this.series;
    const k = s.classCount;
    const visibleUpTo = Math.floor((now - this.metricDelay) / 60) - 1;
    for (let m = this.publishedUpTo + 1; m <= Math.min(visibleUpTo, s.minutes - 1); m++) {
      const ok = this.published(m);
      this.classes.forEach((window, ci) => {
        const cell = m * k + ci;
        window.push(ok ? {
          minute: m,
          routedRequests: s.routedRequests[cell], routedTokens: s.routedTokens[cell], admitted: s.admitted[cell],
          rejected: s.rejected[cell], rejectedTokens: s.rejectedTokens[cell], completed: s.completed[cell], servedTokens: s.servedTokens[cell],
          sloMetRequests: s.sloMetRequests[cell], latencyP95Seconds: histogramPercentile(s.latency.subarray(cell * LATENCY_BUCKETS), 0, 0.95),
          readyReplicas: s.readyReplicas[cell], desiredReplicas: s.desiredReplicas[cell], pendingReplicas: s.pendingReplicas[cell],
          capacityErrors: s.capacityErrors[cell], interruptionNotices: s.interruptionNotices[cell],
        } : undefined);
        if (window.length > WINDOW_MINUTES) window.shift();
      });
      this.demand.push(ok ? { minute: m, requests: s.demandRequests[m], tokens: s.demandTokens[m] } : undefined);
      if (this.demand.length > WINDOW_MINUTES) this.demand.shift();
      this.publishedUpTo = m;
    }
  }

  /** The newest published datapoint of a class (undefined in an outage). */
  newest(ci: number): ClassDatapoint | undefined {
    const w = this.classes[ci];
    return w[w.length - 1];
  }

  private published(m: number): boolean {
    const at = (m + 1) * 60 + this.metricDelay;
    return !this.outages.some((o) => at >= o.from && at < o.to);
  }
}
