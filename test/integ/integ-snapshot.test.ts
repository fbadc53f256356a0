/**
 * The integration tests' committed snapshots, checked offline: each integ app (test/integ/integ.*.ts) is synthesized
 * with cdk.json's feature flags (integ-app.ts) and every template it writes, and its integ manifest (integ.json: test
 * cases, stacks, assertion stack), must equal the committed ones in test/integ/<file>.snapshot/, so a changed template
 * fails until the snapshot is updated on purpose (`UPDATE_INTEG_SNAPSHOTS=1 npx jest test/integ`). Nothing here
 * contacts AWS or needs integ-runner. Running them in an account: README "Integration tests".
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type IntegAppBuilder, integSynthContext } from './integ-app';
import { eksImportedClusterApp } from './integ.eks-imported-cluster';
import { eksNewClusterApp } from './integ.eks-new-cluster';
import { sageMakerReconcilerApp, variantNames } from './integ.sagemaker-reconciler';
import { App } from 'aws-cdk-lib';
import { exampleStacks } from '../../examples/app';
import { type SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { UNIT_TEST_APP_PROPS } from '../util';
import { trustGateApp } from './integ.trust-gate';

const APPS: Record<string, IntegAppBuilder> = {
  'integ.sagemaker-reconciler.ts': sageMakerReconcilerApp,
  'integ.eks-new-cluster.ts': eksNewClusterApp,
  'integ.eks-imported-cluster.ts': eksImportedClusterApp,
  'integ.trust-gate.ts': trustGateApp,
};

/**
 * A template with what integ-tests-alpha makes differ between two synths of the same app masked: each assertion's
 * `salt` (the synth time, so that the assertion reruns) and the hash that ends the name of an `expect()` assertion's
 * output (an md5 of its actual and expected values, and an actual read from a custom resource attribute is an
 * unresolved token whose number depends on construction order: @aws-cdk/integ-tests-alpha 2.245.0-alpha.0
 * lib/assertions/assertions.js, `AssertionResults${id}${md5hash({ actual, expected })}`).
 */
function masked(json: string): unknown {
  const mask = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(mask);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [
      key.replace(/^(AssertionResults.+)[0-9a-f]{32}$/, '$1<hash>'),
      key === 'salt' ? '<synth time>' : mask(v),
    ]));
  };
  return mask(JSON.parse(json));
}

const snapshotted = (f: string) => f.endsWith('.template.json') || f === 'integ.json';

test("cdk.json's context is the feature flags a `cdk init` app gets at the installed aws-cdk-lib", () => {
  // `cdk init` writes the recommended flags sorted by key (aws/aws-cdk-cli packages/aws-cdk/lib/commands/init/init.ts,
  // currentlyRecommendedAwsCdkLibFlags); aws-cdk-lib ships them as recommended-feature-flags.json. Upgrading aws-cdk-lib
  // fails here until cdk.json is refreshed (and the snapshots with it).
  const recommended = JSON.parse(readFileSync(require.resolve('aws-cdk-lib/recommended-feature-flags.json'), 'utf8')) as Record<string, unknown>;
  const cdkJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  expect(cdkJson.context).toEqual(recommended);
  expect(Object.keys(cdkJson.context)).toEqual(Object.keys(recommended).sort());
});

test('every integ app in test/integ is checked', () => {
  const files = readdirSync(__dirname).filter((f) => /^integ\..+\.ts$/.test(f)).sort();
  expect(Object.keys(APPS).sort()).toEqual(files);
});

describe.each(Object.entries(APPS))('%s', (file, build) => {
  test('synthesizes the committed snapshot', () => {
    const out = join(process.env.TMPDIR!, file);
    build({ outdir: out, context: integSynthContext() }).synth();
    const written = readdirSync(out).filter(snapshotted).sort();
    const snapshot = join(__dirname, `${file}.snapshot`);
    if (process.env.UPDATE_INTEG_SNAPSHOTS) {
      mkdirSync(snapshot, { recursive: true });
      for (const f of readdirSync(snapshot)) if (!written.includes(f)) rmSync(join(snapshot, f));
      // A file that differs only in its salts is left as it is (no churn in the history).
      for (const f of written) {
        const body = readFileSync(join(out, f), 'utf8');
        const committed = existsSync(join(snapshot, f)) ? readFileSync(join(snapshot, f), 'utf8') : undefined;
        if (committed === undefined || !isDeepStrictEqual(masked(committed), masked(body))) writeFileSync(join(snapshot, f), body);
      }
    }
    expect(readdirSync(snapshot).sort()).toEqual(written);
    for (const f of written) {
      expect({ file: f, body: masked(readFileSync(join(out, f), 'utf8')) })
        .toEqual({ file: f, body: masked(readFileSync(join(snapshot, f), 'utf8')) });
    }
  });
});

/**
 * A string property as CloudFormation renders it: a literal, or an `Fn::Join` whose references (here always inside a
 * JSON string, such as a target group ARN) are replaced by a placeholder.
 */
function deployTimeString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join'];
  return join ? join[1].map((part) => (typeof part === 'string' ? part : '<reference>')).join(join[0]) : undefined;
}

/** Every `expected` value of an app's assertions, decoded (the handler JSON-parses it before building its matcher). */
function assertionExpectations(build: IntegAppBuilder): unknown[] {
  const assembly = build({ context: integSynthContext() }).synth();
  const found: unknown[] = [];
  for (const stack of assembly.stacks) {
    const resources = (stack.template as { Resources?: Record<string, { Properties?: { expected?: unknown } }> }).Resources ?? {};
    for (const r of Object.values(resources)) {
      if (r.Properties?.expected === undefined) continue;
      const json = deployTimeString(r.Properties.expected);
      if (json === undefined) throw new Error(`an assertion's expected value this test cannot read: ${JSON.stringify(r.Properties.expected)}`);
      found.push(JSON.parse(json));
    }
  }
  return found;
}

/** The string values inside a decoded expectation that are themselves an encoded matcher (`{"$ObjectLike":…}`). */
function stringifiedMatchers(value: unknown): string[] {
  if (typeof value === 'string') return /^\{"\$[A-Za-z]+":/.test(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(stringifiedMatchers);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringifiedMatchers);
  return [];
}

describe.each(Object.entries(APPS))('%s assertions', (file, build) => {
  test('nest matchers as matchers, never as the JSON string of ExpectedResult.*().result', () => {
    // A stringified matcher is compared as a literal string with the actual value, so it never matches an object.
    const expectations = assertionExpectations(build);
    expect(expectations.flatMap(stringifiedMatchers)).toEqual([]);
    // The trust gate's assertion stack is empty by design (its deployment must fail).
    expect(expectations.length > 0).toBe(file !== 'integ.trust-gate.ts');
  });
});

test('the SageMaker assertion expects every declared variant by its name', () => {
  const expected = assertionExpectations(sageMakerReconcilerApp);
  const app = sageMakerReconcilerApp({ context: integSynthContext() });
  const stack = app.node.findChild('IntegSageMakerReconciler') as SageMakerLlmStack;
  const names = variantNames(stack);
  expect(names.length).toBeGreaterThan(1);
  for (const name of names) {
    expect(expected).toContainEqual({
      $ObjectLike: { EndpointStatus: 'InService', ProductionVariants: { $ArrayWith: [{ $ObjectLike: { VariantName: name } }] } },
    });
  }
});

test("the SageMaker test deploys and destroys only its serving stack, gated on the example app's trust stack", () => {
  const integ = sageMakerReconcilerApp({ context: integSynthContext() }).synth();
  type Exclusively = { args?: { exclusively?: boolean } };
  const manifest = JSON.parse(readFileSync(join(integ.directory, 'integ.json'), 'utf8')) as {
    testCases: Record<string, { stacks: string[]; cdkCommandOptions?: { deploy?: Exclusively; destroy?: Exclusively } }>;
  };
  const testCase = Object.values(manifest.testCases)[0];
  expect(testCase.stacks).toEqual(['IntegSageMakerReconciler']);
  // Without `exclusively`, integ-runner would deploy the trust stack with it (then over empty repositories) and destroy it after.
  expect([testCase.cdkCommandOptions?.deploy?.args?.exclusively, testCase.cdkCommandOptions?.destroy?.args?.exclusively]).toEqual([true, true]);
  const serving = integ.getStackByName('IntegSageMakerReconciler').template as { Resources: Record<string, { Type: string }> };
  expect(Object.values(serving.Resources).filter((r) => r.Type === 'AWS::ECR::Repository')).toEqual([]);
  expect(Object.values(serving.Resources).filter((r) => r.Type === 'Custom::ClassArtifactVerification')).toHaveLength(3);
  // Every value it reads from another stack is an output of the trust stack the example app deploys (same name, same
  // constructs). cdk.json's `@aws-cdk/core:defaultCrossStackReferences: weak` makes these Fn::GetStackOutput reads.
  const app = new App({ ...UNIT_TEST_APP_PROPS, context: integSynthContext() });
  exampleStacks(app);
  const trust = app.synth().getStackByName('SageMakerLlmTrust').template as { Outputs: Record<string, unknown> };
  const reads = [...JSON.stringify(serving).matchAll(/"Fn::GetStackOutput":\{"StackName":"([^"]+)","Region":"[^"]+","OutputName":"([^"]+)"\}/g)]
    .map((m) => [m[1], m[2]]);
  expect(JSON.stringify(serving)).not.toContain('Fn::ImportValue');
  expect(new Set(reads.map(([, output]) => output)).size).toBe(3);
  for (const [stackName, output] of reads) expect([stackName, output, output in trust.Outputs]).toEqual(['SageMakerLlmTrust', output, true]);
});
