/**
 * The FIS scenario of the game day: AWS FIS aws:ec2:api-insufficient-instance-capacity-error on the Karpenter
 * controller role in chosen zones, started and stopped by the command (FIS, CloudFormation, Lambda and CloudWatch
 * mocked with aws-sdk-client-mock): the template FIS gets, a hold that completes, an interrupt
 * mid-experiment, a stop condition firing (FIS stops the experiment itself; the command does not stop it twice) and an
 * error after the template was made: each way out stops what runs and deletes the template.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import {
  CreateExperimentTemplateCommand, type CreateExperimentTemplateRequest, type CreateExperimentTemplateResponse, DeleteExperimentTemplateCommand,
  type DeleteExperimentTemplateResponse, type ExperimentActionStatus, type ExperimentStatus, FisClient, GetExperimentCommand,
  type GetExperimentResponse, ListExperimentsCommand, type ListExperimentsRequest, type ListExperimentsResponse, StartExperimentCommand,
  type StartExperimentResponse, StopExperimentCommand, type StopExperimentResponse,
} from '@aws-sdk/client-fis';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { clients, main, type MainDeps, parseArgs, sleep, UsageError } from '../../bin/game-day';
import {
  FIS_ACTION_NAME, FIS_ICE_ACTION, fisInjection, fisTemplate, isoMinutes, shortageNotInForce, START_POLL_MS, START_TIMEOUT_MS,
} from '../../bin/game-day-fis';
import { refusedOutright } from '../../lib/core/game-day/injection';
import { fisZoneRefusal, type NodePoolZones, type ZoneRequirement } from '../../lib/core/game-day/fis-zones';
import { RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';
import { EKS_CONFIG } from '../verify/account';
import { reconcilerFunction } from '../verify/deployed-template';
import { serveWindow, shortageWorld } from './window';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const cw = mockClient(CloudWatchClient);
/**
 * @aws-sdk/client-fis@3.523.0 (the newest the registry has) is typed against @smithy/types 2.x, aws-sdk-client-mock
 * and the other clients against 4.x, so the class does not type-check as mockClient's argument
 * (m-radzikowski/aws-sdk-client-mock#197: two @smithy/types versions installed). At run time it is the same
 * Client.send that mockClient stubs; the casts here (and in `answer`) are the only concession.
 */
const fis = mockClient(FisClient as unknown as Parameters<typeof mockClient>[0]);

/** fis.on(command).callsFake(reply), with the reply typed by the command's response (see above why not by fis.on). */
function answer<I, O>(command: new (input: I) => unknown, reply: (input: I) => O): void {
  fis.on(command as never).callsFake(reply as never);
}

const KARPENTER_ROLE = 'arn:aws:iam::123456789012:role/SdService-KarpenterControllerRole-4H2J';

beforeEach(() => {
  for (const m of [cfn, lambda, cw]) m.reset();
  fis.reset();
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [
      { LogicalResourceId: 'Fn', PhysicalResourceId: 'sd-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      { LogicalResourceId: 'KarpenterRole', PhysicalResourceId: 'SdService-KarpenterControllerRole-4H2J', ResourceType: 'AWS::IAM::Role', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
    ],
  });
  cfn.on(GetTemplateCommand).resolves({
    TemplateBody: JSON.stringify({
      Resources: { Fn: reconcilerFunction(), Assoc: { Type: 'AWS::EKS::PodIdentityAssociation', Properties: { ServiceAccount: 'karpenter', RoleArn: { 'Fn::GetAtt': ['KarpenterRole', 'Arn'] } } } },
    }),
  });
  serveWindow(cw, EKS_CONFIG, shortageWorld);
  lambda.on(GetFunctionConfigurationCommand).resolves({ Role: 'arn:aws:iam::123456789012:role/r', Environment: { Variables: { [RECONCILER_CONFIG_ENV]: JSON.stringify(EKS_CONFIG) } } });
});

/** An experiment as GetExperiment answers: its state and its one action's. */
function experiment(id: string | undefined, status: ExperimentStatus, action: ExperimentActionStatus, reason?: string): GetExperimentResponse {
  const actions = { [FIS_ACTION_NAME]: { actionId: FIS_ICE_ACTION, state: { status: action } } };
  return { experiment: { id, state: { status, ...(reason ? { reason } : {}) }, actions } };
}

/**
 * FIS as the command sees it: the template is EXT1, the experiment EXP1; it and its action run until StopExperiment,
 * or until `stoppedBy` gives the reason FIS stopped it itself (a stop condition).
 */
function serveFis(stoppedBy?: () => string | undefined) {
  let status: ExperimentStatus = 'running';
  answer(CreateExperimentTemplateCommand, (): CreateExperimentTemplateResponse => ({ experimentTemplate: { id: 'EXT1' } }));
  answer(StartExperimentCommand, (): StartExperimentResponse => ({ experiment: { id: 'EXP1', experimentTemplateId: 'EXT1', state: { status: 'initiating' } } }));
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => {
    const reason = stoppedBy?.();
    return reason ? experiment(id, 'stopped', 'stopped', reason) : experiment(id, status, status === 'running' ? 'running' : 'stopping');
  });
  answer(StopExperimentCommand, ({ id }): StopExperimentResponse => {
    status = 'stopping';
    return { experiment: { id, state: { status } } };
  });
  answer(DeleteExperimentTemplateCommand, ({ id }): DeleteExperimentTemplateResponse => ({ experimentTemplate: { id } }));
  answer(ListExperimentsCommand, (): ListExperimentsResponse => ({ experiments: [] }));
}

/** The FIS commands sent, by name, in order. */
const fisCalls = () => fis.calls().map((c) => (c.args[0] as { constructor: { name: string } }).constructor.name);

/** The input of the first command of that kind that was sent. */
function fisInput<I extends object>(command: new (input: I) => unknown): I {
  const call = fis.commandCalls(command as never)[0];
  return call.args[0].input as I;
}

function alarm(state: () => string) {
  cw.on(DescribeAlarmsCommand).callsFake(() => ({ MetricAlarms: [{ AlarmName: 'slo-p95', AlarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95', StateValue: state() }] }));
}

/** The class's NodePool (EKS_CONFIG's inf2 pool) with these requirements besides its instance types. */
const pool = (...zones: ZoneRequirement[]): NodePoolZones => ({
  metadata: { name: 'sd21-inf2' },
  spec: { template: { spec: { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['inf2.xlarge'] }, ...zones] } } },
});
/** Held to use1-az1, one of BASE's zones: the FIS scenario can reach its launches. */
const HELD = pool({ key: 'topology.k8s.aws/zone-id', operator: 'In', values: ['use1-az1'] });

let n = 0;
/**
 * `replicas`: what kubectl answers for the class's Deployment (EKS_CONFIG's maximum is 4); `nodePool`: for the class's
 * NodePool (the preflight's two reads).
 */
function run(argv: string[], replicas = 2, nodePool: NodePoolZones = HELD) {
  const audit = join(process.env.TMPDIR!, `fis-audit-${++n}.jsonl`);
  const report = join(process.env.TMPDIR!, `fis-report-${n}`);
  const out: string[] = [];
  const signals = new EventEmitter();
  const kubectlCalls: string[][] = [];
  const deps: MainDeps = {
    clients, kubectl: () => async (args) => {
      kubectlCalls.push([...args]);
      if (args[0] === 'get' && args[1] === 'deployment') return String(replicas);
      if (args.join(' ') === 'get nodepool sd21-inf2 -o json') return JSON.stringify(nodePool);
      throw new Error('the FIS scenario does not change the NodePool');
    }, signals: signals as unknown as MainDeps['signals'], now: () => Date.now(), sleep,
  };
  const done = main([...argv, '--audit', audit, '--report', report], { out: (l) => out.push(l), err: (l) => out.push(l) }, deps);
  return {
    done, out, signals, kubectlCalls, report: () => readFileSync(join(report, 'report.md'), 'utf8'),
    events: () => readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; change?: unknown; detail?: string }),
  };
}

const BASE = ['--stack', 'Svc', '--region', 'us-east-1', '--stop-alarm', 'slo-p95', '--max-duration', '60', '--poll', '0.05', '--watch-return', '0',
  '--fis-zones', 'use1-az1, use1-az2', '--fis-role', 'arn:aws:iam::123456789012:role/fis-experiment'];

test('the experiment template: the action on the Karpenter role by ARN, the zones, the duration, the stop alarms', () => {
  const t: CreateExperimentTemplateRequest = fisTemplate({
    karpenterRoleArn: KARPENTER_ROLE, experimentRoleArn: 'arn:fis-role', zones: ['use1-az1', 'us-east-1b'], durationSeconds: 2700,
    stopAlarmArns: ['arn:alarm:a', 'arn:alarm:b'], stack: 'Svc', clientToken: 'tok',
  });
  expect(t).toMatchObject({
    roleArn: 'arn:fis-role', clientToken: 'tok',
    stopConditions: [{ source: 'aws:cloudwatch:alarm', value: 'arn:alarm:a' }, { source: 'aws:cloudwatch:alarm', value: 'arn:alarm:b' }],
    targets: { KarpenterController: { resourceType: 'aws:iam:role', resourceArns: [KARPENTER_ROLE], selectionMode: 'ALL' } },
    actions: { ZonalCapacityShortage: {
      actionId: 'aws:ec2:api-insufficient-instance-capacity-error',
      parameters: { duration: 'PT45M', availabilityZoneIdentifiers: 'use1-az1,us-east-1b', percentage: '100' }, targets: { Roles: 'KarpenterController' },
    } },
  });
  expect(FIS_ICE_ACTION).toBe('aws:ec2:api-insufficient-instance-capacity-error');
  expect([isoMinutes(1), isoMinutes(60), isoMinutes(61)]).toEqual(['PT1M', 'PT1M', 'PT2M']);
});

test('--fis-zones and --fis-role go together', () => {
  expect(() => parseArgs(['--stack', 'S', '--stop-alarm', 'a', '--max-duration', '5m', '--hold', '1m', '--fis-zones', 'use1-az1'])).toThrow(UsageError);
  expect(parseArgs([...BASE, '--hold', '1m']).fisZones).toEqual(['use1-az1', 'use1-az2']);
});

test('hold complete: the experiment is started on the Karpenter role found in the stack, then stopped and its template deleted', async () => {
  alarm(() => 'OK');
  serveFis();
  const r = run([...BASE, '--hold', '0.2']);
  expect(await r.done).toBe(0);
  // The experiment is read once it is started (it and its action running: the injection is on), at every poll of the
  // hold and at its end (still in force), and again at the restore.
  const calls = fisCalls();
  expect(calls.slice(0, 3)).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand', 'GetExperimentCommand']);
  expect(calls.slice(-3)).toEqual(['GetExperimentCommand', 'StopExperimentCommand', 'DeleteExperimentTemplateCommand']);
  expect(calls.slice(3, -3).length).toBeGreaterThanOrEqual(2);
  expect(new Set(calls.slice(3, -3))).toEqual(new Set(['GetExperimentCommand']));
  const template = fisInput(CreateExperimentTemplateCommand);
  expect(template.targets!.KarpenterController.resourceArns).toEqual([KARPENTER_ROLE]);
  expect(template.stopConditions).toEqual([{ source: 'aws:cloudwatch:alarm', value: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95' }]);
  expect(fisInput(StartExperimentCommand)).toEqual({ experimentTemplateId: 'EXT1', clientToken: `${template.clientToken}-start` });
  expect(fisInput(GetExperimentCommand)).toEqual({ id: 'EXP1' });
  expect(fisInput(StopExperimentCommand)).toEqual({ id: 'EXP1' });
  expect(fisInput(DeleteExperimentTemplateCommand)).toEqual({ id: 'EXT1' });
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'inject', 'hold-complete', 'restore', 'end']);
  expect(events[3].change).toMatchObject({ after: { experiment: 'running, stopped by the game day', template: 'deleted' } });
  expect(r.out.join('\n')).toContain('a zonal shortage of the classes held to those zones: a different scenario from the NodePool-limit cap');
  expect(r.out.join('\n')).toContain('prediction: not predicted: the FIS scenario is a zonal shortage of the classes held to those zones');
});

test('an interrupt mid-experiment stops the experiment', async () => {
  alarm(() => 'OK');
  serveFis();
  const r = run([...BASE, '--hold', '30']);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const held = fisCalls();
  expect(held.slice(0, 2)).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand']);
  expect(new Set(held.slice(2))).toEqual(new Set(['GetExperimentCommand']));
  r.signals.emit('SIGINT');
  expect(await r.done).toBe(0);
  expect(fisCalls().slice(-3)).toEqual(['GetExperimentCommand', 'StopExperimentCommand', 'DeleteExperimentTemplateCommand']);
  expect(fisInput(StopExperimentCommand)).toEqual({ id: 'EXP1' });
  expect(r.events().map((e) => e.event)).toEqual(['start', 'inject', 'interrupt', 'restore', 'end']);
});

test('a stop condition firing: FIS has stopped the experiment itself, the command only deletes the template', async () => {
  let reads = 0;
  let firing = false;
  alarm(() => {
    firing = ++reads >= 4;
    return firing ? 'ALARM' : 'OK';
  });
  serveFis(() => (firing ? 'Experiment stopped by stop condition' : undefined));
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(0);
  expect(fisCalls().filter((c) => c !== 'GetExperimentCommand')).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand', 'DeleteExperimentTemplateCommand']);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'inject', 'stop-condition', 'restore', 'end']);
  expect(events[3].change).toMatchObject({ after: { experiment: 'stopped (Experiment stopped by stop condition)', template: 'deleted' } });
});

test('an error after the template was made: StartExperiment refused (a 4xx), the template is still deleted, nothing listed (R246)', async () => {
  alarm(() => 'OK');
  serveFis();
  const refused = Object.assign(new Error('too many experiments'), { name: 'ServiceQuotaExceededException', $metadata: { httpStatusCode: 402 } });
  fis.on(StartExperimentCommand as never).rejects(refused);
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1); // restored, but the game day did not run
  // Refused outright: nothing started, so no ListExperiments (nor fis:ListExperiments) is needed; the template is deleted.
  expect(fisCalls()).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand', 'DeleteExperimentTemplateCommand']);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'error', 'restore', 'end']);
  expect(events[2].change).toMatchObject({ after: { experiment: 'not started', template: 'deleted' } });
});

// An experiment that settles before the command sees it running: an error (exit 1), the template deleted. failed and
// stopped may follow a short running phase between two polls (a failing action; a stop condition already in ALARM), so
// only cancelled is reported as never run.
test.each([
  ['failed', 'The experiment role is not authorized to perform ec2:InjectApiError', 'the shortage is not in force'],
  ['stopped', 'Experiment stopped by stop condition', 'the shortage is not in force'],
  ['cancelled', undefined, 'nothing was injected'],
])('an experiment %s before the game day saw it running is an error (exit 1), the template deleted', async (status, reason, says) => {
  alarm(() => 'OK');
  serveFis();
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => ({ experiment: { id, state: { status: status as ExperimentStatus, reason } } }));
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1);
  expect(fisCalls()).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand', 'GetExperimentCommand', 'GetExperimentCommand', 'DeleteExperimentTemplateCommand']);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'error', 'restore', 'end']);
  expect(events[1].detail).toContain(`experiment EXP1 is ${status}${reason ? ` (${reason})` : ''} before the game day saw it running: ${says}`);
});

// StartExperiment started EXP1 but every attempt lost its answer (a timeout): no experiment id is known. The restore
// pages through ListExperiments and stops every experiment of the template that FIS does not report settled.
test('an experiment started without an answer is found by its template and stopped: every page of ListExperiments read', async () => {
  alarm(() => 'OK');
  serveFis();
  fis.on(StartExperimentCommand as never).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
  const pages: Record<string, ListExperimentsResponse> = {
    first: {
      experiments: [
        { id: 'OTHER', experimentTemplateId: 'EXT9', state: { status: 'running' } }, // another template's: left alone
        { id: 'OLD', experimentTemplateId: 'EXT1', state: { status: 'completed' } }, // settled: not stopped again
      ],
      nextToken: 'page2',
    },
    page2: { experiments: [{ id: 'EXP1', experimentTemplateId: 'EXT1', state: { status: 'running' } }] },
  };
  answer(ListExperimentsCommand, ({ nextToken }: ListExperimentsRequest): ListExperimentsResponse => pages[nextToken ?? 'first']);
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1);
  expect(fisCalls()).toEqual([
    'CreateExperimentTemplateCommand', 'StartExperimentCommand', 'ListExperimentsCommand', 'ListExperimentsCommand', 'StopExperimentCommand',
    'DeleteExperimentTemplateCommand',
  ]);
  expect(fis.commandCalls(ListExperimentsCommand as never).map((c) => c.args[0].input)).toEqual([{ maxResults: 100 }, { maxResults: 100, nextToken: 'page2' }]);
  expect(fisInput(StopExperimentCommand)).toEqual({ id: 'EXP1' });
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'error', 'restore', 'end']);
  expect(events[2].change).toMatchObject({
    after: { experiment: 'started without an answer: EXP1 (running) stopped by the game day', stopped: ['EXP1'], template: 'deleted' },
  });
});

test('which StartExperiment errors leave its outcome unknown: no answer, a throttle, a timeout or a 5xx (R246)', () => {
  const withStatus = (httpStatusCode?: number) => Object.assign(new Error('x'), { $metadata: { httpStatusCode } });
  expect([400, 402, 403, 404, 409].map((s) => refusedOutright(withStatus(s)))).toEqual([true, true, true, true, true]);
  expect([408, 429, 500, 503].map((s) => refusedOutright(withStatus(s)))).toEqual([false, false, false, false]);
  expect(refusedOutright(withStatus(undefined))).toBe(false);
  expect(refusedOutright(new Error('socket hang up'))).toBe(false);
  // A 4xx after the SDK retried: an earlier attempt may have started one (R247).
  expect(refusedOutright(Object.assign(new Error('x'), { $metadata: { httpStatusCode: 409, attempts: 2 } }))).toBe(false);
  expect(refusedOutright(Object.assign(new Error('x'), { $metadata: { httpStatusCode: 409, attempts: 1 } }))).toBe(true);
});

/** The injection of one zone for 60 s on the mocked client, its pauses recorded instead of slept. */
function pausedInjection() {
  const pauses: number[] = [];
  const injection = fisInjection(fis as unknown as FisClient, {
    karpenterRoleArn: KARPENTER_ROLE, experimentRoleArn: 'arn:fis-role', zones: ['use1-az1'], durationSeconds: 60, stopAlarmArns: [], stack: 'Svc', clientToken: 't',
  }, async (ms) => {
    pauses.push(ms);
  });
  return { injection, pauses };
}

/** GetExperiment answers these (experiment, action) states in turn, then `after` for good. */
function experimentStates(states: Array<[ExperimentStatus, ExperimentActionStatus]>, after: [ExperimentStatus, ExperimentActionStatus]) {
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => experiment(id, ...(states.shift() ?? after)));
}

test('the command waits while the experiment is initiating, and a cancelled one is not stopped again', async () => {
  alarm(() => 'OK');
  serveFis();
  // Running, but its action still pending: the injection has not begun yet. Then cancelled: the API reference's state,
  // not yet in @aws-sdk/client-fis@3.523.0's ExperimentStatus.
  experimentStates([['initiating', 'pending'], ['running', 'pending'], ['running', 'running']], ['cancelled' as ExperimentStatus, 'cancelled']);
  const { injection, pauses } = pausedInjection();
  await injection.inject();
  expect(pauses).toEqual([START_POLL_MS, START_POLL_MS]);
  const restored = await injection.restore();
  expect(restored.after).toEqual({ experiment: 'cancelled', template: 'deleted' });
  expect(fisCalls().filter((c) => c === 'StopExperimentCommand')).toEqual([]);
});

// CreateExperimentTemplate made the template but every attempt lost its answer: no id is known, so the restore cannot
// delete it; the error and the last audit line say how to find it by its tags, not "(nothing was changed)".
test('a template created without an answer: the failure says it may exist and how to find and delete it by its tags (R250)', async () => {
  alarm(() => 'OK');
  serveFis();
  fis.on(CreateExperimentTemplateCommand as never).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1);
  expect(fisCalls()).toEqual(['CreateExperimentTemplateCommand']);
  const find = 'aws fis list-experiment-templates --query "experimentTemplates[?tags.\\"created-by\\"==\'cdk-capacity-game-day\' && tags.stack==\'Svc\']'
    + '.[id,creationTime]" --output text, then aws fis delete-experiment-template --id <id> for the one created at this run\'s start';
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'error', 'restore', 'end']);
  expect(events[1].detail).toBe('CreateExperimentTemplate got no answer (TimeoutError: socket hang up): AWS FIS may have created the experiment '
    + `template all the same, tagged created-by=cdk-capacity-game-day and stack=Svc; nothing was started from it. Find and delete it: ${find}`);
  expect(events[3].detail).toBe('ended by error; restored what can be; an AWS FIS experiment template may exist though CreateExperimentTemplate '
    + `gave no answer (nothing was started from it): ${find}`);
  // The tags it names are the ones the template carries.
  expect(fisInput<CreateExperimentTemplateRequest>(CreateExperimentTemplateCommand).tags).toEqual({ 'created-by': 'cdk-capacity-game-day', stack: 'Svc' });
});

test('a template refused outright (a 4xx on its only attempt): nothing was created, nothing to find', async () => {
  serveFis();
  const refused = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403, attempts: 1 } });
  fis.on(CreateExperimentTemplateCommand as never).rejects(refused);
  const { injection } = pausedInjection();
  await expect(injection.inject()).rejects.toBe(refused);
  expect(injection.manualRestore).toBe('(nothing was changed)');
  expect(injection.notRestorable).toBeUndefined();
});

test('the command that restores by hand, when StartExperiment gave no answer, lists the template\'s experiments to stop them', async () => {
  serveFis();
  fis.on(StartExperimentCommand as never).rejects(new Error('TimeoutError'));
  const { injection } = pausedInjection();
  await expect(injection.inject()).rejects.toThrow('TimeoutError');
  expect(injection.manualRestore).toBe('aws fis list-experiments --query "experiments[?experimentTemplateId==\'EXT1\'].[id,state.status]" --output text, '
    + 'then aws fis stop-experiment --id <id> for each one listed that is not completed, stopping, stopped, failed or cancelled; '
    + 'aws fis delete-experiment-template --id EXT1');
});

test('--dry-run prints the experiment template it would create and changes nothing', async () => {
  alarm(() => 'OK');
  serveFis();
  const r = run([...BASE, '--hold', '1', '--dry-run']);
  expect(await r.done).toBe(0);
  expect(fis.calls()).toEqual([]);
  const would = r.out.at(-2)!;
  expect(would).toMatch(/^would create the AWS FIS experiment template \{.*\}, start it, and on the way out stop the experiment and delete the/);
  const json = would.slice('would create the AWS FIS experiment template '.length, would.lastIndexOf('}') + 1);
  const template = JSON.parse(json) as CreateExperimentTemplateRequest;
  expect(template.targets!.KarpenterController.resourceArns).toEqual([KARPENTER_ROLE]);
  expect(template.actions!.ZonalCapacityShortage.parameters).toEqual({ duration: 'PT1M', availabilityZoneIdentifiers: 'use1-az1,use1-az2', percentage: '100' });
  expect(r.out.at(-1)).toBe('dry run: nothing changed');
});

test('an experiment that never runs: after START_TIMEOUT_MS of waiting the injection is an error (the runner restores)', async () => {
  serveFis();
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => experiment(id, 'initiating', 'pending'));
  const { injection, pauses } = pausedInjection();
  await expect(injection.inject()).rejects.toThrow(`AWS FIS experiment EXP1 is still initiating (its action ${FIS_ACTION_NAME} pending) after 180 s`);
  expect(pauses.reduce((a, b) => a + b, 0)).toBe(START_TIMEOUT_MS);
});

test('an interrupt while the experiment is still initiating ends the wait: the experiment is stopped, the template deleted', async () => {
  alarm(() => 'OK');
  serveFis();
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => ({ experiment: { id, state: { status: 'initiating' } } }));
  const r = run([...BASE, '--hold', '30']);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(fisCalls()).toEqual(['CreateExperimentTemplateCommand', 'StartExperimentCommand', 'GetExperimentCommand']);
  r.signals.emit('SIGINT');
  expect(await r.done).toBe(0);
  expect(fisCalls().slice(3)).toEqual(['GetExperimentCommand', 'StopExperimentCommand', 'DeleteExperimentTemplateCommand']);
  expect(r.events().map((e) => e.event)).toEqual(['start', 'inject', 'interrupt', 'restore', 'end']);
});

test('an experiment whose state FIS does not say is not in force, and is stopped (fail safe towards ending the injection)', async () => {
  alarm(() => 'OK');
  serveFis();
  let reads = 0;
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => (++reads === 1 ? experiment(id, 'running', 'running') : { experiment: { id } }));
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1);
  expect(fisCalls().slice(3)).toEqual(['GetExperimentCommand', 'GetExperimentCommand', 'StopExperimentCommand', 'DeleteExperimentTemplateCommand']);
  const events = r.events();
  expect(events[2]).toMatchObject({
    event: 'error', detail: expect.stringContaining(`no longer in force: AWS FIS experiment EXP1 is in no state, its action ${FIS_ACTION_NAME} in no state`),
  });
  expect(events[3].change).toMatchObject({ after: { experiment: 'unknown, stopped by the game day' } });
});

test('in force only while the experiment and its action both run', () => {
  const said = (status: ExperimentStatus, action: ExperimentActionStatus, reason?: string) => shortageNotInForce(experiment('EXP1', status, action, reason).experiment, 'EXP1');
  expect(said('running', 'running')).toBeUndefined();
  expect(said('running', 'pending')).toBe(`AWS FIS experiment EXP1 is running, its action ${FIS_ACTION_NAME} pending`);
  expect(said('running', 'failed')).toBe(`AWS FIS experiment EXP1 is running, its action ${FIS_ACTION_NAME} failed`);
  expect(said('stopped', 'stopped', 'Experiment stopped by stop condition'))
    .toBe(`AWS FIS experiment EXP1 is stopped (Experiment stopped by stop condition), its action ${FIS_ACTION_NAME} stopped`);
  expect(said('completed', 'completed')).toBe(`AWS FIS experiment EXP1 is completed, its action ${FIS_ACTION_NAME} completed`);
  expect(shortageNotInForce({ id: 'EXP1', state: { status: 'running' } }, 'EXP1')).toBe(`AWS FIS experiment EXP1 is running, its action ${FIS_ACTION_NAME} in no state`);
});

test('the start waits for the action, not only the experiment: an action that fails while the experiment runs is an error (exit 1)', async () => {
  alarm(() => 'OK');
  serveFis();
  experimentStates([['running', 'initiating'], ['running', 'failed']], ['failed', 'failed']);
  const { injection, pauses } = pausedInjection();
  await expect(injection.inject()).rejects.toThrow(
    `AWS FIS experiment EXP1 is running but its action ${FIS_ACTION_NAME} is failed before the game day saw it running: the shortage is not in force`);
  expect(pauses).toEqual([START_POLL_MS]);
});

// FIS ends the injection on its own while every stop alarm the command polls reads OK: the action fails after the
// start, or FIS stops the experiment on an alarm that clears before the command's next poll. Not a hold: exit 1.
test.each([
  ['its action fails after the start', (id?: string) => experiment(id, 'running', 'failed')],
  ['FIS stops it on a stop alarm that clears before the next poll', (id?: string) => experiment(id, 'stopped', 'stopped', 'Experiment stopped by stop condition')],
  ['it fails', (id?: string) => experiment(id, 'failed', 'failed', 'Action ZonalCapacityShortage failed')],
])('a shortage that ends during the hold (%s) ends the game day as an error, exit 1, saying why', async (_, ended) => {
  alarm(() => 'OK');
  serveFis();
  let reads = 0;
  answer(GetExperimentCommand, ({ id }): GetExperimentResponse => (++reads <= 3 ? experiment(id, 'running', 'running') : ended(id)));
  const r = run([...BASE, '--hold', '30']);
  expect(await r.done).toBe(1);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'inject', 'error', 'restore', 'end']);
  const { experiment: e } = ended('EXP1');
  expect(events[2].detail).toMatch(/^\d+ s into the hold the shortage is no longer in force: /);
  expect(events[2].detail).toContain(shortageNotInForce(e, 'EXP1'));
  expect(events.at(-1)?.detail).toBe('ended by error; everything restored');
  expect(fisCalls().at(-1)).toBe('DeleteExperimentTemplateCommand');
});

test('a stop alarm given twice is one stop condition, not "an alarm without an ARN"', async () => {
  alarm(() => 'OK');
  serveFis();
  const r = run([...BASE, '--stop-alarm', 'slo-p95', '--hold', '0.1']);
  expect(await r.done).toBe(0);
  expect(cw.commandCalls(DescribeAlarmsCommand)[0].args[0].input.AlarmNames).toEqual(['slo-p95']);
  expect(fisInput(CreateExperimentTemplateCommand).stopConditions).toEqual([{ source: 'aws:cloudwatch:alarm', value: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95' }]);
});

describe('the class\'s NodePool must be held to one of the zones: FIS does not support a request that asks in several, and Karpenter asks '
  + 'in every zone its pool allows', () => {
  const zone = (...values: string[]): ZoneRequirement => ({ key: 'topology.kubernetes.io/zone', operator: 'In', values });
  test.each([
    ['held to one zone named, by name', pool(zone('us-east-1a')), ['us-east-1a', 'us-east-1b'], undefined],
    ['held to one zone named, by ID', HELD, ['use1-az1'], undefined],
    ['held by name and by ID (requirements are ANDed: one is enough)', pool(zone('us-east-1a', 'us-east-1b'), HELD.spec.template!.spec!.requirements![1]),
      ['use1-az1'], undefined],
    ['without a zone requirement (the library\'s default)', pool(), ['use1-az1'],
      'NodePool sd21-inf2 has no topology.kubernetes.io/zone or topology.k8s.aws/zone-id requirement: Karpenter may launch its nodes in every zone of its subnets. '],
    ['held to exactly the zones given, two of them: still a request in two zones', pool(zone('us-east-1a', 'us-east-1b')), ['us-east-1a', 'us-east-1b'],
      'NodePool sd21-inf2 is not held to one zone (topology.kubernetes.io/zone In [us-east-1a, us-east-1b]). '],
    ['held to a zone not named (a name where IDs were given)', pool(zone('us-east-1a')), ['use1-az1'],
      'NodePool sd21-inf2 is held to us-east-1a (topology.kubernetes.io/zone In [us-east-1a]), which --fis-zones (use1-az1) does not name '],
    ['kept out of zones only', pool({ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['us-east-1c'] }), ['us-east-1a'],
      'NodePool sd21-inf2 is not held to one zone (topology.kubernetes.io/zone NotIn [us-east-1c]). '],
  ])('%s', (_, p, zones, refusal) => {
    const said = fisZoneRefusal(p, zones);
    if (refusal === undefined) expect(said).toBeUndefined();
    else {
      expect(said?.startsWith(refusal)).toBe(true);
      expect(said).toContain('does not support "requests that include capacity asks in multiple Availability Zones"');
      expect(said).toContain('--fis-zones-confirmed');
    }
  });

  test('the patch it suggests holds the pool to the first zone given, by the label that names it', () => {
    expect(fisZoneRefusal(pool(), ['use1-az2', 'use1-az1'])).toContain(
      'kubectl patch nodepool sd21-inf2 --type json -p \'[{"op":"add","path":"/spec/template/spec/requirements/-","value":{"key":"topology.k8s.aws/zone-id",'
      + '"operator":"In","values":["use1-az2"]}}]\'');
    expect(fisZoneRefusal(pool(), ['us-east-1b'])).toContain('"key":"topology.kubernetes.io/zone","operator":"In","values":["us-east-1b"]');
  });

  test('a pool in every zone is refused before anything changes: exit 2, the NodePool read, no FIS call', async () => {
    alarm(() => 'OK');
    serveFis();
    const r = run([...BASE, '--hold', '1'], 2, pool());
    expect(await r.done).toBe(2);
    expect(r.out.join('\n')).toContain('NodePool sd21-inf2 has no topology.kubernetes.io/zone or topology.k8s.aws/zone-id requirement');
    expect(r.out.join('\n')).toContain('Nothing was changed.');
    expect(r.kubectlCalls).toEqual([['get', 'deployment', 'sd21-inf2', '-n', 'serving', '-o', 'jsonpath={.spec.replicas}'], ['get', 'nodepool', 'sd21-inf2', '-o', 'json']]);
    expect(fis.calls()).toEqual([]);
  });

  test('--fis-zones-confirmed skips the read, says so, and runs', async () => {
    alarm(() => 'OK');
    serveFis();
    const r = run([...BASE, '--fis-zones-confirmed', '--hold', '0.1'], 2, pool());
    expect(await r.done).toBe(0);
    expect(r.out).toContain('note: --fis-zones-confirmed: NodePool sd21-inf2 is not checked for being held to one of use1-az1, use1-az2');
    expect(r.kubectlCalls.some((a) => a[1] === 'nodepool')).toBe(false);
    expect(fisCalls()[0]).toBe('CreateExperimentTemplateCommand');
  });

  test('--fis-zones-confirmed without --fis-zones is a usage error', () => {
    expect(() => parseArgs(['--stack', 'S', '--stop-alarm', 'a', '--max-duration', '5m', '--hold', '1m', '--fis-zones-confirmed']))
      .toThrow(new UsageError('--fis-zones-confirmed confirms the zones of --fis-zones: give both or neither'));
  });
});

test('a stack without a Karpenter role of its own needs --karpenter-role', async () => {
  alarm(() => 'OK');
  cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify({ Resources: { Fn: reconcilerFunction() } }) });
  serveFis();
  const r = run([...BASE, '--hold', '1']);
  await expect(r.done).rejects.toThrow(/binds no role to the karpenter service account .*--karpenter-role/);
  expect(fis.calls()).toEqual([]);
});

test('a class already at its maximum replicas is refused before anything changes: FIS fails only launches, and it makes none', async () => {
  alarm(() => 'OK');
  serveFis();
  const r = run([...BASE, '--hold', '1'], 4);
  expect(await r.done).toBe(2);
  expect(r.out.join('\n')).toContain('inf2 already runs 4 replicas, its maximum (4): AWS FIS fails only launches, and the class never asks for '
    + 'another node, so no launch of it would fail.');
  expect(r.kubectlCalls).toEqual([['get', 'deployment', 'sd21-inf2', '-n', 'serving', '-o', 'jsonpath={.spec.replicas}']]);
  expect(fis.calls()).toEqual([]);
});

describe('the report says whether FIS\'s errors reached Karpenter: the class\'s capacity errors over the hold', () => {
  test('none counted: a warning, on the terminal and in report.md', async () => {
    alarm(() => 'OK');
    serveFis();
    const r = run([...BASE, '--hold', '0.1']);
    expect(await r.done).toBe(0);
    const warning = 'no capacity error of inf2 during the hold (its capacity-error signal summed to 0): AWS FIS injected nothing that Karpenter hit.';
    expect(r.out.find((l) => l.startsWith('warning: '))).toContain(warning);
    expect(r.report()).toContain(`Observed:\n\n- ${warning.slice(0, 60)}`);
  });

  test('counted: the sum over the hold (the periods before the injection left out)', async () => {
    alarm(() => 'OK');
    serveFis();
    // Minute 10 of the window is the injection's (10 minutes of baseline): 3 errors then, 7 in the baseline.
    serveWindow(cw, EKS_CONFIG, (className, signal, m) => (signal === 'capacityErrors' && className === 'inf2' ? (m === 10 ? 3 : m === 5 ? 7 : undefined)
      : shortageWorld(className, signal, m)));
    const r = run([...BASE, '--hold', '0.1']);
    expect(await r.done).toBe(0);
    expect(r.out).toContain('capacity errors of inf2 during the hold: 3 (its capacity-error signal, summed)');
    expect(r.out.some((l) => l.startsWith('warning: '))).toBe(false);
  });
});
