/**
 * A deployed EKS service as the read-only AWS calls of verify see it (aws-sdk-client-mock): the conforming answers,
 * which each test then breaks one at a time. Shared by verify.test.ts and the docs example (docs-example.test.ts).
 */
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, ListMetricsCommand, type ListMetricsCommandInput } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, TestMetricFilterCommand, type TestMetricFilterCommandInput } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeAddonCommand, DescribeAddonConfigurationCommand, EKSClient } from '@aws-sdk/client-eks';
import { GetRoleCommand, IAMClient, SimulatePrincipalPolicyCommand, type SimulatePrincipalPolicyCommandInput } from '@aws-sdk/client-iam';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { AwsMetrics } from '../../lib/core/metrics/contract';
import { matchesFilterPattern } from '../../lib/core/metrics/filter-pattern';
import { karpenterCapacityErrorPattern, KARPENTER_CAPACITY_NAMESPACE } from '../../lib/core/metrics/karpenter-capacity';
import { OBSERVABILITY_ADDON_NAME } from '../../lib/core/metrics/template-check';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { KARPENTER_PODS } from '../../lib/eks/observability-addon';

export const cfn = mockClient(CloudFormationClient);
export const lambda = mockClient(LambdaClient);
export const cw = mockClient(CloudWatchClient);
export const logs = mockClient(CloudWatchLogsClient);
export const eks = mockClient(EKSClient);
export const iam = mockClient(IAMClient);

export const ACCOUNT = '123456789012';
export const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-ReconcilerRole-9F3K`;
const KEDA_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-KedaOperatorRole-2M7P`;
const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/${name}/0001`;
export const target = (name: string, rank: number) => ({
  class: { name, preferenceRank: rank, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 4, instanceType: `${name}.xlarge` },
  targetGroupArn: tg(name), targetGroupFullName: `targetgroup/${name}/0001`, namespace: 'serving', deploymentName: `sd21-${name}`, nodePoolName: `sd21-${name}`,
});
export const EKS_CONFIG: ReconcilerConfig = {
  facts: {
    kind: 'alb', listenerArn: `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:listener/app/sd/abc/def`, loadBalancerFullName: 'app/sd/abc',
    targets: [target('inf2', 0), target('a10g', 1)],
  },
  placement: {}, policy: {}, service: 'sd21', tokensPerRequest: 1, metricDelaySeconds: 120, clusterName: 'prod', karpenterCapacityErrors: true,
};
const POOLS = ['sd21-inf2', 'sd21-a10g'];
export const ADDON_VERSION = 'v4.4.0-eksbuild.1';
const ADDON_CONFIG = JSON.stringify({ containerInsights: { enhanced: true } });
const ADDON_SCHEMA = JSON.stringify({
  $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false,
  properties: { containerInsights: { type: 'object', properties: { enhanced: { type: 'boolean' } }, additionalProperties: false } },
});

export const TEMPLATE = {
  Resources: {
    ReconcilerFn: { Type: 'AWS::Lambda::Function', Properties: {} },
    OtherFn: { Type: 'AWS::Lambda::Function', Properties: {} },
    ...Object.fromEntries(POOLS.map((pool, i) => [`CapacityFilter${i}`, {
      Type: 'AWS::Logs::MetricFilter',
      Properties: {
        FilterPattern: karpenterCapacityErrorPattern(pool, KARPENTER_PODS, POOLS),
        MetricTransformations: [{ MetricNamespace: KARPENTER_CAPACITY_NAMESPACE, MetricName: { 'Fn::Join': ['', ['InsufficientCapacity/', { Ref: 'Cluster' }, `/${pool}`]] }, MetricValue: '1' }],
      },
    }])),
    Observability: { Type: 'AWS::EKS::Addon', Properties: { AddonName: OBSERVABILITY_ADDON_NAME, AddonVersion: ADDON_VERSION, ConfigurationValues: ADDON_CONFIG } },
    KedaRole: { Type: 'AWS::IAM::Role', Properties: {} },
    KedaAssociation: { Type: 'AWS::EKS::PodIdentityAssociation', Properties: { ServiceAccount: 'keda-operator', RoleArn: { 'Fn::GetAtt': ['KedaRole', 'Arn'] } } },
  },
};

/** A conforming account: every read metric listed under its exact set, CloudWatch's matcher agreeing with ours, IAM as granted. */
export function conformingAccount(config: ReconcilerConfig = EKS_CONFIG) {
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [
      { LogicalResourceId: 'ReconcilerFn', PhysicalResourceId: 'svc-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      { LogicalResourceId: 'OtherFn', PhysicalResourceId: 'svc-other', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      ...POOLS.map((_, i) => ({ LogicalResourceId: `CapacityFilter${i}`, PhysicalResourceId: `SdService-CapacityErrors${i}-7KQ2`, ResourceType: 'AWS::Logs::MetricFilter', ResourceStatus: 'CREATE_COMPLETE' as const, LastUpdatedTimestamp: new Date(0) })),
      { LogicalResourceId: 'KedaRole', PhysicalResourceId: 'SdService-KedaOperatorRole-2M7P', ResourceType: 'AWS::IAM::Role', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
    ],
  });
  cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(TEMPLATE) });
  lambda.on(GetFunctionConfigurationCommand, { FunctionName: 'svc-reconciler' }).resolves({ Role: ROLE_ARN, Environment: { Variables: { [RECONCILER_CONFIG_ENV]: JSON.stringify(config) } } });
  lambda.on(GetFunctionConfigurationCommand, { FunctionName: 'svc-other' }).resolves({ Role: ROLE_ARN, Environment: { Variables: { OTHER: '1' } } });
  cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => ({
    Metrics: [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: (input.Dimensions ?? []).map((d) => ({ Name: d.Name, Value: d.Value ?? 'any' })) }],
  }));
  // CloudWatch's matcher is stood in for by the library's re-implementation of the pattern subset.
  logs.on(TestMetricFilterCommand).callsFake((input: TestMetricFilterCommandInput) => ({
    matches: (input.logEventMessages ?? [])
      .flatMap((m, i) => (matchesFilterPattern(input.filterPattern!, m) ? [{ eventNumber: i + 1, eventMessage: m }] : [])),
  }));
  eks.on(DescribeAddonConfigurationCommand)
    .resolves({ addonName: OBSERVABILITY_ADDON_NAME, addonVersion: ADDON_VERSION, configurationSchema: ADDON_SCHEMA });
  eks.on(DescribeAddonCommand).resolves({ addon: { addonName: OBSERVABILITY_ADDON_NAME, status: 'ACTIVE', addonVersion: ADDON_VERSION, configurationValues: ADDON_CONFIG, health: { issues: [] } } });
  iam.on(GetRoleCommand).resolves({ Role: { Arn: KEDA_ROLE_ARN, RoleName: 'SdService-KedaOperatorRole-2M7P', Path: '/', RoleId: 'x', CreateDate: new Date(0) } });
  const granted = (roleArn: string, action: string, resource: string) => (roleArn === KEDA_ROLE_ARN
    ? action === 'cloudwatch:GetMetricData'
    : ['cloudwatch:GetMetricData', 'elasticloadbalancing:DescribeListeners'].includes(action)
      || (action === 'elasticloadbalancing:ModifyListener' && resource === (EKS_CONFIG.facts as { listenerArn: string }).listenerArn));
  iam.on(SimulatePrincipalPolicyCommand).callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
    EvaluationResults: (input.ActionNames ?? []).map((a) => ({
      EvalActionName: a, EvalResourceName: input.ResourceArns![0], EvalDecision: granted(input.PolicySourceArn!, a, input.ResourceArns![0]) ? 'allowed' : 'implicitDeny',
    })),
  }));
}

/** Resets every mock (call in beforeEach). */
export function resetAccount(): void {
  for (const m of [cfn, lambda, cw, logs, eks, iam]) m.reset();
}

/**
 * A conforming account whose service has had neither a target 5XX nor a capacity error yet: those metrics exist only
 * after their first event, so ListMetrics lists none of them (verify reports them SKIP and exits 0).
 */
export function healthyAccountBeforeAnyEvent(): void {
  conformingAccount();
  cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => (
    input.MetricName === AwsMetrics.alb.target5xx || input.Namespace === KARPENTER_CAPACITY_NAMESPACE
      ? { Metrics: [] }
      : { Metrics: [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: (input.Dimensions ?? []).map((d) => ({ Name: d.Name, Value: d.Value ?? 'any' })) }] }));
}
