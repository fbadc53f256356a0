/**
 * The outcome of one post-deploy conformance check: pass or fail, the fact about the account it settles, and what was
 * seen. Pure (no AWS SDK): bin/verify.ts makes the calls, these modules judge the answers.
 */

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  /** Stable identifier, e.g. `metric:AWS/SageMaker/Invocations:variant-a`, for scripts reading `--json`. */
  readonly id: string;
  readonly status: CheckStatus;
  /** The fact a pass establishes, in one sentence (what the offline tests could only read about). */
  readonly settles: string;
  /** What the account answered: the evidence for the status. */
  readonly detail: string;
}

const MARK: Readonly<Record<CheckStatus, string>> = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' };

/** One check as terminal lines: status, the fact, then the evidence indented. */
export function formatCheck(r: CheckResult): string {
  return `${MARK[r.status]}  ${r.settles}\n      ${r.detail}`;
}

/** The closing line: counts per status; the exit status is non-zero when anything failed. */
export function summarizeChecks(results: readonly CheckResult[]): { readonly line: string; readonly failed: number } {
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  const failed = count('fail');
  return { line: `${count('pass')} passed, ${failed} failed, ${count('skip')} skipped`, failed };
}
