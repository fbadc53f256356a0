/**
 * verify's opt-in --time-weight-update: the pure judgement of the endpoint's status reads, and the command's calls on
 * a mocked SageMaker (the current weights written back unchanged, then DescribeEndpoint until InService).
 */
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { clients, parseArgs, runVerify } from '../../bin/verify';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { updatingSeconds, weightUpdateCheck } from '../../lib/core/verify/weight-update';
import { platformModel } from '../../lib/sim/platform';
import { ACCOUNT, conformingAccount, resetAccount, target } from './account';

const sm = mockClient(SageMakerClient);
beforeEach(() => {
  resetAccount();
  sm.reset();
});

describe('weightUpdateCheck', () => {
  test('the first InService after Updating ends the clock; PASS within the assumed time, FAIL beyond it with the rerun', () => {
    const reads = (statuses: string[]) => statuses.map((status, i) => ({ seconds: 2 * (i + 1), status }));
    expect(updatingSeconds(reads(['Updating', 'Updating', 'InService']))).toEqual({ seconds: 6 });
    expect(weightUpdateCheck('llm', reads(['Updating', 'InService']), 30)).toMatchObject({ status: 'pass', detail: 'InService again 4 s after the write (read at once, then every 2 s)' });
    const slow = weightUpdateCheck('llm', [{ seconds: 2, status: 'Updating' }, { seconds: 94, status: 'InService' }], 30);
    expect(slow.status).toBe('fail');
    expect(slow.detail).toContain('rerun it with npx cdk-capacity-sim bench --platforms sagemaker --platform-param weightsSeconds=94');
  });

  test('another status is named and FAILs; a capacity change overlapping the update is not the weights\' time: SKIP (R236)', () => {
    expect(weightUpdateCheck('llm', [{ seconds: 0, status: 'Updating' }, { seconds: 40, status: 'RollingBack' }], 30))
      .toMatchObject({ status: 'fail', detail: expect.stringContaining('the endpoint turned RollingBack after the write') });
    expect(weightUpdateCheck('llm', [{ seconds: 0, status: 'Updating', capacityChanging: true }, { seconds: 200, status: 'InService' }], 30))
      .toMatchObject({ status: 'skip', detail: expect.stringContaining("a variant's instance count changed") });
  });

  test('never Updating: SKIP (not measured); never back: FAIL', () => {
    expect(weightUpdateCheck('llm', [{ seconds: 2, status: 'InService' }], 30).status).toBe('skip');
    expect(weightUpdateCheck('llm', [{ seconds: 600, status: 'Updating' }], 30)).toMatchObject({ status: 'fail', detail: expect.stringContaining('still not InService 600 s') });
  });
});

describe('--time-weight-update on a SageMaker stack', () => {
  const SM_CONFIG: ReconcilerConfig = {
    facts: {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: `arn:aws:sagemaker:us-east-1:${ACCOUNT}:endpoint/llm`,
      variants: [{ variantName: 'pooled', classes: [{ ...target('l40s', 0).class, instanceType: 'ml.g6e.xlarge' }] }],
    },
    placement: {}, policy: {}, service: 'chat', tokensPerRequest: 200, metricDelaySeconds: 120,
  };

  test('parses the flag', () => {
    expect(parseArgs(['--stack', 'S', '--time-weight-update']).timeWeightUpdate).toBe(true);
    expect(parseArgs(['--stack', 'S']).timeWeightUpdate).toBe(false);
  });

  test('writes each variant\'s current weight back, reads the status until InService, and judges against the simulator\'s assumption', async () => {
    conformingAccount(SM_CONFIG);
    const statuses = ['InService', 'Updating', 'Updating', 'InService'];
    sm.on(DescribeEndpointCommand).callsFake(() => ({
      EndpointName: 'llm', EndpointStatus: statuses.shift() ?? 'InService',
      ProductionVariants: [{ VariantName: 'pooled', CurrentWeight: 0.7 }, { VariantName: 'single', CurrentWeight: 0.3 }],
    }));
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).resolves({ EndpointArn: SM_CONFIG.facts.kind === 'sagemaker' ? SM_CONFIG.facts.endpointArn : '' });
    let now = 0;
    const clock = { now: () => now, sleep: async (ms: number) => { now += ms; } };
    const results = await runVerify('Svc', { ...clients('us-east-1'), sageMaker: new SageMakerClient({ region: 'us-east-1' }) }, { timeWeightUpdate: true, clock });
    const [weights] = sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand);
    expect(weights.args[0].input).toEqual({
      EndpointName: 'llm', DesiredWeightsAndCapacities: [{ VariantName: 'pooled', DesiredWeight: 0.7 }, { VariantName: 'single', DesiredWeight: 0.3 }],
    });
    const assumed = platformModel('sagemaker').endpointUpdate!.weightsSeconds;
    expect(results.filter((r) => r.id.startsWith('weight-update'))).toEqual([{
      id: 'weight-update:llm', status: 'pass', detail: 'InService again 4 s after the write (read at once, then every 2 s)',
      settles: `a weights-only update keeps endpoint llm Updating no longer than the simulator assumes (${assumed} s)`,
    }]);
  });

  test('a write refused because another update started first is SKIP, not a failed group (R236)', async () => {
    conformingAccount(SM_CONFIG);
    const statuses = ['InService', 'Updating'];
    sm.on(DescribeEndpointCommand).callsFake(() => ({
      EndpointName: 'llm', EndpointStatus: statuses.shift() ?? 'Updating', ProductionVariants: [{ VariantName: 'pooled', CurrentWeight: 1 }],
    }));
    // Refused on its only attempt (a 400): nothing was written.
    const refused = Object.assign(new Error('Cannot update in-progress endpoint'), { name: 'ValidationException', $metadata: { httpStatusCode: 400, attempts: 1 } });
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).rejects(refused);
    const results = await runVerify('Svc', { ...clients('us-east-1'), sageMaker: new SageMakerClient({ region: 'us-east-1' }) }, { timeWeightUpdate: true });
    expect(results.find((r) => r.id.startsWith('weight-update'))).toMatchObject({
      id: 'weight-update:llm', status: 'skip', detail: expect.stringContaining('another update started first (the endpoint is Updating'),
    });
  });

  /** The endpoint answering `statuses` in turn (the first is the read before the write), then InService; the write takes `writeMs`. */
  function endpoint(statuses: string[], write: { ms: number; error?: Error }) {
    let now = 0;
    const clock = { now: () => now, sleep: async (ms: number) => { now += ms; } };
    sm.on(DescribeEndpointCommand).callsFake(() => ({
      EndpointName: 'llm', EndpointStatus: statuses.shift() ?? 'InService', ProductionVariants: [{ VariantName: 'pooled', CurrentWeight: 1 }],
    }));
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).callsFake(() => {
      now += write.ms;
      if (write.error) throw write.error;
      return {};
    });
    return clock;
  }
  const lost = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
  const assumed = platformModel('sagemaker').endpointUpdate!.weightsSeconds;

  test('the write is sent once, without the SDK\'s retries, and the clock starts before it is sent (R250)', async () => {
    conformingAccount(SM_CONFIG);
    const clock = endpoint(['InService', 'Updating', 'Updating', 'InService'], { ms: 3_000 });
    const saved = process.env.AWS_MAX_ATTEMPTS;
    process.env.AWS_MAX_ATTEMPTS = '5';
    try {
      const c = clients('us-east-1');
      // The client's own maxAttempts wins over AWS_MAX_ATTEMPTS; the reads keep the SDK's retries.
      expect(await c.sageMakerWrite!.config.maxAttempts()).toBe(1);
      expect(await c.sageMaker!.config.maxAttempts()).toBe(5);
      const results = await runVerify('Svc', c, { timeWeightUpdate: true, clock });
      const [write] = sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand);
      expect(write.thisValue).toBe(c.sageMakerWrite);
      expect(sm.commandCalls(DescribeEndpointCommand).every((call) => call.thisValue === c.sageMaker)).toBe(true);
      // Updating from the moment the write was sent: its 3 s in flight count.
      expect(results.find((r) => r.id === 'weight-update:llm')).toMatchObject({ status: 'pass', detail: 'InService again 7 s after the write (read at once, then every 2 s)' });
    } finally {
      if (saved === undefined) delete process.env.AWS_MAX_ATTEMPTS;
      else process.env.AWS_MAX_ATTEMPTS = saved;
    }
  });

  test('a write whose answer was lost and an endpoint that turns Updating: measured as the write\'s own, saying so, not "another update" (R250)', async () => {
    conformingAccount(SM_CONFIG);
    const clock = endpoint(['InService', 'Updating', 'InService'], { ms: 20_000, error: lost() });
    const results = await runVerify('Svc', clients('us-east-1'), { timeWeightUpdate: true, clock });
    expect(results.find((r) => r.id.startsWith('weight-update'))).toEqual({
      id: 'weight-update:llm', status: 'pass',
      settles: `a weights-only update keeps endpoint llm Updating no longer than the simulator assumes (${assumed} s)`,
      detail: 'InService again 22 s after the write (read at once, then every 2 s); the write got no answer (TimeoutError: socket hang up): '
        + 'the update seen is taken as its own',
    });
  });

  test('a write whose answer was lost and an endpoint never seen Updating: SKIP, not a failed group (R250)', async () => {
    conformingAccount(SM_CONFIG);
    const clock = endpoint(['InService'], { ms: 20_000, error: Object.assign(new Error('internal'), { name: 'InternalFailure', $metadata: { httpStatusCode: 500 } }) });
    const results = await runVerify('Svc', clients('us-east-1'), { timeWeightUpdate: true, clock });
    expect(results.find((r) => r.id.startsWith('weight-update'))).toMatchObject({
      id: 'weight-update:llm', status: 'skip',
      detail: 'the write got no answer (InternalFailure: internal) and the endpoint was never seen Updating after it (read at once, then every 2 s): '
        + 'it may not have landed; not measured',
    });
  });

  test('a write refused outright while the endpoint stays InService fails the group with the refusal', async () => {
    conformingAccount(SM_CONFIG);
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400, attempts: 1 } });
    const clock = endpoint(['InService'], { ms: 0, error: denied });
    const results = await runVerify('Svc', clients('us-east-1'), { timeWeightUpdate: true, clock });
    expect(results.find((r) => r.id.startsWith('weight-update'))).toMatchObject({
      id: 'weight-update:error', status: 'fail', detail: 'AccessDeniedException: not authorized',
    });
  });

  // SageMaker answers a throttled call with ThrottlingException (a 400); with one SDK attempt it reached refusedOutright
  // as a refusal and failed the check (review R252). A throttled attempt was not taken: it is sent again.
  const throttle = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400, attempts: 1 } });

  test('a throttled write is sent again with backoff, and the clock starts at the attempt SageMaker took (R252)', async () => {
    conformingAccount(SM_CONFIG);
    const clock = endpoint(['InService', 'Updating', 'InService'], { ms: 1_000 });
    const answers: Array<Error | undefined> = [throttle(), throttle(), undefined];
    const pauses: number[] = [];
    sm.on(UpdateEndpointWeightsAndCapacitiesCommand).callsFake(() => {
      const error = answers.shift();
      if (error) throw error;
      return {};
    });
    const results = await runVerify('Svc', clients('us-east-1'), {
      timeWeightUpdate: true, clock: { now: clock.now, sleep: async (ms: number) => { pauses.push(ms); await clock.sleep(ms); } },
    });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(3);
    // Two backoff pauses (ceilings 1 s and 2 s, jittered to at least half), then the status polls every 2 s.
    const [first, second] = pauses;
    expect([first >= 500 && first <= 1_000, second >= 1_000 && second <= 2_000]).toEqual([true, true]);
    expect(results.find((r) => r.id.startsWith('weight-update'))).toMatchObject({
      id: 'weight-update:llm', status: 'pass', detail: 'InService again 2 s after the write (read at once, then every 2 s)',
    });
  });

  test('a write throttled on every attempt is then taken as refused: the group fails, saying so; a 5xx is still sent once (R252)', async () => {
    conformingAccount(SM_CONFIG);
    let clock = endpoint(['InService'], { ms: 0, error: throttle() });
    const results = await runVerify('Svc', clients('us-east-1'), { timeWeightUpdate: true, clock });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(4);
    expect(results.find((r) => r.id.startsWith('weight-update'))).toMatchObject({
      id: 'weight-update:error', status: 'fail', detail: 'Error: the write was throttled on each of its 4 attempts: ThrottlingException: Rate exceeded',
    });
    sm.reset();
    resetAccount();
    conformingAccount(SM_CONFIG);
    clock = endpoint(['InService'], { ms: 0, error: Object.assign(new Error('internal'), { name: 'InternalFailure', $metadata: { httpStatusCode: 500 } }) });
    await runVerify('Svc', clients('us-east-1'), { timeWeightUpdate: true, clock });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(1);
  });

  test('an endpoint not InService is not written', async () => {
    conformingAccount(SM_CONFIG);
    sm.on(DescribeEndpointCommand).resolves({ EndpointName: 'llm', EndpointStatus: 'Updating' });
    const results = await runVerify('Svc', { ...clients('us-east-1'), sageMaker: new SageMakerClient({ region: 'us-east-1' }) }, { timeWeightUpdate: true });
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
    expect(results.find((r) => r.id === 'weight-update:llm')).toMatchObject({ status: 'skip', detail: 'the endpoint is Updating, not InService: nothing written' });
  });

  test('without the flag nothing is written', async () => {
    conformingAccount(SM_CONFIG);
    await runVerify('Svc', clients('us-east-1'));
    expect(sm.commandCalls(UpdateEndpointWeightsAndCapacitiesCommand)).toHaveLength(0);
  });
});
