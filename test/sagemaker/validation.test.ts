import { Annotations as CoreAnnotations, CfnParameter, CfnWaitConditionHandle, Duration, Fn, Lazy, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { type Construct } from 'constructs';
import { type CapacityClass, type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import {
  type EndpointVariantOptions,
  SageMakerCapacityEndpoint,
  type SageMakerCapacityEndpointProps,
} from '../../lib/sagemaker/endpoint';
import { modelDataSource } from '../../lib/sagemaker/class-model';
import { LLAMA_CONTRACT, testStack } from '../util';
import { a10gOn, smClasses, synthError, TWO_VARIANTS } from './fixtures';

const PATH = 'Test/Llama';

/** The endpoint's error: thrown at construction for its input, or at synth when only its completeness is wrong. */
function errorOf(props: Partial<SageMakerCapacityEndpointProps>): string {
  const { stack } = testStack();
  try {
    new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, ...props });
  } catch (e) {
    return (e as Error).message;
  }
  return synthError(stack);
}

function withClass(index: number, patch: (c: CapacityClassSpec) => CapacityClassSpec): CapacityClassSpec[] {
  return smClasses().map((c, i) => (i === index ? patch(c) : c));
}

/** Six GPU classes on distinct SageMaker types, for pool-count tests. */
function sixClasses(): CapacityClassSpec[] {
  const [l40s, a10g] = smClasses();
  return [
    l40s,
    a10g,
    a10gOn('l4', 'ml.g6.2xlarge'),
    a10gOn('a10g-2x', 'ml.g5.2xlarge'),
    a10gOn('l40s-2x', 'ml.g6e.2xlarge', 3.1),
    a10gOn('l4-4x', 'ml.g6.12xlarge'),
  ];
}

describe('SageMakerCapacityEndpoint validation', () => {
  test('valid input synthesizes', () => {
    expect(errorOf({})).toBe('');
  });

  test('modelDataEncryptionKey must be a key, not an alias (a grant on the alias ARN is no grant on its key)', () => {
    const { stack } = testStack();
    const build = (modelDataEncryptionKey: kms.IKey) => () =>
      new SageMakerCapacityEndpoint(stack, `Llama${stack.node.children.length}`, {
        contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, modelDataEncryptionKey,
      });
    expect(build(kms.Alias.fromAliasName(stack, 'Alias', 'alias/models')))
      .toThrow(/SageMakerCapacityEndpoint 'Test\/Llama\d+' is invalid[^]*modelDataEncryptionKey: is the alias 'Test\/Alias'; allowed: a KMS key/);
    expect(build(kms.Key.fromKeyArn(stack, 'AliasArn', 'arn:aws:kms:us-east-1:123456789012:alias/models')))
      .toThrow("modelDataEncryptionKey: is 'arn:aws:kms:us-east-1:123456789012:alias/models', an alias ARN");
    expect(build(kms.Key.fromKeyArn(stack, 'KeyArn', 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'))).not.toThrow();
  });

  test('metrics.publishFrequency must be one CloudFormation accepts', () => {
    expect(errorOf({ metrics: { publishFrequency: Duration.seconds(45) } })).toContain('metrics.publishFrequency: is 45 s; allowed: 10, 30, 60, 120, 180, 240 or 300 seconds');
    expect(errorOf({ metrics: { publishFrequency: Duration.seconds(10), enhancedMetrics: false } })).toBe('');
  });

  test('with enhanced metrics on, metrics.publishFrequency is at most the 60 s period the Reconciler and the alarms read', () => {
    // Enhanced metrics publish the invocation metrics at this frequency too: at 300 s four periods in five are empty.
    expect(errorOf({ metrics: { publishFrequency: Duration.minutes(5) } })).toContain(
      'metrics.publishFrequency: is 300 s with enhancedMetrics on; allowed: at most 60 seconds while enhancedMetrics is on');
    expect(errorOf({ metrics: { publishFrequency: Duration.seconds(120), enhancedMetrics: true } })).toContain('is 120 s with enhancedMetrics on');
    expect(errorOf({ metrics: { publishFrequency: Duration.seconds(30) } })).toBe('');
    expect(errorOf({ metrics: { publishFrequency: Duration.minutes(5), enhancedMetrics: false } })).toBe('');
  });

  test('enhanced metrics are on by default every 10 s (the scaling metric\'s cadence); detailed observability (PromQL-only) is off', () => {
    const { stack } = testStack();
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
    // With enhanced metrics the interval applies to the invocation metrics too, ConcurrentRequestsPerModel among them,
    // whose high-resolution form emits every 10 s (endpoint-auto-scaling-add-code-define.html): 10 s cannot slow it.
    expect(stack.resolve(endpoint.endpointConfig.metricsConfig)).toEqual({
      enableEnhancedMetrics: true, metricPublishFrequencyInSeconds: 10, enableDetailedObservability: false,
    });
    // No capacity-error or token producer on SageMaker: only the status class each pool's engine sheds with.
    expect(endpoint.servingDescription().signals).toEqual({
      classes: { a10g: { rejectionStatus: '5xx' }, inf2: { rejectionStatus: '5xx' }, l40s: { rejectionStatus: '5xx' } },
    });
    expect(endpoint.servingDescription().tokensPerRequest).toBe(LLAMA_CONTRACT.requestShape.meanOutputTokens);
  });

  test('without enhanced metrics the publish frequency stays at SageMaker\'s 60 s; a frequency given is rendered as given', () => {
    const metricsOf = (metrics: SageMakerCapacityEndpointProps['metrics']) => {
      const { stack } = testStack();
      const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, metrics,
      });
      const configs = Template.fromStack(stack).findResources('AWS::SageMaker::EndpointConfig');
      return configs[stack.getLogicalId(endpoint.endpointConfig)].Properties.MetricsConfig;
    };
    // Invocation metrics then publish at 60 s whatever the interval, and the high-resolution metric is not affected.
    expect(metricsOf({ enhancedMetrics: false }))
      .toEqual({ EnableEnhancedMetrics: false, MetricPublishFrequencyInSeconds: 60, EnableDetailedObservability: false });
    expect(metricsOf({ publishFrequency: Duration.seconds(30) })).toMatchObject({ EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 30 });
    expect(metricsOf({ publishFrequency: Duration.minutes(1) })).toMatchObject({ EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 60 });
    expect(metricsOf({ enhancedMetrics: false, publishFrequency: Duration.seconds(10) })).toMatchObject({ MetricPublishFrequencyInSeconds: 10 });
    expect(metricsOf({ detailedObservability: true }))
      .toEqual({ EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10, EnableDetailedObservability: true });
  });

  test('the message names the construct path and the service, and lists every problem at once', () => {
    const msg = errorOf({
      provisionTimeout: Duration.seconds(100),
      variants: [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'empty', classes: [] }],
    });
    expect(msg).toContain(`SageMakerCapacityEndpoint '${PATH}' is invalid (3 problems):`);
    expect(msg).toContain('provisionTimeout: is 100 s');
    expect(msg).toContain("variants['empty'].classes: is empty");
    expect(msg).toContain("variants: class 'inf2' is in no variant");
  });

  test('fails when a variant has more than 5 pools; 5 pass', () => {
    const six = sixClasses();
    const ok = errorOf({ classes: six, variants: [{ name: 'gpu', classes: six.slice(0, 5).map((c) => c.name) }, { name: 'rest', classes: ['l4-4x'] }] });
    expect(ok).toBe('');
    const msg = errorOf({ classes: six, variants: [{ name: 'gpu', classes: six.map((c) => c.name) }] });
    expect(msg).toContain("variants['gpu'].classes: has 6 classes; a variant holds at most 5 instance pools. Split them over more variants");
  });

  test('fails at the addVariant() call that gives a variant 6 pools: input is checked when it is given', () => {
    const six = sixClasses();
    const { stack } = testStack();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: six });
    expect(() => e.addVariant({ name: 'gpu', classes: six.map((c) => c.name) })).toThrow(
      "SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - variants['gpu'].classes: has 6 classes; a variant holds at most 5",
    );
  });

  test('a variant may name a class that addClass() declares later: completeness is checked when the endpoint is read or synthesized', () => {
    const six = sixClasses();
    const { stack } = testStack();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, variants: [{ name: 'gpu', classes: ['l40s', 'a10g'] }] });
    expect(() => e.servingDescription()).toThrow("variants['gpu'].classes: 'l40s' is not a class of this endpoint; declared classes: none");
    e.addClass(six[0]).addClass(six[1]);
    expect(synthError(stack)).toBe('');
    expect(e.servingDescription().routing.kind).toBe('sagemaker');
  });

  test('fails at addClass() / addVariant() once the endpoint has been read: what read it would never see them (R231)', () => {
    const { stack } = testStack();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
    e.routingFacts();
    expect(() => e.addVariant({ name: 'third', classes: ['l4'] })).toThrow(
      "SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - addVariant(): got variant 'third' after the endpoint was read; allowed: "
      + 'every class and variant added before the endpoint is first read',
    );
    expect(e.plannedVariants.map((v) => v.name)).toEqual(['preferred', 'fallback']);
  });

  test('fails when a variant is named after a class it is not exactly, at the call that gives both (the routing facts\' rule, R231)', () => {
    const named = (variants: EndpointVariantOptions[]) => errorOf({ variants });
    expect(named([{ name: 'inf2', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'] }])).toContain(
      "variants['inf2'].name: 'inf2' is the name of a capacity class it is not exactly; allowed: a variant name that is no class name, or the "
      + 'name of its only class (a routed class and a capacity class share the CapacityClass dimension: one name must mean the same replicas)',
    );
    // A variant of several classes named after one of them is not that class either.
    expect(named([{ name: 'l40s', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'] }])).toContain("variants['l40s'].name: 'l40s' is the name");
    // Its only class's name is that class.
    expect(named([{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'inf2', classes: ['inf2'] }])).toBe('');
    // Declared in either order: the addClass() that brings the class's name fails.
    const { stack } = testStack();
    const [l40s, a10g, inf2] = smClasses();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: [l40s, inf2], variants: [{ name: 'a10g', classes: ['inf2'] }] });
    expect(() => e.addClass(a10g)).toThrow("variants['a10g'].name: 'a10g' is the name of a capacity class it is not exactly");
  });

  test('fails when two pools of a variant have the same priority, or a priority outside 1..5', () => {
    const msg = errorOf({
      variants: [
        { name: 'preferred', classes: [{ className: 'l40s', priority: 2 }, { className: 'a10g', priority: 2 }] },
        { name: 'fallback', classes: [{ className: 'inf2', priority: 6 }] },
      ],
    });
    expect(msg).toContain("variants['preferred'].classes: priority 2 is given to 'l40s', 'a10g'; each pool of a variant needs its own priority");
    expect(msg).toContain("variants['fallback'].classes['inf2'].priority: is 6; allowed: a whole number from 1 to 5");
  });

  test('explicit priorities order the pools', () => {
    const { stack } = testStack();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', {
      contract: LLAMA_CONTRACT,
      classes: smClasses(),
      variants: [{ name: 'preferred', classes: [{ className: 'a10g', priority: 3 }, { className: 'l40s', priority: 1 }] }, TWO_VARIANTS[1]],
    });
    expect(synthError(stack)).toBe('');
    expect(e.plannedVariants[0].pools.map((p) => [p.priority, p.capacityClass.name])).toEqual([
      [1, 'l40s'],
      [3, 'a10g'],
    ]);
  });

  test('fails when two classes of a variant run on the same instance type', () => {
    const classes = [...smClasses(), a10gOn('a10g-awq-b', 'ml.g5.xlarge')];
    const msg = errorOf({ classes, variants: [{ name: 'preferred', classes: ['l40s', 'a10g', 'a10g-awq-b'] }, TWO_VARIANTS[1]] });
    expect(msg).toContain("variants['preferred'].classes: 'a10g' and 'a10g-awq-b' both run on ml.g5.xlarge; the pools of a variant need distinct instance types");
  });

  test('fails when more than 10 variants are declared; 10 pass', () => {
    const names = Array.from({ length: 11 }, (_, i) => `c${i}`);
    const classes = names.map((n, i) => (i === 0 ? { ...smClasses()[0], name: n } : { ...smClasses()[2], name: n }));
    const variants = (n: number): EndpointVariantOptions[] => names.slice(0, n).map((c) => ({ name: `v-${c}`, classes: [c] }));
    expect(errorOf({ classes: classes.slice(0, 10), variants: variants(10) })).toBe('');
    expect(errorOf({ classes, variants: variants(11) })).toContain('variants: 11 variants are declared; an endpoint allows at most 10 production variants');
  });

  test('fails when the provision timeout is outside 300..3600 s; both bounds pass', () => {
    expect(errorOf({ provisionTimeout: Duration.seconds(300) })).toBe('');
    expect(errorOf({ provisionTimeout: Duration.seconds(3600) })).toBe('');
    expect(errorOf({ provisionTimeout: Duration.seconds(299) })).toContain(
      'provisionTimeout: is 299 s; allowed: a whole number from 300 to 3600 s (VariantInstanceProvisionTimeoutInSeconds)',
    );
    expect(errorOf({ variants: [{ ...TWO_VARIANTS[0], provisionTimeout: Duration.seconds(3601) }, TWO_VARIANTS[1]] })).toContain(
      "variants['preferred'].provisionTimeout: is 3601 s",
    );
  });

  test("fails when a class's hardware is not a SageMaker ml. type", () => {
    const msg = errorOf({ classes: withClass(1, (c) => ({ ...c, instanceType: 'g5.xlarge' })) });
    expect(msg).toContain(
      "class 'a10g' instanceType: 'g5.xlarge' is a ec2 type; this service runs on sagemaker and needs a SageMaker 'ml.' instance type",
    );
  });

  test('fails when a class fails the domain checks: memory, tensor-parallel degree, digest pinning', () => {
    const classes = smClasses().map((c) => {
      if (c.name === 'l40s') return { ...c, runtime: { ...c.runtime, maxConcurrentSequences: 64 }, envelope: { ...c.envelope } };
      if (c.name === 'inf2') return { ...c, footprint: { ...c.footprint, tensorParallelDegree: 3 } };
      return { ...c, artifact: { ...c.artifact, image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest' } };
    });
    const msg = errorOf({ classes });
    expect(msg).toContain("class 'l40s' memory: ml.g6e.xlarge cannot hold this model");
    expect(msg).toContain("class 'inf2' footprint.tensorParallelDegree: 3 does not divide the 2 NeuronCores of ml.inf2.xlarge; allowed: 1, 2");
    expect(msg).toContain("class 'a10g' artifact.image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest' is not pinned by digest");
  });

  test('fails when an image is not in Amazon ECR', () => {
    const msg = errorOf({ classes: withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, image: `ghcr.io/vllm/vllm@sha256:${'a'.repeat(64)}` } })) });
    expect(msg).toContain("class 'l40s' artifact.image: 'ghcr.io/vllm/vllm@sha256:");
    expect(msg).toContain('SageMaker hosting pulls from ECR');
  });

  test("fails when an image is in another region's ECR", () => {
    const image = `123456789012.dkr.ecr.eu-west-1.amazonaws.com/vllm@sha256:${'a'.repeat(64)}`;
    expect(errorOf({ classes: withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, image } })) })).toContain(
      "class 'l40s' artifact.image: is in eu-west-1 but the endpoint is in us-east-1",
    );
  });

  test('fails when the autoscaling range contradicts the plan or the quota', () => {
    const scaled = (scaling: EndpointVariantOptions['scaling'], name: 'preferred' | 'fallback' = 'preferred') =>
      errorOf({ variants: TWO_VARIANTS.map((v) => (v.name === name ? { ...v, scaling } : v)) });
    // Quota: l40s 8 + a10g 24 = 32 instances.
    expect(scaled({ maxInstances: 32 })).toBe('');
    expect(scaled({ maxInstances: 33 })).toContain(
      "variants['preferred'].scaling.maxInstances: 33 exceeds the quota of the variant's pool types (l40s 8 + a10g 24 = 32); scale-out past it would fail",
    );
    expect(scaled({ maxInstances: 4 })).toContain(
      "variants['preferred'].scaling.maxInstances: 4 is below the 5 instances of 'l40s' the capacity plan needs for planned peak with headroom",
    );
    expect(scaled({ minInstances: 3, maxInstances: 2 }, 'fallback')).toContain("variants['fallback'].scaling.maxInstances: 2 is below minInstances 3");
    expect(scaled({ minInstances: 0 }, 'fallback')).toContain("variants['fallback'].scaling.minInstances: is 0; allowed: a whole number at least 1 (an instance-based variant cannot scale to 0)");
  });

  test('fails when the scaling target exceeds the safe concurrency of the slowest pool type', () => {
    expect(errorOf({ variants: [{ ...TWO_VARIANTS[0], scaling: { targetConcurrencyPerInstance: 8 } }, TWO_VARIANTS[1]] })).toBe('');
    expect(errorOf({ variants: [{ ...TWO_VARIANTS[0], scaling: { targetConcurrencyPerInstance: 9 } }, TWO_VARIANTS[1]] })).toContain(
      "variants['preferred'].scaling.targetConcurrencyPerInstance: is 9; allowed: above 0 and at most 8",
    );
  });

  test('fails when a variant has no classes', () => {
    expect(errorOf({ variants: [...TWO_VARIANTS, { name: 'spare', classes: [] }] })).toContain(
      "variants['spare'].classes: is empty; a variant needs at least one class (one instance pool)",
    );
  });

  test('fails when no variants are declared', () => {
    expect(errorOf({ variants: [] })).toContain('variants: no variants are declared; group the classes into production variants with addVariant()');
  });

  test('fails when a class is in no variant, in two variants, or a variant names an unknown class', () => {
    const msg = errorOf({ variants: [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['a10g', 'h100'] }] });
    expect(msg).toContain("variants['fallback'].classes: class 'a10g' is already in variant 'preferred'");
    expect(msg).toContain("variants['fallback'].classes: 'h100' is not a class of this endpoint; declared classes: 'l40s', 'a10g', 'inf2'");
    expect(msg).toContain("variants: class 'inf2' is in no variant");
  });

  test('fails when variant names repeat or are not SageMaker names', () => {
    const msg = errorOf({ variants: [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'preferred', classes: ['inf2'] }] });
    expect(msg).toContain("variants: variant name 'preferred' is used more than once");
    expect(errorOf({ variants: [TWO_VARIANTS[0], { name: 'fall_back', classes: ['inf2'] }] })).toContain(
      "variants['fall_back'].name: is 'fall_back'; allowed: a SageMaker name: 1 to 63 letters, digits and '-'",
    );
  });

  test('fails when an explicit endpoint name is not a SageMaker name', () => {
    expect(errorOf({ endpointName: 'llama3-chat' })).toBe('');
    expect(errorOf({ endpointName: 'llama3_chat' })).toContain("endpointName: is 'llama3_chat'; allowed: a SageMaker name");
  });

  test('fails when a variant added later with addVariant() takes a class that is already routed', () => {
    const { stack } = testStack();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
    expect(() => e.addVariant({ name: 'extra', classes: ['inf2'] })).toThrow("variants['extra'].classes: class 'inf2' is already in variant 'fallback'");
  });

  test('fails when duplicate class names are declared', () => {
    expect(errorOf({ classes: [...smClasses(), smClasses()[2]] })).toContain(
      "name: 'inf2' is used by more than one class; class names must be unique within a service",
    );
  });

  test('fails when runtime.env overrides a derived setting, or runtime.args are not flags', () => {
    const msg = errorOf({
      classes: withClass(0, (c) => ({ ...c, runtime: { ...c.runtime, env: { SM_VLLM_MAX_NUM_SEQS: '64', HF_HUB_OFFLINE: '1' }, args: ['serve'] } })),
    });
    expect(msg).toContain("class 'l40s' runtime.env.SM_VLLM_MAX_NUM_SEQS: is set by the library");
    expect(msg).not.toContain('HF_HUB_OFFLINE');
    expect(msg).toContain("class 'l40s' runtime.args[0]: 'serve' is not a flag");
  });

  test('fails when an engine is unknown or its release has no bounded queue, naming the value and what is allowed', () => {
    const msg = errorOf({
      classes: withClass(0, (c) => ({ ...c, runtime: { ...c.runtime, engine: 'sglang' } })).map((c) =>
        c.name === 'a10g' ? { ...c, runtime: { ...c.runtime, engineVersion: '0.11.0' } } : c,
      ),
    });
    expect(msg).toContain("SageMakerCapacityEndpoint 'Test/Llama' is invalid");
    expect(msg).toContain("class 'l40s' runtime.engine: 'sglang' is not an engine the library can bind; allowed: vllm, tgi, djl-lmi, triton, custom");
    expect(msg).toContain("class 'a10g' runtime.queueBound: is 'required' but vllm 0.11.0 has no bounded queue (it exists from 0.29.0)");
  });

  test("warns with the consequence when a class accepts an unbounded queue ('best-effort')", () => {
    const { stack } = testStack();
    const classes = withClass(1, (c) => ({ ...c, runtime: { ...c.runtime, engine: 'triton', engineVersion: undefined, queueBound: 'best-effort' } }));
    new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
    Annotations.fromStack(stack).hasWarning(
      '/Test/Llama',
      Match.stringLikeRegexp("class 'a10g': Triton's bounded queue is max_queue_size .* are not rejected by the server but queue past the deadline"),
    );
    // One id per topic and class, as on EKS: acknowledged, only that class's warning of that topic is gone.
    const found = Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp("Triton's bounded queue"));
    expect(String(found[0].entry.data)).toContain('[ack: cdk-capacity-aware-inference:unbounded-queue-a10g]');
    const { stack: acknowledged } = testStack('Acknowledged');
    const endpoint = new SageMakerCapacityEndpoint(acknowledged, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
    CoreAnnotations.of(endpoint).acknowledgeWarning('cdk-capacity-aware-inference:unbounded-queue-a10g', 'sheds nothing by design');
    expect(Annotations.fromStack(acknowledged).findWarning('*', Match.stringLikeRegexp("Triton's bounded queue"))).toEqual([]);
  });

  test('fails when a model-data key does not name its content (SageMaker downloads whatever the key holds)', () => {
    const classes = withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri: 's3://models-bucket/llama3-8b/bf16.tar' } } }));
    expect(errorOf({ classes })).toContain(
      "class 'l40s' artifact.modelData.uri: 's3://models-bucket/llama3-8b/bf16.tar' does not contain the model data's SHA-256 " +
        `(${'a'.repeat(64)}); SageMaker cannot pin an S3 object version (S3ModelDataSource has no VersionId)`,
    );
  });

  test('fails when the model data is an uncompressed .tar object (SageMaker unpacks only gzip archives); .tar.gz, .tgz, a prefix and one file pass', () => {
    const uriOf = (uri: string) => withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } } }));
    const sha = 'a'.repeat(64);
    const tar = `s3://models-bucket/llama3-8b/bf16-${sha}.tar`;
    expect(errorOf({ classes: uriOf(tar) })).toContain(
      `class 'l40s' artifact.modelData.uri: '${tar}' is an uncompressed tar archive, which SageMaker would not unpack ` +
        '(it unpacks an S3Object only with CompressionType Gzip, which the library sets for .tar.gz and .tgz; ' +
        `anything else it places as the one file /opt/ml/model/bf16-${sha}.tar), so the engine would find no model and the endpoint would never become healthy; ` +
        'allowed (suffixes in any case): a gzip-compressed tar archive ending in .tar.gz or .tgz, an s3://<bucket>/<prefix>/ of uncompressed files, ' +
        'or one non-archive file (placed as /opt/ml/model/<its name>)',
    );
    expect(errorOf({ classes: uriOf(`s3://models-bucket/llama3-8b/bf16-${sha}.Tar`) })).toContain('is an uncompressed tar archive, which SageMaker would not unpack');
    for (const ok of [`${tar}.gz`, `s3://models-bucket/llama3-8b/bf16-${sha}.tgz`, `s3://models-bucket/llama3-8b/${sha}/`, `s3://models-bucket/llama3-8b/${sha}.gguf`]) {
      expect(errorOf({ classes: uriOf(ok) })).toBe('');
    }
  });

  test('a gzip archive with a suffix in any case is unpacked (CompressionType Gzip), as on EKS; an archive neither platform unpacks fails (review R251)', () => {
    const sha = 'a'.repeat(64);
    const uriOf = (uri: string) => withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } } }));
    for (const suffix of ['.TAR.GZ', '.Tar.Gz', '.Tgz', '.TGZ']) {
      const uri = `s3://models-bucket/llama3-8b/bf16-${sha}${suffix}`;
      expect(modelDataSource(uri)).toEqual({ s3Uri: uri, s3DataType: 'S3Object', compressionType: 'Gzip' });
      expect(errorOf({ classes: uriOf(uri) })).toBe('');
    }
    const zip = `s3://models-bucket/llama3-8b/bf16-${sha}.ZIP`;
    expect(errorOf({ classes: uriOf(zip) })).toContain(
      `class 'l40s' artifact.modelData.uri: '${zip}' is an archive or compressed file (.zip), which SageMaker would not unpack ` +
        '(it unpacks an S3Object only with CompressionType Gzip, which the library sets for .tar.gz and .tgz; ' +
        `anything else it places as the one file /opt/ml/model/bf16-${sha}.ZIP), so the engine would find no model and the endpoint would never become healthy; ` +
        'allowed (suffixes in any case):',
    );
    expect(errorOf({ classes: uriOf(`s3://models-bucket/llama3-8b/bf16-${sha}.tar.xz`) })).toContain('is an archive or compressed file (.xz), which SageMaker would not unpack');
  });

  test('an archive SageMaker does not unpack passes for a custom image, with a warning per class that it lands as one file (review R252)', () => {
    const sha = 'a'.repeat(64);
    const custom = (uri: string) => withClass(0, (c) => ({
      ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } },
      runtime: { ...c.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort' },
    }));
    const warnings = (classes: CapacityClassSpec[]) => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('sagemaker-model-data-archive')).map((w) => String(w.entry.data));
    };
    const zip = `s3://models-bucket/llama3-8b/${sha}.zip`;
    expect(errorOf({ classes: custom(zip) })).toBe('');
    expect(modelDataSource(zip)).toEqual({ s3Uri: zip, s3DataType: 'S3Object', compressionType: 'None' });
    expect(warnings(custom(zip))).toEqual([
      `class 'l40s': '${zip}' is an archive or compressed file (.zip), which SageMaker does not unpack (it unpacks an S3Object only with ` +
        `CompressionType Gzip, which the library sets for .tar.gz and .tgz): it lands as-is, as the one file /opt/ml/model/${sha}.zip, and the custom ` +
        'image must unpack it itself (into a writable directory such as CAI_CACHE_DIR) before it serves, or the endpoint would never become healthy. ' +
        'Acknowledge this warning once the image does, or use an archive SageMaker unpacks: a gzip-compressed tar archive ending in .tar.gz or .tgz, ' +
        'an s3://<bucket>/<prefix>/ of uncompressed files, or one non-archive file (placed as /opt/ml/model/<its name>) ' +
        '[ack: cdk-capacity-aware-inference:sagemaker-model-data-archive-l40s]',
    ]);
    expect(warnings(custom(`s3://models-bucket/llama3-8b/${sha}.onnx.GZ`))).toEqual([expect.stringContaining('(.gz), which SageMaker does not unpack')]);
    // What SageMaker unpacks or serves as a file is no archive to warn of; an uncompressed .tar is still refused (it never unpacks one).
    expect(warnings(custom(`s3://models-bucket/llama3-8b/${sha}.tar.gz`))).toEqual([]);
    expect(warnings(custom(`s3://models-bucket/llama3-8b/${sha}.onnx`))).toEqual([]);
    expect(errorOf({ classes: custom(`s3://models-bucket/llama3-8b/${sha}.tar`) })).toContain('is an uncompressed tar archive, which SageMaker would not unpack');
    // The engines the library binds read a directory: refused, with the way out.
    const vllm = withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri: zip } } }));
    expect(errorOf({ classes: vllm })).toContain("(placed as /opt/ml/model/<its name>); or engine 'custom', whose image may unpack it itself");
  });

  test('model data in a bucket given as a token is read like a literal one (the same parser); a URI that is wholly a token is refused', () => {
    const { stack } = testStack();
    const bucket = new s3.Bucket(stack, 'Models');
    const sha = 'a'.repeat(64);
    const uriOf = (uri: string) => withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } } }));
    const classes = uriOf(`s3://${bucket.bucketName}/llama3-8b/${sha}/`);
    new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
    const bucketRef = { Ref: stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket) };
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Sid: 'ReadOwnModelData', Action: 's3:GetObject', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', bucketRef, `/llama3-8b/${sha}/*`]] } }),
          Match.objectLike({ Sid: 'ListOwnModelData', Action: 's3:ListBucket', Condition: { StringLike: { 's3:prefix': [`llama3-8b/${sha}/*`] } } }),
        ]),
      },
    });
    expect(errorOf({ classes: uriOf(Lazy.string({ produce: () => `s3://models-bucket/${sha}.tar.gz` })) })).toMatch(
      /class 'l40s' artifact\.modelData\.uri: '\$\{Token\[[^\]]+\]\}' holds a CDK token but is not s3:\/\/<bucket>\/<key> around it, so the/,
    );
  });

  test('a model data SHA-256 given as a token is refused (the key cannot be checked against it), and so is a token key without the literal digest', () => {
    const { stack } = testStack();
    const digest = new CfnParameter(stack, 'Digest', { type: 'String' }).valueAsString;
    const bucket = new s3.Bucket(stack, 'Models');
    const sha = 'a'.repeat(64);
    const dataOf = (uri: string, sha256: string) => withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, modelData: { uri, sha256 } } }));
    const at = (classes: CapacityClassSpec[]) => () => new SageMakerCapacityEndpoint(stack, `Llama${stack.node.children.length}`, { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
    expect(at(dataOf('s3://models-bucket/latest/model.tar.gz', digest))).toThrow(
      /class 'l40s' artifact\.modelData\.sha256: '\$\{Token\[[^\]]+\]\}' is a CDK token, which is only resolved at deploy time; allowed on SageMaker/,
    );
    // Even a key that holds the token: a digest known only at deploy time is checked by nothing on SageMaker.
    expect(at(dataOf(`s3://models-bucket/llama3-8b/${digest}.tar.gz`, digest))).toThrow('is a CDK token, which is only resolved at deploy time');
    // A token bucket, the literal key without the digest: refused like a literal bucket (it was skipped before).
    expect(at(dataOf(`s3://${bucket.bucketName}/latest/model.tar.gz`, sha))).toThrow("does not contain the model data's SHA-256");
    // A token in the key: its literal part must contain the digest.
    const part = new CfnParameter(stack, 'Part', { type: 'String' }).valueAsString;
    expect(at(dataOf(`s3://models-bucket/${part}/model.tar.gz`, sha))).toThrow(
      "has a CDK token in its key and its literal part does not contain the model data's SHA-256",
    );
    expect(at(dataOf(`s3://models-bucket/${part}/${sha}.tar.gz`, sha))).not.toThrow();
  });

  test('input from a configuration file without a class part or the contract\'s slo or request shape: one problem per missing field, no TypeError', () => {
    for (const part of ['artifact', 'footprint', 'runtime'] as const) {
      expect(errorOf({ classes: withClass(0, (c) => ({ ...c, [part]: undefined as never })) })).toMatch(
        new RegExp(`^SageMakerCapacityEndpoint 'Test/Llama' is invalid \\(1 problem\\):\\n  - class 'l40s' ${part}: is missing; allowed: an object with `),
      );
    }
    expect(errorOf({ contract: { ...LLAMA_CONTRACT, slo: undefined as never } })).toContain('contract.slo.deadlineMs: is undefined; allowed: a finite number above 0 ms');
    expect(errorOf({ contract: { ...LLAMA_CONTRACT, requestShape: undefined as never } })).toContain(
      'contract.requestShape.meanOutputTokens: is undefined; allowed: a finite number above 0 tokens',
    );
  });

  test('fails when TGI gets runtime.args, which its SageMaker entrypoint never passes on, naming the variables to set instead', () => {
    const classes = withClass(0, (c) => ({ ...c, artifact: { image: c.artifact.image },
      runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7', modelPath: '/opt/model', args: ['--max-waiting-tokens', '10'] } }));
    expect(errorOf({ classes })).toContain(
      "class 'l40s' runtime.args: are [\"--max-waiting-tokens\",\"10\"], but TGI's SageMaker entrypoint runs text-generation-launcher --port 8080 " +
        "without the container's arguments, so they would be lost (tgi.entrypoint.sagemaker); every launcher option is also a variable " +
        '(tgi.entrypoint.launcher-variables), so allowed: none, and runtime.env instead: MAX_WAITING_TOKENS=10',
    );
  });

  test('an image holding a CDK token must end in a literal digest: repositoryUriForTag and repositoryUri are refused, repositoryUriForDigest passes', () => {
    const { stack } = testStack();
    const repo = new ecr.Repository(stack, 'Repo');
    const at = (image: string) => () => new SageMakerCapacityEndpoint(stack, `Llama${stack.node.children.length}`, {
      contract: LLAMA_CONTRACT, classes: withClass(0, (c) => ({ ...c, artifact: { ...c.artifact, image } })), variants: TWO_VARIANTS,
    });
    const param = new CfnParameter(stack, 'Image', { type: 'String' }).valueAsString;
    for (const image of [repo.repositoryUriForTag('latest'), repo.repositoryUri, `${param}:latest`]) {
      expect(at(image)).toThrow(/class 'l40s' artifact\.image: '.*\$\{Token\[.*' holds a CDK token and does not end in a literal @sha256/);
    }
    expect(at(repo.repositoryUriForDigest(`sha256:${'1'.repeat(64)}`))).not.toThrow();
  });

  describe("the container environment within CreateModel's limits (ContainerDefinition.Environment)", () => {
    const withRuntime = (patch: Partial<CapacityClassSpec['runtime']>) => withClass(0, (c) => ({ ...c, runtime: { ...c.runtime, ...patch } }));

    test('fails when a runtime.args value becomes a variable over 1024 bytes; 1024 passes', () => {
      const msg = errorOf({ classes: withRuntime({ args: ['--chat-template', 'x'.repeat(1500)] }) });
      expect(msg).toContain(
        "class 'l40s' runtime.args: sets the SageMaker container variable SM_VLLM_CHAT_TEMPLATE to a value of 1500 bytes; " +
          'CreateModel allows at most 1024 bytes per value',
      );
      expect(errorOf({ classes: withRuntime({ args: ['--chat-template', 'x'.repeat(1024)] }) })).toBe('');
    });

    test('fails when a runtime.env key is not a variable name SageMaker takes, or its key or value is over 1024 bytes', () => {
      const msg = errorOf({ classes: withRuntime({ env: { 'MY-VAR': '1', LONG: 'é'.repeat(600), ['K'.repeat(1025)]: '1' } }) });
      expect(msg).toContain("class 'l40s' runtime.env.MY-VAR: 'MY-VAR' is not a name SageMaker takes for a container variable; allowed: [a-zA-Z_][a-zA-Z0-9_]*");
      // Bytes, not characters: 600 x 'é' is 1200 bytes of UTF-8.
      expect(msg).toContain("class 'l40s' runtime.env.LONG: sets the SageMaker container variable LONG to a value of 1200 bytes; CreateModel allows at most 1024");
      expect(msg).toContain(`class 'l40s' runtime.env.${'K'.repeat(1025)}: is a variable name of 1025 bytes; CreateModel allows at most 1024 bytes per key`);
    });

    test('fails when the whole environment is over 32 KB or 100 variables', () => {
      const big = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`BIG_${i}`, 'x'.repeat(1000)]));
      expect(errorOf({ classes: withRuntime({ env: big }) })).toMatch(new RegExp(
        "class 'l40s' runtime\\.env: the SageMaker container environment is 3\\d{4} bytes \\(keys and values\\); " +
          'CreateModel allows at most 32 KB, counted as 32000 bytes',
      ));
      const many = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`V_${i}`, '1']));
      expect(errorOf({ classes: withRuntime({ env: many }) })).toMatch(
        /class 'l40s' runtime\.env: the SageMaker container environment has 1\d\d variables \(80 from runtime\.env\); CreateModel allows at most 100/,
      );
    });

    test('a value with a token in it is not measured (its length is known only at deploy time, not from the encoding)', () => {
      // 1010 literal bytes and a token that resolves to '': its encoding alone would count over 1024.
      expect(errorOf({ classes: withRuntime({ env: { LATER: `${'x'.repeat(1010)}${Lazy.string({ produce: () => '' })}` } }) })).toBe('');
    });
  });

  describe("VPC settings within AWS::SageMaker::Model VpcConfig's counts", () => {
    const vpcError = (build: (stack: Stack, vpc: ec2.Vpc) => Partial<SageMakerCapacityEndpointProps>): string => {
      const { stack } = testStack();
      const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
      try {
        new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc, ...build(stack, vpc) });
      } catch (e) {
        return (e as Error).message;
      }
      return synthError(stack);
    };
    const groups = (stack: Stack, vpc: ec2.Vpc, n: number) => Array.from({ length: n }, (_, i) => new ec2.SecurityGroup(stack, `Sg${i}`, { vpc }));

    test('fails when securityGroups has none or more than 5; 1 and 5 pass', () => {
      expect(vpcError(() => ({ securityGroups: [] }))).toContain(
        `${PATH}' is invalid (1 problem):\n  - securityGroups: has 0 security groups; allowed: 1 to 5 (AWS::SageMaker::Model VpcConfig.SecurityGroupIds)`,
      );
      expect(vpcError((stack, vpc) => ({ securityGroups: groups(stack, vpc, 6) }))).toContain('securityGroups: has 6 security groups; allowed: 1 to 5');
      expect(vpcError((stack, vpc) => ({ securityGroups: groups(stack, vpc, 1) }))).toBe('');
      expect(vpcError((stack, vpc) => ({ securityGroups: groups(stack, vpc, 5) }))).toBe('');
    });

    test('fails when vpcSubnets selects no subnet or more than 16', () => {
      expect(vpcError(() => ({ vpcSubnets: { subnets: [] } }))).toContain(
        'vpcSubnets: selects 0 subnets; allowed: 1 to 16 (AWS::SageMaker::Model VpcConfig.Subnets)',
      );
      const subnets = (stack: Stack) => Array.from({ length: 17 }, (_, i) =>
        ec2.Subnet.fromSubnetAttributes(stack, `Subnet${i}`, { subnetId: `subnet-${i}`, availabilityZone: `us-east-1${'abc'[i % 3]}` }));
      expect(vpcError((stack) => ({ vpcSubnets: { subnets: subnets(stack) } }))).toContain('vpcSubnets: selects 17 subnets; allowed: 1 to 16');
    });

    test('fails when vpcSubnets or securityGroups are given without vpc: the Models would get no VpcConfig to put them in (R231)', () => {
      const { stack } = testStack();
      const securityGroups = [ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-12345678')];
      expect(() => new SageMakerCapacityEndpoint(stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS,
        securityGroups, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      })).toThrow(`${PATH}' is invalid (2 problems):\n  - vpcSubnets: is set but vpc is not; allowed: only with vpc (without vpc the model containers `
        + 'run in the network SageMaker manages, and the Models get no VpcConfig for the subnets or groups to go in)\n  - securityGroups: is set but vpc is not');
      expect(errorOf({ securityGroups: [] })).toContain('securityGroups: is set but vpc is not');
      expect(vpcError(() => ({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } }))).toBe('');
    });

    test('warns when the selected subnets are all in one Availability Zone (SageMaker asks for two); not when the zone is unknown', () => {
      const build = (select: (stack: Stack, vpc: ec2.Vpc) => ec2.SubnetSelection | undefined) => {
        const { stack } = testStack();
        const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
        new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc, vpcSubnets: select(stack, vpc) });
        return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('Availability Zone'));
      };
      const oneAz = build((_, vpc) => ({ subnets: [vpc.privateSubnets[0]] }));
      expect(oneAz).toHaveLength(1);
      expect(JSON.stringify(oneAz[0].entry.data)).toContain(
        'the selected subnets are all in dummy1a; SageMaker asks for subnets in at least two Availability Zones even for one instance',
      );
      expect(build(() => undefined)).toEqual([]);
      expect(build((stack) => ({ subnets: [ec2.Subnet.fromSubnetId(stack, 'NoZone', 'subnet-1')] }))).toEqual([]);
      // An imported VPC whose zones are a list token: every subnet reads the same encoded zone, which says nothing.
      const { stack } = testStack();
      const imported = ec2.Vpc.fromVpcAttributes(stack, 'Imported', {
        vpcId: 'vpc-1', vpcCidrBlock: '10.0.0.0/16', availabilityZones: Fn.getAzs(), privateSubnetIds: ['subnet-a', 'subnet-b'],
      });
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc: imported });
      expect(Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('Availability Zone'))).toEqual([]);
    });

    test('warns when the selected subnets are isolated (the model data needs an S3 gateway endpoint there)', () => {
      const build = (subnetType?: ec2.SubnetType) => {
        const { stack } = testStack();
        const vpc = new ec2.Vpc(stack, 'Vpc', {
          maxAzs: 2, natGateways: 1,
          subnetConfiguration: [
            { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
            { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
            { name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
          ],
        });
        new SageMakerCapacityEndpoint(stack, 'Llama', {
          contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc, vpcSubnets: subnetType && { subnetType },
        });
        return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('isolated'));
      };
      expect(build(ec2.SubnetType.PRIVATE_ISOLATED)).toHaveLength(1);
      expect(build()).toEqual([]);
      // A pending lookup's placeholder VPC gives its private and isolated groups the same ids: no warning then.
      const { stack } = testStack();
      const vpc = ec2.Vpc.fromLookup(stack, 'Vpc', { vpcId: 'vpc-12345' });
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc });
      expect(Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('isolated'))).toEqual([]);
    });
  });

  test('fails when a TGI class has no model to load on SageMaker (its entrypoint exits without HF_MODEL_ID)', () => {
    const classes = withClass(0, (c) => ({ ...c, artifact: { image: c.artifact.image }, runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7' } }));
    expect(errorOf({ classes })).toContain("class 'l40s' runtime.modelPath: is not set and the class has no artifact.modelData, so tgi on SageMaker has no model to load");
  });

  test('fails when a class cannot answer a mean request before the deadline', () => {
    const slow = withClass(2, (c) => ({ ...c, envelope: { ...c.envelope, itlP95Ms: 60, ttftP95Ms: 1500 } }));
    const msg = errorOf({ classes: slow, contract: { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: 16000 } } });
    expect(msg).toContain("class 'inf2' envelope: a mean request needs 16500 ms on this class");
  });

  test('fails when standbyInstances is above what a fallback variant may run, instead of cutting it to that (R231)', () => {
    // inf2 (the fallback variant) needs 20 instances for the planned peak with headroom, within its maxReplicas of 24.
    expect(errorOf({ standbyInstances: 20 })).toBe('');
    expect(errorOf({ standbyInstances: 21 })).toContain(
      "standbyInstances: is 21, above the 20 instances fallback variant 'fallback' may run: the 20 instances of 'inf2' that carry the planned peak "
      + 'with headroom (within its maxReplicas 24); allowed: at most the planned maximum of every fallback variant that does not set scaling.minInstances',
    );
    // Bounded by the quota below the peak: the message says which bound.
    const capped = withClass(2, (c) => ({ ...c, maxReplicas: 12 }));
    expect(errorOf({ classes: capped, standbyInstances: 13 })).toContain(
      "standbyInstances: is 13, above the 12 instances fallback variant 'fallback' may run: the maxReplicas quota of 'inf2', 12 (below the 20 instances the planned peak needs)",
    );
    // A variant with its own minimum does not take the standby.
    const ownMin: EndpointVariantOptions[] = [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], scaling: { minInstances: 22, maxInstances: 24 } }];
    expect(errorOf({ standbyInstances: 21, variants: ownMin })).toBe('');
  });

  test('warns per class whose weights exceed its instance\'s memory: an eager load would be killed (R229)', () => {
    const warnings = (classes: CapacityClassSpec[]) => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('exceed')).map((w) => String(w.entry.data));
    };
    // ml.inf2.xlarge has 16 GiB: the 15 GiB model fits (tightly), a 17 GiB one does not.
    expect(warnings(smClasses())).toEqual([]);
    const big = withClass(2, (c) => ({ ...c, footprint: { ...c.footprint, weightsGiB: 17 } }));
    expect(warnings(big)).toEqual([expect.stringContaining("class 'inf2': its weights (17 GiB) exceed the 16 GiB of ml.inf2.xlarge's memory.")]);
  });

  test('warns per class over 40 GB when modelDataDownloadTimeout keeps its default (AWS\'s large-model advice; R229)', () => {
    const warnings = (props: Partial<SageMakerCapacityEndpointProps>) => {
      const { stack } = testStack();
      const classes = withClass(0, (c) => ({ ...c, instanceType: 'ml.g6e.12xlarge', footprint: { ...c.footprint, weightsGiB: 40, tensorParallelDegree: 4 } }));
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS, ...props });
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('ModelDataDownloadTimeoutInSeconds')).map((w) => String(w.entry.data));
    };
    // 40 GiB is 43 GB; the other classes' 5.7 and 15 GiB are below.
    expect(warnings({})).toEqual([expect.stringContaining("class 'l40s': its weights are 43 GB, over the 40 GB above which AWS says to raise")]);
    expect(warnings({ modelDataDownloadTimeout: Duration.minutes(40) })).toEqual([]);
  });

  test('warns per TGI class with model data: TGI converts .bin/.pt beside them and /opt/ml/model is read-only (TGI v3.3.7 cli.py:309-312)', () => {
    const warnings = (classes: CapacityClassSpec[]) => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('sagemaker-weights-conversion')).map((w) => String(w.entry.data));
    };
    // vLLM and DJL LMI classes: nothing.
    expect(warnings(smClasses())).toEqual([]);
    const tgi = withClass(1, (c) => ({ ...c, runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7' } }));
    expect(warnings(tgi)).toEqual([
      "class 'a10g': TGI loads safetensors only: at start it converts .bin or .pt weights into .safetensors files it writes beside them, "
      + 'and no setting moves that write. Its weights are in /opt/ml/model, which SageMaker mounts read-only: without .safetensors files '
      + 'there the write fails ("Read-only file system") and the server exits before it answers a health check, so no instance of the '
      + "class passes its health check and the endpoint's creation or update fails (the stack rolls back). Ship the weights as safetensors "
      + '(convert .bin or .pt beforehand, e.g. `text-generation-server download-weights <directory>` on a writable copy) and acknowledge '
      + 'this warning [ack: cdk-capacity-aware-inference:sagemaker-weights-conversion-a10g]',
    ]);
    // Weights in the image or a hub id are not in /opt/ml/model.
    const inImage = withClass(1, (c) => ({ ...c, artifact: { image: c.artifact.image }, runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7', modelPath: '/opt/model' } }));
    expect(warnings(inImage)).toEqual([]);
    const hub = withClass(1, (c) => ({ ...c, artifact: { image: c.artifact.image },
      runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7', env: { HF_MODEL_ID: 'meta-llama/Meta-Llama-3-8B-Instruct' } } }));
    expect(warnings(hub)).toEqual([]);
  });

  test('the weights-conversion warning is acknowledged per class', () => {
    const { stack } = testStack();
    const tgi = smClasses().map((c) => (c.name === 'inf2' ? c : { ...c, runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7' } }));
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: tgi, variants: TWO_VARIANTS });
    CoreAnnotations.of(endpoint).acknowledgeWarning('cdk-capacity-aware-inference:sagemaker-weights-conversion-l40s');
    expect(Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('sagemaker-weights-conversion')).map((w) => String(w.entry.data)))
      .toEqual([expect.stringMatching(/^class 'a10g': TGI loads safetensors only/)]);
  });

  test('warns per variant whose minimum is more than half of its priority-1 class\'s maxReplicas: a configuration change needs quota for both fleets (R244)', () => {
    const warnings = (props: Partial<SageMakerCapacityEndpointProps>) => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, ...props });
      Template.fromStack(stack);
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('sagemaker-blue-green-quota')).map((w) => String(w.entry.data));
    };
    // 'preferred' keeps 5 (l40s's planned fleet) of l40s's 8: an update needs 10 ml.g6e.xlarge, and 30 instances at the variant's 15.
    expect(warnings({})).toEqual([
      "variant 'preferred' keeps at least 5 instances (its scaling minimum), more than half of the 8 ml.g6e.xlarge its priority-1 class 'l40s' "
      + "may run (maxReplicas, the account's quota for the type): a deployment that replaces the endpoint configuration (image, model data, "
      + 'container variables, or a changed InitialInstanceCount or InitialVariantWeight) is a blue/green update whose new fleet starts at the live '
      + "instance counts, so a configuration change then needs quota for both fleets: at least 10 ml.g6e.xlarge, and 30 (twice the variant's "
      + 'maximum, 15) of each pool type to update at any count. Request that quota. The warning clears where maxReplicas is at least twice the '
      + "minimum (the preferred variant's default minimum follows maxReplicas up to the 5 instances its peak needs, so at maxReplicas 10), or "
      + 'where scaling.minInstances is at most half of maxReplicas (docs/sagemaker-endpoint.md, "Quotas and regions"); or acknowledge it '
      + '[ack: cdk-capacity-aware-inference:sagemaker-blue-green-quota-preferred]',
    ]);
    // Exactly half is the doc's rule ("at most half"): no warning.
    expect(warnings({ classes: withClass(0, (c) => ({ ...c, maxReplicas: 10 })) })).toEqual([]);
    // A fallback variant whose own minimum is more than half of its class's 24.
    const ownMin: EndpointVariantOptions[] = [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], scaling: { minInstances: 13, maxInstances: 24 } }];
    const both = warnings({ variants: ownMin });
    expect(both).toHaveLength(2);
    expect(both[1]).toContain("variant 'fallback' keeps at least 13 instances (its scaling minimum), more than half of the 24 ml.inf2.xlarge");
    expect(warnings({ variants: [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], scaling: { minInstances: 12, maxInstances: 24 } }] })).toHaveLength(1);
  });

  test('warns per class when artifact.signingProfileName or modelData.versionId is given without artifactGate: nothing reads them (R231)', () => {
    const warnings = (props: Partial<SageMakerCapacityEndpointProps>) => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, ...props });
      return Annotations.fromStack(stack).findWarning('/Test/Llama', Match.stringLikeRegexp('artifactGate')).map((w) => String(w.entry.data));
    };
    const signed = withClass(2, (c) => ({ ...c, artifact: { ...c.artifact, signingProfileName: 'ModelSigner' } }));
    const all = warnings({ classes: signed });
    // test/util's l40s and a10g pin a versionId; inf2 gets a profile here and has none.
    expect(all).toHaveLength(3);
    expect(all[0]).toContain("class 'l40s': artifact.modelData.versionId 'v1' (SageMaker downloads the key's current object whatever its version) "
      + 'does nothing without artifactGate; pass an ArtifactTrust as artifactGate');
    expect(all[2]).toContain("class 'inf2': artifact.signingProfileName 'ModelSigner' (nothing checks the image's signature) does nothing without artifactGate");
    const unpinned = smClasses().map((c) => {
      const data = c.artifact.modelData;
      return data ? { ...c, artifact: { ...c.artifact, modelData: { uri: data.uri, sha256: data.sha256 } } } : c;
    });
    expect(warnings({ classes: unpinned })).toEqual([]);
    // With a gate both are read: it verifies the signature and that the pinned version is the key's current one.
    const gate = { gateFor: (scope: Construct, cls: CapacityClass) => new CfnWaitConditionHandle(scope, `Gate-${cls.name}`) };
    expect(warnings({ classes: signed, artifactGate: gate })).toEqual([]);
  });

  test('fails when the warm floor, standby, data capture sampling or container timeouts are out of range', () => {
    const { stack } = testStack();
    const bucket = new s3.Bucket(stack, 'B');
    const msg = ((): string => {
      try {
        new SageMakerCapacityEndpoint(stack, 'Llama', {
          contract: LLAMA_CONTRACT,
          classes: smClasses(),
          variants: TWO_VARIANTS,
          warmFloorShare: 1,
          standbyInstances: 0,
          dataCapture: { bucket, samplingPercentage: 0 },
          containerStartupHealthCheckTimeout: Duration.hours(2),
        });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(msg).toContain('warmFloorShare: is 1; allowed: a finite number from 0 to 0.2');
    expect(msg).toContain('standbyInstances: is 0; allowed: a whole number at least 1 (SageMaker variants cannot scale to 0)');
    expect(msg).toContain('dataCapture.samplingPercentage: is 0; allowed: a whole number from 1 to 100');
    expect(msg).toContain('containerStartupHealthCheckTimeout: is 7200 s; allowed: a whole number from 60 to 3600 s');
  });
});
