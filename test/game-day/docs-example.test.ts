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
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { EKS_CONFIG } from '../verify/account';
import { applyLimitsPatch, type Limits } from './nodepool-fake';
import { recordedTemplateBody, serveWindow, shortageWorld } from './window';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const cw = mockClient(CloudWatchClient);

const t0 = Date.UTC(2026, 11, 1, 14, 0, 0);

// The page's command gives no --region: the user's environment does (the command reads the region before any call).
const savedRegion = process.env.AWS_REGION;
beforeAll(() => {
  process.env.AWS_REGION = 'us-east-1';
});
afterAll(() => {
  if (savedRegion === undefined) delete process.env.AWS_REGION;
  else process.env.AWS_REGION = savedRegion;
});

/** game-day against the mocked window with `kubectl`, printed as the page shows it (`config`: the reconciler's). */
async function example(argv: string[], kubectl: MainDeps['kubectl'], config: ReconcilerConfig = EKS_CONFIG) {
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [{ LogicalResourceId: 'Fn', PhysicalResourceId: 'sd-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) }],
  });
  cfn.on(GetTemplateCommand).resolves({ TemplateBody: recordedTemplateBody() });
  lambda.on(GetFunctionConfigurationCommand).resolves({ Role: 'arn:aws:iam::123456789012:role/r', Environment: { Variables: { [RECONCILER_CONFIG_ENV]: JSON.stringify(config) } } });
  cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'SdService-SloP95', StateValue: 'OK' }] });
  // The window from 13:50: the shortage from minute 10 (14:00) to minute 20 (14:10).
  serveWindow(cw, config, shortageWorld);
  let t = t0;
  const deps: MainDeps = {
    clients, kubectl, signals: new EventEmitter() as unknown as MainDeps['signals'], now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
  };
  const out: string[] = [];
  const tmp = process.env.TMPDIR!;
  const full = [...argv, '--audit', join(tmp, 'audit.jsonl'), '--report', join(tmp, 'game-day-report')];
  const code = await main(full, { out: (l) => out.push(l), err: (l) => out.push(l) }, deps);
  const shown = full.join(' ').replaceAll(`${tmp}/`, '');
  const text = `$ npx cdk-capacity-game-day ${shown}\n${out.join('\n').replaceAll(`${tmp}/`, '')}\n`;
  const report = readFileSync(join(tmp, 'game-day-report', 'report.md'), 'utf8');
  return { code, text, report, tmp };
}

const page = () => readFileSync(join(__dirname, '..', '..', 'docs', 'game-day.md'), 'utf8');
const block = (marker: string) => new RegExp(`<!-- ${marker} -->\n\`\`\`text\n([\\s\\S]*?)\`\`\``).exec(page())?.[1];
const ARGV = ['--stack', 'SdService', '--stop-alarm', 'SdService-SloP95', '--max-duration', '45m', '--hold', '10m', '--poll', '5m'];

test('docs/game-day.md shows the timeline game-day prints', async () => {
  const pool = { metadata: { name: 'sd21-inf2' }, spec: { limits: { cpu: '1000' } as Limits }, status: { resources: { cpu: '32', memory: '128Gi', 'aws.amazon.com/neuron': '2' } } };
  const kubectl: MainDeps['kubectl'] = () => async (args) => {
    if (args[0] === 'get') return JSON.stringify(pool);
    applyLimitsPatch(pool, args);
    return 'nodepool.karpenter.sh/sd21-inf2 patched';
  };
  const { code, text, report, tmp } = await example(ARGV, kubectl);
  expect(code).toBe(0);
  if (process.env.PRINT_DOCS_EXAMPLE) process.stdout.write(`DOCS${JSON.stringify({ marker: 'game-day-example', text, report })}\n`);
  expect(block('game-day-example')).toBe(text);
  // The report: the simulator's charts of the observed window and of its own run of the shortage, and the table.
  const charts = ['latency.svg', 'modes.svg', 'rejected.svg', 'replicas.svg', 'traffic-share.svg'];
  expect(readdirSync(join(tmp, 'game-day-report')).sort()).toEqual([...charts, ...charts.map((c) => `predicted-${c}`), 'report.md'].sort());
  expect(page()).toContain(['```markdown', report.trimEnd(), '```'].join('\n'));
});

test('docs/game-day.md shows the timeline of a reclaim (--reclaim 1) as game-day prints it', async () => {
  const labels = { 'capacity-aware-inference/class': 'inf2' };
  const answers: Record<string, unknown> = {
    nodepool: { metadata: { name: 'sd21-inf2' }, spec: { limits: { cpu: '1000' } }, status: { resources: { cpu: '64', memory: '256Gi', 'aws.amazon.com/neuron': '4' } } },
    nodeclaims: { items: ['sd21-inf2-7xk2p', 'sd21-inf2-q9d4m'].map((name, i) => ({ metadata: { name }, spec: { terminationGracePeriod: '2580s' }, status: { nodeName: `ip-10-0-${i}-17`, conditions: [{ type: 'Ready', status: 'True' }] } })) },
    deployment: { spec: { selector: { matchLabels: labels }, template: { metadata: { labels } } } },
    pods: { items: Array.from({ length: 4 }, (_, i) => ({ metadata: { name: `sd21-inf2-6c9f-${i}` }, spec: { nodeName: `ip-10-0-${i % 2}-17`, terminationGracePeriodSeconds: 33 } })) },
    poddisruptionbudgets: { items: [{ metadata: { name: 'sd21-inf2' }, spec: { selector: { matchLabels: labels } }, status: { disruptionsAllowed: 1 } }] },
  };
  const kubectl: MainDeps['kubectl'] = () => async (args) => {
    if (args[0] === 'get') return JSON.stringify(answers[args[1]]);
    // The zero cap reads back while it holds (the reclaim's read-back at every poll).
    if (args[0] === 'patch') applyLimitsPatch(answers.nodepool as { spec: { limits?: Limits } }, args);
    return `${args[1]} changed`;
  };
  const { code, text } = await example([...ARGV, '--reclaim', '1'], kubectl);
  expect(code).toBe(0);
  if (process.env.PRINT_DOCS_EXAMPLE) process.stdout.write(`DOCS${JSON.stringify({ marker: 'game-day-reclaim-example', text })}\n`);
  expect(block('game-day-reclaim-example')).toBe(text);
});

describe('the report of the same run, on a deployment whose reconciler differs from the defaults', () => {
  const capKubectl = (): MainDeps['kubectl'] => {
    const pool = { metadata: { name: 'sd21-inf2' }, spec: { limits: { cpu: '1000' } as Limits }, status: { resources: { cpu: '32' } } };
    return () => async (args) => {
      if (args[0] === 'get') return JSON.stringify(pool);
      applyLimitsPatch(pool, args);
      return 'patched';
    };
  };

  test('the latency charts draw the contract\'s deadline, not a latencySloP95 the user set apart from it', async () => {
    const { code, tmp } = await example(ARGV, capKubectl(), { ...EKS_CONFIG, policy: { latencySloP95Ms: 1800 } });
    expect(code).toBe(0);
    for (const chart of ['latency.svg', 'predicted-latency.svg']) {
      const svg = readFileSync(join(tmp, 'game-day-report', chart), 'utf8');
      // The serving record's contract: deadlineMs 2500.
      expect(svg).toContain('SLO deadline 2.5 s');
      expect(svg).not.toContain('SLO deadline 1.8 s');
    }
  });

  test('a deployed period the simulator cannot run: the report says it was not predicted, and why', async () => {
    const { code, report } = await example(ARGV, capKubectl(), { ...EKS_CONFIG, policy: { periodSeconds: 120 } });
    expect(code).toBe(0);
    expect(report).toContain('- not predicted: the deployed reconciler runs every 120 s (policy.period); the simulator runs it every 60 s only');
    expect(report).toContain('| time to fallback, s | 120 | - |');
  });
});
