/* eslint-disable max-len -- the expected problem lines are asserted whole */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EksStableDiffusionStack } from '../../examples/eks-stable-diffusion';
import { SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { type CfnTemplate, signalContractProblems, templateSignals } from '../../lib/core/metrics/template-check';
import { endpointStack, TWO_VARIANTS } from '../sagemaker/fixtures';

/**
 * The signal contract: every metric the reconciler, the alarms and the dashboard of an example read has a producer in
 * the same template or is AWS-published (lib/core/metrics/aws-published.ts); removing a producer makes the check name the orphans.
 */
const env = { account: '123456789012', region: 'us-east-1' };
let eks: CfnTemplate;
let sagemaker: CfnTemplate;

beforeAll(() => {
  eks = Template.fromStack(new EksStableDiffusionStack(new App(), 'Eks', { env })).toJSON() as CfnTemplate;
  sagemaker = Template.fromStack(new SageMakerLlmStack(new App(), 'SageMaker', { env })).toJSON() as CfnTemplate;
});

function without(t: CfnTemplate, drop: (type: string, props: Record<string, unknown>) => boolean): CfnTemplate {
  return { ...t, Resources: Object.fromEntries(Object.entries(t.Resources ?? {}).filter(([, r]) => !drop(r.Type, r.Properties ?? {}))) };
}

describe('signal contract', () => {
  test.each([['EKS', () => eks], ['SageMaker', () => sagemaker]])('the %s example reads no metric without a producer', (_, t) => {
    const { reads } = templateSignals(t());
    expect(reads.length).toBeGreaterThan(20);
    expect(reads.some((r) => r.reader.includes('reconciler GetMetricData'))).toBe(true);
    expect(reads.some((r) => r.reader.includes('AWS::CloudWatch::Dashboard'))).toBe(true);
    expect(reads.some((r) => r.reader.includes('AWS::CloudWatch::Alarm'))).toBe(true);
    expect(signalContractProblems(t())).toEqual([]);
  });

  test('without the add-on, the reconciler\'s desired replicas have no producer, named with their reader', () => {
    const problems = signalContractProblems(without(eks, (type) => type === 'AWS::EKS::Addon'));
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^ContainerInsights replicas_desired \[ClusterName, Namespace, PodName\] read by ReconcilerFunction\w+ \(reconciler GetMetricData\) has no producer/),
    ]));
  });

  test('without the Karpenter metric filters, the capacity-error reads of the reconciler and the alarms are orphans', () => {
    const problems = signalContractProblems(without(eks, (type) => type === 'AWS::Logs::MetricFilter'));
    expect(problems.some((p) => /^CapacityAwareInference\/Karpenter InsufficientCapacity\/\S+\/sd21-inf2 \[\] read by .*reconciler GetMetricData/.test(p))).toBe(true);
    expect(problems.some((p) => /InsufficientCapacity\/\S+\/sd21-inf2 \[\] read by ObservabilityAlarmsPreferredCapacityErrors\w+ \(AWS::CloudWatch::Alarm\)/.test(p))).toBe(true);
    expect(problems.some((p) => /read by ObservabilityDashboard\w+ \(AWS::CloudWatch::Dashboard\) widget 'Capacity errors per class/.test(p))).toBe(true);
  });

  test('the KEDA triggers read CloudWatch too: the load metric (AWS-published) and the reconciler\'s replica floor', () => {
    const keda = templateSignals(eks).reads.filter((r) => r.reader.includes('KEDA trigger'));
    // One load trigger per class; with a Reconciler attached each ScaledObject also carries the floor trigger.
    const classes = keda.filter((r) => r.reader.includes('per-replica-load')).length;
    expect(classes).toBeGreaterThanOrEqual(2);
    expect(keda.filter((r) => r.reader.includes('replica-floor'))).toHaveLength(classes);
    expect(keda.filter((r) => r.reader.includes('replica-floor')).every((r) => r.name === 'ReplicaFloor')).toBe(true);
    expect(keda.filter((r) => r.reader.includes('per-replica-load')).every((r) => r.namespace === 'AWS/ApplicationELB')).toBe(true);
    // Without the reconciler (its EMF), the floor the ScaledObjects' triggers read has no producer.
    const problems = signalContractProblems(without(eks, (type, p) => type === 'AWS::Lambda::Function' && JSON.stringify(p).includes('RECONCILER_CONFIG')));
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^CapacityAwareInference ReplicaFloor \[Service, CapacityClass\] read by \w*Scaler\w+ \(KEDA trigger replica-floor\) has no producer/),
    ]));
  });

  test('without the scrape declaration, the Triton queue-depth widget is an orphan', () => {
    const stripped = JSON.parse(JSON.stringify(eks)) as CfnTemplate;
    for (const r of Object.values(stripped.Resources ?? {})) {
      if (r.Type === 'AWS::EKS::Addon') r.Properties!.ConfigurationValues = JSON.stringify({ agents: [{ name: 'cloudwatch-agent' }] });
    }
    expect(signalContractProblems(stripped)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^CapacityAwareInference RequestsWaiting \[CapacityClass, Service\] read by ObservabilityDashboard\w+ \(AWS::CloudWatch::Dashboard\) widget 'Requests waiting per replica, by class/),
    ]));
  });

  test('without the reconciler, its EMF metrics read by the SageMaker alarms and dashboard have no producer', () => {
    const problems = signalContractProblems(without(sagemaker, (type, p) => type === 'AWS::Lambda::Function'
      && JSON.stringify(p.Environment ?? {}).includes('RECONCILER_CONFIG')));
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^CapacityAwareInference PendingScaleOut \[CapacityClass, Service\] read by ObservabilityAlarmsReplicaShortage0\w+ \(AWS::CloudWatch::Alarm\)/),
    ]));
  });

  test('a read of an AWS namespace with dimensions AWS does not publish is an orphan (the old kube_deployment_spec_replicas)', () => {
    const stack = new Stack(new App(), 'Orphan');
    const t: CfnTemplate = {
      Resources: {
        A: { Type: 'AWS::CloudWatch::Alarm', Properties: { Namespace: 'ContainerInsights', MetricName: 'kube_deployment_spec_replicas', Dimensions: [{ Name: 'ClusterName', Value: 'c' }, { Name: 'Deployment', Value: 'd' }] } },
        B: { Type: 'AWS::CloudWatch::Alarm', Properties: { Namespace: 'AWS/ApplicationELB', MetricName: 'RequestCount', Dimensions: [{ Name: 'LoadBalancer', Value: 'x' }, { Name: 'TargetGroup', Value: 'y' }] } },
      },
    };
    expect(stack).toBeDefined();
    expect(signalContractProblems(t)).toEqual([
      'ContainerInsights kube_deployment_spec_replicas [ClusterName, Deployment] read by A (AWS::CloudWatch::Alarm) has no producer in the template '
        + 'and is not an AWS-published metric of lib/core/metrics/aws-published.ts (or what publishes it is not installed)',
    ]);
  });

  test('a scaling policy\'s metric math is read: the per-pool policy on AWS-published per-InstanceType series; another set is an orphan', () => {
    const { stack } = endpointStack({ variants: [{ ...TWO_VARIANTS[0], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]] });
    const t = Template.fromStack(stack).toJSON() as CfnTemplate;
    const policyReads = templateSignals(t).reads.filter((r) => r.reader.includes('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policyReads.map((r) => [r.name, r.dimensions])).toEqual([
      ['ConcurrentRequestsPerModel', ['EndpointName', 'VariantName', 'InstanceType']],
      ['ConcurrentRequestsPerModel', ['EndpointName', 'VariantName', 'InstanceType']],
    ]);
    expect(signalContractProblems(t)).toEqual([]);
    // A per-InstanceType set AWS does not publish (no VariantName) would leave the policy without data.
    const [id] = Object.entries(t.Resources ?? {}).find(([, r]) => JSON.stringify(r.Properties ?? {}).includes('CustomizedMetricSpecification'))!;
    const broken = JSON.parse(JSON.stringify(t)) as CfnTemplate;
    type Query = { MetricStat: { Metric: { Dimensions: Array<{ Name: string }> } } };
    const config = broken.Resources![id].Properties!.TargetTrackingScalingPolicyConfiguration as { CustomizedMetricSpecification: { Metrics: Query[] } };
    const metric = config.CustomizedMetricSpecification.Metrics[0].MetricStat.Metric;
    metric.Dimensions = metric.Dimensions.filter((d) => d.Name !== 'VariantName');
    expect(signalContractProblems(broken)).toEqual([expect.stringMatching(/^AWS\/SageMaker ConcurrentRequestsPerModel \[EndpointName, InstanceType\] read by .*ScalingPolicy\) has no producer/)]);
  });

  test('a SEARCH the check cannot parse is a problem of its own, not a read that passes unseen', () => {
    const t: CfnTemplate = {
      Resources: {
        A: { Type: 'AWS::CloudWatch::Alarm', Properties: { Metrics: [{ Id: 'e', Expression: "MAX(SEARCH('Namespace=\"AWS/SageMaker\" ModelLatency', 'p95'))" }] } },
      },
    };
    expect(signalContractProblems(t)).toEqual([expect.stringMatching(/^A \(AWS::CloudWatch::Alarm\) reads a SEARCH this check cannot parse \(write it with searchExpression/)]);
  });
});
