/**
 * The weights the serving constructs deploy route every request until the Reconciler's first run (and again after each
 * deployment that rewrites them): they honour the placement the Reconciler enforces (review R221). The Llama service
 * with inf2 and a10g at `allowSensitive: false` used to deploy {l40s: 96, a10g: 2, inf2: 2} for sensitive requests.
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Reconciler } from '../../lib/control/reconciler';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { type EndpointVariantOptions, SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { smClasses } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { type RoutedClassFacts, type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { servingOf } from './serving-fixture';

/** The classes with `allowSensitive: false` on those named. */
function restricted(classes: CapacityClassSpec[], names: readonly string[]): CapacityClassSpec[] {
  return classes.map((c) => (names.includes(c.name) ? { ...c, placement: { allowSensitive: false } } : c));
}

describe('EksInferenceService: the listener\'s initial weights under the Reconciler\'s placement', () => {
  function build(forbidden: readonly string[], sensitive?: boolean): { stack: Stack; service: EksInferenceService } {
    const { stack } = testStack();
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: restricted(llamaClasses(), forbidden), modelDataFetcherImage: FETCHER_IMAGE,
      kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    if (sensitive !== undefined) new Reconciler(stack, 'Reconciler', { serving: service, sensitive });
    return { stack, service };
  }
  const forwarded = (stack: Stack) => {
    const listener = Object.values(Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::Listener'))[0];
    const groups = listener.Properties.DefaultActions[0].ForwardConfig.TargetGroups as Array<{ TargetGroupArn: { Ref: string }; Weight: number }>;
    return Object.fromEntries(['l40s', 'a10g', 'inf2'].map((c) => [c, groups.find((g) => g.TargetGroupArn.Ref.startsWith(`LlamaTargetGroup${c}`))!.Weight]));
  };

  test('a class the placement forbids gets weight 0 from the first deploy, as from every run', () => {
    const { stack, service } = build(['a10g', 'inf2'], true);
    expect(forwarded(stack)).toEqual({ l40s: 100, a10g: 0, inf2: 0 });
    expect(service.initialWeights).toEqual({ l40s: 100, a10g: 0, inf2: 0 });
  });

  test('requests that are not sensitive, or no Reconciler: every ready class keeps its warm floor', () => {
    expect(forwarded(build(['a10g', 'inf2'], false).stack)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
    expect(forwarded(build(['a10g', 'inf2']).stack)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
  });

  test('fails at synth when the placement forbids every class (no weight could be deployed)', () => {
    expect(() => build(['l40s', 'a10g', 'inf2'], true)).toThrow(
      "Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - sensitive: is true but every routed class has allowSensitive: false; " +
        'allowed: a routed class that may take sensitive requests',
    );
  });

  test('applyPlacement itself refuses a placement that forbids every class, naming the service', () => {
    const { service } = build(['l40s', 'a10g', 'inf2']);
    expect(() => service.applyPlacement({ sensitive: true })).toThrow(
      "EksInferenceService 'Test/Llama' is invalid (1 problem):\n  - classes[].placement.allowSensitive: is false on every class ('l40s', 'a10g', 'inf2') " +
        'and the Reconciler routes sensitive requests (sensitive: true), so no class may take traffic; allowed: at least one class that allows sensitive requests',
    );
  });
});

describe('SageMakerCapacityEndpoint: the variants\' initial weights under the Reconciler\'s placement', () => {
  const ONE_PER_CLASS: EndpointVariantOptions[] = ['l40s', 'a10g', 'inf2'].map((c) => ({ name: c, classes: [c] }));
  function build(
    forbidden: readonly string[], variants: EndpointVariantOptions[], sensitive?: boolean,
  ): { stack: Stack; endpoint: SageMakerCapacityEndpoint } {
    const { stack } = testStack();
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: restricted(smClasses(), forbidden), variants });
    if (sensitive !== undefined) new Reconciler(stack, 'Reconciler', { serving: endpoint, sensitive });
    return { stack, endpoint };
  }
  const weights = (stack: Stack) => Object.fromEntries(
    (Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::EndpointConfig'))[0].Properties.ProductionVariants as
      Array<{ VariantName: string; InitialVariantWeight: number }>).map((v) => [v.VariantName, v.InitialVariantWeight]),
  );

  test('a variant the placement forbids gets InitialVariantWeight 0, as from every run', () => {
    const { stack, endpoint } = build(['a10g', 'inf2'], ONE_PER_CLASS, true);
    expect(weights(stack)).toEqual({ l40s: 100, a10g: 0, inf2: 0 });
    expect(endpoint.plannedVariants.map((v) => v.initialWeight)).toEqual([100, 0, 0]);
    // Not sensitive: the cost plan's warm floors.
    expect(weights(build(['a10g', 'inf2'], ONE_PER_CLASS, false).stack)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
  });

  test('a variant with one forbidden pool is forbidden whole (SageMaker picks the pool): its traffic goes to the allowed variant', () => {
    const variants = [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'] }];
    expect(weights(build(['a10g'], variants, true).stack)).toEqual({ preferred: 0, fallback: 100 });
    Template.fromStack(build(['a10g'], variants, false).stack).hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [Match.objectLike({ InitialVariantWeight: 98 }), Match.objectLike({ InitialVariantWeight: 2 })],
    });
  });

  test('fails when an explicit initialWeight puts traffic on a variant the placement forbids', () => {
    const variants = ONE_PER_CLASS.map((v) => (v.name === 'inf2' ? { ...v, initialWeight: 5 } : v));
    expect(() => build(['inf2'], variants, true)).toThrow(
      "SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - variants['inf2'].initialWeight: is 5 but the variant's pool 'inf2' has " +
        'allowSensitive: false and the Reconciler routes sensitive requests (sensitive: true), so it never gives the variant weight; allowed: 0, or no initialWeight',
    );
    expect(weights(build(['inf2'], variants.map((v) => (v.name === 'inf2' ? { ...v, initialWeight: 0 } : v)), true).stack)).toEqual({ l40s: 98, a10g: 2, inf2: 0 });
  });

  test('fails at synth when the placement forbids every variant (no weight could be deployed)', () => {
    expect(() => build(['l40s', 'a10g', 'inf2'], ONE_PER_CLASS, true)).toThrow(
      '  - sensitive: is true but every routed class has allowSensitive: false; allowed: a routed class that may take sensitive requests',
    );
    const { endpoint } = build(['l40s', 'a10g', 'inf2'], ONE_PER_CLASS);
    expect(() => endpoint.applyPlacement({ sensitive: true })).toThrow(
      '  - variants: every variant has a pool with allowSensitive: false and the Reconciler routes sensitive requests (sensitive: true), ' +
        'so no variant may take traffic; allowed: at least one variant whose pools all allow sensitive requests',
    );
  });
});

describe('Reconciler: a serving that cannot take the placement', () => {
  const cls = (name: string, rank: number, allowSensitive: boolean): RoutedClassFacts => ({
    name, preferenceRank: rank, tokensPerSecondPerReplica: 1000, safeConcurrency: 8, usdPerReplicaHour: 2, allowSensitive, maxReplicas: 10, instanceType: `ml.${name}`,
  });
  const endpoint = (fallbackAllowsSensitive: boolean): RoutingFacts => ({
    kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
    variants: [
      { variantName: 'preferred', classes: [cls('g6e.xlarge', 0, true)] },
      { variantName: 'fallback', classes: [cls('inf2.xlarge', 1, fallbackAllowsSensitive)] },
    ],
  });
  const facts = endpoint(false);

  test('fails when sensitive is true, a routed class is forbidden and the serving has no applyPlacement', () => {
    const { stack } = testStack();
    expect(() => new Reconciler(stack, 'Sensitive', { serving: servingOf(facts, 's', 100), sensitive: true })).toThrow(
      "  - serving.applyPlacement: is undefined while sensitive is true and the placement forbids 'fallback' (allowSensitive: false): nothing says " +
        'the weights the serving deploys, which route until the first run, leave them out; allowed: a serving that implements applyPlacement ' +
        '(SageMakerCapacityEndpoint and EksInferenceService do), or sensitive: false',
    );
  });

  test('passes the placement to a serving that takes it, and needs nothing from one whose classes are all allowed', () => {
    const { stack } = testStack();
    const given: unknown[] = [];
    new Reconciler(stack, 'Taken', { serving: { ...servingOf(facts, 's1', 100), applyPlacement: (p: unknown) => given.push(p) }, sensitive: true });
    expect(given).toEqual([{ sensitive: true }]);
    expect(() => new Reconciler(stack, 'Open', { serving: servingOf(endpoint(true), 's2', 100), sensitive: true })).not.toThrow();
  });
});
