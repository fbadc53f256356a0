/**
 * The AWS clients of verify, game-day and sign-model against a server that accepts every connection and never answers (node:http
 * on 127.0.0.1, no network): each call fails with a TimeoutError instead of waiting for ever, and a read the game day
 * makes while it holds a shortage is abandoned as soon as the run is interrupted. Short timeouts stand in for the
 * real 20 s so the file runs in seconds; the assertions are on the errors, not on the clock.
 */
import { EventEmitter, once } from 'node:events';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { DescribeScalableTargetsCommand, DescribeScalingPoliciesCommand } from '@aws-sdk/client-application-auto-scaling';
import { ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { TestMetricFilterCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeAddonCommand } from '@aws-sdk/client-eks';
import { FisClient, GetExperimentCommand } from '@aws-sdk/client-fis';
import { GetRoleCommand } from '@aws-sdk/client-iam';
import { GetFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import { DescribeEndpointCommand, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { cliClientConfig, type HttpTimeouts } from '../../lib/core/sdk-client-profiles';
import { alarmStates, clients as gameDayClients, main as gameDay, type MainDeps, sleep } from '../../bin/game-day';
import { fisInjection } from '../../bin/game-day-fis';
import { main as verify, clients as verifyClients } from '../../bin/verify';
import { SignCommand } from '@aws-sdk/client-kms';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { clients as signModelClients } from '../../bin/sign-model';

type Stalled = { server: Server; url: string; paths: string[] };

/**
 * Answers nothing: the request stays open until the client gives up. `answer` may reply to some requests. `paths`: each
 * request's method and path, so a test sees its calls came here and nowhere else.
 */
async function stalledServer(answer?: (req: IncomingMessage, res: ServerResponse) => void): Promise<Stalled> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    req.resume();
    if (answer) req.on('end', () => answer(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

const SHORT: HttpTimeouts = { connectionTimeoutMs: 500, requestTimeoutMs: 500, socketTimeoutMs: 500 };
/**
 * For the interrupt tests, whose interrupt comes as the server receives the read: a call that then fails with an
 * AbortError was ended by it, one that was not fails later with a TimeoutError. Short enough that client-fis@3.523.0's
 * handler (@smithy/node-http-handler@2.5.0), which leaves a timer of requestTimeout + connectionTimeout armed when a
 * request is rejected (its socket-usage check, dist-cjs/index.js:244-269), does not hold the file open for long.
 */
const LONG: HttpTimeouts = { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, socketTimeoutMs: 2_000 };

let server: Server;
let url: string;
let paths: string[];
const saved = { ...process.env };

beforeAll(async () => {
  ({ server, url, paths } = await stalledServer());
  // Every client of the factories reaches the server (the SDK's AWS_ENDPOINT_URL), signs with these keys (no
  // instance-metadata lookup) and makes one attempt, so a timeout is seen once, not after the SDK's retries.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: url, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_EC2_METADATA_DISABLED: 'true', AWS_MAX_ATTEMPTS: '1',
  });
});

afterAll(async () => {
  process.env = saved;
  await close(server);
});

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

test('sign-model: KMS and S3 fail a call the server never answers with a TimeoutError (they had no timeout)', async () => {
  paths.length = 0;
  // No --region: KMS calls the key's region, S3 the SDK's own (AWS_REGION here).
  process.env.AWS_REGION = 'us-east-1';
  const c = signModelClients('arn:aws:kms:eu-west-1:123456789012:key/k', undefined, SHORT);
  const calls = [
    c.kms.send(new SignCommand({ KeyId: 'k', Message: new Uint8Array(32), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' })),
    c.s3.send(new HeadObjectCommand({ Bucket: 'models', Key: 'm/model.tar' })),
  ];
  for (const result of await Promise.allSettled(calls)) {
    expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
  }
  expect(paths).toHaveLength(calls.length);
  expect(await c.kms.config.region()).toBe('eu-west-1');
  expect(await c.s3.config.region()).toBe('us-east-1');
  delete process.env.AWS_REGION;
  for (const client of Object.values(c)) client.destroy();
}, 60_000);

test('verify: every client fails a call the server never answers with a TimeoutError', async () => {
  paths.length = 0;
  const c = verifyClients('us-east-1', SHORT);
  const calls = [
    c.cloudFormation.send(new ListStackResourcesCommand({ StackName: 'Svc' })),
    c.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: 'fn' })),
    c.cloudWatch.send(new DescribeAlarmsCommand({})),
    c.applicationAutoScaling.send(new DescribeScalingPoliciesCommand({ ServiceNamespace: 'sagemaker' })),
    c.logs.send(new TestMetricFilterCommand({ filterPattern: 'x', logEventMessages: ['x'] })),
    c.eks.send(new DescribeAddonCommand({ clusterName: 'c', addonName: 'a' })),
    c.iam.send(new GetRoleCommand({ RoleName: 'r' })),
  ];
  for (const result of await Promise.allSettled(calls)) {
    expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
  }
  expect(paths).toHaveLength(calls.length);
  for (const client of Object.values(c)) client.destroy();
}, 60_000);

test('verify: --time-weight-update\'s write is sent once on a 5xx, where its reads get the SDK\'s standard retry (R250)', async () => {
  const failing = await stalledServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ __type: 'InternalFailure', message: 'internal' }));
  });
  const env = { ...process.env };
  process.env.AWS_ENDPOINT_URL = failing.url;
  delete process.env.AWS_MAX_ATTEMPTS; // the SDK's default: 3 attempts
  try {
    const c = verifyClients('us-east-1', SHORT);
    const write = new UpdateEndpointWeightsAndCapacitiesCommand({ EndpointName: 'llm', DesiredWeightsAndCapacities: [{ VariantName: 'v', DesiredWeight: 1 }] });
    await expect(c.sageMakerWrite!.send(write)).rejects.toMatchObject({ $metadata: { httpStatusCode: 500, attempts: 1 } });
    expect(failing.paths).toHaveLength(1);
    await expect(c.sageMaker!.send(new DescribeEndpointCommand({ EndpointName: 'llm' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 500, attempts: 3 } });
    expect(failing.paths).toHaveLength(4);
    for (const client of Object.values(c)) client.destroy();
  } finally {
    process.env = env;
    await close(failing.server);
  }
}, 60_000);

test('game-day: every client, AWS FIS\'s included, fails a call the server never answers with a TimeoutError', async () => {
  paths.length = 0;
  const c = gameDayClients('us-east-1', SHORT);
  const calls = [
    c.cloudFormation.send(new ListStackResourcesCommand({ StackName: 'Svc' })),
    c.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: 'fn' })),
    c.cloudWatch.send(new DescribeAlarmsCommand({})),
    c.sageMaker.send(new DescribeEndpointCommand({ EndpointName: 'e' })),
    c.autoScaling.send(new DescribeScalableTargetsCommand({ ServiceNamespace: 'sagemaker' })),
    c.fis.send(new GetExperimentCommand({ id: 'EXP1' })),
  ];
  for (const result of await Promise.allSettled(calls)) {
    expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
  }
  expect(paths).toHaveLength(calls.length);
  expect(paths).toContain('GET /experiments/EXP1');
  for (const client of Object.values(c)) client.destroy();
}, 60_000);

test('game-day: AWS FIS signs with the credentials the other clients resolve (its own 3.523.0 chain is older)', async () => {
  const c = gameDayClients('us-east-1');
  const fromCloudWatch = await c.cloudWatch.config.credentials();
  // The same object: resolved once by the current chain and memoized, not found again by FIS's own.
  expect(await c.fis.config.credentials()).toBe(fromCloudWatch);
  for (const client of Object.values(c)) client.destroy();
});

test('game-day: an interrupt abandons a read of the stop alarms in flight', async () => {
  const controller = new AbortController();
  const cwServer = await stalledServer(() => controller.abort());
  try {
    const cw = new CloudWatchClient({ ...cliClientConfig('us-east-1', LONG), endpoint: cwServer.url, credentials, maxAttempts: 1 });
    await expect(alarmStates(cw, ['slo-p95'], controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(cwServer.paths).toEqual(['POST /']);
    cw.destroy();
  } finally {
    await close(cwServer.server);
  }
}, 60_000);

test('game-day, AWS FIS: an interrupt abandons the wait for the experiment to run (its GetExperiment in flight)', async () => {
  // FIS answers the template and the start; GetExperiment (GET /experiments/EXP1) never comes back: the interrupt
  // comes as it arrives.
  const controller = new AbortController();
  const fisServer = await stalledServer((req, res) => {
    if (req.method === 'GET') {
      controller.abort();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/experimentTemplates' ? { experimentTemplate: { id: 'EXT1' } } : { experiment: { id: 'EXP1' } }));
  });
  try {
    const fis = new FisClient({ ...cliClientConfig('us-east-1', LONG), endpoint: fisServer.url, credentials, maxAttempts: 1 });
    const injection = fisInjection(fis, {
      karpenterRoleArn: 'arn:aws:iam::123456789012:role/k', experimentRoleArn: 'arn:aws:iam::123456789012:role/fis', zones: ['use1-az1'],
      durationSeconds: 600, stopAlarmArns: ['arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95'], stack: 'Svc', clientToken: 't',
    });
    const injected = injection.inject(undefined, controller.signal);
    await expect(injected).rejects.toMatchObject({ name: 'AbortError' });
    // What it made is known, so the restore can stop and delete it.
    expect(injection.manualRestore).toBe('aws fis stop-experiment --id EXP1; aws fis delete-experiment-template --id EXT1');
    expect(fisServer.paths).toEqual(['POST /experimentTemplates', 'POST /experiments', 'GET /experiments/EXP1']);
    fis.destroy();
  } finally {
    await close(fisServer.server);
  }
}, 60_000);

describe('without a region (none given, no AWS_REGION, no profile)', () => {
  const HINT = 'no AWS region (Region is missing): pass --region <region>, or set AWS_REGION or a region in your AWS profile';
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    env = { ...process.env };
    delete process.env.AWS_REGION;
    delete process.env.AWS_PROFILE;
    process.env.AWS_CONFIG_FILE = join(process.env.TMPDIR!, 'no-such-config');
  });
  afterEach(() => {
    process.env = env;
  });

  test('verify says how to give one, and calls nothing', async () => {
    paths.length = 0;
    const err: string[] = [];
    expect(await verify(['--stack', 'Svc'], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
    expect(err).toEqual([HINT]);
    expect(paths).toEqual([]);
  });

  test('game-day says how to give one, and calls nothing', async () => {
    paths.length = 0;
    const deps: MainDeps = {
      clients: gameDayClients, kubectl: () => async () => '', signals: new EventEmitter() as unknown as MainDeps['signals'], now: () => Date.now(), sleep,
    };
    const argv = ['--stack', 'Svc', '--stop-alarm', 'slo', '--max-duration', '10m', '--hold', '5m', '--audit', join(process.env.TMPDIR!, 'a.jsonl')];
    await expect(gameDay(argv, { out: () => undefined, err: () => undefined }, deps)).rejects.toThrow(HINT);
    expect(paths).toEqual([]);
  });
});
