import { estimate, t95 } from '../../lib/sim/stats';

describe('t95: the two-sided 95% Student t quantile', () => {
  test('the table to 30 degrees of freedom, the published quantiles beyond', () => {
    expect(t95(9)).toBe(2.262);
    expect(t95(30)).toBe(2.042);
    // Published two-sided 95% quantiles (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2): 40 -> 2.021, 60 -> 2.000,
    // 100 -> 1.984.
    expect(t95(40)).toBeCloseTo(2.021, 3);
    expect(t95(60)).toBeCloseTo(2.0, 3);
    expect(t95(100)).toBeCloseTo(1.984, 3);
    // Within 1e-4 of the exact quantiles (six digits, from the t distribution's inverse CDF) where the expansion is
    // furthest off, near the table.
    for (const [df, exact] of [[31, 2.039513], [40, 2.021075], [60, 2.000298], [120, 1.97993]]) {
      expect(Math.abs(t95(df) - exact)).toBeLessThan(1e-4);
    }
    // Decreasing from the table on, towards the normal quantile.
    expect(t95(31)).toBeLessThan(t95(30));
    expect(t95(1e6)).toBeCloseTo(1.96, 3);
  });

  test('a 40-seed interval uses it, not the normal quantile', () => {
    const values = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 1 : -1));
    const sd = Math.sqrt(40 / 39);
    expect(estimate(values).ci95).toBeCloseTo((t95(39) * sd) / Math.sqrt(40), 12);
    expect(estimate(values).ci95).toBeGreaterThan((1.97 * sd) / Math.sqrt(40));
  });
});
