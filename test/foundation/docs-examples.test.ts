/**
 * The README quickstart, the EKS example of docs/eks-inference-service.md and docs/reconciler.md's example run as written: each ends with
 * `app.synth()`, and the synthesis must need no context lookup (a lookup would need an AWS account at `cdk synth`).
 * `cdk-capacity-aware-inference` is bound to this checkout's lib/; every other import is the real module.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cdk from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ts from 'typescript';
import * as library from '../../lib';

const ROOT = join(__dirname, '..', '..');

function blockAfter(page: string, marker: string): string {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const at = text.indexOf(`<!-- ${marker} -->`);
  if (at < 0) throw new Error(`${page} has no <!-- ${marker} --> marker`);
  const match = /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  if (!match) throw new Error(`no ts block after ${marker} in ${page}`);
  return match[1];
}

/** Runs the example and returns the apps it created (it synthesizes them itself). */
function run(code: string): cdk.App[] {
  const apps: cdk.App[] = [];
  class RecordingApp extends cdk.App {
    constructor(props?: cdk.AppProps) {
      super(props);
      apps.push(this);
    }
  }
  // A proxy, not a spread: spreading aws-cdk-lib would load every one of its lazily loaded modules.
  const cdkShim = new Proxy(cdk, { get: (target, key) => (key === 'App' ? RecordingApp : Reflect.get(target, key)) });
  const requireShim = (name: string): unknown => {
    if (name === 'cdk-capacity-aware-inference') return library;
    if (name === 'aws-cdk-lib') return cdkShim;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name);
  };
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  new Function('require', 'exports', js)(requireShim, {});
  return apps;
}

test('the README quickstart synthesizes offline: endpoint, reconciler, dashboard and alarms', () => {
  const [app] = run(blockAfter('README.md', 'quickstart'));
  const assembly = app.synth();
  expect(assembly.manifest.missing ?? []).toEqual([]);
  const template = Template.fromJSON(assembly.getStackByName('LlamaChat').template);
  template.resourceCountIs('AWS::SageMaker::Endpoint', 1);
  template.resourceCountIs('AWS::SageMaker::Model', 2);
  template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 1 });
});

test('the EKS example synthesizes offline as written: the zones come from the context it seeds', () => {
  const [app] = run(blockAfter('docs/eks-inference-service.md', 'docs-example: eks'));
  const assembly = app.synth();
  expect(assembly.manifest.missing ?? []).toEqual([]);
  const template = Template.fromJSON(assembly.getStackByName('Serving').template);
  const subnets = Object.values(template.findResources('AWS::EC2::Subnet')).map((s) => s.Properties.AvailabilityZone);
  expect([...new Set(subnets)].sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
  // Karpenter, KEDA, the Load Balancer Controller and the Neuron device plugin (the example has a Neuron class).
  template.resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 4);
});

test('docs/reconciler.md\'s example synthesizes with its heartbeat: no reconciler-no-heartbeat warning (R120)', () => {
  const [app] = run(blockAfter('docs/reconciler.md', 'docs-example: reconciler'));
  const stack = app.synth().getStackByName('Routing');
  const warnings = stack.messages.filter((m) => m.level === 'warning').map((m) => String(m.entry.data));
  expect(warnings.filter((w) => w.includes('reconciler-no-heartbeat'))).toEqual([]);
  Template.fromJSON(stack.template).hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Decisions', Statistic: 'SampleCount' });
});
