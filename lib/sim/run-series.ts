import { LATENCY_BUCKETS } from './histogram';

/** Per-minute, per-class series of one run (index = minute * classes + class). */
export interface RunSeries {
  readonly minutes: number;
  readonly classCount: number;
  readonly routedRequests: Float64Array;
  readonly routedTokens: Float64Array;
  /** Routed requests rejected because the class had no ready replica (the load balancer answers; no server counts them). */
  readonly unroutable: Float64Array;
  readonly admitted: Float64Array;
  readonly rejected: Float64Array;
  /** Output tokens of the rejected requests (admission, queue timeout or lost with a replica). */
  readonly rejectedTokens: Float64Array;
  readonly completed: Float64Array;
  readonly servedTokens: Float64Array;
  /**
   * Output tokens the engines' counters published for the minute (the CloudWatch agent's deltas): the served tokens
   * less what each replica generated before its first scrape and after its last (`Replica.sampled`).
   */
  readonly publishedTokens: Float64Array;
  /** Replicas whose counter published a delta for the minute: none, and the class has no datapoint. */
  readonly scrapedReplicas: Float64Array;
  /** Requests in service on a replica that was lost (interruption): the load balancer answers them, not a server. */
  readonly lostWithReplica: Float64Array;
  /**
   * Requests dropped from a server's queue after the load balancer closed their connection at its idle timeout (EKS):
   * the ALB answered them (HTTPCode_ELB_5XX_Count), the server none (review R259).
   */
  readonly closedByBalancer: Float64Array;
  readonly sloMetRequests: Float64Array;
  readonly sloMetTokens: Float64Array;
  readonly readyReplicas: Float64Array;
  /**
   * The fewest ready replicas at any instant of the minute: ALB's HealthyHostCount as the Reconciler queries it (its
   * Minimum statistic, lib/core/reconciler/targets/alb.ts), where `readyReplicas` is the count at the minute's close.
   */
  readonly minReadyReplicas: Float64Array;
  readonly pendingReplicas: Float64Array;
  readonly desiredReplicas: Float64Array;
  readonly capacityErrors: Float64Array;
  readonly interruptionNotices: Float64Array;
  /** What the minute's instances cost, USD: each instance pool's replica-seconds at its instance type's price. */
  readonly costUsd: Float64Array;
  /** The part of `costUsd` paid for a variant's lower-priority pools (its fallback inside the variant; 0 with one pool). */
  readonly lowerPoolCostUsd: Float64Array;
  /** Output tokens/s the ready replicas sustain at their envelopes at the minute's end (each pool at its own). */
  readonly readyCapacity: Float64Array;
  /** Of `readyCapacity`, what the priority-1 pool's ready replicas sustain (a variant with instance pools). */
  readonly firstPoolReadyCapacity: Float64Array;
  /** Output tokens served by a variant's lower-priority pools (its fallback inside the variant; 0 with one pool). */
  readonly lowerPoolServedTokens: Float64Array;
  /** The same at the pools' actual speed (a scenario's speed factors): what the ready replicas can really carry. */
  readonly readyCapacityAtSpeed: Float64Array;
  /** Mean requests in flight (queued or in service) over the minute: SageMaker's ConcurrentRequestsPerModel x instances. */
  readonly inFlight: Float64Array;
  /** Latency histograms of completed requests (index = (minute * classes + class) * LATENCY_BUCKETS + bucket). */
  readonly latency: Uint32Array;
  /** Per minute: requests and output tokens arriving at the service. */
  readonly demandRequests: Float64Array;
  readonly demandTokens: Float64Array;
  /** Per minute, per class: weights in force at the end of the minute. */
  readonly weights: Float64Array;
  /** Per minute: the policy's mode label. */
  readonly modes: string[];
  readonly reasons: string[];
}

/** Zeroed series for a run of `minutes` minutes and `k` classes. */
export function createRunSeries(minutes: number, k: number): RunSeries {
  const cells = minutes * k;
  const perCell = () => new Float64Array(cells);
  return {
    minutes,
    classCount: k,
    routedRequests: perCell(),
    routedTokens: perCell(),
    unroutable: perCell(),
    admitted: perCell(),
    rejected: perCell(),
    rejectedTokens: perCell(),
    completed: perCell(),
    servedTokens: perCell(),
    publishedTokens: perCell(),
    scrapedReplicas: perCell(),
    lostWithReplica: perCell(),
    closedByBalancer: perCell(),
    sloMetRequests: perCell(),
    sloMetTokens: perCell(),
    readyReplicas: perCell(),
    minReadyReplicas: perCell(),
    pendingReplicas: perCell(),
    desiredReplicas: perCell(),
    capacityErrors: perCell(),
    interruptionNotices: perCell(),
    costUsd: perCell(),
    lowerPoolCostUsd: perCell(),
    readyCapacity: perCell(),
    readyCapacityAtSpeed: perCell(),
    firstPoolReadyCapacity: perCell(),
    lowerPoolServedTokens: perCell(),
    inFlight: perCell(),
    latency: new Uint32Array(cells * LATENCY_BUCKETS),
    demandRequests: new Float64Array(minutes),
    demandTokens: new Float64Array(minutes),
    weights: perCell(),
    modes: new Array<string>(minutes).fill(''),
    reasons: new Array<string>(minutes).fill(''),
  };
}
