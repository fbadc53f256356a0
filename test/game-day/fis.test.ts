/**
 * The FIS scenario of the game day: AWS FIS aws:ec2:api-insufficient-instance-capacity-error on the Karpenter
 * controller role in chosen zones, started and stopped by the command (a fake FIS API; CloudFormation, Lambda and
 * CloudWatch mocked with aws-sdk-client-mock): the template FIS gets, a hold that completes, an interrupt
 * mid-experiment and a stop condition firing (FIS stops the experiment itself; the command does not stop it twice).
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { clients, KARPENTER_SERVICE_ACCOUNT, main, type MainDeps, parseArgs, sleep, UsageError } from '../../bin/game-day';
import { FIS_ICE_ACTION, type FisApi, fisTemplate, type FisTemplateInput, isoMinutes } from '../../bin/game-day-fis';
import { RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';
import { KARPENTER_SERVICE_ACCOUNT as LIB_KARPENTER_SERVICE_ACCOUNT } from '../../lib/eks/karpenter';
import { EKS_CONFIG } from '../verify/account';
import { serveWindow, shortageWorld } from './window';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const cw = mockClient(CloudWatchClient);

const KARPENTER_ROLE = 'arn:aws:iam::123456789012:role/SdService-KarpenterControllerRole-4H2J';

beforeEach(() => {
  for (const m of [cfn, lambda, cw]) m.reset();
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [
      { LogicalResourceId: 'Fn', PhysicalResourceId: 'sd-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      { LogicalResourceId: 'KarpenterRole', PhysicalResourceId: 'SdService-KarpenterControllerRole-4H2J', ResourceType: 'AWS::IAM::Role', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
    ],
  });
  cfn.on(GetTemplateCommand).resolves({
    TemplateBody: JSON.stringify({ Resources: { Assoc: { Type: 'AWS::EKS::PodIdentityAssociation', Properties: { ServiceAccount: 'karpenter', RoleArn: { 'Fn::GetAtt': ['KarpenterRole', 'Arn'] } } } } }),
  });
  serveWindow(cw, EKS_CONFIG, shortageWorld);
  lambda.on(GetFunctionConfigurationCommand).resolves({ Role: 'arn:aws:iam::123456789012:role/r', Environment: { Variables: { [RECONCILER_CONFIG_ENV]: JSON.stringify(EKS_CONFIG) } } });
});

/** A fake FIS: records every call; the experiment runs until stopped, or until `stoppedBy` says FIS stopped it. */
function fakeFis(stoppedBy?: () => string | undefined) {
  const calls: Array<[string, ...unknown[]]> = [];
  let status = 'running';
  const api: FisApi = {
    createExperimentTemplate: async (input) => {
      calls.push(['createExperimentTemplate', input]);
      return { id: 'EXT1' };
    },
    startExperiment: async (id, token) => {
      calls.push(['startExperiment', id, token]);
      return { id: 'EXP1' };
    },
    getExperiment: async (id) => {
      calls.push(['getExperiment', id]);
      const reason = stoppedBy?.();
      return reason ? { status: 'stopped', reason } : { status };
    },
    stopExperiment: async (id) => {
      calls.push(['stopExperiment', id]);
      status = 'stopping';
    },
    deleteExperimentTemplate: async (id) => {
      calls.push(['deleteExperimentTemplate', id]);
    },
  };
  return { api, calls, names: () => calls.map((c) => c[0]) };
}

function alarm(state: () => string) {
  cw.on(DescribeAlarmsCommand).callsFake(() => ({ MetricAlarms: [{ AlarmName: 'slo-p95', AlarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95', StateValue: state() }] }));
}

let n = 0;
function run(argv: string[], fis: FisApi) {
  const audit = join(process.env.TMPDIR!, `fis-audit-${++n}.jsonl`);
  const out: string[] = [];
  const signals = new EventEmitter();
  const deps: MainDeps = {
    clients, kubectl: () => async () => {
      throw new Error('the FIS scenario does not touch the NodePool');
    }, signals: signals as unknown as MainDeps['signals'], now: () => Date.now(), sleep, fis: () => fis,
  };
  const done = main([...argv, '--audit', audit, '--report', join(process.env.TMPDIR!, `fis-report-${n}`)], { out: (l) => out.push(l), err: (l) => out.push(l) }, deps);
  return { done, out, signals, events: () => readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; change?: unknown; detail?: string }) };
}

const BASE = ['--stack', 'Svc', '--region', 'us-east-1', '--stop-alarm', 'slo-p95', '--max-duration', '60', '--poll', '0.05', '--watch-return', '0',
  '--fis-zones', 'use1-az1, use1-az2', '--fis-role', 'arn:aws:iam::123456789012:role/fis-experiment'];

test('the service account is the one lib/eks/karpenter.ts binds', () => {
  expect(KARPENTER_SERVICE_ACCOUNT).toBe(LIB_KARPENTER_SERVICE_ACCOUNT);
});

test('the experiment template: the action on the Karpenter role by ARN, the zones, the duration, the stop alarms', () => {
  const t: FisTemplateInput = fisTemplate({
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
  const fis = fakeFis();
  const r = run([...BASE, '--hold', '0.2'], fis.api);
  expect(await r.done).toBe(0);
  expect(fis.names()).toEqual(['createExperimentTemplate', 'startExperiment', 'getExperiment', 'stopExperiment', 'deleteExperimentTemplate']);
  expect((fis.calls[0][1] as FisTemplateInput).targets.KarpenterController.resourceArns).toEqual([KARPENTER_ROLE]);
  expect((fis.calls[0][1] as FisTemplateInput).stopConditions).toEqual([{ source: 'aws:cloudwatch:alarm', value: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:slo-p95' }]);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'inject', 'hold-complete', 'restore', 'end']);
  expect(events[3].change).toMatchObject({ after: { experiment: 'running, stopped by the game day', template: 'deleted' } });
  expect(r.out.join('\n')).toContain('a zonal shortage of every class: a different scenario from the NodePool-limit cap');
  expect(r.out.join('\n')).toContain('prediction: not predicted: the FIS scenario is a zonal shortage of every class');
});

test('an interrupt mid-experiment stops the experiment', async () => {
  alarm(() => 'OK');
  const fis = fakeFis();
  const r = run([...BASE, '--hold', '30'], fis.api);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(fis.names()).toEqual(['createExperimentTemplate', 'startExperiment']);
  r.signals.emit('SIGINT');
  expect(await r.done).toBe(0);
  expect(fis.names().slice(2)).toEqual(['getExperiment', 'stopExperiment', 'deleteExperimentTemplate']);
  expect(r.events().map((e) => e.event)).toEqual(['start', 'inject', 'interrupt', 'restore', 'end']);
});

test('a stop condition firing: FIS has stopped the experiment itself, the command only deletes the template', async () => {
  let reads = 0;
  let firing = false;
  alarm(() => {
    firing = ++reads >= 4;
    return firing ? 'ALARM' : 'OK';
  });
  const fis = fakeFis(() => (firing ? 'Experiment stopped by stop condition' : undefined));
  const r = run([...BASE, '--hold', '30'], fis.api);
  expect(await r.done).toBe(0);
  expect(fis.names()).toEqual(['createExperimentTemplate', 'startExperiment', 'getExperiment', 'deleteExperimentTemplate']);
  const events = r.events();
  expect(events.map((e) => e.event)).toEqual(['start', 'inject', 'stop-condition', 'restore', 'end']);
  expect(events[3].change).toMatchObject({ after: { experiment: 'stopped (Experiment stopped by stop condition)', template: 'deleted' } });
});

test('a stack without a Karpenter role of its own needs --karpenter-role', async () => {
  alarm(() => 'OK');
  cfn.on(GetTemplateCommand).resolves({ TemplateBody: '{"Resources":{}}' });
  const fis = fakeFis();
  const r = run([...BASE, '--hold', '1'], fis.api);
  await expect(r.done).rejects.toThrow(/binds no role to the karpenter service account .*--karpenter-role/);
  expect(fis.calls).toEqual([]);
});
