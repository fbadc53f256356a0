/** Log-spaced latency buckets: 10% wide from 1 ms to about 20 min, enough for percentiles within 5%. */
export const LATENCY_BUCKETS = 150;
const BASE = 0.001;
const RATIO = 1.1;
const LOG_RATIO = Math.log(RATIO);

export function latencyBucket(seconds: number): number {
  if (seconds <= BASE) return 0;
  return Math.min(LATENCY_BUCKETS - 1, 1 + Math.floor(Math.log(seconds / BASE) / LOG_RATIO));
}

/** Upper edge of a bucket (percentiles are reported conservatively at the upper edge). */
export function bucketUpperSeconds(bucket: number): number {
  return BASE * Math.pow(RATIO, bucket);
}

/** Percentile of a histogram stored at `offset` in `counts`; NaN when empty. */
export function histogramPercentile(counts: ArrayLike<number>, offset: number, p: number): number {
  let total = 0;
  for (let i = 0; i < LATENCY_BUCKETS; i++) total += counts[offset + i];
  if (total === 0) return NaN;
  const rank = p * total;
  let cum = 0;
  for (let i = 0; i < LATENCY_BUCKETS; i++) {
    cum += counts[offset + i];
    if (cum >= rank) return bucketUpperSeconds(i);
  }
  return bucketUpperSeconds(LATENCY_BUCKETS - 1);
}
