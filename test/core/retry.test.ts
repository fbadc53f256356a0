import { DEFAULT_RETRY, isRetryableError, withRetries } from '../../lib/core/reconciler/retry';

// The one retry policy of both Lambda functions (the reconciler and the artifact verifier).
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
});
