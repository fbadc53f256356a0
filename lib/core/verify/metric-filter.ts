/**
 * Does each deployed capacity-error metric filter match Karpenter's real line for its NodePool, and not a foreign
 * pod's? Judged on CloudWatch's own matcher (TestMetricFilter: the offline tests only run the library's re-implementation
 * of the pattern subset, lib/core/metrics/filter-pattern.ts).
 */
import { type FilterSample } from './log-lines';
import { type CheckResult } from './result';

/** TestMetricFilter's answer: the messages it matched. */
export interface FilterMatches {
  readonly matches?: ReadonlyArray<{ readonly eventMessage?: string }>;
}

/** One result per sample line (`capacityFilterSamples`, the lines sent): matched when it must, and only then. */
export function metricFilterChecks(filterName: string, samples: readonly FilterSample[], answer: FilterMatches): CheckResult[] {
  const matched = new Set((answer.matches ?? []).map((m) => m.eventMessage));
  return samples.map((s, i) => {
    const hit = matched.has(s.line);
    const settles = `metric filter ${filterName} ${s.mustMatch ? 'counts' : 'does not count'} ${s.what}`;
    return {
      id: `filter:${filterName}:${i}`,
      status: hit === s.mustMatch ? 'pass' : 'fail',
      settles,
      detail: `TestMetricFilter ${hit ? 'matched' : 'did not match'} the line`,
    };
  });
}
