import { erlangC, erlangCMeanWait, erlangCWaitQuantile } from '../../lib/sim/erlang';
import { simulateMmc } from '../../lib/sim/validation';

// Reference values: M/M/c with service rate mu = 1, from the closed-form Erlang C formulas (P(wait), E[W], and the
// wait quantile -ln((1 - q) / P(wait)) / (c mu - lambda)).
const REFERENCE = [
  { c: 1, rho: 0.8, pWait: 0.8, meanWait: 4.0, p99: 21.91 },
  { c: 4, rho: 0.8, pWait: 0.5964, meanWait: 0.7455, p99: 5.1105 },
  { c: 8, rho: 0.8, pWait: 0.4576, meanWait: 0.286, p99: 2.3897 },
  { c: 32, rho: 0.9, pWait: 0.4582, meanWait: 0.1432, p99: 1.1952 },
];

describe('Erlang C closed forms', () => {
  test.each(REFERENCE)('M/M/$c at rho $rho matches the reference table', ({ c, rho, pWait, meanWait, p99 }) => {
    expect(erlangC(c, rho)).toBeCloseTo(pWait, 4);
    expect(erlangCMeanWait(c, rho)).toBeCloseTo(meanWait, 4);
    expect(erlangCWaitQuantile(c, rho, 0.99)).toBeCloseTo(p99, 2);
  });
});

describe('queueing core, small sample in process', () => {
  // 100k arrivals: a looser bound (standard error about 5% at c = 4); the 1M check is erlang-1m.test.ts.
  test('M/M/4 at rho 0.8 waits as Erlang C says, within 3 standard errors', () => {
    const r = simulateMmc(4, 0.8, 100_000, 3);
    expect(Math.abs(r.waited - 0.5964)).toBeLessThan(0.02);
    expect(Math.abs(r.meanWait - 0.7455)).toBeLessThanOrEqual(Math.max(0.02 * 0.7455, 3 * r.meanWaitStdError));
  });
});
