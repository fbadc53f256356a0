// The reads a run can go on without (SageMaker scaling bounds, ALB target health): bounded, so they never cost the
// weights their write, and loud on a bug.
import { optionalRead } from '../../lambda/reconciler/targets/io';
import { DEFAULT_RETRY } from '../../lib/core/reconciler/retry';

const fast = { ...DEFAULT_RETRY, sleep: async () => undefined, random: () => 0 };
const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } });

test('fails when a read that never answers holds the run past its own budget (a slow service would cost the weights)', async () => {
  const started = Date.now();
  await expect(optionalRead(() => new Promise<never>(() => undefined), fast, 50)).resolves.toEqual({ failed: 'no answer within 0.05 s' });
  expect(Date.now() - started).toBeLessThan(2000);
});

test('one retry for a throttled call, then the answer; still throttled after it, a failed read that says why', async () => {
  let calls = 0;
  await expect(optionalRead(async () => (++calls === 1 ? Promise.reject(throttled()) : 7), fast)).resolves.toEqual({ value: 7 });
  calls = 0;
  await expect(optionalRead(async () => {
    calls++;
    throw throttled();
  }, fast)).resolves.toEqual({ failed: 'Throttling: Rate exceeded' });
  expect(calls).toBe(2);
});

test('a response body that is not JSON is a failed call, not a bug (the SDK hands on its SyntaxError with $metadata)', async () => {
  const unparsable = Object.assign(new SyntaxError('Unexpected token < in JSON'), { $metadata: { httpStatusCode: 502 } });
  await expect(optionalRead(async () => {
    throw unparsable;
  }, fast)).resolves.toEqual({ failed: 'SyntaxError: Unexpected token < in JSON' });
  const bodyOnly = Object.assign(new SyntaxError('Unexpected end of JSON input'), { $response: { statusCode: 200 } });
  await expect(optionalRead(async () => {
    throw bodyOnly;
  }, fast)).resolves.toEqual({ failed: 'SyntaxError: Unexpected end of JSON input' });
});

test('a bug throws, and so does a read past the run\'s deadline', async () => {
  await expect(optionalRead(async () => {
    throw new TypeError('x is undefined');
  }, fast)).rejects.toThrow(TypeError);
  const run = new AbortController();
  run.abort(new Error('run deadline'));
  await expect(optionalRead(async () => 1, { ...fast, signal: run.signal })).rejects.toThrow('run deadline');
});
