import { DEFAULT_RETRY, isRetryableError, withRetries } from '../../lib/core/reconciler/retry';

// The one retry loop of both Lambda functions (the reconciler and the artifact verifier) and the game day's restore.
describe('retry policy', () => {
  test('retries throttling, server faults and network failures; never a denial or a validation error', () => {
    for (const name of ['ThrottlingException', 'ThrottledException', 'LimitExceededException', 'InternalServerError', 'TimeoutError']) {
      expect(isRetryableError({ name })).toBe(true);
    }
    expect(isRetryableError({ name: 'Error', code: 'ECONNRESET' })).toBe(true);
    expect(isRetryableError({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } })).toBe(false);
    expect(isRetryableError({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } })).toBe(false);
  });

  // The shapes Node's global fetch (undici) rejects with: the network code only on `cause` (lib/core/reconciler/retry.ts).
  test("retries a network failure whose code is only on the cause: fetch's TypeError('fetch failed') and TypeError('terminated')", () => {
    const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']) {
      expect(isRetryableError(fetchFailed(Object.assign(new Error(`connect ${code}`), { code })))).toBe(true);
    }
    const socket = Object.assign(new Error('other side closed'), { name: 'SocketError', code: 'UND_ERR_SOCKET' });
    expect(isRetryableError(fetchFailed(socket))).toBe(true);
    expect(isRetryableError(new TypeError('terminated', { cause: socket }))).toBe(true);
    // Happy eyeballs: every address refused gives an AggregateError that carries the first one's code.
    expect(isRetryableError(fetchFailed(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' })))).toBe(true);
    // Wrapped once more (a message naming what was being read), still a network failure.
    expect(isRetryableError(new Error('envelope download', { cause: fetchFailed(socket) }))).toBe(true);
    // The SDK's handler puts the socket's code on the error itself: a refused connection or a name not resolved is retried too.
    expect(isRetryableError(Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }))).toBe(true);
  });

  test('never retries a TypeError that is not a network failure, nor a cause chain without one', () => {
    expect(isRetryableError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(isRetryableError(new TypeError('Failed to parse URL from x', { cause: Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' }) }))).toBe(false);
    expect(isRetryableError(new TypeError('fetch failed', { cause: new Error('bad port') }))).toBe(false);
    // A throttling name or a 5xx counts on the error itself only, as before: a cause is read for its network code.
    expect(isRetryableError(new Error('wrapped', { cause: { name: 'ThrottlingException' } }))).toBe(false);
    // A cycle ends.
    const looped: { code: string; cause?: unknown } = { code: 'X' };
    looped.cause = looped;
    expect(isRetryableError(looped)).toBe(false);
  });

  test('a pause ends when the signal aborts, and the last error is rethrown without another attempt', async () => {
    const controller = new AbortController();
    let calls = 0;
    const op = async () => {
      calls += 1;
      setTimeout(() => controller.abort(), 5);
      throw Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
    };
    const never = () => new Promise<void>(() => undefined);
    await expect(withRetries(op, { ...DEFAULT_RETRY, sleep: never, signal: controller.signal })).rejects.toThrow('slow down');
    expect(calls).toBe(1);
  });

  test('the reconciler default: four attempts in all, then the last error', async () => {
    let calls = 0;
    const op = async () => {
      calls += 1;
      throw Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
    };
    await expect(withRetries(op, { ...DEFAULT_RETRY, sleep: async () => undefined })).rejects.toThrow('slow down');
    expect(calls).toBe(DEFAULT_RETRY.maxAttempts);
    expect(DEFAULT_RETRY.maxAttempts).toBe(4);
  });

  test('a fixed schedule of pauses, and every failed attempt told with the pause before the next (none after the last)', async () => {
    const slept: number[] = [];
    const told: Array<[string, number, number | undefined]> = [];
    let calls = 0;
    const op = async () => {
      calls += 1;
      if (calls < 3) throw new Error(`fail ${calls}`);
      return 'done';
    };
    const options = {
      ...DEFAULT_RETRY, maxAttempts: 3, retryable: () => true, delayMs: (i: number) => [5, 15][i - 1],
      sleep: async (ms: number) => { slept.push(ms); },
      onFailure: (e: unknown, i: number, next: number | undefined) => told.push([(e as Error).message, i, next]),
    };
    await expect(withRetries(op, options)).resolves.toBe('done');
    expect(slept).toEqual([5, 15]);
    expect(told).toEqual([['fail 1', 1, 5], ['fail 2', 2, 15]]);
    calls = -10;
    told.length = 0;
    await expect(withRetries(op, options)).rejects.toThrow('fail -7');
    expect(told.map(([, i, next]) => [i, next])).toEqual([[1, 5], [2, 15], [3, undefined]]);
    // A hook that throws ends neither the retries nor hides the operation's own error.
    calls = -10;
    const throwing = { ...options, onFailure: () => { throw new Error('hook'); } };
    await expect(withRetries(op, throwing)).rejects.toThrow('fail -7');
    calls = 0;
    await expect(withRetries(op, throwing)).resolves.toBe('done');
  });
});
