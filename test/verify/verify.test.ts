/**
 * The post-deploy conformance command against mocked AWS clients (aws-sdk-client-mock): each check passes on the
 * answer a conforming account gives and fails, naming what it saw, on the answer a broken one gives.
 */
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, ListMetricsCommand, type ListMetricsCommandInput } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, TestMetricFilterCommand, type TestMetricFilterCommandInput } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeAddonCommand, DescribeAddonConfigurationCommand, EKSClient } from '@aws-sdk/client-eks';
import { GetRoleCommand, IAMClient, SimulatePrincipalPolicyCommand, type SimulatePrincipalPolicyCommandInput } from '@aws-sdk/client-iam';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { clients, KEDA_SERVICE_ACCOUNT, main, parseArgs, runVerify, UsageError } from '../../bin/verify';
import { matchesFilterPattern } from '../../lib/core/metrics/filter-pattern';
import { karpenterCapacityErrorPattern, KARPENTER_CAPACITY_NAMESPACE } from '../../lib/core/metrics/karpenter-capacity';
import { OBSERVABILITY_ADDON_NAME } from '../../lib/core/metrics/template-check';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { expectedMetrics } from '../../lib/core/verify/metric-presence';
import { KEDA_OPERATOR_SERVICE_ACCOUNT } from '../../lib/eks/keda';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const cw = mockClient(CloudWatchClient);
const logs = mockClient(CloudWatchLogsClient);
const eks = mockClient(EKSClient);
const iam = mockClient(IAMClient);

const ACCOUNT = '123456789012';
const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/Svc-ReconcilerRole-ABC`;
const KEDA_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/Svc-KedaOperatorRole-XYZ`;
const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/${name}/0001`;
const target = (name: string, rank: number) => ({
  class: { name, preferenceRank: rank, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 4, instanceType: `${name}.xlarge` },
  targetGroupArn: tg(name), targetGroupFullName: `targetgroup/${name}/0001`, namespace: 'serving', deploymentName: `sd21-${name}`, nodePoolName: `sd21-${name}`,
});
const EKS_CONFIG: ReconcilerConfig = {
  facts: {
    kind: 'alb', listenerArn: `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:listener/app/sd/abc/def`, loadBalancerFullName: 'app/sd/abc',
    targets: [target('inf2', 0), target('a10g', 1)],
  },
  placement: {}, policy: {}, service: 'sd21', tokensPerRequest: 1, metricDelaySeconds: 120, clusterName: 'prod', karpenterCapacityErrors: true,
};
const POOLS = ['sd21-inf2', 'sd21-a10g'];
const ADDON_VERSION = 'v4.4.0-eksbuild.1';
const ADDON_CONFIG = JSON.stringify({ containerInsights: { enhanced: true } });
const ADDON_SCHEMA = JSON.stringify({
  $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false,
  properties: { containerInsights: { type: 'object', properties: { enhanced: { type: 'boolean' } }, additionalProperties: false } },
});

const TEMPLATE = {
  Resources: {
    ReconcilerFn: { Type: 'AWS::Lambda::Function', Properties: {} },
    OtherFn: { Type: 'AWS::Lambda::Function', Properties: {} },
    ...Object.fromEntries(POOLS.map((pool, i) => [`CapacityFilter${i}`, {
      Type: 'AWS::Logs::MetricFilter',
      Properties: {
        FilterPattern: karpenterCapacityErrorPattern(pool, POOLS),
        MetricTransformations: [{ MetricNamespace: KARPENTER_CAPACITY_NAMESPACE, MetricName: { 'Fn::Join': ['', ['InsufficientCapacity/', { Ref: 'Cluster' }, `/${pool}`]] }, MetricValue: '1' }],
      },
    }])),
    Observability: { Type: 'AWS::EKS::Addon', Properties: { AddonName: OBSERVABILITY_ADDON_NAME, AddonVersion: ADDON_VERSION, ConfigurationValues: ADDON_CONFIG } },
    KedaRole: { Type: 'AWS::IAM::Role', Properties: {} },
    KedaAssociation: { Type: 'AWS::EKS::PodIdentityAssociation', Properties: { ServiceAccount: 'keda-operator', RoleArn: { 'Fn::GetAtt': ['KedaRole', 'Arn'] } } },
  },
};

/** A conforming account: every read metric listed under its exact set, CloudWatch's matcher agreeing with ours, IAM as granted. */
function conformingAccount(config: ReconcilerConfig = EKS_CONFIG) {
  cfn.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: [
      { LogicalResourceId: 'ReconcilerFn', PhysicalResourceId: 'svc-reconciler', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      { LogicalResourceId: 'OtherFn', PhysicalResourceId: 'svc-other', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
      ...POOLS.map((_, i) => ({ LogicalResourceId: `CapacityFilter${i}`, PhysicalResourceId: `filter-${i}`, ResourceType: 'AWS::Logs::MetricFilter', ResourceStatus: 'CREATE_COMPLETE' as const, LastUpdatedTimestamp: new Date(0) })),
      { LogicalResourceId: 'KedaRole', PhysicalResourceId: 'Svc-KedaOperatorRole-XYZ', ResourceType: 'AWS::IAM::Role', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) },
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
  iam.on(GetRoleCommand).resolves({ Role: { Arn: KEDA_ROLE_ARN, RoleName: 'Svc-KedaOperatorRole-XYZ', Path: '/', RoleId: 'x', CreateDate: new Date(0) } });
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

beforeEach(() => {
  for (const m of [cfn, lambda, cw, logs, eks, iam]) m.reset();
});

test('the KEDA service account the command looks for is the one lib/eks/keda.ts binds', () => {
  expect(KEDA_SERVICE_ACCOUNT).toBe(KEDA_OPERATOR_SERVICE_ACCOUNT);
});

describe('parseArgs', () => {
  test('help, and a stack', () => {
    expect(parseArgs([])).toEqual({ command: 'help' });
    expect(parseArgs(['--help'])).toEqual({ command: 'help' });
    expect(parseArgs(['--stack', 'Svc', '--region', 'us-east-1', '--json'])).toEqual({ command: 'verify', stack: 'Svc', region: 'us-east-1', json: true });
  });
  test('fails without --stack, or with an option it does not take', () => {
    expect(() => parseArgs(['--region', 'us-east-1'])).toThrow(new UsageError('--stack <name> is required'));
    expect(() => parseArgs(['--stack', 'Svc', '--burst'])).toThrow(/Unknown option '--burst'; verify takes --stack, --region, --json/);
  });
});

describe('a conforming EKS deployment', () => {
  test('every check passes, and each names the fact it settles', async () => {
    conformingAccount();
    const results = await runVerify('Svc', clients('us-east-1'));
    expect(results.filter((r) => r.status !== 'pass')).toEqual([]);
    const ids = results.map((r) => r.id);
    // One ListMetrics check per distinct metric the reconciler reads.
    expect(ids.filter((i) => i.startsWith('metric:'))).toHaveLength(expectedMetrics(EKS_CONFIG).length);
    expect(results.find((r) => r.id.includes('InsufficientCapacity/prod/sd21-inf2'))?.settles).toBe(
      `${KARPENTER_CAPACITY_NAMESPACE} InsufficientCapacity/prod/sd21-inf2 is published under [] (read by inf2 capacityErrors)`);
    // Three sample lines per filter: the Karpenter line counts, the foreign pod's and the NodeClass failure do not.
    expect(results.filter((r) => r.id.startsWith('filter:filter-0')).map((r) => r.settles)).toEqual([
      "metric filter filter-0 counts Karpenter's insufficient-capacity launch failure of NodeClaim sd21-inf2-x7k2p",
      'metric filter filter-0 does not count a plain-text line of a foreign pod sd21-inf2-server-6c9d7-q2w3e',
      "metric filter filter-0 does not count Karpenter's launch failure for a NodeClass that is not ready (not a capacity error)",
    ]);
    expect(results.filter((r) => r.id.startsWith('addon:')).map((r) => r.status)).toEqual(['pass', 'pass']);
    expect(ids).toEqual(expect.arrayContaining([
      `iam:reconciler role Svc-ReconcilerRole-ABC:elasticloadbalancing:ModifyListener:${(EKS_CONFIG.facts as { listenerArn: string }).listenerArn}`,
      'iam:KEDA operator role Svc-KedaOperatorRole-XYZ:cloudwatch:PutMetricData:*',
    ]));
    // Read-only: nothing but reads and simulations was called.
    expect(iam.commandCalls(SimulatePrincipalPolicyCommand).every((c) => c.args[0].input.PolicySourceArn)).toBe(true);
  });

  test('main prints PASS lines and the closing count, exit 0', async () => {
    conformingAccount();
    const out: string[] = [];
    const code = await main(['--stack', 'Svc', '--region', 'us-east-1'], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code).toBe(0);
    expect(out.at(-1)).toMatch(/^\d+ passed, 0 failed, 0 skipped$/);
    expect(out.filter((l) => l.startsWith('PASS')).length).toBeGreaterThan(10);
  });
});

describe('each check fails on a non-conforming answer, saying what it saw', () => {
  test('a metric published under another dimension set', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => ({
      Metrics: [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: [...(input.Dimensions ?? []).map((d) => ({ Name: d.Name, Value: d.Value ?? 'x' })), { Name: 'AvailabilityZone', Value: 'us-east-1a' }] }],
    }));
    const results = await runVerify('Svc', clients('us-east-1'));
    const failed = results.filter((r) => r.status === 'fail');
    expect(failed.length).toBe(expectedMetrics(EKS_CONFIG).length);
    expect(failed[0].detail).toMatch(/^ListMetrics lists it only under \[.*AvailabilityZone.*\]: the reconciler's query reads nothing$/);
  });

  test('a metric never published', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    const results = await runVerify('Svc', clients('us-east-1'));
    expect(results.find((r) => r.id.startsWith('metric:'))?.detail).toMatch(/^ListMetrics lists no such metric: nothing published it in the past two weeks/);
  });

  test('a filter that counts the foreign pod\'s line, or misses Karpenter\'s', async () => {
    conformingAccount();
    logs.on(TestMetricFilterCommand).callsFake((input: TestMetricFilterCommandInput) => ({
      matches: (input.logEventMessages ?? []).slice(1, 2).map((m) => ({ eventNumber: 2, eventMessage: m })),
    }));
    const filters = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('filter:filter-0'));
    expect(filters.map((r) => [r.status, r.detail])).toEqual([
      ['fail', 'TestMetricFilter did not match the line'],
      ['fail', 'TestMetricFilter matched the line'],
      ['pass', 'TestMetricFilter did not match the line'],
    ]);
  });

  test('an add-on configuration the version\'s schema rejects, and an add-on not active', async () => {
    conformingAccount();
    eks.on(DescribeAddonCommand).resolves({ addon: { status: 'DEGRADED', addonVersion: ADDON_VERSION, configurationValues: JSON.stringify({ agents: [] }), health: { issues: [{ code: 'ConfigurationConflict', message: 'x' }] } } });
    const addon = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('addon:'));
    expect(addon.map((r) => r.status)).toEqual(['fail', 'fail']);
    expect(addon[0].detail).toBe('/ must NOT have additional properties');
    expect(addon[1].detail).toBe("DescribeAddon: status DEGRADED; its configurationValues differ from the stack's; ConfigurationConflict: x");
  });

  test('a role allowed more than its handler calls, or less', async () => {
    conformingAccount();
    iam.on(SimulatePrincipalPolicyCommand).callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
      EvaluationResults: (input.ActionNames ?? []).map((a) => ({ EvalActionName: a, EvalResourceName: input.ResourceArns![0], EvalDecision: a === 'elasticloadbalancing:ModifyListener' ? 'implicitDeny' : 'allowed' })),
    }));
    const failed = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('iam:reconciler') && r.status === 'fail').map((r) => r.settles);
    expect(failed).toEqual(expect.arrayContaining([
      expect.stringMatching(/can call elasticloadbalancing:ModifyListener on arn:.*listener\/app\/sd\/abc\/def \(writes the target-group weights\)$/),
      expect.stringMatching(/cannot call cloudwatch:PutMetricData on \* /),
      expect.stringMatching(/cannot call elasticloadbalancing:DeleteListener on /),
    ]));
  });

  test('main exits 1 and prints FAIL when a check fails; a stack without a reconciler is an error', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    const out: string[] = [];
    expect(await main(['--stack', 'Svc'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(1);
    expect(out.some((l) => l.startsWith('FAIL'))).toBe(true);
    lambda.on(GetFunctionConfigurationCommand).resolves({ Role: ROLE_ARN, Environment: { Variables: {} } });
    const err: string[] = [];
    expect(await main(['--stack', 'Svc'], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
    expect(err).toEqual(['Svc has no reconciler function (no Lambda function with RECONCILER_CONFIG): is it a stack of this library?']);
  });
});

describe('a SageMaker deployment', () => {
  const SM_CONFIG: ReconcilerConfig = {
    facts: {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: `arn:aws:sagemaker:us-east-1:${ACCOUNT}:endpoint/llm`,
      variants: [{ variantName: 'pooled', classes: [{ ...target('l40s', 0).class, instanceType: 'ml.g6e.xlarge' }, { ...target('a10g', 1).class, instanceType: 'ml.g5.xlarge' }] }],
    },
    placement: {}, policy: {}, service: 'chat', tokensPerRequest: 200, metricDelaySeconds: 120,
  };

  test('the pooled variant\'s endpoint metrics are searched under [EndpointName, InstanceType, VariantName]: the fact verify settles', () => {
    const invocations = expectedMetrics(SM_CONFIG).find((m) => m.name === 'Invocations');
    expect(invocations).toEqual({
      namespace: 'AWS/SageMaker', name: 'Invocations', dimensions: { EndpointName: 'llm', InstanceType: undefined, VariantName: 'pooled' }, readBy: ['pooled servedTokensPerSecond'],
    });
  });

  test('passes when SageMaker lists the metrics under that set and fails when only under [EndpointName, VariantName]', async () => {
    conformingAccount(SM_CONFIG);
    iam.on(SimulatePrincipalPolicyCommand).callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
      EvaluationResults: (input.ActionNames ?? []).map((a) => ({
        EvalActionName: a, EvalResourceName: input.ResourceArns![0],
        EvalDecision: a === 'cloudwatch:GetMetricData' || (a.startsWith('sagemaker:') && ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'].includes(a) && input.ResourceArns![0].endsWith('endpoint/llm')) ? 'allowed' : 'implicitDeny',
      })),
    }));
    const pass = await runVerify('Svc', clients('us-east-1'));
    expect(pass.filter((r) => r.id.startsWith('iam:reconciler') || r.id.startsWith('metric:')).filter((r) => r.status !== 'pass')).toEqual([]);
    cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => ({
      Metrics: [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: (input.Dimensions ?? []).filter((d) => d.Name !== 'InstanceType').map((d) => ({ Name: d.Name, Value: d.Value })) }],
    }));
    const fail = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('metric:AWS/SageMaker:Invocations'));
    expect(fail.map((r) => [r.status, r.detail])).toEqual([['fail', "ListMetrics lists it only under [EndpointName, VariantName]: the reconciler's query reads nothing"]]);
  });
});
