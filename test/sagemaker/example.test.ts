import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { LLAMA_CHAT_CONTRACT, llamaChatClasses, SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { admissionLimits, serverAdmission } from '../../lib/core/runtime/admission';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { builtinValidationOn, cdkJsonContext, nagFindings, nistFindings } from '../util';

describe('examples/sagemaker-llm', () => {
  test('synthesizes with the built-in CloudFormation validation on, cdk-nag AwsSolutions clean', () => {
    // The one synth of this example with validation on (it costs seconds); other tests switch it off.
    const app = new App({ context: cdkJsonContext() });
    const stack = new SageMakerLlmStack(app, 'SageMakerLlm', { env: { account: '111111111111', region: 'us-east-1' } });
    const validationOff = builtinValidationOn();
    let template: Template;
    try {
      template = Template.fromStack(stack);
    } finally {
      validationOff();
    }
    expect(nagFindings(stack)).toEqual([]);
    // NIST 800-53 rev 5 beside AwsSolutions: every finding fixed or acknowledged with its reason.
    expect(nistFindings(stack)).toEqual([]);

    template.resourceCountIs('AWS::SageMaker::Model', 3);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: Match.objectLike({
        Image: Match.stringLikeRegexp('^111111111111\\.dkr\\.ecr\\.us-east-1\\.amazonaws\\.com/inference/djl-lmi-neuronx@sha256:[0-9a-f]{64}$'),
        ModelDataSource: { S3DataSource: { S3Uri: Match.stringLikeRegexp('neuron-tp2-seq8192-5{64}\\.tar\\.gz$'), S3DataType: 'S3Object', CompressionType: 'Gzip' } },
        Environment: Match.objectLike({ OPTION_TENSOR_PARALLEL_DEGREE: '2', OPTION_N_POSITIONS: '8192' }),
      }),
    });
    template.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [
        Match.objectLike({ VariantName: 'preferred', InstancePools: [Match.objectLike({ InstanceType: 'ml.g6e.xlarge' }), Match.objectLike({ InstanceType: 'ml.g5.xlarge' })] }),
        Match.objectLike({ VariantName: 'fallback', InstanceType: 'ml.inf2.xlarge', InstancePools: Match.absent() }),
      ],
      DataCaptureConfig: Match.objectLike({ EnableCapture: true, InitialSamplingPercentage: 5 }),
    });
    // 5 x ml.g6e.xlarge at 2.61 + 1 x ml.inf2.xlarge at 0.99 standby.
    const cost = stack.endpoint.plannedCost;
    expect([cost.steadyUsdPerHour, cost.standbyUsdPerHour, cost.steadyUsdPerMonth]).toEqual([14.04, 0.99, 10249.2]);
    template.hasOutput('PlannedUsdPerHour', { Value: '14.04' });
    // The plan the endpoint reports and records for the game day is that fleet: the a10g pool of 'preferred' runs no
    // standby of its own (it was 15.4484 and 2.3984 USD/h, review R251).
    const recorded = template.toJSON().Metadata['CdkCapacityAwareInference::Serving']['llama3-chat'].plan;
    for (const plan of [stack.endpoint.capacityPlan, recorded]) {
      expect([plan.steadyUsdPerHour, plan.standbyUsdPerHour, plan.steadyUsdPerMonth]).toEqual([14.04, 0.99, 10249.2]);
      expect(plan.classes.map((c: { name: string; steadyInstances: number }) => [c.name, c.steadyInstances])).toEqual([['l40s', 5], ['a10g', 0], ['inf2', 1]]);
    }
    // Each variant as deployed, for the game day's prediction: the scalable targets' bounds and the tracking target rendered.
    const variants = template.toJSON().Metadata['CdkCapacityAwareInference::Serving']['llama3-chat'].variants;
    expect(variants.map((v: { name: string; classes: string[] }) => [v.name, v.classes])).toEqual([['preferred', ['l40s', 'a10g']], ['fallback', ['inf2']]]);
    const scalableTargets = Object.entries(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget'));
    const policies = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    for (const v of variants) {
      const [id, target] = scalableTargets.find(([, t]) => JSON.stringify(t.Properties.ResourceId).includes(`/variant/${v.name}"`))!;
      expect([target.Properties.MinCapacity, target.Properties.MaxCapacity]).toEqual([v.minInstances, v.maxInstances]);
      const own = policies.filter((p) => JSON.stringify(p.Properties.ScalingTargetId) === JSON.stringify({ Ref: id }));
      expect(own.map((p) => p.Properties.TargetTrackingScalingPolicyConfiguration.TargetValue)).toEqual([v.targetConcurrencyPerInstance]);
    }

    // Signed artifacts: every class's Model waits for the verifier to approve its image digest and model data version.
    // The checks are in this stack; the repositories they check in the trust's (test/trust/example-stacks.test.ts).
    template.resourceCountIs('Custom::ClassArtifactVerification', 3);
    template.resourceCountIs('AWS::ECR::Repository', 0);
    Template.fromStack(Stack.of(stack.trust)).resourceCountIs('AWS::ECR::Repository', 2);
    for (const [id, model] of Object.entries(template.findResources('AWS::SageMaker::Model'))) {
      expect([id, (model.DependsOn as string[]).some((d) => d.startsWith('LlamaChatVerify'))]).toEqual([id, true]);
    }
    // The servers bound their own queues at what serverAdmission() says they admit: vLLM's in-flight limit, DJL's job
    // queue beside its rolling batch (in flight = batch + queue).
    const classes = defineCapacityClasses(llamaChatClasses('111111111111', 'us-east-1'), { contract: LLAMA_CHAT_CONTRACT, platform: 'sagemaker' });
    const limit = (name: string) => String(admissionLimits(classes.find((c) => c.name === name)!, LLAMA_CHAT_CONTRACT).maxConcurrentRequests);
    for (const name of ['l40s', 'a10g']) {
      template.hasResourceProperties('AWS::SageMaker::Model', {
        PrimaryContainer: Match.objectLike({ Environment: Match.objectLike({ CAI_CLASS: name, SM_VLLM_MAX_NUM_QUEUED_REQS: limit(name) }) }),
      });
    }
    const inf2 = classes.find((c) => c.name === 'inf2')!;
    const admission = serverAdmission(inf2, LLAMA_CHAT_CONTRACT);
    expect(admission.maxInFlight).toBe(Number(limit('inf2')));
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: Match.objectLike({
        Environment: Match.objectLike({ CAI_CLASS: 'inf2', OPTION_ROLLING_BATCH: 'auto', SERVING_JOB_QUEUE_SIZE: String(admission.jobQueueSize) }),
      }),
    });
  });
});
