/**
 * A deployed EKS service as the read-only AWS calls of verify see it (aws-sdk-client-mock): the conforming answers,
 * which each test then breaks one at a time. Shared by verify.test.ts and the docs example (docs-example.test.ts).
 */
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
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
import { allows, type Statement } from '../permissions/iam-policy';
import { reconcilerFunction } from './deployed-template';

export const cfn = mockClient(CloudFormationClient);
export const lambda = mockClient(LambdaClient);
export const cw = mockClient(CloudWatchClient);
/** Application Auto Scaling: verify's scaling check reads the live scaling policies (the EKS stack has none). */
export const aas = mockClient(ApplicationAutoScalingClient);
export const logs = mockClient(CloudWatchLogsClient);
export const eks = mockClient(EKSClient);
export const iam = mockClient(IAMClient);

export const ACCOUNT = '123456789012';
export const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-ReconcilerRole-9F3K`;
const KEDA_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-KedaOperatorRole-2M7P`;
const KARPENTER_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-KarpenterControllerRole-4H8T`;
const NODE_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/SdService-KarpenterNodeRole-7C2D`;
/**
 * The Karpenter controller's statements the probes reach, as lib/eks/karpenter.ts writes them for cluster `prod` (a
 * subset: one statement per condition kind), resolved. The simulator stand-in judges them with the permissions tests'
 * evaluator, which reads the conditions: a probe without its ContextEntries reads as denied here, as in IAM.
 */
const ec2 = (r: string) => `arn:aws:ec2:us-east-1:*:${r}`;
export const KARPENTER_STATEMENTS: Statement[] = [
  { Sid: 'AllowAPIServerEndpointDiscovery', Effect: 'Allow', Action: 'eks:DescribeCluster', Resource: `arn:aws:eks:us-east-1:${ACCOUNT}:cluster/prod` },
  {
    Sid: 'AllowScopedEC2InstanceActionsWithTags', Effect: 'Allow', Action: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'], Resource: ec2('instance/*'),
    Condition: {
      StringEquals: { 'aws:RequestTag/kubernetes.io/cluster/prod': 'owned', 'aws:RequestTag/eks:eks-cluster-name': 'prod' },
      StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
    },
  },
  {
    Sid: 'AllowScopedDeletion', Effect: 'Allow', Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'], Resource: ec2('instance/*'),
    Condition: { StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/prod': 'owned' }, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
  },
  {
    Sid: 'AllowPassingInstanceRole', Effect: 'Allow', Action: 'iam:PassRole', Resource: NODE_ROLE_ARN,
    Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
  },
  {
    Sid: 'AllowRegionalReadActions', Effect: 'Allow', Action: ['ec2:DescribeInstances', 'ec2:DescribeSubnets'], Resource: '*',
    Condition: { StringEquals: { 'aws:RequestedRegion': 'us-east-1' } },
  },
];
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
    ReconcilerFn: reconcilerFunction(),
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
    KarpenterRole: { Type: 'AWS::IAM::Role', Properties: {} },
    KarpenterNodeRole: { Type: 'AWS::IAM::Role', Properties: {} },
    KarpenterAssociation: { Type: 'AWS::EKS::PodIdentityAssociation', Properties: { ServiceAccount: 'karpenter', RoleArn: { 'Fn::GetAtt': ['KarpenterRole', 'Arn'] } } },
    // As synthesized: the PassRole statement names the node role by Fn::GetAtt (verify resolves it with GetRole).
    KarpenterPolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'KarpenterRole' }],
        PolicyDocument: { Statement: [{ Sid: 'AllowPassingInstanceRole', Effect: 'Allow', Action: 'iam:PassRole', Resource: { 'Fn::GetAtt': ['KarpenterNodeRole', 'Arn'] } }] },
      },
    },
  },
};

/** A conforming account: every read metric listed under its exact set, CloudWatch's matcher agreeing with ours, IAM as granted. */
export function conformingAccount(config: ReconcilerConfig = EKS_CONFIG) {
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [
      { LogicalResourceId: 'ReconcilerFn', PhysicalResourceId: 'svc-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      { LogicalResourceId: 'OtherFn', PhysicalResourceId: 'svc-other', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      ...POOLS.map((_, i) => ({ LogicalResourceId: `CapacityFilter${i}`, PhysicalResourceId: `SdService-CapacityErrors${i}-7KQ2`, ResourceType: 'AWS::Logs::MetricFilter', ResourceStatus: 'CREATE_COMPLETE' as const, LastUpdatedTimestamp: new Date(0) })),
      ...[['KedaRole', KEDA_ROLE_ARN], ['KarpenterRole', KARPENTER_ROLE_ARN], ['KarpenterNodeRole', NODE_ROLE_ARN]].map(([id, arn]) => ({
        LogicalResourceId: id, PhysicalResourceId: arn.split('/')[1], ResourceType: 'AWS::IAM::Role', ResourceStatus: 'CREATE_COMPLETE' as const, LastUpdatedTimestamp: new Date(0),
      })),
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
  for (const arn of [KEDA_ROLE_ARN, KARPENTER_ROLE_ARN, NODE_ROLE_ARN]) {
    const RoleName = arn.split('/')[1];
    iam.on(GetRoleCommand, { RoleName }).resolves({ Role: { Arn: arn, RoleName, Path: '/', RoleId: 'x', CreateDate: new Date(0) } });
  }
  const granted = (roleArn: string, action: string, resource: string, context: Record<string, string>) => (roleArn === KARPENTER_ROLE_ARN
    ? allows(KARPENTER_STATEMENTS, { action, resource, context })
    : roleArn === KEDA_ROLE_ARN
    ? action === 'cloudwatch:GetMetricData'
    : ['cloudwatch:GetMetricData', 'elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth'].includes(action)
      || (action === 'elasticloadbalancing:ModifyListener' && resource === (EKS_CONFIG.facts as { listenerArn: string }).listenerArn));
  iam.on(SimulatePrincipalPolicyCommand)
    .callsFake(simulator((input, a) => granted(input.PolicySourceArn!, a, input.ResourceArns![0], contextOf(input))));
}

/** What a fake simulator says of one action of a call: allowed or not, and the context keys the policies test that it lacks. */
type Simulated = boolean | { readonly allowed: boolean; readonly missing?: string[]; readonly deniedByOrganizations?: boolean };

/**
 * A SimulatePrincipalPolicy stand-in answering in the documented shape (@aws-sdk/client-iam@3.1169.0
 * dist-types/models/models_0.d.ts:8259-8290, :8224-8233): one EvaluationResult per action, its EvalResourceName the
 * ARN template of the resource type (never the ARN asked about), and for a call naming an ARN the decision and the
 * missing context keys in ResourceSpecificResults; for `*`, the missing keys at the top level.
 */
export function simulator(decide: (input: SimulatePrincipalPolicyCommandInput, action: string) => Simulated) {
  return (input: SimulatePrincipalPolicyCommandInput) => ({
    EvaluationResults: (input.ActionNames ?? []).map((a) => {
      const said = decide(input, a);
      const { allowed, missing, deniedByOrganizations } = typeof said === 'boolean' ? { allowed: said } as Exclude<Simulated, boolean> : said;
      const decision = deniedByOrganizations ? 'explicitDeny' : allowed ? 'allowed' : 'implicitDeny';
      const resource = input.ResourceArns![0];
      const organizations = deniedByOrganizations ? { OrganizationsDecisionDetail: { AllowedByOrganizations: false } } : {};
      const keys = missing ? { MissingContextValues: missing } : {};
      if (resource === '*') return { EvalActionName: a, EvalResourceName: '*', EvalDecision: decision, ...keys, ...organizations };
      return {
        EvalActionName: a, EvalResourceName: arnTemplate(resource), EvalDecision: decision, ...organizations,
        ResourceSpecificResults: [{ EvalResourceName: resource, EvalResourceDecision: decision, ...keys }],
      };
    }),
  });
}

/** An ARN's resource type as a template, as the simulator names it now (`arn:${Partition}:s3:::${BucketName}/${KeyName}`). */
function arnTemplate(arn: string): string {
  const [, , service] = arn.split(':');
  return `arn:\${Partition}:${service}:\${Region}:\${Account}:\${ResourceName}`;
}

/** The request context a SimulatePrincipalPolicy call gives (its ContextEntries, one value each here). */
export function contextOf(input: SimulatePrincipalPolicyCommandInput): Record<string, string> {
  return Object.fromEntries((input.ContextEntries ?? []).map((e) => [e.ContextKeyName!, (e.ContextKeyValues ?? [])[0]]));
}

/** Resets every mock (call in beforeEach). */
export function resetAccount(): void {
  for (const m of [cfn, lambda, cw, aas, logs, eks, iam]) m.reset();
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
