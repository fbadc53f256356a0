/**
 * The one retry policy of the library's Lambda functions (the reconciler and the artifact verifier): retry throttling,
 * server-side faults and network failures with capped exponential backoff and jitter; never a denial, a validation
 * error or a missing object. The SDK clients are built with `maxAttempts: 1` (LAMBDA_CLIENT_OPTIONS,
 * lib/core/sdk-client-profiles.ts), so this is the only retry layer and a run's time budget stays predictable. Pure:
 * the sleep and the jitter source are injected (seeded in tests).
 */

/** Error names (the SDK's `name`, or a `code` that repeats it) worth another attempt. */
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
]);

/**
 * Network failures worth another attempt, by `code`: a connection reset, refused or timed out, a host or network out of
 * reach, a name not resolved. The Node.js ones are the SDK's own transient codes (@smithy/core@3.41.1
 * dist-cjs/submodules/retry/index.js:38-39, its NODEJS_TIMEOUT_ERROR_CODES and NODEJS_NETWORK_ERROR_CODES). The
 * UND_ERR_ ones are undici's, the client under Node's global `fetch`: SocketError ('other side closed'), and the
 * connect, headers and body timeouts (nodejs/undici@v6.24.1 lib/core/errors.js:24,40,72,252; the same codes at
 * v7.19.2 and v8.10.0).
 */
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
]);

/** How deep `isRetryableError` follows `cause`: the SDK's own bound (depth <= 10, @smithy/core@3.41.1 retry/index.js:71), and a cycle ends. */
const MAX_CAUSE_DEPTH = 10;

/**
 * Whether an error is worth another attempt: throttling, a server-side fault (429, 5xx) or a network failure.
 *
 * The SDK's HTTP handler rejects with the socket's own error, its `code` on the error itself (@smithy/node-http-handler@4.14.2
 * dist-cjs/index.js:380-386). Node's global `fetch` (undici, what the verifier downloads signature envelopes with)
 * rejects a network failure with `TypeError('fetch failed', { cause })` (nodejs/undici@v6.24.1 lib/web/fetch/index.js:230,
 * @v7.19.2 :237, @v8.10.0 :271) and a body cut off after the headers with `TypeError('terminated', { cause })`
 * (@v6.24.1 :2046): the code is only on the `cause`. Run on Node 20.20.2 (undici 6.24.1): `fetch` of a closed port gave
 * `TypeError: fetch failed` with cause `{ code: 'ECONNREFUSED' }`, of an unknown host cause `{ code: 'ENOTFOUND' }`, of a
 * server that reset the connection cause `{ code: 'ECONNRESET' }`, of one that closed it `SocketError { code:
 * 'UND_ERR_SOCKET' }`, a body cut short `TypeError: terminated` with that SocketError; a bad URL gave `TypeError: Failed
 * to parse URL` with cause `{ code: 'ERR_INVALID_URL' }`, a bad port cause `Error: bad port` (no code), neither retried.
 * So a network code counts on the error and on its causes; a name or a status counts only on the error itself.
 */
export function isRetryableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if ((e.name !== undefined && RETRYABLE_NAMES.has(e.name)) || (e.code !== undefined && RETRYABLE_NAMES.has(e.code))) return true;
  if (isNetworkFailure(err)) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  return status === 429 || (status !== undefined && status >= 500);
}

/** Whether the error, or an error in its `cause` chain, carries a network failure's `code`. */
function isNetworkFailure(err: unknown): boolean {
  let e = err;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
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
  /** Once aborted (the run's deadline), no further attempt is made and a pause ends: the last error is rethrown. @default - never */
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
 * The Reconciler function's timeout (the construct sets it; the handler's deadline when the runtime does not say how
 * much time is left). Worst case: three steps (read, metrics, write), each retried per DEFAULT_RETRY with at most 1.4 s
 * of backoff in all (a read's optional calls, the SageMaker scaling bounds or the ALB target health, get 6 s at most),
 * and the run's deadline aborts the rest; a run normally takes well under 1 s.
 */
export const RECONCILER_FUNCTION_TIMEOUT_SECONDS = 30;

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
      await untilAborted(options.sleep(pause), options.signal);
      if (options.signal?.aborted) throw err;
    }
  }
}

/** `pause`, cut short when `signal` aborts: no attempt follows then, so waiting on would only delay the last error. */
async function untilAborted(pause: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return pause;
  let onAbort = () => undefined as void;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([pause, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
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
