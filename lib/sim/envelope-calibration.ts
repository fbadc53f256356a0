import { slotsPerReplica } from './class-state';
import { Rng } from './rng';
import { drawTokens, tokenDistributionMean, type TokenDistribution } from './workload';

/**
 * How fast a simulated replica's slots serve, so that the replica reproduces the envelope its class declares.
 *
 * A class's envelope says that one replica, at `tokensPerSecondPerReplica`, holds `safeConcurrency` requests in flight
 * while meeting the SLO (`PerformanceEnvelope`), the closed-loop reading of the library's plausibility rules, of the
 * load-test tools (vLLM's `bench serve --max-concurrency`, LLMPerf's concurrent clients, genai-perf's concurrency mode)
 * and of the constructs' scaling targets: requests/s on EKS, in-flight requests on SageMaker. The simulator's replica is
 * `safeConcurrency` slots serving one queue first come first served, a request taking its work / slot rate once in a
 * slot. Its slot rate is the one at which that replica, offered the envelope's tokens/s as Poisson arrivals of the
 * workload the envelope was measured on, holds on average what the library plans it holds in flight there
 * (`inFlightAtEnvelope`, lib/core/service/sizing.ts: the safe concurrency, or fewer where the envelope's rate times its
 * p95 service time says so, as for P1's images): the two numbers the autoscalers scale on agree at the envelope, as they
 * do on the measured replica. Its latencies are then what its slots and its queue give.
 *
 * Until stop 62 every slot ran at envelope / (0.85 x safe concurrency), one number for every class: a P1 replica then
 * held 2.1-4.4 times its planned in-flight count at its envelope (review R262), an L40S replica about its 16. Stop 63 first
 * calibrated to the envelope's p95 latencies under Poisson arrivals (review R260: P1's replicas became 2-2.7 times faster
 * than their envelopes, as the Poisson arrivals, not the envelope, decided; and a class without an ITL was read as
 * answering at its first token).
 */
export interface EnvelopeCalibrationInput {
  /** The envelope's sustainable output tokens per second of one replica. */
  readonly tokensPerSecondPerReplica: number;
  /** The envelope's safe concurrency: the replica's slots. */
  readonly safeConcurrency: number;
  /** Requests the replica holds in flight at the envelope (`inFlightAtEnvelope`). */
  readonly inFlight: number;
  /** The workload the envelope was measured on. */
  readonly promptTokens: TokenDistribution;
  readonly outputTokens: TokenDistribution;
  /** A request's work is (output + prefillWeight x prompt) x workNorm, in the simulator's units. */
  readonly prefillWeight: number;
  readonly workNorm: number;
}

/** Requests of the calibrating load test, and the first ones left out while its queue fills. */
const REQUESTS = 40_000;
const WARM_UP = 2_000;

const cache = new Map<string, number>();

/**
 * Work units per second of one slot at which the class's replica reproduces its envelope (see the module's comment).
 * Deterministic: one seeded load test (the same arrivals and sizes at every rate tried, so the in-flight count only
 * falls as the rate grows and a bisection finds the rate that holds it), remembered per input.
 */
export function calibratedSlotRate(input: EnvelopeCalibrationInput): number {
  const problems = calibrationProblems(input);
  if (problems.length > 0) throw new Error(`A replica cannot be calibrated to this envelope: ${problems.join('; ')}`);
  const key = JSON.stringify(input);
  const known = cache.get(key);
  if (known !== undefined) return known;
  const rate = solve(input);
  cache.set(key, rate);
  return rate;
}

function calibrationProblems(input: EnvelopeCalibrationInput): string[] {
  const positive = (what: string, v: number) => (Number.isFinite(v) && v > 0 ? [] : [`${what} ${v} (must be a positive number)`]);
  return [
    ...positive('tokens/s per replica', input.tokensPerSecondPerReplica),
    ...(slotsPerReplica(input.safeConcurrency) >= 1 ? [] : [`safe concurrency ${input.safeConcurrency} (must be at least 1: a replica needs a slot)`]),
    ...positive('in-flight requests at the envelope', input.inFlight),
    ...positive('mean output tokens', tokenDistributionMean(input.outputTokens)),
    ...positive('work per output token', input.workNorm),
  ];
}

function solve(input: EnvelopeCalibrationInput): number {
  const slots = slotsPerReplica(input.safeConcurrency);
  const test = loadTest(input, input.tokensPerSecondPerReplica / tokenDistributionMean(input.outputTokens));
  // At this rate the replica is saturated at the envelope's load and its queue grows without bound.
  let slow = test.meanWork * test.requestsPerSecond / slots;
  let fast = 2 * slow;
  for (let i = 0; i < 60 && meanInFlight(test, slots, fast) > input.inFlight; i++) {
    slow = fast;
    fast *= 2;
  }
  for (let i = 0; i < 40 && fast - slow > 1e-6 * fast; i++) {
    const mid = (slow + fast) / 2;
    if (meanInFlight(test, slots, mid) > input.inFlight) slow = mid;
    else fast = mid;
  }
  return fast;
}

interface LoadTest {
  readonly arrival: Float64Array;
  readonly work: Float64Array;
  readonly meanWork: number;
  readonly requestsPerSecond: number;
}

function loadTest(input: EnvelopeCalibrationInput, requestsPerSecond: number): LoadTest {
  const rng = Rng.derive(1, 'envelope-calibration');
  const arrival = new Float64Array(REQUESTS);
  const work = new Float64Array(REQUESTS);
  let t = 0;
  let total = 0;
  for (let i = 0; i < REQUESTS; i++) {
    t += rng.exponential(1 / requestsPerSecond);
    const out = drawTokens(input.outputTokens, rng);
    const prompt = drawTokens(input.promptTokens, rng);
    arrival[i] = t;
    work[i] = (out + input.prefillWeight * prompt) * input.workNorm;
    total += work[i];
  }
  return { arrival, work, meanWork: total / REQUESTS, requestsPerSecond };
}

/**
 * Mean requests in flight (queued or in a slot) over the load test after its warm-up, first come first served: by
 * Little's law the arrival rate times the mean time in the system.
 */
function meanInFlight(test: LoadTest, slots: number, slotRate: number): number {
  // The slots' next free times as a min-heap: a request takes the earliest (FCFS over identical slots).
  const freeAt = new Float64Array(slots);
  let inSystem = 0;
  for (let i = 0; i < test.arrival.length; i++) {
    const done = Math.max(test.arrival[i], freeAt[0]) + test.work[i] / slotRate;
    replaceEarliest(freeAt, done);
    if (i >= WARM_UP) inSystem += done - test.arrival[i];
  }
  const span = test.arrival[test.arrival.length - 1] - test.arrival[WARM_UP];
  return inSystem / span;
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
