/**
 * The reconciler handler's deadline counts from the invocation's start (review R120): the time the first invocation of
 * an execution environment spends loading its clients is spent from the run's budget, not added to it, so it cannot
 * push the run's end into the time kept back for its records. A file of its own: the handler keeps its clients for the
 * environment's later invocations, so only a file's first invocation loads them.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { DescribeEndpointCommand } from '@aws-sdk/client-sagemaker';
import { DEADLINE_RESERVE_MS, handler } from '../../lambda/reconciler';
import { TARGET_IO } from '../../lambda/reconciler/reconcile';
import { cw, resetWorld, sm, SM } from './reconciler-world';

test('fails when a cold start longer than the run\'s budget leaves the run its whole budget: no AWS call starts, reason timeout', async () => {
  resetWorld();
  const saved = process.env.RECONCILER_CONFIG;
  process.env.RECONCILER_CONFIG = JSON.stringify(SM);
  sm.on(DescribeEndpointCommand).callsFake(() => new Promise(() => undefined));
  // The first load of the SageMaker target's module (its client's) takes 1.5 s; the invocation has 1 s of budget.
  const load = TARGET_IO.sagemaker;
  const slowLoad = jest.spyOn(TARGET_IO, 'sagemaker').mockImplementationOnce(async () => {
    await delay(1_500);
    return load();
  });
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const invocation = handler({ 'detail-type': 'Scheduled Event' }, { getRemainingTimeInMillis: () => DEADLINE_RESERVE_MS + 1_000 });
    await expect(invocation).rejects.toThrow("reconciler: weights unchanged: AWS did not answer before the run's deadline (1 s)");
    expect(slowLoad).toHaveBeenCalled();
    // Past its deadline when it starts, the run sends nothing (a call sent then would run into the reserve).
    expect(sm.commandCalls(DescribeEndpointCommand)).toHaveLength(0);
    expect(cw.calls()).toHaveLength(0);
    const lines = log.mock.calls.map((c) => JSON.parse(c[0] as string));
    expect(lines.find((l) => l.audit)).toMatchObject({ trigger: 'Scheduled Event', apply: { action: 'failed', reason: 'timeout' } });
  } finally {
    log.mockRestore();
    slowLoad.mockRestore();
    if (saved === undefined) delete process.env.RECONCILER_CONFIG;
    else process.env.RECONCILER_CONFIG = saved;
  }
});
