/**
 * NaN, Infinity, negatives, fractions and CDK tokens (Lazy.number, CfnParameter.valueAsNumber, token Durations) at
 * every numeric prop of every construct, through the public API. Each must be rejected at synth with the construct
 * path, the field, the value and what is allowed, or accepted with the meaning the validation matrix documents
 * (inside the rule's range, or a token the rule carries through to CloudFormation).
 */
import { App, CfnParameter, Duration, Lazy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as fc from 'fast-check';
import { type ServiceContract } from '../../lib/core/service/contract';
import { type NumberRule, numberProblem, type Rule } from '../../lib/core/validation/checker';
import {
  CLASS_RULES,
  CONTRACT_RULES,
  EKS_RULES,
  OBSERVABILITY_RULES,
  RECONCILER_RULES,
  SAGEMAKER_RULES,
  TRUST_RULES,
} from '../../lib/core/validation/rules';
import { type IInferenceServing } from '../../lib/control/serving';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { ArtifactTrust } from '../../lib/trust/artifact-trust';
import { smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, UNIT_TEST_APP_PROPS } from '../util';

/**
 * testStack() of ../util (same props, stack id and environment), without the stack traces aws-cdk-lib records for the
 * cloud assembly's metadata: a creation trace on every CfnElement (the disable-creation-stack-traces context) and one
 * per annotation (stackTraces: false). This file builds some 800 stacks of constructs and no test reads a trace, yet
 * capturing them (each frame source-mapped by jest) took about a third of its time. The messages under test come from
 * the constructs' validation and are the same with or without the traces (compared message by message, all 776).
 */
function testStack(id = 'Test'): { app: App; stack: Stack } {
  const app = new App({ ...UNIT_TEST_APP_PROPS, stackTraces: false, context: { 'aws:cdk:disable-creation-stack-traces': true } });
  const stack = new Stack(app, id, { env: { account: '123456789012', region: 'us-east-1' } });
  return { app, stack };
}

/** A bad (or edge) value, made in the stack under test (a CfnParameter needs one). */
interface Probe {
  readonly label: string;
  readonly make: (stack: Stack) => number;
  readonly token: boolean;
}
const PROBES: readonly Probe[] = [
  { label: 'NaN', make: () => Number.NaN, token: false },
  { label: 'Infinity', make: () => Number.POSITIVE_INFINITY, token: false },
  { label: '-Infinity', make: () => Number.NEGATIVE_INFINITY, token: false },
  { label: '-1', make: () => -1, token: false },
  { label: '0', make: () => 0, token: false },
  { label: '0.5', make: () => 0.5, token: false },
  { label: '2.5', make: () => 2.5, token: false },
  { label: 'Lazy.number', make: () => Lazy.number({ produce: () => 3 }), token: true },
  { label: 'CfnParameter.valueAsNumber', make: (s) => new CfnParameter(s, `P${Math.random().toString(36).slice(2)}`, { type: 'Number' }).valueAsNumber, token: true },
];
/** Durations cannot be negative (aws-cdk-lib refuses to build one); everything else applies. */
const DURATION_PROBES = PROBES.filter((p) => p.label !== '-1' && p.label !== '-Infinity');

/** One numeric prop: how to set it, where its rule lives, what field the message names, and whether it is a Duration (seconds). */
interface NumericProp {
  readonly field: string;
  readonly rule: Rule;
  readonly duration?: 'seconds';
  /** Builds the construct with the value; returns the synth/construct error message, or '' when it is accepted. */
  readonly build: (stack: Stack, value: number) => string;
}

function errorOf(fn: () => void): string {
  try {
    fn();
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

const withContract = (patch: (c: ServiceContract) => ServiceContract) => patch(LLAMA_CONTRACT);
const set = <T extends object>(o: T, path: string, value: unknown): T => {
  const [head, ...rest] = path.split('.');
  const inner = (o as Record<string, unknown>)[head];
  return { ...o, [head]: rest.length === 0 ? value : set((inner ?? {}) as object, rest.join('.'), value) } as T;
};

// ---------------------------------------------------------------------------------------------------------------
// The constructs and their numeric props
// ---------------------------------------------------------------------------------------------------------------

const eks = (stack: Stack, props: Record<string, unknown>) =>
  errorOf(() => new EksInferenceService(stack, 'Svc', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE,
    // An imported layer: the checks under test do not depend on it, and it costs no asset per property run.
    kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
    ...props,
  }));
const sagemaker = (stack: Stack, props: Record<string, unknown>) =>
  errorOf(() => {
    new SageMakerCapacityEndpoint(stack, 'Svc', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, ...props });
    Template.fromStack(stack);
  });
const endpoint = (stack: Stack) =>
  new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
/** The endpoint as the serving construct, with its request shape overridden where a test throws a value at it. */
const servingWith = (stack: Stack, tokensPerRequest?: number): IInferenceServing => {
  const served = endpoint(stack);
  const description = served.servingDescription();
  return {
    servingDescription: () => ({ ...description, ...(tokensPerRequest !== undefined ? { tokensPerRequest } : {}) }),
    grantRouting: (grantee) => served.grantRouting(grantee),
  };
};
const reconciler = (stack: Stack, props: Record<string, unknown>, tokensPerRequest?: number) =>
  errorOf(() => new Reconciler(stack, 'Svc', { serving: servingWith(stack, tokensPerRequest), ...props }));
const observability = (stack: Stack, props: Record<string, unknown>) =>
  errorOf(() => new InferenceObservability(stack, 'Svc', { serving: servingWith(stack), ...props }));
const trust = (stack: Stack, props: Record<string, unknown>) =>
  errorOf(() => {
    new ArtifactTrust(stack, 'Svc', props);
    Template.fromStack(stack);
  });

const contractProps = (build: (stack: Stack, props: Record<string, unknown>) => string): NumericProp[] =>
  (['peakRequestsPerSecond', 'headroom', 'slo.ttftP95Ms', 'slo.itlP95Ms', 'slo.deadlineMs', 'requestShape.meanPromptTokens', 'requestShape.meanOutputTokens'] as const)
    .map((f) => ({ field: `contract.${f}`, rule: CONTRACT_RULES[f], build: (s, v) => build(s, { contract: withContract((c) => set(c, f, v)) }) }));

const classProps = (build: (stack: Stack, props: Record<string, unknown>) => string, classes: () => ReturnType<typeof llamaClasses>): NumericProp[] =>
  ([
    'maxReplicas', 'usdPerHour', 'footprint.weightsGiB', 'footprint.workspaceGiB', 'footprint.kvCacheBytesPerToken', 'footprint.maxSequenceTokens',
    'footprint.tensorParallelDegree', 'runtime.maxConcurrentSequences', 'runtime.maxBatchTokens', 'runtime.maxQueueDelayMs',
    'envelope.tokensPerSecondPerReplica', 'envelope.safeConcurrency', 'envelope.ttftP95Ms', 'envelope.itlP95Ms', 'memory.utilizationCap', 'memory.marginGiB',
  ] as const).map((f) => ({
    field: `class 'a10g' ${f}`,
    rule: CLASS_RULES[f],
    build: (s, v) => build(s, { classes: classes().map((c) => (c.name === 'a10g' ? set(c, f, v) : c)) }),
  }));

const durationProp = (field: string, rule: Rule, build: (s: Stack, d: Duration) => string): NumericProp => ({
  field,
  rule,
  duration: 'seconds',
  build: (s, v) => build(s, Duration.seconds(v)),
});

const CONSTRUCTS: Record<string, { path: string; props: NumericProp[] }> = {
  EksInferenceService: {
    path: 'Test/Svc',
    props: [
      ...contractProps(eks),
      ...classProps(eks, () => llamaClasses()),
      ...(['minReplicas', 'maxReplicas', 'targetRequestsPerReplicaPerPeriod', 'port'] as const).map((f): NumericProp => ({
        field: `class 'a10g' classOptions.${f}`,
        rule: EKS_RULES[`classOptions.${f}`],
        build: (s, v) => eks(s, { classOptions: { a10g: { [f]: v } } }),
      })),
      { field: 'scaling.maxScaleUpPods', rule: EKS_RULES['scaling.maxScaleUpPods'], build: (s, v) => eks(s, { scaling: { maxScaleUpPods: v } }) },
      { field: 'clusterOptions.systemNodeCount', rule: EKS_RULES['clusterOptions.systemNodeCount'], build: (s, v) => eks(s, { clusterOptions: { systemNodeCount: v } }) },
      durationProp('scaling.metricPeriod', EKS_RULES['scaling.metricPeriod'], (s, d) => eks(s, { scaling: { metricPeriod: d } })),
      durationProp('scaling.scaleDownStabilization', EKS_RULES['scaling.scaleDownStabilization'], (s, d) => eks(s, { scaling: { scaleDownStabilization: d } })),
      durationProp('scaling.scaleUpPeriod', EKS_RULES['scaling.scaleUpPeriod'], (s, d) => eks(s, { scaling: { scaleUpPeriod: d } })),
      durationProp('scaling.pollingInterval', EKS_RULES['scaling.pollingInterval'], (s, d) => eks(s, { scaling: { pollingInterval: d } })),
      durationProp('loadBalancer.deregistrationDelay', EKS_RULES['loadBalancer.deregistrationDelay'], (s, d) => eks(s, { loadBalancer: { deregistrationDelay: d } })),
      durationProp("class 'a10g' classOptions.startupTimeout", EKS_RULES['classOptions.startupTimeout'], (s, d) => eks(s, { classOptions: { a10g: { startupTimeout: d } } })),
    ],
  },
  SageMakerCapacityEndpoint: {
    path: 'Test/Svc',
    props: [
      ...contractProps(sagemaker),
      ...classProps(sagemaker, () => smClasses()),
      { field: 'standbyInstances', rule: SAGEMAKER_RULES.standbyInstances, build: (s, v) => sagemaker(s, { standbyInstances: v }) },
      { field: 'warmFloorShare', rule: SAGEMAKER_RULES.warmFloorShare, build: (s, v) => sagemaker(s, { warmFloorShare: v }) },
      ...(['minInstances', 'maxInstances', 'targetConcurrencyPerInstance'] as const).map((f): NumericProp => ({
        field: `variants['fallback'].scaling.${f}`,
        rule: SAGEMAKER_RULES[`variants[].scaling.${f}`],
        build: (s, v) => sagemaker(s, { variants: [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], scaling: { [f]: v } }] }),
      })),
      {
        field: "variants['fallback'].initialWeight",
        rule: SAGEMAKER_RULES['variants[].initialWeight'],
        build: (s, v) => sagemaker(s, { variants: [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], initialWeight: v }] }),
      },
      durationProp('provisionTimeout', SAGEMAKER_RULES.provisionTimeout, (s, d) => sagemaker(s, { provisionTimeout: d })),
      durationProp('containerStartupHealthCheckTimeout', SAGEMAKER_RULES.containerStartupHealthCheckTimeout, (s, d) => sagemaker(s, { containerStartupHealthCheckTimeout: d })),
      durationProp('scaleInCooldown', SAGEMAKER_RULES.scaleInCooldown, (s, d) => sagemaker(s, { scaleInCooldown: d })),
    ],
  },
  Reconciler: {
    path: 'Test/Svc',
    props: [
      { field: 'serving.tokensPerRequest', rule: RECONCILER_RULES['serving.tokensPerRequest'], build: (s, v) => reconciler(s, {}, v) },
      ...(['headroom', 'warmFloorShare', 'weightTotal', 'latencyBreachPeriods', 'rampStepShare', 'minWeightChangeShare',
        'demandWindowPeriods', 'demandQuantile'] as const).map((f): NumericProp => ({
        field: `policy.${f}`,
        rule: RECONCILER_RULES[`policy.${f}`],
        build: (s, v) => reconciler(s, { policy: { [f]: v } }),
      })),
      durationProp('policy.period', RECONCILER_RULES['policy.period'], (s, d) => reconciler(s, { policy: { period: d } })),
      durationProp('policy.reentryMemory', RECONCILER_RULES['policy.reentryMemory'], (s, d) => reconciler(s, { policy: { reentryMemory: d } })),
      durationProp('policy.maxReturnHold', RECONCILER_RULES['policy.maxReturnHold'], (s, d) => reconciler(s, { policy: { maxReturnHold: d } })),
      durationProp('metricDelay', RECONCILER_RULES.metricDelay, (s, d) => reconciler(s, { metricDelay: d })),
    ],
  },
  InferenceObservability: {
    path: 'Test/Svc',
    props: ([
      ['fallbackShare', 'thresholdPercent'], ['deadlineExhaustion', 'thresholdPercent'], ['deadlineExhaustion', 'minRequestsPerPeriod'],
      ['preferredCapacityErrors', 'threshold'],
    ] as const).map(([group, f]): NumericProp => ({
      field: `${group}.${f}`,
      rule: OBSERVABILITY_RULES[`${group}.${f}` as keyof typeof OBSERVABILITY_RULES],
      build: (s, v) => observability(s, { [group]: { [f]: v } }),
    })).concat([durationProp('metricDelay', OBSERVABILITY_RULES.metricDelay, (s, d) => observability(s, { metricDelay: d }))]),
  },
  ArtifactTrust: {
    path: 'Test/Svc',
    props: [
      { field: 'verifierRetry.maxAttempts', rule: TRUST_RULES['verifierRetry.maxAttempts'], build: (s, v) => trust(s, { verifierRetry: { maxAttempts: v } }) },
      durationProp('verifierTimeout', TRUST_RULES.verifierTimeout, (s, d) => trust(s, { verifierTimeout: d })),
    ],
  },
};

/**
 * What the matrix promises for a value: accepted when it satisfies the prop's own rule, or is a token the rule carries.
 * A value that passes its own rule can still break a rule between props (a queue delay beyond the deadline): then the
 * message must name that rule instead, which the caller checks by the field alone.
 */
function promised(rule: Rule, probe: Probe, value: number): 'accept' | 'reject' {
  if (rule.kind !== 'number') throw new Error('numeric props only');
  if (probe.token) return rule.tokens === 'carry' ? 'accept' : 'reject';
  return numberProblem(rule as NumberRule, value) === undefined ? 'accept' : 'reject';
}

describe.each(Object.entries(CONSTRUCTS))('%s: every numeric prop', (construct, { path, props }) => {
  // Every prop x every probe (exhaustive, not sampled), plus random finite values per prop (fast-check).
  test('NaN, Infinity, negatives, fractions and tokens are rejected with path, field, value and range, or accepted as documented', () => {
    for (const prop of props) for (const probe of prop.duration ? DURATION_PROBES : PROBES) expectPromise(construct, path, prop, probe);
  });

  test('property: any finite value is accepted exactly when the rule allows it (or rejected naming the rule that does not)', () => {
    const finite = fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer({ min: -10, max: 5000 }));
    fc.assert(
      fc.property(fc.constantFrom(...props), finite, (prop, v) => {
        const value = prop.duration ? Math.abs(v) : v;
        expectPromise(construct, path, prop, { label: String(value), make: () => value, token: false });
      }),
      { numRuns: 6, seed: 15 },
    );
  });
});

function expectPromise(construct: string, path: string, prop: NumericProp, probe: Probe): void {
  const { stack } = testStack();
  const value = probe.make(stack);
  const message = prop.build(stack, value);
  const line = message.split('\n').find((l) => l.includes(`${prop.field}:`));
  // A token is named as a token: no message prints its encoded number (about -1.888e+289).
  const where = { construct, field: prop.field, probe: probe.label };
  expect({ ...where, message }).toEqual({ ...where, message: expect.not.stringMatching(/e\+28\d/) });
  if (promised(prop.rule, probe, value) === 'reject') {
    const seen = { construct, field: prop.field, probe: probe.label, rejected: line !== undefined };
    expect(seen).toEqual({ ...seen, rejected: true });
    expect(message).toContain(path);
    expect(line).toMatch(/allowed: /);
    if (probe.token) expect(line).toContain('is a CDK token');
    else expect(line).toContain(`is ${prop.duration && Number.isFinite(value) ? `${value} s` : String(value)}`);
  } else {
    // Accepted by its own rule: only a rule between props may still object (a valid but tiny deadline makes a class's
    // queue delay too long), and then it says what is allowed; nothing else may fail.
    if (line !== undefined) expect(line).not.toContain('is a CDK token');
    // Cross rules say what is allowed as "allowed: ...", the memory fit as "Fix: ...", the policy as "<field>: <value> (<allowed>)".
    const saysWhatIsAllowed = expect.stringMatching(/allowed: |Fix: |\(.+\)$/);
    for (const problem of message.split('\n').filter((l) => l.startsWith('  - '))) {
      const seen = { construct, field: prop.field, probe: probe.label, problem };
      expect(seen).toEqual({ ...seen, problem: saysWhatIsAllowed });
    }
  }
}

describe('platform limits the issue named', () => {
  test('a sixth EKS class fails at synth: an ALB forward action takes at most 5 target groups', () => {
    const base = llamaClasses();
    const six = [...base, ...['a', 'b', 'c'].map((n) => ({ ...base[1], name: `a10g-${n}` }))];
    const { stack } = testStack();
    expect(eks(stack, { classes: six })).toContain('classes: 6 classes are declared (l40s, a10g, inf2, a10g-a, a10g-b, a10g-c); allowed: 1 to 5 classes');
    const { stack: ok } = testStack('Five');
    expect(eks(ok, { classes: six.slice(0, 5) })).toBe('');
  });

  test("a service named '7b-chat' fails at synth: Kubernetes Service names are DNS-1035 labels", () => {
    const { stack } = testStack();
    expect(eks(stack, { contract: { ...LLAMA_CONTRACT, name: '7b-chat' } })).toContain(
      "contract.name: is '7b-chat'; allowed: a DNS-1035 label: 1 to 63 lower-case letters, digits and \"-\", starting with a letter",
    );
  });

  test('a derived object name beyond 63 characters fails at synth, naming the class', () => {
    const { stack } = testStack();
    const long = 'x'.repeat(40);
    expect(eks(stack, { contract: { ...LLAMA_CONTRACT, name: long }, namespace: 'serving', classes: llamaClasses().map((c) => ({ ...c, name: `${c.name}-${'y'.repeat(20)}` })) }))
      .toMatch(/class 'l40s-y{20}' name: is 'x{40}-l40s-y{20}' \(66 characters\); allowed: a DNS-1035 label/);
  });

  test('a metric period that is not whole minutes is reported with our path, not by aws-cdk-lib', () => {
    const { stack } = testStack();
    expect(eks(stack, { scaling: { metricPeriod: Duration.seconds(90) } })).toContain(
      "EksInferenceService 'Test/Svc' is invalid (1 problem):\n  - scaling.metricPeriod: is 90 s; allowed: a whole number at least 60 s, a multiple of 60",
    );
    const { stack: r } = testStack('R');
    expect(reconciler(r, { policy: { period: Duration.seconds(90) } })).toContain('policy.period: is 90 s; allowed: a whole number from 60 to 21_600 s, a multiple of 60');
  });

  test('an invalid ECR repository name is reported with our path, not by aws-cdk-lib', () => {
    const { stack } = testStack();
    expect(trust(stack, { repositoryNames: ['Bad_Repo'] })).toContain("ArtifactTrust 'Test/Svc' is invalid (1 problem):\n  - repositoryNames[0]: is 'Bad_Repo'; allowed: an ECR repository name");
  });

  test('the EKS deadline check matches SageMaker: a class that cannot answer a mean request in time fails on both', () => {
    const contract = { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: 9000 } };
    const { stack: e } = testStack('E');
    const { stack: s } = testStack('S');
    for (const message of [eks(e, { contract }), sagemaker(s, { contract })]) {
      expect(message).toContain("class 'l40s' envelope: a mean request needs 9650 ms on this class");
    }
  });
});
