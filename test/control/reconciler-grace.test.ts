// The Reconciler construct's provisioning grace follows the replica-ready time the serving construct's classes declare
// (envelope.replicaReadyTimeP95Seconds, carried in the routing facts): defaultProvisioningGraceSeconds, the function the
// simulator's library config uses too (test/sim/platform-defaults-grace.test.ts).
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Annotations as CoreAnnotations, Duration, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Reconciler, type ReconcilerProps } from '../../lib/control/reconciler';
import { resolvePolicyConfig } from '../../lib/core/policy/defaults';
import { environmentBytes, RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';
import { RECONCILER_SERVICE_ENV } from '../../lib/core/reconciler/faults';
import { metricQuery } from '../../lib/core/reconciler/observe';
import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { reconcilerConfigProblems } from '../../lib/core/validation/reconciler-config';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { servingOf } from './serving-fixture';

const WARNING = 'cdk-capacity-aware-inference:reconciler-grace-below-ready-time';

/** The classes with the replica-ready times (p95, seconds) a load test on a deployment measured. */
function measured(classes: CapacityClassSpec[], readyTimes: Readonly<Record<string, number>>): CapacityClassSpec[] {
  return classes.map((c) => (readyTimes[c.name] === undefined ? c
    : { ...c, envelope: { ...c.envelope, replicaReadyTimeP95Seconds: readyTimes[c.name] } }));
}

function eks(readyTimes: Readonly<Record<string, number>>, props: Omit<ReconcilerProps, 'serving'> = {}, restricted: readonly string[] = []) {
  const { stack } = testStack();
  const classes = measured(llamaClasses(), readyTimes).map((c) => (restricted.includes(c.name) ? { ...c, placement: { allowSensitive: false } } : c));
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
  });
  return { stack, service, reconciler: new Reconciler(stack, 'Reconciler', { serving: service, ...props }) };
}

function sagemaker(readyTimes: Readonly<Record<string, number>>, props: Omit<ReconcilerProps, 'serving'> = {}) {
  const { stack } = testStack();
  const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: measured(smClasses(), readyTimes), variants: TWO_VARIANTS });
  return { stack, endpoint, reconciler: new Reconciler(stack, 'Reconciler', { serving: endpoint, ...props }) };
}

const grace = (r: Reconciler) => resolvePolicyConfig(r.config.policy).provisioningGraceSeconds;
const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('reconciler-grace-below-ready-time'));

describe('EksInferenceService: the default grace follows the preferred class\'s declared replica-ready time', () => {
  test('no class declares one: 300 s, and the configuration is what it was (nothing rendered)', () => {
    const { reconciler } = eks({});
    expect(reconciler.config.policy.provisioningGraceSeconds).toBeUndefined();
    expect(grace(reconciler)).toBe(300);
  });

  test('l40s declares 420 s: 7 one-minute periods + 2 = 540 s; the facts carry each declared time', () => {
    const { reconciler, service } = eks({ l40s: 420, inf2: 1200 });
    expect(reconciler.config.policy.provisioningGraceSeconds).toBe(540);
    const facts = service.servingDescription().routing;
    expect(facts.kind === 'alb' && facts.targets.map((t) => [t.class.name, t.class.replicaReadyTimeP95Seconds]))
      .toEqual([['l40s', 420], ['a10g', undefined], ['inf2', 1200]]);
  });

  test('with the Reconciler\'s own metricDelay and period', () => {
    // 420 + 300 s: the delay's margin is kept (the safe count, 9 periods, is shorter).
    expect(grace(eks({ l40s: 420 }, { metricDelay: Duration.minutes(5) }).reconciler)).toBe(720);
    // 420 s touches up to 5 two-minute periods: 6 x 120 s; with nothing declared the period's default, 360 s.
    expect(grace(eks({ l40s: 420 }, { policy: { period: Duration.minutes(2) } }).reconciler)).toBe(720);
    expect(grace(eks({}, { policy: { period: Duration.minutes(2) } }).reconciler)).toBe(360);
  });

  test('a fast class keeps 300 s; a sensitive service watches its preferred allowed class', () => {
    expect(grace(eks({ l40s: 120 }).reconciler)).toBe(300);
    expect(grace(eks({ l40s: 120, a10g: 600 }, { sensitive: true }, ['l40s']).reconciler)).toBe(720);
  });
});

describe('SageMakerCapacityEndpoint: a variant\'s ready time is its slowest pool\'s', () => {
  test('preferred = [l40s 360 s, a10g 540 s]: 540 + 120 = 660 s (the safe 540 s plus the delay\'s margin)', () => {
    const { reconciler } = sagemaker({ l40s: 360, a10g: 540, inf2: 1500 });
    expect(reconciler.config.policy.provisioningGraceSeconds).toBe(660);
    expect(grace(sagemaker({ l40s: 360, a10g: 540 }, { metricDelay: Duration.minutes(5) }).reconciler)).toBe(840);
  });

  test('nothing declared: 300 s, nothing rendered', () => {
    const { reconciler } = sagemaker({});
    expect(reconciler.config.policy.provisioningGraceSeconds).toBeUndefined();
    expect(grace(reconciler)).toBe(300);
  });
});

describe('an explicit provisioningGrace below what the declared ready time calls for warns', () => {
  test('SageMaker: 5 minutes against the 540 s a 540 s scale-out needs; the explicit value is deployed', () => {
    const { stack, reconciler } = sagemaker({ l40s: 360, a10g: 540 }, { policy: { provisioningGrace: Duration.minutes(5) } });
    expect(grace(reconciler)).toBe(300);
    const found = warnings(stack);
    expect(found).toHaveLength(1);
    expect(found[0].id).toBe('/Test/Reconciler');
    expect(found[0].entry.data).toContain("policy.provisioningGrace is 300 s, below the 540 s that the replica-ready time declared for 'preferred' (p95 540 s");
    expect(found[0].entry.data).toContain('set at least Duration.seconds(540)');
    expect(found[0].entry.data).toContain('its default, 660 s, follows the declared time');
    expect(found[0].entry.data).toContain(`[ack: ${WARNING}]`);
  });

  test('EKS: acknowledged on the stack, it is gone', () => {
    const { stack } = eks({ l40s: 420 }, { policy: { provisioningGrace: Duration.minutes(6) } });
    expect(warnings(stack)).toHaveLength(1);
    const { stack: acknowledged } = eks({ l40s: 420 }, { policy: { provisioningGrace: Duration.minutes(6) } });
    CoreAnnotations.of(acknowledged).acknowledgeWarning(WARNING, 'measured at a quieter hour');
    expect(warnings(acknowledged)).toEqual([]);
  });

  test('none at or above it, and none where no ready time is declared', () => {
    expect(warnings(sagemaker({ l40s: 360, a10g: 540 }, { policy: { provisioningGrace: Duration.seconds(540) } }).stack)).toEqual([]);
    expect(warnings(sagemaker({ l40s: 360, a10g: 540 }, { policy: { provisioningGrace: Duration.minutes(15) } }).stack)).toEqual([]);
    expect(warnings(sagemaker({}, { policy: { provisioningGrace: Duration.minutes(1) } }).stack)).toEqual([]);
    // A fallback's declaration does not count: the grace rule watches the preferred class.
    expect(warnings(eks({ inf2: 1200 }, { policy: { provisioningGrace: Duration.minutes(5) } }).stack)).toEqual([]);
  });
});

test('a declared ready time out of range fails the serving construct\'s synth, naming it, the class, the value and what is allowed', () => {
  const { stack } = testStack();
  const classes = measured(smClasses(), { a10g: 36_000 });
  expect(() => new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS }))
    .toThrow("SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - class 'a10g' envelope.replicaReadyTimeP95Seconds: is 36000 s; "
      + 'allowed: a finite number above 0 and at most 10_800 s');
});

describe('the declared ready times stay out of the function\'s environment (R253)', () => {
  // Five variants of three pools each (Lambda's environment holds 4096 bytes in all).
  function fiveByThree(ready?: number): RoutingFacts {
    return {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
      variants: [0, 1, 2, 3, 4].map((v) => ({
        variantName: `variant-${v}`,
        classes: [0, 1, 2].map((p) => ({
          name: `class-${v}-${p}`, preferenceRank: 3 * v + p, tokensPerSecondPerReplica: 1200 - 50 * (3 * v + p), safeConcurrency: 8,
          usdPerReplicaHour: 2.6 - 0.1 * (3 * v + p), allowSensitive: true, maxReplicas: 10, instanceType: 'ml.g6e.xlarge',
          ...(ready !== undefined ? { replicaReadyTimeP95Seconds: ready + 60 * p } : {}),
        })),
      })),
    };
  }
  const reconcilerOf = (facts: RoutingFacts) => {
    const { stack } = testStack();
    return { stack, reconciler: new Reconciler(stack, 'R', { serving: servingOf(facts, 'llama3-chat') }) };
  };

  test('environmentBytes is the same with or without them; the function gets the grace they call for', () => {
    const without = reconcilerOf(fiveByThree()).reconciler;
    const { stack, reconciler } = reconcilerOf(fiveByThree(420));
    // The preferred variant's slowest pool, 420 + 120 s, + the 120 s metric delay.
    expect(reconciler.config.policy.provisioningGraceSeconds).toBe(660);
    // Each fallback variant's own grace (the same times: 540 s at its slowest pool, + 120 s), resolved at synth too.
    const fallbacks = { 'variant-1': 660, 'variant-2': 660, 'variant-3': 660, 'variant-4': 660 };
    expect(reconciler.config.fallbackGraceSeconds).toEqual(fallbacks);
    expect(without.config).not.toHaveProperty('fallbackGraceSeconds');
    // Only the resolved graces are added: 3428 bytes, where the facts as declared would take 3834.
    const bytes = (config: Reconciler['config']) => environmentBytes(config, RECONCILER_CONFIG_ENV, RECONCILER_SERVICE_ENV);
    expect(bytes(reconciler.config)).toBe(3428);
    expect(bytes(reconciler.config)).toBe(bytes({ ...without.config, policy: reconciler.config.policy, fallbackGraceSeconds: fallbacks }));
    expect(bytes({ ...reconciler.config, facts: fiveByThree(420) }) - bytes(reconciler.config)).toBe(495);
    const variables = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables;
    const deployed = JSON.parse(variables[RECONCILER_CONFIG_ENV] as string);
    expect(deployed.policy.provisioningGraceSeconds).toBe(660);
    expect(JSON.stringify(deployed.facts)).not.toContain('replicaReadyTimeP95Seconds');
    expect(deployed.facts).toEqual(without.config.facts);
    // What the deployed function reads: every run hands the policy each fallback's own grace, from the environment.
    expect(reconcilerConfigProblems(deployed)).toEqual([]);
    expect(metricQuery(deployed, Date.UTC(2026, 11, 7, 12)).classGraces).toEqual(fallbacks);
  });
});
