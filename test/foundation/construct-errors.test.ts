/**
 * One validation error for every construct, thrown when the input is given (docs/validation.md, "When input is
 * checked"): the construct, its path and every problem at once; a control construct never reports what an invalid
 * serving construct would produce in place of the serving construct's own problems; input that used to pass silently
 * (issue 20, items 12 and 13) is refused with the value and what is allowed.
 */
import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { InferenceAlarms } from '../../lib/control/alarms';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { type ReconcilerProps } from '../../lib/control/reconciler';
import { type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { checkCapacityClasses } from '../../lib/core/service/checks';
import { ConstructValidationError } from '../../lib/core/validation/error';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { servingOf } from '../control/serving-fixture';
import { smClasses, synthError, TWO_VARIANTS } from '../sagemaker/fixtures';
import { LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

function thrown(fn: () => unknown): ConstructValidationError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConstructValidationError) return e;
    throw e;
  }
  throw new Error('expected a ConstructValidationError');
}

const FACTS: SageMakerRoutingFacts = {
  kind: 'sagemaker',
  endpointName: 'chat',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat',
  variants: [{
    variantName: 'preferred',
    classes: [{
      name: 'l40s', preferenceRank: 0, tokensPerSecondPerReplica: 1200, safeConcurrency: 16, usdPerReplicaHour: 2.6, allowSensitive: true,
      maxReplicas: 8, instanceType: 'ml.g6e.xlarge',
    }],
  }],
};

describe('one error type, thrown when the input is given', () => {
  test('every construct throws ConstructValidationError with its class, its path and the problems (field, value, what is allowed)', () => {
    const { stack } = testStack();
    const e = thrown(() => new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, standbyInstances: 0 }));
    expect({ construct: e.construct, path: e.path }).toEqual({ construct: 'SageMakerCapacityEndpoint', path: 'Test/Endpoint' });
    expect(e.problems).toEqual([{ field: 'standbyInstances', message: 'is 0; allowed: a whole number at least 1 (SageMaker variants cannot scale to 0)' }]);
    const r = thrown(() => new Reconciler(stack, 'Reconciler', { serving: servingOf(FACTS, 'chat'), policy: { weightTotal: 5 } }));
    expect({ construct: r.construct, path: r.path, fields: r.problems.map((p) => p.field) }).toEqual({ construct: 'Reconciler', path: 'Test/Reconciler', fields: ['policy.weightTotal'] });
    const a = thrown(() => new InferenceAlarms(stack, 'Alarms', { serving: servingOf(FACTS, 'chat'), fallbackShare: { thresholdPercent: 0 } }));
    expect(a.message).toBe("InferenceAlarms 'Test/Alarms' is invalid (1 problem):\n  - fallbackShare.thresholdPercent: is 0 %; allowed: a finite number above 0 and below 100 %");
  });
});

describe('a control construct never masks the serving construct\'s own problems', () => {
  test('fails with the endpoint\'s own message when a SageMaker endpoint has no variants (not with "no capacity classes")', () => {
    const { stack } = testStack();
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract: LLAMA_CONTRACT, classes: smClasses() });
    const e = thrown(() => new InferenceObservability(stack, 'Observability', { serving: endpoint }));
    expect(e.construct).toBe('SageMakerCapacityEndpoint');
    expect(e.message).toMatch(/^SageMakerCapacityEndpoint 'Test\/Endpoint' is invalid \(4 problems\):\n {2}- variants: no variants are declared/);
    expect(e.message).not.toMatch(/target groups|no capacity classes|Observability/);
    expect(thrown(() => new Reconciler(stack, 'Reconciler', { serving: endpoint })).construct).toBe('SageMakerCapacityEndpoint');
  });

  test('an endpoint nobody reads reports its completeness at synth, with the same message', () => {
    const { stack } = testStack();
    new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract: LLAMA_CONTRACT, classes: smClasses() });
    expect(synthError(stack)).toContain("[Test/Endpoint] SageMakerCapacityEndpoint 'Test/Endpoint' is invalid (4 problems):\n  - variants: no variants are declared");
  });
});

describe('issue 20 item 13: unclear failures', () => {
  test('fails when the serving prop is missing, naming it instead of a TypeError', () => {
    const { stack } = testStack();
    expect(() => new Reconciler(stack, 'Reconciler', {} as ReconcilerProps)).toThrow(
      "Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - serving: is missing; allowed: a serving construct: SageMakerCapacityEndpoint, EksInferenceService",
    );
    expect(() => new InferenceObservability(stack, 'Observability', {} as never)).toThrow("InferenceObservability 'Test/Observability' is invalid (1 problem):\n  - serving: is missing");
  });

  test('fails when the props of the old API are given, with the migration', () => {
    const { stack } = testStack();
    const old = { service: 'chat', facts: FACTS, tokensPerRequest: 250 } as unknown as ReconcilerProps;
    expect(() => new Reconciler(stack, 'Reconciler', old)).toThrow(
      "  - serving: is missing; 'service', 'facts', 'tokensPerRequest' are props of the API before the control constructs took the serving construct: "
      + 'pass { serving: endpoint } instead',
    );
  });

  test('fails when a SageMaker metric method names an unknown variant or instance type (it would be an empty metric)', () => {
    const { stack } = testStack();
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
    expect(() => endpoint.metricInvocations('prefered')).toThrow(
      "SageMakerCapacityEndpoint 'Test/Endpoint' is invalid (1 problem):\n  - metric('Invocations').variantName: is 'prefered', no variant of this endpoint "
      + "(declared: 'preferred', 'fallback'); allowed: the name of a declared variant",
    );
    expect(() => endpoint.metricModelLatency('preferred', { instanceType: 'ml.inf2.xlarge' })).toThrow(
      "metric('ModelLatency').options.instanceType: is 'ml.inf2.xlarge', no pool of variant 'preferred' (pools: 'ml.g6e.xlarge', 'ml.g5.xlarge')",
    );
    expect(endpoint.metricModelLatency('preferred', { instanceType: 'ml.g5.xlarge' }).dimensions).toMatchObject({ VariantName: 'preferred', InstanceType: 'ml.g5.xlarge' });
  });

  test('token messages name the token, never its encoded number', () => {
    const { stack } = testStack();
    const token = Duration.seconds(Lazy.number({ produce: () => 60 }));
    const message = thrown(() => new InferenceAlarms(stack, 'Alarms', {
      serving: servingOf(FACTS, 'chat'), period: token, fallbackShare: { duration: token },
    })).message;
    expect(message).toContain('  - period: is a CDK token (the alarms compute their evaluation periods from it); allowed: a whole number of minutes from 1 minute to 1 day');
    expect(message).toContain('  - fallbackShare.duration: is a CDK token (the alarm computes its evaluation periods from it)');
    expect(message).not.toMatch(/e\+28\d/);
  });
});

describe('issue 20 item 12: silently accepted input is refused', () => {
  test('fails when every class at its quota cannot carry the planned peak, with the numbers', () => {
    const { stack } = testStack();
    const contract = { ...LLAMA_CONTRACT, peakRequestsPerSecond: 200 };
    new SageMakerCapacityEndpoint(stack, 'Endpoint', { contract, classes: smClasses(), variants: TWO_VARIANTS });
    expect(synthError(stack)).toContain(
      '  - contract.peakRequestsPerSecond: is 200 requests/s: 200 x 250 tokens x (1 + 0.2) = 60000 tokens/s planned, but every class at its quota '
      + 'carries l40s 8 x 1200 + a10g 24 x 400 + inf2 24 x 300 = 26400 tokens/s (44 % of it); allowed: a planned demand',
    );
    // The largest peak the quotas carry passes: 26400 / 250 / 1.2 = 88 requests/s.
    const { stack: ok } = testStack('Ok');
    new SageMakerCapacityEndpoint(ok, 'Endpoint', { contract: { ...LLAMA_CONTRACT, peakRequestsPerSecond: 88 }, classes: smClasses(), variants: TWO_VARIANTS });
    expect(synthError(ok)).toBe('');
  });

  test('fails when two Reconcilers route one serving construct, and accepts one per serving', () => {
    const { stack } = testStack();
    const serving = servingOf(FACTS, 'chat');
    new Reconciler(stack, 'First', { serving });
    expect(() => new Reconciler(stack, 'Second', { serving })).toThrow(
      "Reconciler 'Test/Second' is invalid (1 problem):\n  - serving: is already routed by the Reconciler at 'Test/First'; allowed: one Reconciler per serving construct",
    );
    const { stack: other } = testStack('Other');
    expect(() => new Reconciler(other, 'First', { serving })).not.toThrow();
    Template.fromStack(other);
  });

  test('fails when two Reconcilers of one app route one service name in the same account and Region (their state metrics are keyed by it)', () => {
    const { app, stack } = testStack('Prod');
    new Reconciler(stack, 'R', { serving: servingOf(FACTS, 'chat') });
    const staging = new Stack(app, 'Staging', { env: { account: '123456789012', region: 'us-east-1' } });
    expect(() => new Reconciler(staging, 'R', { serving: servingOf(FACTS, 'chat') })).toThrow(
      "Reconciler 'Staging/R' is invalid (1 problem):\n  - serving.service: is 'chat', which the Reconciler at 'Prod/R' also routes in "
      + '123456789012/us-east-1; allowed: a service name that no other Reconciler uses in the same account and Region',
    );
    // Another Region, another name, or a stack deployed wherever the CLI points: accepted.
    const west = new Stack(app, 'West', { env: { account: '123456789012', region: 'us-west-2' } });
    expect(() => new Reconciler(west, 'R', { serving: servingOf(FACTS, 'chat') })).not.toThrow();
    expect(() => new Reconciler(staging, 'R2', { serving: servingOf(FACTS, 'chat-staging') })).not.toThrow();
    const anywhere = new Stack(app, 'Anywhere');
    expect(() => new Reconciler(anywhere, 'R', { serving: servingOf(FACTS, 'chat') })).not.toThrow();
  });
});

describe('issue 20 item 12: class inputs', () => {
  const problems = (patch: (c: ReturnType<typeof llamaClasses>[number]) => object, region?: string) =>
    checkCapacityClasses(llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, ...patch(c) } : c)), { contract: LLAMA_CONTRACT, platform: 'ec2', region })
      .problems.map((p) => `${p.className} ${p.field}: ${p.message}`);

  test('fails when an envelope is implausibly low (it would plan several times the fleet), and accepts a modest one', () => {
    expect(problems((c) => ({ envelope: { ...c.envelope, tokensPerSecondPerReplica: 40 } }))).toEqual([
      'l40s envelope: 40 tokens/s at a safe concurrency of 16 is 10x below the 414.5 tokens/s of 16 requests of 250 tokens in 9650 ms each; '
      + 'tokensPerSecondPerReplica is generated tokens per second of one replica at that concurrency; allowed: at least 1/8 of the tokens/s '
      + 'that the safe concurrency generates when each request takes p95 TTFT + mean output tokens x p95 ITL (an implausibly low envelope '
      + 'plans several times the fleet the load needs, at its cost)',
    ]);
    expect(problems((c) => ({ envelope: { ...c.envelope, tokensPerSecondPerReplica: 60 } }))).toEqual([]);
  });

  test.each([
    ['', 'is "", empty'],
    ['meta-llama/Meta-Llama-3-8B-Instruct', "is 'meta-llama/Meta-Llama-3-8B-Instruct', which the engine reads as a Hugging Face Hub id"],
    ['models/llama', "is 'models/llama', which the engine reads as a Hugging Face Hub id"],
  ])('fails when runtime.modelPath is %p (an unpinned download), and accepts an absolute path', (modelPath, found) => {
    const noData = (c: ReturnType<typeof llamaClasses>[number]) => ({ artifact: { image: c.artifact.image } });
    expect(problems((c) => ({ ...noData(c), runtime: { ...c.runtime, modelPath } }))).toEqual([
      expect.stringMatching(new RegExp(`^l40s runtime.modelPath: ${found.replace(/[.()/]/g, '\\$&')}.*; allowed: an absolute path inside the image`)),
    ]);
    expect(problems((c) => ({ ...noData(c), runtime: { ...c.runtime, modelPath: '/opt/models/llama' } }))).toEqual([]);
  });

  test('fails when runtime.queueBound is neither required nor best-effort', () => {
    expect(problems((c) => ({ runtime: { ...c.runtime, queueBound: 'sometimes' } }))).toEqual([
      "l40s runtime.queueBound: is \"sometimes\"; allowed: 'required' or 'best-effort'",
    ]);
  });

  test('fails when a zone is of another region or the zone list is empty, and accepts zones and Local Zones of the region', () => {
    expect(problems(() => ({ placement: { zones: ['eu-west-1a', 'us-east-1b'] } }), 'us-east-1')).toEqual([
      "l40s placement.zones[0]: is 'eu-west-1a', not a zone of the stack's region us-east-1; allowed: zones of the stack's region: "
      + "'<region><letter>', or a Local Zone '<region>-<zone>' (Karpenter would wait for nodes in a zone the cluster cannot launch in)",
    ]);
    expect(problems(() => ({ placement: { zones: [] } }), 'us-east-1')).toEqual([
      'l40s placement.zones: is []; allowed: a non-empty list of distinct zones (omit placement.zones to use every zone of the region) '
      + '(Karpenter requirements with the In operator need at least one value: an empty list would leave the class no node)',
    ]);
    expect(problems(() => ({ placement: { zones: ['us-east-1a', 'us-east-1-bos-1a'] } }), 'us-east-1')).toEqual([]);
  });
});
