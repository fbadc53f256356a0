// A serving construct whose autoscaler target is set away from the plan's (envelope / (1 + headroom)) warns at synth:
// the Reconciler is handed the plan's headroom and sizes floors and SageMaker capacity writes at the plan's target (R253).
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Annotations as CoreAnnotations, type App, type Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { overriddenTargetNote } from '../../lib/core/service/target-override';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { endpointStack, TWO_VARIANTS } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('target-overridden'));

describe('overriddenTargetNote', () => {
  const at = (target: number) => overriddenTargetNote({ subject: "variant 'v'", field: 'f', target, planned: 10, headroom: 0.2 });
  test('within 5% of the plan\'s target: none; beyond it, what the Reconciler sizes at and the headroom that gives the target', () => {
    expect(at(10.5)).toBeUndefined();
    expect(at(9.5)).toBeUndefined();
    expect(at(12)).toContain("f is 12, 20% above the capacity plan's 10 (the envelope / (1 + headroom 0.2))");
    // 10 x 1.2 / 8 - 1 = 0.5.
    expect(at(8)).toContain('Set the contract\'s headroom instead (0.5 gives this target)');
    expect(at(15)).toContain('(-0.2 gives this target, below 0: not allowed, so keep the plan\'s target)');
  });
});

describe('SageMakerCapacityEndpoint', () => {
  const withTarget = (target?: number) => endpointStack({
    variants: [{ ...TWO_VARIANTS[0], ...(target !== undefined ? { scaling: { targetConcurrencyPerInstance: target } } : {}) }, TWO_VARIANTS[1]],
  });

  test('scaling.targetConcurrencyPerInstance away from the plan\'s target warns once, acknowledgeable', () => {
    const { app, stack, endpoint } = withTarget(1);
    const planned = endpoint.plannedVariants.find((v) => v.name === 'preferred');
    expect(planned?.targetConcurrencyPerInstance).toBe(1);
    app.synth();
    const found = warnings(stack);
    expect(found).toHaveLength(1);
    expect(found[0].entry.data).toContain("variant 'preferred': scaling.targetConcurrencyPerInstance is 1, ");
    expect(found[0].entry.data).toContain('[ack: cdk-capacity-aware-inference:sagemaker-target-overridden-preferred]');
    const again = withTarget(1);
    CoreAnnotations.of(again.stack).acknowledgeWarning('cdk-capacity-aware-inference:sagemaker-target-overridden-preferred', 'sized by hand');
    again.app.synth();
    expect(warnings(again.stack)).toEqual([]);
  });

  test('none when the target is the plan\'s or unset', () => {
    const { app, stack } = withTarget();
    app.synth();
    expect(warnings(stack)).toEqual([]);
  });
});

describe('EksInferenceService', () => {
  function service(target?: number): { app: App; stack: Stack } {
    const { app, stack } = testStack();
    new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      ...(target !== undefined ? { classOptions: { a10g: { targetRequestsPerReplicaPerPeriod: target } } } : {}),
    });
    return { app, stack };
  }

  test('classOptions.targetRequestsPerReplicaPerPeriod away from the plan\'s target warns for that class', () => {
    const { app, stack } = service(1000);
    app.synth();
    const found = warnings(stack);
    expect(found).toHaveLength(1);
    expect(found[0].entry.data).toContain("class 'a10g': classOptions.targetRequestsPerReplicaPerPeriod is 1000, ");
    expect(found[0].entry.data).toContain('[ack: cdk-capacity-aware-inference:eks-target-overridden-a10g]');
  });

  test('none without an override', () => {
    const { app, stack } = service();
    app.synth();
    expect(warnings(stack)).toEqual([]);
  });
});
