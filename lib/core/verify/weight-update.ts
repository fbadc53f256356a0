import { type CheckResult } from './result';

/**
 * Times a weights-only `UpdateEndpointWeightsAndCapacities` on a deployed endpoint: how long it keeps the endpoint
 * `Updating`. AWS publishes no figure (the API reference says only that the endpoint's status becomes `Updating` and
 * then `InService`), the simulator assumes one (`weightsSeconds`, lib/sim/platform.ts), and the library's SageMaker
 * results depend on it: only the policies that write weights pay it, since every write blocks target tracking's
 * scale-outs and the Reconciler's capacity write for that long (review R233; docs/benchmarks-history.md, "Stop 59").
 */

/** How often the endpoint's status is read after the write. */
export const WEIGHT_UPDATE_POLL_SECONDS = 2;
/** The longest the command waits for `InService` again (a weights-only update that takes longer is reported as such). */
export const WEIGHT_UPDATE_MAX_SECONDS = 600;

/** One read of the endpoint after the write, `seconds` after it. */
export interface StatusSample {
  readonly seconds: number;
  readonly status: string | undefined;
  /** A variant's desired instance count differed from its current one: a capacity change, not the weights, is under way. */
  readonly capacityChanging?: boolean;
}

/**
 * The seconds from the write to the first read that finds the endpoint `InService` after it was `Updating`; `never`
 * when it was not seen `Updating`, not seen back, or turned to another status (RollingBack, Failed...), named.
 */
export function updatingSeconds(samples: readonly StatusSample[]): { seconds: number } | { never: 'updating' | 'in-service' } | { other: string } {
  const other = samples.find((s) => s.status !== 'Updating' && s.status !== 'InService');
  if (other) return { other: String(other.status) };
  const updating = samples.findIndex((s) => s.status === 'Updating');
  if (updating < 0) return { never: 'updating' };
  const back = samples.slice(updating).find((s) => s.status === 'InService');
  return back ? { seconds: back.seconds } : { never: 'in-service' };
}

/**
 * The check: PASS when the endpoint was back `InService` within the simulator's assumed time, FAIL when it took longer
 * (the SageMaker benchmark is then kinder to the weight-writing policies than this endpoint: rerun it with the measured
 * time), SKIP when no update was seen (the write may not have changed the endpoint).
 *
 * `lostAnswer`: the error of a write that got no answer (a timeout, a 5xx), whose outcome is unknown. An update seen
 * after it is taken as the write's own and judged as usual, the detail saying so; none seen: SKIP, the write most
 * likely not taken.
 */
export function weightUpdateCheck(endpointName: string, samples: readonly StatusSample[], assumedSeconds: number, lostAnswer?: string): CheckResult {
  const judged = judge(endpointName, samples, assumedSeconds);
  if (lostAnswer === undefined) return judged;
  const t = updatingSeconds(samples);
  if ('never' in t && t.never === 'updating') {
    return { ...judged, status: 'skip', detail: `the write got no answer (${lostAnswer}) and the endpoint was never seen Updating after it `
      + `(read at once, then every ${WEIGHT_UPDATE_POLL_SECONDS} s): it may not have landed; not measured` };
  }
  return { ...judged, detail: `${judged.detail}; the write got no answer (${lostAnswer}): the update seen is taken as its own` };
}

function judge(endpointName: string, samples: readonly StatusSample[], assumedSeconds: number): CheckResult {
  const id = `weight-update:${endpointName}`;
  const settles = `a weights-only update keeps endpoint ${endpointName} Updating no longer than the simulator assumes (${assumedSeconds} s)`;
  const t = updatingSeconds(samples);
  const polled = `read at once, then every ${WEIGHT_UPDATE_POLL_SECONDS} s`;
  if ('other' in t) return { id, status: 'fail', settles, detail: `the endpoint turned ${t.other} after the write (${polled})` };
  // An instance launch or removal holds the endpoint Updating for its own time: not the weights' (review R236).
  if (samples.some((x) => x.capacityChanging)) {
    return { id, status: 'skip', settles, detail: `a variant's instance count changed while the endpoint was Updating (${polled}): not measured; run it again` };
  }
  if ('never' in t) {
    return t.never === 'updating'
      ? { id, status: 'skip', settles, detail: `the endpoint was never seen Updating after the write (${polled}): not measured` }
      : { id, status: 'fail', settles, detail: `still not InService ${WEIGHT_UPDATE_MAX_SECONDS} s after the write (${polled})` };
  }
  const rerun = `npx cdk-capacity-sim bench --platforms sagemaker --platform-param weightsSeconds=${Math.min(120, Math.ceil(t.seconds))}`;
  return t.seconds <= assumedSeconds
    ? { id, status: 'pass', settles, detail: `InService again ${t.seconds} s after the write (${polled})` }
    : { id, status: 'fail', settles, detail: `InService again ${t.seconds} s after the write (${polled}); the SageMaker benchmark is kinder to ` +
      `policies that write weights than this endpoint: rerun it with ${rerun}` + (t.seconds > 120 ? ' (the parameter\'s upper bound; longer is worse still)' : '') };
}
