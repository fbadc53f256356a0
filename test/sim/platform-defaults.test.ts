// The simulator's platform models run what the constructs deploy by default: the same constants feed both
// (lib/core/platform/control-loop.ts), and this test reads the rendered resources, so a construct default that drifts
// from the model (or a model that drifts from the construct) turns it red.
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { planCapacity } from '../../lib/core/service/sizing';
import { Reconciler } from '../../lib/control/reconciler';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { routingTarget } from '../../lib/core/reconciler/targets';
import { simClassesFromPlan } from '../../lib/sim/classes';
import { libraryPolicy } from '../../lib/sim/library-policy';
import { routedScenario } from '../../lib/sim/model';
import { S0 } from '../../lib/sim/scenarios';
import { type HpaModel, platformModel, readsEngineTokens, type TargetTrackingModel } from '../../lib/sim/platform';
import { CUSTOMIZED_METRIC_PERIOD_SECONDS, KARPENTER_UNAVAILABLE_OFFERING_SECONDS, spotNodeGraceSeconds } from '../../lib/core/platform/control-loop';
import { DEFAULT_POLICY_CONFIG } from '../../lib/core/policy/defaults';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { KARPENTER_CHART } from '../../lib/eks/versions';
import { llamaChatService } from '../../lib/sim/services';
import { smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

describe('EKS: the HPA model is the ScaledObject the construct renders', () => {
  const { stack } = testStack();
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
  });
  const reconciler = new Reconciler(stack, 'Reconciler', { serving: service });
  const model = platformModel('eks');
  const hpa = model.autoscaler as HpaModel;

  test('nodes: each NodePool consolidates WhenEmpty after the consolidateAfter the model keeps empty nodes for', () => {
    const { consolidateAfterSeconds } = model.nodes!;
    for (const u of service.units) {
      expect(u.objects.nodePool.spec.disruption).toMatchObject({ consolidationPolicy: 'WhenEmpty', consolidateAfter: `${consolidateAfterSeconds / 60}m` });
    }
  });

  test('interruptions: the model drains pods with the target groups\' deregistration delay and the spot NodePool grace', () => {
    const { deregistrationDelaySeconds } = model.interruptionDrain!;
    const groups = Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::TargetGroup');
    expect(Object.keys(groups).length).toBeGreaterThan(0);
    for (const g of Object.values(groups)) {
      expect(g.Properties.TargetGroupAttributes).toEqual(expect.arrayContaining([
        { Key: 'deregistration_delay.timeout_seconds', Value: String(deregistrationDelaySeconds(LLAMA_CONTRACT.slo.deadlineMs / 1000)) },
      ]));
    }
    // A pool that may run spot ends every pod within the notice: the grace the model's hold is computed from.
    const { stack: spotStack } = testStack();
    const classes = llamaClasses();
    const spot = new EksInferenceService(spotStack, 'Spot', {
      contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(spotStack, 'Kubectl'),
      classOptions: Object.fromEntries(classes.map((c) => [c.name, { capacityTypes: ['spot'] }])),
    });
    const podGrace = deregistrationDelaySeconds(LLAMA_CONTRACT.slo.deadlineMs / 1000) + LLAMA_CONTRACT.slo.deadlineMs / 1000;
    expect(spot.units.length).toBeGreaterThan(0);
    for (const u of spot.units) expect(u.objects.nodePool.spec.template.spec.terminationGracePeriod).toBe(`${spotNodeGraceSeconds(podGrace)}s`);
  });

  test('behaviour: rate policies, windows, and the controller\'s own tolerance (not overridden)', () => {
    expect(hpa.kind).toBe('hpa');
    for (const u of service.units) {
      const behavior = u.objects.scaledObject.spec.advanced!.horizontalPodAutoscalerConfig!.behavior!;
      expect(behavior.scaleUp).toEqual({
        stabilizationWindowSeconds: 0, selectPolicy: 'Min', policies: [{ type: 'Pods', value: hpa.scaleUpPods, periodSeconds: hpa.scaleUpPeriodSeconds }],
      });
      expect(behavior.scaleDown).toEqual({
        stabilizationWindowSeconds: hpa.scaleDownStabilizationSeconds,
        selectPolicy: 'Min',
        policies: [{ type: 'Pods', value: hpa.scaleDownPods, periodSeconds: hpa.scaleDownPeriodSeconds }],
      });
      // No per-object tolerance: the HPA controller's default (10%) applies, which is what the model uses.
      expect(JSON.stringify(behavior)).not.toContain('tolerance');
    }
    expect([hpa.tolerance, hpa.syncSeconds]).toEqual([0.1, 15]);
  });

  test('the load trigger reads what the model reads: ALB RequestCount, Sum per period, the newest period skipped', () => {
    const plan = planCapacity(LLAMA_CONTRACT, service.units.map((u) => u.cls));
    const behavior = Object.fromEntries(service.units.map((u) => [u.cls.name, { provisioningSeconds: 300 }]));
    const simClasses = simClassesFromPlan(service.units.map((u) => u.cls), plan, behavior, LLAMA_CONTRACT);
    for (const u of service.units) {
      const trigger = u.objects.scaledObject.spec.triggers[0];
      const sim = simClasses.find((c) => c.name === u.cls.name)!;
      expect([trigger.metricType, trigger.metadata.metricName, trigger.metadata.metricStat]).toEqual(['AverageValue', 'RequestCount', 'Sum']);
      expect(trigger.metadata).toMatchObject({
        metricStatPeriod: String(hpa.metricPeriodSeconds),
        metricCollectionTime: String(hpa.collectionSeconds),
        metricEndTimeOffset: String(hpa.endTimeOffsetSeconds),
        minMetricValue: '0',
      });
      // The per-replica target: the simulator's class target is the construct's plan target, per period.
      expect(Number(trigger.metadata.targetMetricValue)).toBeCloseTo(sim.targetRequestsPerSecondPerReplica * hpa.metricPeriodSeconds, 3);
    }
  });

  test('the replica-floor trigger the Reconciler adds is the model\'s floor metric, under the same HPA', () => {
    for (const u of service.units) {
      const floor = u.objects.scaledObject.spec.triggers.find((t) => t.name === 'replica-floor');
      expect(floor).toBeDefined();
      expect([floor!.metricType, floor!.metadata.metricStat]).toEqual(['AverageValue', 'Maximum']);
      expect(floor!.metadata).toMatchObject({
        metricStatPeriod: '60',
        metricCollectionTime: String(hpa.floor.collectionSeconds),
        metricEndTimeOffset: String(hpa.floor.endTimeOffsetSeconds),
        targetMetricValue: String(hpa.floor.target),
        minMetricValue: '0',
      });
    }
    expect(model.floors).toBe('metric');
  });

  test('the Reconciler\'s period and metric delay, and the capacity-error signal the platform produces', () => {
    expect(reconciler.config.metricDelaySeconds).toBe(model.reconciler.metricDelaySeconds);
    expect(reconciler.config.policy.periodSeconds ?? 60).toBe(model.reconciler.periodSeconds);
    const rate = Template.fromStack(stack).findResources('AWS::Events::Rule');
    expect(Object.values(rate).map((r) => r.Properties.ScheduleExpression)).toContain(`rate(${model.reconciler.periodSeconds / 60} minute)`);
    const signals = service.servingDescription().signals.classes;
    const preferred = service.units[0].cls.name;
    // Karpenter's capacity errors (a log metric filter per NodePool) are the preferred class's capacity-error signal.
    expect(signals[preferred].capacityErrors !== undefined || reconciler.config.karpenterCapacityErrors === true).toBe(model.capacityErrorSignal);
    expect(model.liveReplicaCounts).toBe(false);
    // A listener takes every write at once: no rule runs the Reconciler on a state change, and none is simulated.
    expect(reconciler.writableRule).toBeUndefined();
    const sim = libraryPolicy()({ scenario: S0.build(1, {}), trace: undefined as never });
    expect(sim.runsWhenWritable).toBe(false);
  });

  test('headroom: the Reconciler\'s is the contract\'s, as the simulated Reconciler\'s is its scenario plan\'s (review R251)', () => {
    expect(reconciler.config.policy.headroom).toBe(service.plan.headroom);
    const scenario = S0.build(1, {});
    // Its configuration is private: read here only to pin where the headroom comes from.
    const sim = libraryPolicy()({ scenario: { ...scenario, headroom: 0.5 }, trace: undefined as never }) as unknown as { config: ReconcilerConfig };
    expect(sim.config.policy.headroom).toBe(0.5);
    expect(scenario.headroom).toBe(llamaChatService().plan.headroom);
  });

  test('Karpenter\'s unavailable-offering TTL, one value: the capacity-error lookback, the model\'s capacity retry and interruption hold', () => {
    // aws/karpenter-provider-aws@v1.14.1 pkg/cache/cache.go:31, UnavailableOfferingsTTL = 3 * time.Minute: read again when the chart moves.
    expect(KARPENTER_CHART.version).toBe('1.14.1');
    expect(KARPENTER_UNAVAILABLE_OFFERING_SECONDS).toBe(180);
    expect(DEFAULT_POLICY_CONFIG.capacityErrorLookbackSeconds).toBe(KARPENTER_UNAVAILABLE_OFFERING_SECONDS);
    expect(model.capacityRetrySeconds).toBe(KARPENTER_UNAVAILABLE_OFFERING_SECONDS);
    expect(model.interruptionDrain!.offeringUnavailableSeconds).toBe(KARPENTER_UNAVAILABLE_OFFERING_SECONDS);
  });

  test('served demand: the classes the simulator reads from the engine\'s token counter are those the construct hands the Reconciler', () => {
    const plan = planCapacity(LLAMA_CONTRACT, service.units.map((u) => u.cls));
    const behavior = Object.fromEntries(service.units.map((u) => [u.cls.name, { provisioningSeconds: 300 }]));
    const simClasses = simClassesFromPlan(service.units.map((u) => u.cls), plan, behavior, LLAMA_CONTRACT);
    const signals = service.servingDescription().signals.classes;
    const counted = service.units.filter((u) => signals[u.cls.name].generatedTokens !== undefined).map((u) => u.cls.name);
    expect(counted.length).toBeGreaterThan(0);
    expect(model.engineTokenCounters).toBe(true);
    expect(simClasses.filter((c) => readsEngineTokens(model, c)).map((c) => c.name)).toEqual(counted);
    // The deployed Reconciler reads exactly those counters (compacted to the contract's metric of each class).
    expect(reconciler.config.contractTokenCounters ?? []).toEqual(counted);
  });
});

describe('SageMaker: the target-tracking model is the scaling policy the construct renders', () => {
  const { stack } = testStack();
  const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, provisionTimeout: Duration.minutes(15),
  });
  const reconciler = new Reconciler(stack, 'Reconciler', { serving: endpoint });
  const model = platformModel('sagemaker');
  const tracking = model.autoscaler as TargetTrackingModel;
  const template = Template.fromStack(stack);

  test('metric, target and cooldowns', () => {
    expect(tracking.kind).toBe('target-tracking');
    const policies = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policies).toHaveLength(TWO_VARIANTS.length);
    const contract = LLAMA_CONTRACT;
    const classes = defineCapacityClasses(smClasses(), { contract, platform: 'sagemaker' });
    const plan = planCapacity(contract, classes);
    const behavior = Object.fromEntries(classes.map((c) => [c.name, { provisioningSeconds: 300 }]));
    const simClasses = simClassesFromPlan(classes, plan, behavior, contract);
    const targets = policies.map((p) => p.Properties.TargetTrackingScalingPolicyConfiguration.TargetValue as number);
    for (const p of policies) {
      expect(p.Properties.TargetTrackingScalingPolicyConfiguration).toMatchObject({
        PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution' },
        ScaleOutCooldown: tracking.scaleOutCooldownSeconds,
        ScaleInCooldown: tracking.scaleInCooldownSeconds,
      });
    }
    // The simulator runs each variant (its pools grouped by `routedScenario`) at the target and maximum the construct
    // renders for it.
    const scenario = routedScenario({
      ...S0.build(1), platform: 'sagemaker', classes: simClasses,
      variants: TWO_VARIANTS.map((v) => ({ name: v.name, classes: v.classes.map((c) => (typeof c === 'string' ? c : c.className)) })),
    });
    const maxima = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).map((t) => t.Properties.MaxCapacity as number);
    expect(scenario.classes.map((c) => c.targetConcurrencyPerReplica).sort((a, b) => a - b)).toEqual([...targets].sort((a, b) => a - b));
    expect(scenario.classes.map((c) => c.maxReplicas).sort((a, b) => a - b)).toEqual([...maxima].sort((a, b) => a - b));
  });

  test('perPoolTargets: the simulator runs the two policies the construct renders, at the same targets', () => {
    const { stack: perPoolStack } = testStack();
    const variants = [{ ...TWO_VARIANTS[0], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]];
    new SageMakerCapacityEndpoint(perPoolStack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants });
    const configs = Object.values(Template.fromStack(perPoolStack).findResources('AWS::ApplicationAutoScaling::ScalingPolicy'))
      .map((p) => p.Properties.TargetTrackingScalingPolicyConfiguration);
    const custom = configs.find((c) => c.CustomizedMetricSpecification)!;
    const rendered = {
      predefined: configs.filter((c) => c.PredefinedMetricSpecification).map((c) => c.TargetValue as number).sort((a, b) => a - b),
      // The per-pool targets, from the expression's `poolN / target` terms in pool order.
      // Every expression's `poolN / target` terms (a fold names each pool in one of them), by pool number.
      perPool: [...new Map<number, number>((custom.CustomizedMetricSpecification.Metrics as Array<{ Expression?: string }>)
        .flatMap((q) => [...(q.Expression ?? '').matchAll(/pool(\d+) \/ ([\d.]+)/g)])
        .map((m) => [Number(m[1]), Number(m[2])])).entries()].sort(([a], [b]) => a - b).map(([, t]) => t),
    };
    const contract = LLAMA_CONTRACT;
    const classes = defineCapacityClasses(smClasses(), { contract, platform: 'sagemaker' });
    const behavior = Object.fromEntries(classes.map((c) => [c.name, { provisioningSeconds: 300 }]));
    const simClasses = simClassesFromPlan(classes, planCapacity(contract, classes), behavior, contract);
    const scenario = routedScenario({
      ...S0.build(1), platform: 'sagemaker', classes: simClasses,
      variants: variants.map((v) => ({
        name: v.name,
        classes: v.classes.map((c) => (typeof c === 'string' ? c : c.className)),
        perPoolTargets: 'scaling' in v ? v.scaling?.perPoolTargets : undefined,
      })),
    });
    expect(scenario.classes.map((c) => c.targetConcurrencyPerReplica).sort((a, b) => a - b)).toEqual(rendered.predefined);
    expect(scenario.classes.find((c) => c.poolTargets)!.poolTargets).toEqual(rendered.perPool);
    expect(custom).toMatchObject({
      TargetValue: 1, ScaleOutCooldown: tracking.scaleOutCooldownSeconds, ScaleInCooldown: tracking.scaleInCooldownSeconds,
    });
  });

  test('the model\'s datapoints: the predefined policy\'s at the period the endpoint publishes its high-resolution metric', () => {
    // The predefined policy's alarms read one datapoint of SageMakerVariantConcurrentRequestsPerModelHighResolution every
    // highResolutionPeriodSeconds (10 s: "emit data every 10 seconds", SageMaker guide). With enhanced metrics on,
    // MetricPublishFrequencyInSeconds applies to the invocation metrics, ConcurrentRequestsPerModel among them: the
    // endpoint renders the model's period, so "3 datapoints within 30 seconds" holds (at 60 s one datapoint a minute).
    const [config] = Object.values(template.findResources('AWS::SageMaker::EndpointConfig'));
    const { EnableEnhancedMetrics, MetricPublishFrequencyInSeconds } = config.Properties.MetricsConfig;
    expect(EnableEnhancedMetrics).toBe(true);
    expect(MetricPublishFrequencyInSeconds).toBe(tracking.highResolutionPeriodSeconds);
    expect(tracking.scaleOutDatapoints * tracking.highResolutionPeriodSeconds).toBe(30);
    expect(tracking.scaleInAlarmSeconds / tracking.highResolutionPeriodSeconds).toBe(90);
    // The per-pool policy is a customized metric, read at one minute (its TargetTrackingMetricStat carries no period).
    expect(tracking.customPeriodSeconds).toBe(CUSTOMIZED_METRIC_PERIOD_SECONDS);
  });

  test('writes, signals and timing: one capacity write per run after the weights, no capacity-error signal by default', () => {
    expect(model.floors).toBe('capacity-write');
    expect(model.endpointUpdate).toBeDefined();
    expect(model.liveReplicaCounts).toBe(true);
    const signals = endpoint.servingDescription().signals.classes;
    expect(Object.values(signals).some((s) => s.capacityErrors !== undefined)).toBe(model.capacityErrorSignal);
    expect(reconciler.config.metricDelaySeconds).toBe(model.reconciler.metricDelaySeconds);
    // No model-server scrape: served demand is Invocations x the declared mean tokens.
    expect(Object.values(signals).some((s) => s.generatedTokens !== undefined)).toBe(model.engineTokenCounters);
  });

  test('the simulated Reconciler runs when the endpoint takes writes again exactly where the construct renders that rule', () => {
    expect(reconciler.writableRule).toBeDefined();
    const sim = libraryPolicy()({ scenario: { ...S0.build(1, {}), platform: 'sagemaker' }, trace: undefined as never });
    expect(sim.runsWhenWritable).toBe(true);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ source: ['aws.sagemaker'], 'detail-type': ['SageMaker Endpoint State Change'] }),
    });
  });
});

test('SageMaker: a scale-out short of capacity holds the endpoint Updating for the provisioning timeout the construct renders by default', () => {
  const { stack } = testStack();
  new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS });
  const configs = Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::EndpointConfig'));
  const timeouts = configs.flatMap((c) => c.Properties.ProductionVariants
    .map((v: Record<string, unknown>) => v.VariantInstanceProvisionTimeoutInSeconds));
  expect(timeouts.length).toBe(TWO_VARIANTS.length);
  expect(new Set(timeouts)).toEqual(new Set([platformModel('sagemaker').endpointUpdate!.provisionTimeoutSeconds]));
  expect(platformModel('sagemaker').endpointUpdate!.provisionTimeoutSeconds).toBe(300);
});

describe('live replica counts: the simulated step sees them only where the deployed routing target reports them', () => {
  // The deployed ALB target's read reports no replica counts (lambda/reconciler/targets/alb.ts read(): the counts come
  // from HealthyHostCount and Container Insights, one metric delay late); SageMaker's DescribeEndpoint reports them.
  // The simulator says the same with platformModel().liveReplicaCounts: the two must not drift apart.
  test.each([['eks', 'alb'], ['sagemaker', 'sagemaker']] as const)('%s (routing target %s)', (platform, kind) => {
    const fromTargetApi = routingTarget({ kind } as RoutingFacts).desiredReplicasFrom === 'target-api';
    expect(platformModel(platform).liveReplicaCounts).toBe(fromTargetApi);
  });
});
