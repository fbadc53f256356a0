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
