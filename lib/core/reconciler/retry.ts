/**
 * The one retry policy of the library's Lambda functions (the reconciler and the artifact verifier): retry throttling,
 * server-side faults and network failures with capped exponential backoff and jitter; never a denial, a validation
 * error or a missing object. The SDK clients are built with `maxAttempts: 1` (LAMBDA_CLIENT_OPTIONS,
 * lib/core/sdk-client-profiles.ts), so this is the only retry layer and a run's time budget stays predictable. Pure:
 * the sleep and the jitter source are injected (seeded in tests).
 */

/** Error names (the SDK's `name`) and Node.js network codes (`code`) worth another attempt. */
const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'InternalServerException',
  'InternalServerError',
  'InternalServiceError',
  'InternalFailure',
  'KMSInternalException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/** Whether an AWS error is worth another attempt: throttling, a server-side fault (429, 5xx) or a network failure. */
export function isRetryableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if ((e.name !== undefined && RETRYABLE_NAMES.has(e.name)) || (e.code !== undefined && RETRYABLE_NAMES.has(e.code))) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  return status === 429 || (status !== undefined && status >= 500);
}

/**
 * A denial that may be a grant still spreading: IAM is eventually consistent ("changes ... take time to become
 * visible", IAM user guide, troubleshoot_general.html#troubleshoot_general_eventual-consistency), and a function run
 * right after its role's policy was created or changed can be denied what the policy grants (aws/aws-cdk#37675). AWS
 * JSON APIs name it AccessDeniedException, S3 AccessDenied; a HEAD (no body) carries only its 403.
 */
export function isAccessDenied(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return [e.name, e.code].some((n) => n === 'AccessDenied' || n === 'AccessDeniedException') || e.$metadata?.httpStatusCode === 403;
}

export interface RetryOptions {
  /** Attempts in total, at least 1. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** In [0, 1): jitter source (inject a seeded one in tests). */
  readonly random: () => number;
  /** Once aborted (the run's deadline), no further attempt is made: the last error is rethrown. @default - never */
  readonly signal?: AbortSignal;
  /** Which errors are worth another attempt. @default isRetryableError */
  readonly retryable?: (err: unknown) => boolean;
  /** The pause before attempt `attempt + 1`. @default backoffDelayMs: exponential, capped, half jitter */
  readonly delayMs?: (attempt: number) => number;
  /** Told of every failed attempt: its error, its number, and the pause before the next (undefined: none follows). */
  readonly onFailure?: (err: unknown, attempt: number, nextInMs: number | undefined) => void;
}

/**
 * Four attempts, 200 ms doubling (ceilings 200, 400 and 800 ms, jittered to at least half): at most 1.4 s of waiting in
 * all, well inside a one-minute run; the 3 s cap binds only from a fifth attempt (a caller's own maxAttempts).
 */
export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 3000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/**
 * Backoff before attempt `attempt + 1` (attempt counts from 1): exponential, capped, with half jitter (at least half
 * the ceiling, so a retry never fires at once; the other half random, so concurrent callers spread out).
 */
export function backoffDelayMs(attempt: number, options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'>): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * options.random());
}

/** Runs `op`, retrying retryable errors with backoff; rethrows the last error when the attempts run out. */
export async function withRetries<T>(op: () => Promise<T>, options: RetryOptions = DEFAULT_RETRY): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      const last = attempt >= options.maxAttempts || !(options.retryable ?? isRetryableError)(err) || options.signal?.aborted === true;
      const pause = last ? undefined : options.delayMs?.(attempt) ?? backoffDelayMs(attempt, options);
      try {
        options.onFailure?.(err, attempt, pause);
      } catch {
        // A hook that throws (an audit writer) must not end the retries nor replace the operation's error.
      }
      if (pause === undefined) throw err;
      await options.sleep(pause);
      if (options.signal?.aborted) throw err;
    }
  }
}

/**
 * Whether an error is a bug in the code rather than a failed call (the built-in errors a program raises on itself:
 * TypeError, ReferenceError, RangeError, SyntaxError) that did not come out of an AWS call: the SDK hands on the
 * SyntaxError of a response body that is not JSON (a proxy's HTML error page; @smithy/core's parseJsonBody) with the
 * response's `$metadata` / `$response`, and its retry middleware gives every error through `send` its `$metadata`.
 */
export function isProgrammingError(err: unknown): boolean {
  const builtIn = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError;
  return builtIn && !('$metadata' in err || '$response' in err);
}

/**
 * `op` raced against `signal` (the run's deadline, or a shorter budget): the SDK aborts a request whose signal fires,
 * and this makes sure the caller moves on even when something under it does not (a stubbed client, a hung socket
 * callback).
 */
export function beforeDeadline<T>(op: () => Promise<T>, signal: AbortSignal): () => Promise<T> {
  return () => new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    op().then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
