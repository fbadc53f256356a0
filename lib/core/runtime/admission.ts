import { type CapacityClass } from '../service/capacity-class';
import { type ServiceContract } from '../service/contract';
import { compareVersions, ENGINE_FACTS, type EngineName, isEngineName, parseVersion } from './engines';

/**
 * How many requests one replica of a class holds before it must reject. The model servers get these numbers
 * (vLLM --max-num-queued-reqs and --max-num-queued-tokens, TGI MAX_CONCURRENT_REQUESTS, DJL job_queue_size) and the
 * simulator admits with what the server really enforces (`serverAdmission`), so a benchmark result is a statement about
 * the configuration that is deployed.
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
  /**
   * Prompt tokens one replica prefills per second, at least: the envelope's safe concurrency of mean prompts done within
   * its p95 TTFT (a lower bound, so a budget sized from it rejects early rather than late).
   */
  readonly prefillTokensPerSecond: number;
  /**
   * Prompt tokens of not-yet-prefilled requests one replica may hold: what it prefills within the queue budget plus its
   * own TTFT, i.e. before the last admitted request's deadline share runs out (vLLM --max-num-queued-tokens, sized as
   * "target TTFT x prefill throughput"), and never below one longest sequence. A burst of long prompts is shed at once
   * instead of blowing every request's TTFT.
   */
  readonly maxQueuedPromptTokens: number;
}

/**
 * Time a mean request needs once decoding starts: p95 TTFT + mean output tokens x p95 ITL (0 when not measured), in
 * ms. The class checks compare it with the deadline; the admission limits budget the queue with what is left.
 */
export function meanServiceTimeMs(envelope: { readonly ttftP95Ms: number; readonly itlP95Ms?: number }, meanOutputTokens: number): number {
  return envelope.ttftP95Ms + meanOutputTokens * (envelope.itlP95Ms ?? 0);
}

/**
 * Admission limits of one replica. A request that waits longer than the deadline minus its own service time is
 * worthless, so the queue holds only what the replica drains in that budget at its measured rate.
 *
 * Stable API: the constructs render these numbers into the engines' flags and the simulator admits with them.
 */
export function admissionLimits(cls: CapacityClass, contract: ServiceContract): AdmissionLimits {
  const e = cls.envelope;
  const meanOutput = contract.requestShape.meanOutputTokens;
  const serviceTimeMs = meanServiceTimeMs(e, meanOutput);
  const queueBudgetMs = Math.max(0, Math.min(cls.runtime.maxQueueDelayMs, contract.slo.deadlineMs - serviceTimeMs));
  const requestsPerSecond = e.tokensPerSecondPerReplica / meanOutput;
  // toFixed before floor: 1.6 req/s x 2 s is 3.2000000000000006 in floating point, and 4.8 x 1 s must not become 4.79.
  const queueSlots = Math.floor(Number(((requestsPerSecond * queueBudgetMs) / 1000).toFixed(9)));
  const concurrencyLimit = Math.floor(e.safeConcurrency);
  const prefillTokensPerSecond = (concurrencyLimit * contract.requestShape.meanPromptTokens) / (e.ttftP95Ms / 1000);
  // Never below one longest prompt: an idle replica must admit any request the class accepts.
  const maxQueuedPromptTokens = Math.max(
    cls.footprint.maxSequenceTokens,
    Math.floor(Number(((prefillTokensPerSecond * (queueBudgetMs + e.ttftP95Ms)) / 1000).toFixed(9))),
  );
  return {
    serviceTimeMs,
    queueBudgetMs,
    queueSlots,
    concurrencyLimit,
    maxConcurrentRequests: concurrencyLimit + queueSlots,
    prefillTokensPerSecond,
    maxQueuedPromptTokens,
  };
}

/** What bounds a class's queue on its server, or why nothing does. */
export type QueueBound =
  | { readonly kind: 'vllm-queued-requests' }
  | { readonly kind: 'tgi-concurrent-requests' }
  /** DJL rolling batch: the worker takes jobs off the job queue into a batch of `rollingBatch` requests. */
  | { readonly kind: 'djl-job-queue'; readonly rollingBatch: number }
  | { readonly kind: 'none'; readonly reason: string };

/**
 * What bounds the in-flight requests of a class's server, from the engine facts (facts.ts): vLLM >= 0.29.0
 * (--max-num-queued-reqs), TGI >= 2.0.0 (MAX_CONCURRENT_REQUESTS), DJL LMI in rolling-batch mode (job_queue_size
 * beside the rolling batch; from 0.35.0 only because the library turns async mode off, and not for NeuronX images of
 * 0.35.0 or later, whose rolling batch is not confirmed). Triton's bound lives in config.pbtxt, a custom image's in the
 * image: nothing the library sets.
 */
export function queueBoundOf(cls: CapacityClass): QueueBound {
  const r = cls.runtime;
  if (!isEngineName(r.engine)) return { kind: 'none', reason: `'${r.engine}' is not an engine the library can bind` };
  const engine: EngineName = r.engine;
  if (engine === 'triton') {
    return { kind: 'none', reason: "Triton's bounded queue is max_queue_size in each model's config.pbtxt, which no command-line flag sets" };
  }
  if (engine === 'custom') return { kind: 'none', reason: "a custom engine's queue is whatever the image enforces (it gets CAI_MAX_CONCURRENT_REQUESTS)" };
  const facts = ENGINE_FACTS[engine];
  const since = facts.boundedQueueSince!;
  const version = r.engineVersion;
  const release = [engine, version].filter(Boolean).join(' ');
  // An undeclared version is taken to be a supported one only where the version is optional (checked when declared).
  const known = version === undefined ? !facts.versionRequired : parseVersion(version) !== undefined;
  if (!known || (version !== undefined && compareVersions(version, since) < 0)) {
    return { kind: 'none', reason: `${release} has no bounded queue (it exists from ${since})` };
  }
  if (engine === 'vllm') return { kind: 'vllm-queued-requests' };
  if (engine === 'tgi') return { kind: 'tgi-concurrent-requests' };
  if (cls.hardware.acceleratorTarget === 'neuron' && version !== undefined && compareVersions(version, DJL_ASYNC_DEFAULT_SINCE) >= 0) {
    return {
      kind: 'none',
      reason: `${release} on NeuronX: which rolling batch its image runs is not confirmed, so job_queue_size may not bound it (confirmed for NeuronX up to 0.29)`,
    };
  }
  return { kind: 'djl-job-queue', rollingBatch: r.maxConcurrentSequences };
}

/** DJL Serving release from which the vLLM backend defaults to async mode (fact djl-lmi.variable.OPTION_ASYNC_MODE). */
export const DJL_ASYNC_DEFAULT_SINCE = '0.35.0';

/** What one replica's server really admits, as the simulator should model it. */
export interface ServerAdmission {
  /** In-flight requests (serving + waiting) before the server rejects; undefined when nothing bounds its queue. */
  readonly maxInFlight?: number;
  /** DJL job_queue_size: jobs waiting beside the rolling batch (at least 1: a queue of 0 rejects everything). */
  readonly jobQueueSize?: number;
  /** Prompt tokens of requests not yet past prefill before the server rejects (vLLM only). */
  readonly maxQueuedPromptTokens?: number;
  /**
   * Whether the bound holds when many requests arrive at once. vLLM 0.29.0 checks its caps before rendering a request and
   * counts it only after (vllm issue #58192, open); whether a second check at hand-over makes it exact is not confirmed
   * at the tag (fact vllm.behaviour.burst-bound), so it is taken to hold for spaced arrivals only.
   */
  readonly holdsUnderBursts: boolean;
  /** Whether a request asking for n > 1 sequences takes n slots of the bound (vLLM). */
  readonly countsSequences: boolean;
  /** HTTP status of its rejections. */
  readonly rejectionStatus?: 429 | 503;
}

/**
 * What a class's server admits per replica with the settings the runtime binding renders: vLLM and TGI exactly the
 * admission limit; DJL the rolling batch plus a job queue of (limit - batch), at least one, i.e. max(limit, batch + 1);
 * nothing bounded otherwise (the simulator then queues without limit, as the server would).
 */
export function serverAdmission(cls: CapacityClass, contract: ServiceContract): ServerAdmission {
  const limits = admissionLimits(cls, contract);
  const bound = queueBoundOf(cls);
  const status = isEngineName(cls.runtime.engine) ? ENGINE_FACTS[cls.runtime.engine].rejectionStatus : undefined;
  switch (bound.kind) {
    case 'vllm-queued-requests':
      return {
        maxInFlight: limits.maxConcurrentRequests,
        maxQueuedPromptTokens: limits.maxQueuedPromptTokens,
        holdsUnderBursts: false,
        countsSequences: true,
        rejectionStatus: status,
      };
    case 'tgi-concurrent-requests':
      return { maxInFlight: limits.maxConcurrentRequests, holdsUnderBursts: true, countsSequences: false, rejectionStatus: status };
    case 'djl-job-queue': {
      const jobQueueSize = Math.max(1, limits.maxConcurrentRequests - bound.rollingBatch);
      const maxInFlight = bound.rollingBatch + jobQueueSize;
      return { maxInFlight, jobQueueSize, holdsUnderBursts: true, countsSequences: false, rejectionStatus: status };
    }
    case 'none':
      return { holdsUnderBursts: false, countsSequences: false };
  }
}

/** One request of a burst: its prompt length and how many sequences it asks for. */
export interface BurstRequest {
  readonly promptTokens: number;
  /** Sequences asked for (the `n` of the request). @default 1 */
  readonly n?: number;
}

/** Which requests of a burst one replica admits, and when each would get its first token. */
export interface BurstAdmission {
  readonly admitted: readonly boolean[];
  /** Projected time to first token of each admitted request (prefill backlog ahead of it and its own / prefill rate), ms. */
  readonly projectedTtftMs: ReadonlyArray<number | undefined>;
}

/**
 * Replays a burst arriving at one idle replica, one request after the other (each admitted request counted before the
 * next arrives, which vLLM 0.29.0 does not guarantee for simultaneous arrivals: see `ServerAdmission.holdsUnderBursts`),
 * against a request-count cap and, when given, a prompt-token cap, the way vLLM's two admission checks work (a request
 * with n > 1 takes n slots). Returns what is admitted and the projected TTFT of each admitted request at the replica's
 * prefill rate: the difference between admitting by count alone and by count and prompt tokens.
 */
export function admitBurst(
  caps: { readonly maxInFlight: number; readonly maxQueuedPromptTokens?: number; readonly prefillTokensPerSecond: number },
  burst: readonly BurstRequest[],
): BurstAdmission {
  let slots = 0;
  let promptTokens = 0;
  const admitted: boolean[] = [];
  const projectedTtftMs: Array<number | undefined> = [];
  for (const request of burst) {
    const n = request.n ?? 1;
    const fits = slots + n <= caps.maxInFlight
      && (caps.maxQueuedPromptTokens === undefined || promptTokens + request.promptTokens <= caps.maxQueuedPromptTokens);
    admitted.push(fits);
    if (!fits) {
      projectedTtftMs.push(undefined);
      continue;
    }
    slots += n;
    promptTokens += request.promptTokens;
    projectedTtftMs.push((promptTokens / caps.prefillTokensPerSecond) * 1000);
  }
  return { admitted, projectedTtftMs };
}
