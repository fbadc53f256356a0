// The example timeline of docs/game-day.md is what game-day prints for an EKS service (mocked AWS clients, a fake
// kubectl and a fake clock: the same code path a real run takes): the page cannot drift from the command.
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { clients, main, type MainDeps } from '../../bin/game-day';
import { RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';
import { EKS_CONFIG } from '../verify/account';
import { recordedTemplateBody, serveWindow, shortageWorld } from './window';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const cw = mockClient(CloudWatchClient);

test('docs/game-day.md shows the timeline game-day prints', async () => {
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [{ LogicalResourceId: 'Fn', PhysicalResourceId: 'sd-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) }],
  });
  cfn.on(GetTemplateCommand).resolves({ TemplateBody: recordedTemplateBody() });
  lambda.on(GetFunctionConfigurationCommand).resolves({ Role: 'arn:aws:iam::123456789012:role/r', Environment: { Variables: { [RECONCILER_CONFIG_ENV]: JSON.stringify(EKS_CONFIG) } } });
  cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'SdService-SloP95', StateValue: 'OK' }] });
  // The window from 13:50: the shortage from minute 10 (14:00) to minute 20 (14:10).
  serveWindow(cw, EKS_CONFIG, shortageWorld);
  const pool = { metadata: { name: 'sd21-inf2' }, spec: { limits: { cpu: '1000' } }, status: { resources: { cpu: '32', memory: '128Gi', 'aws.amazon.com/neuron': '2' } } };
  let t = Date.UTC(2026, 11, 1, 14, 0, 0);
  const deps: MainDeps = {
    clients,
    kubectl: () => async (args) => (args[0] === 'get' ? JSON.stringify(pool) : 'nodepool.karpenter.sh/sd21-inf2 patched'),
    signals: new EventEmitter() as unknown as MainDeps['signals'],
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
  };
  const out: string[] = [];
  const tmp = process.env.TMPDIR!;
  const argv = ['--stack', 'SdService', '--stop-alarm', 'SdService-SloP95', '--max-duration', '45m', '--hold', '10m', '--poll', '5m',
    '--audit', join(tmp, 'audit.jsonl'), '--report', join(tmp, 'game-day-report')];
  expect(await main(argv, { out: (l) => out.push(l), err: (l) => out.push(l) }, deps)).toBe(0);
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'game-day.md'), 'utf8');
  const example = /<!-- game-day-example -->\n```text\n([\s\S]*?)```/.exec(page)?.[1];
  const shown = argv.join(' ').replaceAll(`${tmp}/`, '');
  if (process.env.PRINT_DOCS_EXAMPLE) {
    process.stdout.write(`DOCS${JSON.stringify({ shown, out: out.join('\n').replaceAll(`${tmp}/`, ''), report: readFileSync(join(tmp, 'game-day-report', 'report.md'), 'utf8') })}\n`);
  }
  expect(example).toBe(`$ npx cdk-capacity-game-day ${shown}\n${out.join('\n').replaceAll(`${tmp}/`, '')}\n`);
  // The report: the simulator's charts of the observed window and of its own run of the shortage, and the table.
  const charts = ['latency.svg', 'modes.svg', 'rejected.svg', 'replicas.svg', 'traffic-share.svg'];
  expect(readdirSync(join(tmp, 'game-day-report')).sort()).toEqual([...charts, ...charts.map((c) => `predicted-${c}`), 'report.md'].sort());
  const report = readFileSync(join(tmp, 'game-day-report', 'report.md'), 'utf8');
  expect(page).toContain(['```markdown', report.trimEnd(), '```'].join('\n'));
});
