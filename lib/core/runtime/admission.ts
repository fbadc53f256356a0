import { type CapacityClass } from '../service/capacity-class';
import { type ServiceContract } from '../service/contract';

/**
 * How many requests one replica of a class holds before it must reject. The model servers get these numbers
 * (vLLM --max-num-queued-reqs, TGI MAX_CONCURRENT_REQUESTS, DJL job_queue_size) and the simulator admits with the
 * same ones, so a benchmark result is a statement about the configuration that is deployed.
 */
export interface AdmissionLimits {
  /** Time a mean request needs once decoding starts: p95 TTFT + mean output tokens x p95 ITL, in ms. */
  readonly serviceTimeMs: number;
  /** Longest a request may queue: the class's maxQueueDelayMs, or less when the deadline leaves less. */
  readonly queueBudgetMs: number;
  /** Requests that can wait within the queue budget at the envelope's request rate (Little's law). */
  readonly queueSlots: number;
  /** Requests one replica serves at once within its SLO: the envelope's safe concurrency (whole requests). */
  readonly concurrencyLimit: number;
  /** In-flight requests (serving + waiting) the server admits: concurrencyLimit + queueSlots. Past this it rejects. */
  readonly maxConcurrentRequests: number;
}

/**
 * Admission limits of one replica. A request that waits longer than the deadline minus its own service time is
 * worthless, so the queue holds only what the replica drains in that budget at its measured rate.
 *
 * Stable API: the constructs render these numbers into the engines' flags and the simulator admits with them.
 */
/**
 * Time a mean request needs once decoding starts: p95 TTFT + mean output tokens x p95 ITL (0 when not measured), in
 * ms. The class checks compare it with the deadline; the admission limits budget the queue with what is left.
 */
export function meanServiceTimeMs(envelope: { readonly ttftP95Ms: number; readonly itlP95Ms?: number }, meanOutputTokens: number): number {
  return envelope.ttftP95Ms + meanOutputTokens * (envelope.itlP95Ms ?? 0);
}

export function admissionLimits(cls: CapacityClass, contract: ServiceContract): AdmissionLimits {
  const e = cls.envelope;
  const meanOutput = contract.requestShape.meanOutputTokens;
  const serviceTimeMs = meanServiceTimeMs(e, meanOutput);
  const queueBudgetMs = Math.max(0, Math.min(cls.runtime.maxQueueDelayMs, contract.slo.deadlineMs - serviceTimeMs));
  const requestsPerSecond = e.tokensPerSecondPerReplica / meanOutput;
  // toFixed before floor: 1.6 req/s x 2 s is 3.2000000000000006 in floating point, and 4.8 x 1 s must not become 4.79.
  const queueSlots = Math.floor(Number(((requestsPerSecond * queueBudgetMs) / 1000).toFixed(9)));
  const concurrencyLimit = Math.floor(e.safeConcurrency);
  return { serviceTimeMs, queueBudgetMs, queueSlots, concurrencyLimit, maxConcurrentRequests: concurrencyLimit + queueSlots };
}
