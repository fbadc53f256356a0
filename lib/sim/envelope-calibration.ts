import { Rng } from './rng';
import { drawTokens, tokenDistributionMean, type TokenDistribution } from './workload';

/**
 * How fast a simulated replica's slots serve, so that the replica reproduces the envelope its class declares.
 *
 * A class's envelope is "measured by a load test at the SLO" (`PerformanceEnvelope`): at `tokensPerSecondPerReplica`
 * and up to `safeConcurrency` requests in flight, one replica kept its p95 time to first token and inter-token latency
 * at the values it records. The simulator's replica is `safeConcurrency` slots serving one queue first come first
 * served, a request taking its work / slot rate once in a slot. Its slot rate is the one at which that replica, offered
 * the envelope's tokens/s as Poisson arrivals (the open-loop load of a serving benchmark, e.g. vLLM's
 * `benchmark_serving --request-rate`) of the workload the envelope was measured on, finishes 95% of its requests within
 * the envelope's latencies: TTFT + output tokens x ITL, or TTFT alone for a class that streams no tokens (its answer is
 * its first token), and never past the contract's deadline.
 *
 * Before (stop 62 and earlier) every slot ran at envelope / (0.85 x safe concurrency), chosen while a queued request was
 * dropped by its true length, which hid queueing: with queues as deployed, P1's five classes held alone at their
 * envelope met their 2.5 s deadline for 56-67% of requests, where their declared p95 is 0.9 s (measured, stop 62).
 * The one-number model was harsh where a replica has few slots and a short deadline, and kind where it has many.
 *
 * An approximation, stated: the simulator has no separate first token, so "p95 TTFT and p95 ITL" become one per-request
 * budget met by 95% of requests; and the load test's arrivals are taken as Poisson, the replica's admission bound as
 * not reached.
 */
export interface EnvelopeCalibrationInput {
  /** The envelope's sustainable output tokens per second of one replica. */
  readonly tokensPerSecondPerReplica: number;
  /** The envelope's safe concurrency: the replica's slots. */
  readonly safeConcurrency: number;
  /** p95 time to first token the envelope records, seconds. */
  readonly ttftSeconds: number;
  /** p95 inter-token latency the envelope records, seconds per token (0: the class streams no tokens). */
  readonly itlSeconds: number;
  /** The contract's end-to-end deadline, seconds: no request's budget exceeds it. */
  readonly deadlineSeconds: number;
  /** The workload the envelope was measured on. */
  readonly promptTokens: TokenDistribution;
  readonly outputTokens: TokenDistribution;
  /** A request's work is (output + prefillWeight x prompt) x workNorm, in the simulator's units. */
  readonly prefillWeight: number;
  readonly workNorm: number;
}

/** Share of requests the envelope's latencies hold for: they are p95s. */
export const ENVELOPE_QUANTILE = 0.95;
/** Requests of the calibrating load test, and the first ones left out while its queue fills. */
const REQUESTS = 40_000;
const WARM_UP = 2_000;

const cache = new Map<string, number>();

/**
 * Work units per second of one slot at which the class's replica meets its envelope (see the module's comment).
 * Deterministic: one seeded load test (the same arrivals and sizes at every rate tried, so attainment only grows with
 * the rate and a bisection finds the slowest rate that meets it), remembered per input.
 */
export function calibratedSlotRate(input: EnvelopeCalibrationInput): number {
  const key = JSON.stringify(input);
  const known = cache.get(key);
  if (known !== undefined) return known;
  const rate = solve(input);
  cache.set(key, rate);
  return rate;
}

function solve(input: EnvelopeCalibrationInput): number {
  if (!Number.isFinite(Math.min(input.deadlineSeconds, input.ttftSeconds))) {
    throw new Error(`A replica cannot be calibrated to an envelope without a latency: TTFT ${input.ttftSeconds} s, deadline ` +
      `${input.deadlineSeconds} s (give the service a finite deadline, or an envelopeUtilization)`);
  }
  const slots = Math.max(1, Math.floor(input.safeConcurrency));
  const meanOutput = tokenDistributionMean(input.outputTokens);
  const test = loadTest(input, input.tokensPerSecondPerReplica / meanOutput);
  const meanWork = test.work.reduce((a, b) => a + b, 0) / test.work.length;
  // Below this rate the replica is saturated at the envelope's load and its queue grows without bound.
  let slow = (input.tokensPerSecondPerReplica / meanOutput) * meanWork / slots;
  let fast = 2 * slow;
  while (attainment(test, slots, fast) < ENVELOPE_QUANTILE) {
    slow = fast;
    fast *= 2;
  }
  for (let i = 0; i < 40 && fast - slow > 1e-6 * fast; i++) {
    const mid = (slow + fast) / 2;
    if (attainment(test, slots, mid) >= ENVELOPE_QUANTILE) fast = mid;
    else slow = mid;
  }
  return fast;
}

interface LoadTest {
  readonly arrival: Float64Array;
  readonly work: Float64Array;
  readonly budget: Float64Array;
}

function loadTest(input: EnvelopeCalibrationInput, requestsPerSecond: number): LoadTest {
  const rng = Rng.derive(1, 'envelope-calibration');
  const arrival = new Float64Array(REQUESTS);
  const work = new Float64Array(REQUESTS);
  const budget = new Float64Array(REQUESTS);
  let t = 0;
  for (let i = 0; i < REQUESTS; i++) {
    t += rng.exponential(1 / requestsPerSecond);
    const out = drawTokens(input.outputTokens, rng);
    const prompt = drawTokens(input.promptTokens, rng);
    arrival[i] = t;
    work[i] = (out + input.prefillWeight * prompt) * input.workNorm;
    const latency = input.itlSeconds > 0 ? input.ttftSeconds + out * input.itlSeconds : input.ttftSeconds;
    budget[i] = Math.min(input.deadlineSeconds, latency);
  }
  return { arrival, work, budget };
}

/** Share of the load test's requests (after the warm-up) done within their budget, first come first served. */
function attainment(test: LoadTest, slots: number, slotRate: number): number {
  // The slots' next free times as a min-heap: a request takes the earliest (FCFS over identical slots).
  const freeAt = new Float64Array(slots);
  let met = 0;
  for (let i = 0; i < test.arrival.length; i++) {
    const done = Math.max(test.arrival[i], freeAt[0]) + test.work[i] / slotRate;
    replaceEarliest(freeAt, done);
    if (i >= WARM_UP && done - test.arrival[i] <= test.budget[i]) met++;
  }
  return met / (test.arrival.length - WARM_UP);
}

function replaceEarliest(heap: Float64Array, value: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= heap.length) break;
    const c = l + 1 < heap.length && heap[l + 1] < heap[l] ? l + 1 : l;
    if (heap[c] >= value) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = value;
}
