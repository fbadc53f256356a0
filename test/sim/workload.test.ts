import {
  AZURE_CODE_OUTPUT, AZURE_CODE_PROMPT, AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, diurnalProfile, generateTrace,
  rateMultiplierAt, sampleTokens, TOKEN_QUANTILE_LEVELS, tokenTableMean, traceStatistics,
} from '../../lib/sim/workload';
import { Rng } from '../../lib/sim/rng';

describe('token tables', () => {
  test('inverse-CDF sampling returns the published quantiles at their levels', () => {
    TOKEN_QUANTILE_LEVELS.forEach((level, i) => {
      expect(sampleTokens(AZURE_CONVERSATION_PROMPT, level)).toBe(Math.max(1, AZURE_CONVERSATION_PROMPT.quantiles[i]));
      expect(sampleTokens(AZURE_CODE_OUTPUT, level)).toBe(AZURE_CODE_OUTPUT.quantiles[i]);
    });
  });

  test('sampled tokens reproduce the p50 and p99 of the table (a lognormal fit would miss p99 by 2-3x)', () => {
    const rng = new Rng(7);
    const draws = Float64Array.from({ length: 100_000 }, () => sampleTokens(AZURE_CODE_PROMPT, rng.next())).sort();
    expect(draws[Math.floor(0.5 * draws.length)]).toBeGreaterThan(1400);
    expect(draws[Math.floor(0.5 * draws.length)]).toBeLessThan(1540);
    expect(draws[Math.floor(0.99 * draws.length)]).toBeGreaterThanOrEqual(7400);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean / tokenTableMean(AZURE_CODE_PROMPT) - 1)).toBeLessThan(0.02);
  });
});

describe('arrival generators against the published trace statistics', () => {
  const hours = 3;
  const duration = hours * 3600;

  test('conversation: near-Poisson, inter-arrival CV about 1.09, peak minute about 1.5x the hourly mean', () => {
    const cvs: number[] = [];
    const peaks: number[] = [];
    for (let seed = 1; seed <= 3; seed++) {
      const trace = generateTrace({ pattern: 'near-poisson', meanRatePerSecond: 5.53, promptTokens: AZURE_CONVERSATION_PROMPT,
        outputTokens: AZURE_CONVERSATION_OUTPUT }, duration, seed);
      const all = traceStatistics(trace, duration);
      expect(Math.abs(all.meanRate / 5.53 - 1)).toBeLessThan(0.05);
      cvs.push(all.interArrivalCv);
      expect(all.emptyMinuteShare).toBe(0);
      // Peak minute over the hour's mean, hour by hour (the trace statistic is per hour).
      const perMinute = new Array<number>(hours * 60).fill(0);
      for (let i = 0; i < trace.count; i++) perMinute[Math.floor(trace.time[i] / 60)]++;
      for (let h = 0; h < hours; h++) {
        const hour = perMinute.slice(h * 60, h * 60 + 60);
        peaks.push(Math.max(...hour) / (hour.reduce((a, b) => a + b, 0) / 60));
      }
    }
    const meanCv = cvs.reduce((a, b) => a + b, 0) / cvs.length;
    expect(meanCv).toBeGreaterThan(1.02);
    expect(meanCv).toBeLessThan(1.16);
    const meanPeak = peaks.reduce((a, b) => a + b, 0) / peaks.length;
    expect(meanPeak).toBeGreaterThan(1.3);
    expect(meanPeak).toBeLessThan(1.75);
  });

  test('code: bursty, about 12 of 57 minutes empty, inter-arrival CV far above 1, peak minute several times the mean', () => {
    const trace = generateTrace({ pattern: 'bursty', meanRatePerSecond: 2.57, promptTokens: AZURE_CODE_PROMPT, outputTokens: AZURE_CODE_OUTPUT }, duration, 3);
    const st = traceStatistics(trace, duration);
    expect(st.emptyMinuteShare).toBeGreaterThan(0.15);
    expect(st.emptyMinuteShare).toBeLessThan(0.28);
    expect(st.interArrivalCv).toBeGreaterThan(6);
    expect(Math.abs(st.meanRate / 2.57 - 1)).toBeLessThan(0.15);
  });

  test('is deterministic per seed and differs across seeds', () => {
    const spec = { pattern: 'near-poisson' as const, meanRatePerSecond: 5, promptTokens: AZURE_CONVERSATION_PROMPT, outputTokens: AZURE_CONVERSATION_OUTPUT };
    const a = generateTrace(spec, 600, 11);
    const b = generateTrace(spec, 600, 11);
    const c = generateTrace(spec, 600, 12);
    expect(Array.from(a.time)).toEqual(Array.from(b.time));
    expect(Array.from(a.output)).toEqual(Array.from(b.output));
    expect(Array.from(a.time)).not.toEqual(Array.from(c.time));
  });

  test('the diurnal envelope swings 20x between night and day', () => {
    const profile = diurnalProfile({ fromSeconds: 0, toSeconds: 86400, peakAtSeconds: 14 * 3600 });
    expect(rateMultiplierAt(profile, 14 * 3600)).toBeCloseTo(1, 5);
    expect(rateMultiplierAt(profile, 2 * 3600)).toBeCloseTo(1 / 20, 5);
    const trace = generateTrace({ pattern: 'poisson', meanRatePerSecond: 2, rateProfile: profile, promptTokens: { fixed: 1 }, outputTokens: { fixed: 1 } }, 86400, 1);
    const perHour = new Array<number>(24).fill(0);
    for (let i = 0; i < trace.count; i++) perHour[Math.floor(trace.time[i] / 3600)]++;
    expect((perHour[13] + perHour[14]) / (perHour[1] + perHour[2])).toBeGreaterThan(12);
  });
});
