import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cdk from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ts from 'typescript';
import * as library from '../../lib';
import { ALL_METRICS } from '../../lib/core/metrics/contract';
import { UNIT_TEST_APP_PROPS } from '../util';

const SECTION = readFileSync(join(__dirname, '..', '..', 'docs', 'observability.md'), 'utf8');

function blockAfter(marker: string): string {
  const at = SECTION.indexOf(`<!-- ${marker} -->`);
  if (at < 0) throw new Error(`docs/observability.md has no <!-- ${marker} --> marker`);
  const match = /```\w*\n([\s\S]*?)```/.exec(SECTION.slice(at));
  if (!match) throw new Error(`no code block after ${marker}`);
  return match[1];
}

describe('docs/observability.md', () => {
  test('the example runs against this checkout and builds the dashboard and the alarms it describes', () => {
    const js = ts.transpileModule(blockAfter('docs-example: observability'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const stacks: cdk.Stack[] = [];
    const shim = (name: string) => {
      if (name === 'cdk-capacity-aware-inference') return library;
      if (name === 'aws-cdk-lib') {
        // Record the stack the example makes; keep the unit-test app settings (no WASM validation).
        return { ...cdk, App: class extends cdk.App {
          constructor() {
            super(UNIT_TEST_APP_PROPS);
          }
        }, Stack: class extends cdk.Stack {
          constructor(...args: ConstructorParameters<typeof cdk.Stack>) {
            super(...args);
            stacks.push(this);
          }
        } };
      }
      if (name === 'aws-cdk-lib/aws-iam') return iam;
      throw new Error(`README example requires ${name}`);
    };
    new Function('require', 'exports', js)(shim, {});
    expect(stacks).toHaveLength(1);
    const template = Template.fromStack(stacks[0]);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // fallback share, deadline exhaustion (the ALB counts what each class sheds), the ALB's own 5XX share, preferred
    // capacity errors (a producer is declared), 3 replica shortages, heartbeat
    template.resourceCountIs('AWS::CloudWatch::Alarm', 8);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Threshold: 40, EvaluationPeriods: 10 });
  });

  test('the metric table lists every contract metric with its unit and emitter, and nothing else', () => {
    const rows = SECTION.split('\n').filter((l) => /^\| `[A-Za-z]+` \|/.test(l)).map((l) => l.split('|').map((c) => c.trim()));
    expect(rows.map((r) => r[1].replace(/`/g, '')).sort()).toEqual(ALL_METRICS.map((m) => m.name).sort());
    for (const m of ALL_METRICS) {
      const row = rows.find((r) => r[1] === `\`${m.name}\``)!;
      expect([m.name, row[2], row[4]]).toEqual([m.name, m.unit, m.emittedBy]);
      expect(row[3].startsWith(m.dimensions.join(', '))).toBe(true);
    }
  });

  test('the runbook has an entry for every alarm option', () => {
    for (const option of ['fallbackShare', 'deadlineExhaustion', 'preferredCapacityErrors', 'replicaShortage', 'reconcilerHeartbeat']) {
      expect(SECTION).toMatch(new RegExp(`^\\| [A-Za-z, -]+ \\(\`${option}\`\\) \\|`, 'm'));
    }
  });
});
