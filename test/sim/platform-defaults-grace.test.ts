// The simulated Reconciler's provisioning grace is the one the Reconciler construct renders for the same classes: both
// come from defaultProvisioningGraceSeconds over the replica-ready times the classes declare (issue 22: the simulator
// is the deployed system). Before, the simulator sized its own from the scenario's true start-up time.
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Reconciler } from '../../lib/control/reconciler';
import { resolvePolicyConfig } from '../../lib/core/policy/defaults';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { graceClassesFromFacts } from '../../lib/core/reconciler/from-facts';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { planCapacity } from '../../lib/core/service/sizing';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { simClassesFromPlan } from '../../lib/sim/classes';
import { libraryConfig } from '../../lib/sim/library-policy';
import { routedScenario, type ScenarioInstance } from '../../lib/sim/model';
import { buildScenario, S0 } from '../../lib/sim/scenarios';
import { llamaChatSpecs, llamaChatService } from '../../lib/sim/services';
import { AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT } from '../../lib/sim/workload';
import { smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

function measured(classes: CapacityClassSpec[], readyTimes: Readonly<Record<string, number>>): CapacityClassSpec[] {
  return classes.map((c) => (readyTimes[c.name] === undefined ? c
    : { ...c, envelope: { ...c.envelope, replicaReadyTimeP95Seconds: readyTimes[c.name] } }));
}

/** The simulator's scenario on these classes (their true start-up time is another matter: 300 s here, whatever they declare). */
function scenarioOf(specs: CapacityClassSpec[], platform: 'eks' | 'sagemaker'): ScenarioInstance {
  const classes = defineCapacityClasses(specs, { contract: LLAMA_CONTRACT, platform: platform === 'eks' ? 'ec2' : 'sagemaker' });
  const behavior = Object.fromEntries(classes.map((c) => [c.name, { provisioningSeconds: 300 }]));
  const simClasses = simClassesFromPlan(classes, planCapacity(LLAMA_CONTRACT, classes), behavior, LLAMA_CONTRACT);
  const variants = TWO_VARIANTS.map((v) => ({ name: v.name, classes: v.classes.map((c) => (typeof c === 'string' ? c : c.className)) }));
  return routedScenario({ ...S0.build(1), platform, classes: simClasses, ...(platform === 'sagemaker' ? { variants } : {}) });
}

/**
 * What decides the grace: each route's declared ready time, the grace itself, the metric delay. The deployed ready
 * times are the serving's: the Reconciler strips them from the facts its Lambda gets once the grace is resolved.
 */
function graceOf(config: ReconcilerConfig, facts: ReconcilerConfig['facts'] = config.facts) {
  return {
    readyTimes: graceClassesFromFacts(facts).map((c) => [c.name, c.replicaReadyTimeP95Seconds]),
    grace: resolvePolicyConfig(config.policy).provisioningGraceSeconds,
    fallbackGraces: config.fallbackGraceSeconds ?? {},
    metricDelaySeconds: config.metricDelaySeconds,
  };
}

describe.each([
  ['nothing declared', {}, [300, 300], {}],
  ['the preferred class declares 420 s, a fallback 1200 s', { l40s: 420, inf2: 1200 }, [540, 540], { inf2: 1320 }],
  ['only a fallback declares one', { a10g: 900 }, [300, 300], { a10g: 1020 }],
])('%s', (_, readyTimes, [eksGrace, sagemakerGrace], eksFallbacks: Record<string, number>) => {
  test('EKS: the simulated Reconciler\'s grace is the one EksInferenceService + Reconciler render', () => {
    const { stack } = testStack();
    const specs = measured(llamaClasses(), readyTimes);
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: specs, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    const deployed = graceOf(new Reconciler(stack, 'Reconciler', { serving: service }).config, service.servingDescription().routing);
    expect(graceOf(libraryConfig(scenarioOf(specs, 'eks')))).toEqual(deployed);
    expect(deployed.grace).toBe(eksGrace);
    // Each fallback on its own declared time (1200 + 120 s; 900 + 120 s), in the simulator as deployed.
    expect(deployed.fallbackGraces).toEqual(eksFallbacks);
  });

  test('SageMaker: the same, a variant read at its slowest pool', () => {
    const { stack } = testStack();
    const specs = measured(smClasses(), readyTimes);
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: specs, variants: TWO_VARIANTS });
    const deployed = graceOf(new Reconciler(stack, 'Reconciler', { serving: endpoint }).config, endpoint.servingDescription().routing);
    expect(graceOf(libraryConfig(scenarioOf(specs, 'sagemaker')))).toEqual(deployed);
    // The preferred variant holds l40s and a10g: a10g's 900 s counts there.
    expect(deployed.grace).toBe('a10g' in readyTimes ? 1020 : sagemakerGrace);
  });
});

test('a user\'s scenario whose classes declare no ready time runs at 300 s, as deployed; the built-in services declare their slowest start', () => {
  const service = llamaChatService();
  const user = (platform: 'eks' | 'sagemaker') => routedScenario(buildScenario({
    id: 'mine', title: 'mine', platform, durationSeconds: 600,
    service: { ...service, classes: defineCapacityClasses(llamaChatSpecs(), { contract: service.contract, platform: 'ec2' }) },
    workload: { pattern: 'near-poisson', meanRatePerSecond: 4, promptTokens: AZURE_CONVERSATION_PROMPT, outputTokens: AZURE_CONVERSATION_OUTPUT },
  }));
  for (const platform of ['eks', 'sagemaker'] as const) {
    expect(libraryConfig(user(platform)).policy.provisioningGraceSeconds).toBe(300);
  }
  // l40s starts in 240-360 s and declares 360 s: 6 published periods + 2 on EKS; on SageMaker 360 s + the 120 s delay.
  for (const platform of ['eks', 'sagemaker'] as const) {
    expect(libraryConfig(routedScenario({ ...S0.build(1), platform })).policy.provisioningGraceSeconds).toBe(480);
  }
  expect(service.classes.map((c) => [c.name, c.envelope.replicaReadyTimeP95Seconds])).toEqual([['l40s', 360], ['inf2', 480], ['a10g', 360]]);
});
