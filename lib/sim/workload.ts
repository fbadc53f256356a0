import { Rng } from './rng';

/**
 * Workload generators built from published trace statistics (Azure LLM inference trace 2023, see docs/simulator.md).
 * Nothing is downloaded: the quantile tables below are the statistics.
 */

/** Quantile levels of the published token tables. */
export const TOKEN_QUANTILE_LEVELS: readonly number[] = [0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1];

/** A token-length distribution given by its quantiles at TOKEN_QUANTILE_LEVELS (or its own levels). */
export interface TokenTable {
  readonly levels?: readonly number[];
  readonly quantiles: readonly number[];
}

export const AZURE_CONVERSATION_PROMPT: TokenTable = {
  quantiles: [2, 29, 181, 207, 387, 403, 703, 1020, 1071, 1130, 1315, 2734, 4083, 4142, 6179, 14050],
};
export const AZURE_CONVERSATION_OUTPUT: TokenTable = { quantiles: [7, 16, 41, 54, 77, 91, 103, 129, 177, 384, 400, 424, 451, 601, 954, 1000] };
export const AZURE_CODE_PROMPT: TokenTable = {
  quantiles: [3, 17, 75, 147, 386, 770, 1075, 1469, 1909, 2433, 3192, 5188, 7303, 7436, 7437, 7437],
};
export const AZURE_CODE_OUTPUT: TokenTable = { quantiles: [6, 6, 6, 7, 8, 9, 11, 13, 16, 20, 29, 55, 90, 251, 825, 1899] };

/** Inverse-CDF sampling by linear interpolation between the table's quantiles (a lognormal fit misses p99 by 2-3x). */
export function sampleTokens(table: TokenTable, u: number): number {
  const levels = table.levels ?? TOKEN_QUANTILE_LEVELS;
  const q = table.quantiles;
  let i = 1;
  while (i < levels.length - 1 && levels[i] < u) i++;
  const lo = levels[i - 1];
  const hi = levels[i];
  const f = hi > lo ? (u - lo) / (hi - lo) : 0;
  return Math.max(1, Math.round(q[i - 1] + f * (q[i] - q[i - 1])));
}

/** Mean of the piecewise-linear distribution a token table describes. */
export function tokenTableMean(table: TokenTable): number {
  const levels = table.levels ?? TOKEN_QUANTILE_LEVELS;
  const q = table.quantiles;
  let mean = 0;
  for (let i = 1; i < levels.length; i++) mean += ((levels[i] - levels[i - 1]) * (q[i] + q[i - 1])) / 2;
  return mean;
}

/** Token-length quantile at level p (linear interpolation), e.g. for reports. */
export function tokenTableQuantile(table: TokenTable, p: number): number {
  return sampleTokens(table, p);
}

/**
 * How requests arrive within the rate envelope.
 * - `poisson`: exponential inter-arrivals (the M/M/c validation uses this).
 * - `near-poisson`: Azure conversation (inter-arrival CV 1.09, peak minute 1.52x the mean).
 * - `bursty`: Azure code (inter-arrival CV 13.2, 12 of 57 minutes empty, peak minute 4.18x the mean).
 */
export type ArrivalPattern = 'poisson' | 'near-poisson' | 'bursty';

interface BurstShape {
  /** Probability that a minute has no arrivals at all. */
  readonly emptyMinuteProbability: number;
  /** Sigma of the lognormal per-minute rate multiplier. */
  readonly minuteSigma: number;
  /** Mean requests per burst (geometric); members of a burst arrive close together. */
  readonly meanBurstSize: number;
  /** Mean gap between members of one burst, seconds. */
  readonly burstGapSeconds: number;
}

// Calibrated so the generated statistics match the published ones (checked in test/sim/workload.test.ts).
const SHAPES: Record<Exclude<ArrivalPattern, 'poisson'>, BurstShape> = {
  'near-poisson': { emptyMinuteProbability: 0, minuteSigma: 0.17, meanBurstSize: 1.08, burstGapSeconds: 0.02 },
  'bursty': { emptyMinuteProbability: 12 / 57, minuteSigma: 0.62, meanBurstSize: 12, burstGapSeconds: 0.005 },
};

/** Piecewise-linear rate multiplier over time: points sorted by time, constant outside them. */
export type RateProfile = ReadonlyArray<{ readonly at: number; readonly multiplier: number }>;

export function rateMultiplierAt(profile: RateProfile | undefined, t: number): number {
  if (!profile || profile.length === 0) return 1;
  if (t <= profile[0].at) return profile[0].multiplier;
  for (let i = 1; i < profile.length; i++) {
    const b = profile[i];
    if (t <= b.at) {
      const a = profile[i - 1];
      const f = b.at > a.at ? (t - a.at) / (b.at - a.at) : 1;
      return a.multiplier + f * (b.multiplier - a.multiplier);
    }
  }
  return profile[profile.length - 1].multiplier;
}

/**
 * Diurnal envelope: a raised cosine with the given night/day swing (about 20x in the Azure traces), peaking at
 * `peakAtSeconds`, sampled every `stepSeconds`. Multipliers are relative to the daily peak (peak = 1).
 */
export function diurnalProfile(opts: {
  readonly fromSeconds: number;
  readonly toSeconds: number;
  readonly peakAtSeconds: number;
  readonly swing?: number;
  readonly periodSeconds?: number;
  readonly stepSeconds?: number;
}): RateProfile {
  const swing = opts.swing ?? 20;
  const period = opts.periodSeconds ?? 86400;
  const step = opts.stepSeconds ?? 300;
  const low = 1 / swing;
  const points: Array<{ at: number; multiplier: number }> = [];
  for (let t = opts.fromSeconds; t <= opts.toSeconds + step; t += step) {
    const phase = (2 * Math.PI * (t - opts.peakAtSeconds)) / period;
    points.push({ at: t, multiplier: low + (1 - low) * (1 + Math.cos(phase)) / 2 });
  }
  return points;
}

/** A token-length distribution: a published quantile table, a fixed size, or exponential (for queueing validation). */
export type TokenDistribution = TokenTable | { readonly fixed: number } | { readonly exponentialMean: number };

export function drawTokens(dist: TokenDistribution, rng: Rng): number {
  if ('fixed' in dist) return dist.fixed;
  if ('exponentialMean' in dist) return rng.exponential(dist.exponentialMean);
  return sampleTokens(dist, rng.next());
}

export function tokenDistributionMean(dist: TokenDistribution): number {
  if ('fixed' in dist) return dist.fixed;
  if ('exponentialMean' in dist) return dist.exponentialMean;
  return tokenTableMean(dist);
}

export interface WorkloadSpec {
  readonly pattern: ArrivalPattern;
  /** Mean requests per second before the rate profile is applied. */
  readonly meanRatePerSecond: number;
  readonly rateProfile?: RateProfile;
  readonly promptTokens: TokenDistribution;
  readonly outputTokens: TokenDistribution;
}

/** Arrivals of one run, as parallel arrays sorted by time. */
export interface Trace {
  readonly count: number;
  readonly time: Float64Array;
  readonly prompt: Float64Array;
  readonly output: Float64Array;
}

/** Generates the arrivals of [0, durationSeconds). Deterministic for a seed. */
export function generateTrace(spec: WorkloadSpec, durationSeconds: number, seed: number): Trace {
  const rng = Rng.derive(seed, 'arrivals');
  const tokenRng = Rng.derive(seed, 'tokens');
  const times: number[] = [];
  const minutes = Math.ceil(durationSeconds / 60);
  for (let m = 0; m < minutes; m++) {
    const start = m * 60;
    const end = Math.min(durationSeconds, start + 60);
    const rate = spec.meanRatePerSecond * rateMultiplierAt(spec.rateProfile, (start + end) / 2);
    if (rate <= 0) continue;
    if (spec.pattern === 'poisson') {
      for (let t = start + rng.exponential(1 / rate); t < end; t += rng.exponential(1 / rate)) times.push(t);
      continue;
    }
    const shape = SHAPES[spec.pattern];
    if (shape.emptyMinuteProbability > 0 && rng.next() < shape.emptyMinuteProbability) continue;
    const sigma = shape.minuteSigma;
    // Normalise so the long-run mean rate is `rate`: E[lognormal] = 1, and active minutes make up for empty ones.
    const multiplier = Math.exp(sigma * rng.normal() - (sigma * sigma) / 2) / (1 - shape.emptyMinuteProbability);
    const burstRate = (rate * multiplier) / shape.meanBurstSize;
    for (let t = start + rng.exponential(1 / burstRate); t < end; t += rng.exponential(1 / burstRate)) {
      const size = rng.geometric(shape.meanBurstSize);
      let u = t;
      for (let k = 0; k < size && u < end; k++) {
        times.push(u);
        u += rng.exponential(shape.burstGapSeconds);
      }
    }
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  const trace: Trace = { count: n, time: Float64Array.from(times), prompt: new Float64Array(n), output: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    // Prompt and output lengths are nearly uncorrelated in the trace: independent draws.
    trace.prompt[i] = drawTokens(spec.promptTokens, tokenRng);
    trace.output[i] = drawTokens(spec.outputTokens, tokenRng);
  }
  return trace;
}

/** Summary statistics of a trace, to compare with the published ones. */
export function traceStatistics(trace: Trace, durationSeconds: number): {
  meanRate: number;
  interArrivalCv: number;
  emptyMinuteShare: number;
  peakMinuteOverMean: number;
} {
  const n = trace.count;
  let sum = 0;
  let sumSq = 0;
  for (let i = 1; i < n; i++) {
    const d = trace.time[i] - trace.time[i - 1];
    sum += d;
    sumSq += d * d;
  }
  const gaps = Math.max(1, n - 1);
  const mean = sum / gaps;
  const sd = Math.sqrt(Math.max(0, sumSq / gaps - mean * mean));
  const minutes = Math.ceil(durationSeconds / 60);
  const perMinute = new Array<number>(minutes).fill(0);
  for (let i = 0; i < n; i++) perMinute[Math.min(minutes - 1, Math.floor(trace.time[i] / 60))]++;
  const meanPerMinute = n / minutes;
  return {
    meanRate: n / durationSeconds,
    interArrivalCv: mean > 0 ? sd / mean : 0,
    emptyMinuteShare: perMinute.filter((c) => c === 0).length / minutes,
    peakMinuteOverMean: meanPerMinute > 0 ? Math.max(...perMinute) / meanPerMinute : 0,
  };
}
