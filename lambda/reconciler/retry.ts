/**
 * Retries with capped exponential backoff and full jitter, for throttling and transient errors only. The SDK clients
 * are built with `maxAttempts: 1` so this is the only retry layer, and the run's time budget stays predictable.
 */
export interface RetryOptions {
  readonly name: string;
  /** Total attempts, the first included. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
}

const DEFAULTS: Omit<RetryOptions, 'name'> = {
  attempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 3000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

const RETRYABLE = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'InternalFailure',
  'InternalServiceError',
  'InternalServerError',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/** Whether an SDK error is worth retrying: throttling, 5xx, or a network failure. */
export function isRetryable(error: unknown): boolean {
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (e?.$retryable) return true;
  if (RETRYABLE.has(e?.name ?? '') || RETRYABLE.has(e?.code ?? '')) return true;
  const status = e?.$metadata?.httpStatusCode;
  return status === 429 || (status !== undefined && status >= 500);
}

export async function withRetry<T>(fn: () => Promise<T>, options: Partial<RetryOptions> & { name: string }): Promise<T> {
  const o = { ...DEFAULTS, ...options };
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= o.attempts || !isRetryable(error)) throw error;
      await o.sleep(Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1)) * o.random());
    }
  }
}
