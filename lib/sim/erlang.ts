/** Closed forms for M/M/c (Erlang C), the reference the queueing core is validated against. */

/** Probability that an arrival waits, for c servers at utilisation rho (offered load a = c x rho, mu = 1). */
export function erlangC(c: number, rho: number): number {
  const a = c * rho;
  // Erlang B by its stable recursion, then C from B.
  let b = 1;
  for (let i = 1; i <= c; i++) b = (a * b) / (i + a * b);
  return b / (1 - rho + rho * b);
}

/** Mean wait in queue (mu = 1). */
export function erlangCMeanWait(c: number, rho: number): number {
  return erlangC(c, rho) / (c * (1 - rho));
}

/** Wait-time quantile p (mu = 1): P(Wq > t) = C exp(-c(1 - rho) t). */
export function erlangCWaitQuantile(c: number, rho: number, p: number): number {
  const pw = erlangC(c, rho);
  if (1 - p >= pw) return 0;
  return Math.log(pw / (1 - p)) / (c * (1 - rho));
}
