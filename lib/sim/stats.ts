/** Two-sided 95% Student t quantiles by degrees of freedom (1..30); 1.96 beyond. */
const T95 = [NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export interface Estimate {
  readonly mean: number;
  /** Half-width of the 95% confidence interval (t distribution); NaN with fewer than two finite values. */
  readonly ci95: number;
  /** Finite values the estimate is over. */
  readonly n: number;
  /** Values that were not finite (e.g. "never reached": Infinity) or undefined (NaN). */
  readonly infinite: number;
}

/** Mean and 95% interval of the finite values; Infinity values are counted apart, NaN values ignored. */
export function estimate(values: readonly number[]): Estimate {
  const finite = values.filter((v) => Number.isFinite(v));
  const infinite = values.filter((v) => v === Infinity || v === -Infinity).length;
  const n = finite.length;
  if (n === 0) return { mean: infinite > 0 ? Infinity : NaN, ci95: NaN, n, infinite };
  const mean = finite.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, ci95: NaN, n, infinite };
  const variance = finite.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  const t = n - 1 < T95.length ? T95[n - 1] : 1.96;
  return { mean, ci95: t * Math.sqrt(variance / n), n, infinite };
}

/** Paired differences a[i] - b[i] over the indices where both are finite (same seed, same trace). */
export function pairedDifference(a: readonly number[], b: readonly number[]): Estimate {
  const d: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (Number.isFinite(a[i]) && Number.isFinite(b[i])) d.push(a[i] - b[i]);
  return estimate(d);
}
