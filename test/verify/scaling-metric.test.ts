// verify's scaling check: the metric math of a pooled variant's per-pool policy (scaling.perPoolTargets), read from the
// live policy (Application Auto Scaling DescribeScalingPolicies, matched by the ARN the stack lists as its physical id)
// or, when none is read, from the deployed template, and run through GetMetricData on the policy's own queries.
import { DescribeScalingPoliciesCommand, type ScalingPolicy, type TargetTrackingMetricDataQuery } from '@aws-sdk/client-application-auto-scaling';
import { CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { CfnParameter, Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { clients, runVerify } from '../../bin/verify';
import { SageMakerCapacityEndpoint } from '../../lib';
import { policyArnOf, scalingMetricCheck, scalingMetricPolicies, scalingQueryPlan } from '../../lib/core/verify/scaling-metric';
import { endpointStack, smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { LLAMA_CONTRACT, testStack } from '../util';
import { aas, cfn, conformingAccount, cw, resetAccount } from './account';
import { reconcilerFunction } from './deployed-template';

beforeEach(resetAccount);

const PER_POOL_VARIANTS = [{ ...TWO_VARIANTS[0], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]];

/** The template of the example's endpoint with per-pool targets on its pooled variant, as CloudFormation returns it. */
function perPoolTemplate(): ReturnType<Template['toJSON']> {
  const { stack } = endpointStack({ variants: PER_POOL_VARIANTS });
  return Template.fromStack(stack).toJSON();
}

/** The same endpoint named by a token (a stack parameter): every EndpointName dimension of the template is `{ Ref }`. */
function tokenNameTemplate(): ReturnType<Template['toJSON']> {
  const { stack } = testStack();
  new SageMakerCapacityEndpoint(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: smClasses(), variants: PER_POOL_VARIANTS, provisionTimeout: Duration.minutes(15),
    endpointName: new CfnParameter(stack, 'EndpointName').valueAsString,
  });
  return Template.fromStack(stack).toJSON();
}

const ENDPOINT = 'llama-prod';
const POLICY_ARN = 'arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:6d8972f3-efc8-437c-92d1-6270f29a66e7:resource/sagemaker/endpoint/'
  + `${ENDPOINT}/variant/preferred:policyName/TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool`;

/**
 * The per-pool policy as DescribeScalingPolicies returns it: the template's queries with the endpoint name resolved,
 * no Period (TargetTrackingMetricStat has none) and, on the returned expression, no ReturnData (its default is true).
 */
function livePolicy(arn = POLICY_ARN): ScalingPolicy {
  const [logicalId] = scalingMetricPolicies(perPoolTemplate()).map((p) => p.logicalId);
  const properties = perPoolTemplate().Resources[logicalId].Properties;
  const metrics = JSON.parse(JSON.stringify(properties.TargetTrackingScalingPolicyConfiguration.CustomizedMetricSpecification.Metrics)
    .replace(/Test-Llama-[0-9A-F]+/g, ENDPOINT)) as TargetTrackingMetricDataQuery[];
  return {
    PolicyARN: arn, PolicyName: properties.PolicyName, ServiceNamespace: 'sagemaker', ResourceId: `endpoint/${ENDPOINT}/variant/preferred`,
    ScalableDimension: 'sagemaker:variant:DesiredInstanceCount', PolicyType: 'TargetTrackingScaling', CreationTime: new Date(0),
    TargetTrackingScalingPolicyConfiguration: {
      TargetValue: 1,
      CustomizedMetricSpecification: { Metrics: metrics.map(({ ReturnData, ...q }) => (ReturnData === true ? q : { ...q, ReturnData })) },
    },
  };
}

test('finds the per-pool policy, its queries as GetMetricData takes them (each metric at one minute) and where AAS lists it; none without perPoolTargets', () => {
  const [policy, ...others] = scalingMetricPolicies(perPoolTemplate());
  expect(others).toEqual([]);
  expect(policy.queries!.map((q) => [q.Id, q.ReturnData, q.MetricStat?.Period, q.MetricStat?.Stat])).toEqual([
    ['pool1', false, 60, 'Average'], ['pool2', false, 60, 'Average'], ['largest2', true, undefined, undefined],
  ]);
  expect(policy.queries![0].MetricStat!.Metric.Dimensions.map((d) => d.Name)).toEqual(['EndpointName', 'VariantName', 'InstanceType']);
  // Its scalable target's namespace and resource id, and its own name: the filters of DescribeScalingPolicies.
  expect(policy.lookup).toEqual({
    ServiceNamespace: 'sagemaker', ResourceId: expect.stringMatching(/^endpoint\/Test-Llama-[0-9A-F]+\/variant\/preferred$/),
    PolicyNames: ['TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool'],
  });
  const { stack } = endpointStack();
  expect(scalingMetricPolicies(Template.fromStack(stack).toJSON())).toEqual([]);
});

test('a query the check cannot read (an intrinsic function for the dimensions, a null entry) is SKIP, not a crash', () => {
  const template = perPoolTemplate();
  const [id] = scalingMetricPolicies(template).map((p) => p.logicalId);
  const metrics = template.Resources[id].Properties.TargetTrackingScalingPolicyConfiguration.CustomizedMetricSpecification.Metrics;
  metrics[0].MetricStat.Metric.Dimensions = { 'Fn::If': ['c', [], []] };
  expect(scalingMetricPolicies(template)[0].queries).toBeUndefined();
  metrics[0] = null;
  expect(scalingMetricPolicies(template)[0].queries).toBeUndefined();
});

test('a token in the template with no live policy read is not queried (SKIP naming why), never guessed', () => {
  const [policy] = scalingMetricPolicies(tokenNameTemplate());
  expect(policy.queries).toBeUndefined();
  // The resource id is a token too: only the namespace and the policy's (literal) name narrow the request.
  expect(policy.lookup).toEqual({ ServiceNamespace: 'sagemaker', PolicyNames: ['TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool'] });
  const plan = scalingQueryPlan(policy, { missing: 'DescribeScalingPolicies failed: AccessDeniedException: not authorized' });
  expect(scalingMetricCheck(plan, undefined, 3)).toMatchObject({
    status: 'skip',
    detail: 'a value of its queries is a CloudFormation token in the template and no live policy was read '
      + '(DescribeScalingPolicies failed: AccessDeniedException: not authorized): not queried',
  });
});

test('the live policy\'s queries are read in its own shape (no Period: each metric at one minute; ReturnData defaults to true) and replace the template\'s', () => {
  const [policy] = scalingMetricPolicies(tokenNameTemplate());
  const plan = scalingQueryPlan(policy, { policy: livePolicy() });
  expect(plan).toMatchObject({ source: 'the live policy (DescribeScalingPolicies)' });
  const queries = 'queries' in plan ? plan.queries : [];
  expect(queries.map((q) => [q.Id, q.ReturnData, q.MetricStat?.Period])).toEqual([['pool1', false, 60], ['pool2', false, 60], ['largest2', true, undefined]]);
  expect(queries[0].MetricStat!.Metric.Dimensions[0]).toEqual({ Name: 'EndpointName', Value: ENDPOINT });
  // A live policy without metric math falls back to the template, and says why.
  const predefined = { ...livePolicy(), TargetTrackingScalingPolicyConfiguration: { TargetValue: 1 } };
  expect(scalingQueryPlan(policy, { policy: predefined })).toMatchObject({
    skip: expect.stringMatching(/no live policy was read \(the live policy has no metric math\)/),
  });
});

test('the policy ARN is read from a physical id that is the ARN or the ARN joined to the scalable dimension', () => {
  expect(policyArnOf(POLICY_ARN)).toBe(POLICY_ARN);
  expect(policyArnOf(`${POLICY_ARN}|sagemaker:variant:DesiredInstanceCount`)).toBe(POLICY_ARN);
  expect(policyArnOf('TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool')).toBeUndefined();
  expect(policyArnOf(undefined)).toBeUndefined();
});

describe('runVerify', () => {
  const scaling = async () => (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('scaling-metric:'));
  const dataFor = (input: GetMetricDataCommandInput) => ({
    MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({ Id: q.Id, Values: q.Id === 'pool2' ? [] : [0.8, 0.7] })),
  });
  const denied = Object.assign(new Error('User is not authorized to perform: application-autoscaling:DescribeScalingPolicies'), { name: 'AccessDeniedException' });

  /** The stack as deployed: this template, and the per-pool policy's physical id (its ARN; null: none yet) among the stack's resources. */
  async function deployed(template: ReturnType<Template['toJSON']>, physicalId: string | null = POLICY_ARN): Promise<void> {
    const listed = (await new CloudFormationClient({ region: 'us-east-1' }).send(new ListStackResourcesCommand({ StackName: 'Svc' }))).StackResourceSummaries!;
    const base = listed.filter((r) => r.ResourceType !== 'AWS::ApplicationAutoScaling::ScalingPolicy');
    const [logicalId] = scalingMetricPolicies(template).map((p) => p.logicalId);
    // The endpoint's template with the account's reconciler function (conformingAccount lists it as ReconcilerFn).
    const withReconciler = { ...template, Resources: { ...template.Resources, ReconcilerFn: reconcilerFunction() } };
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(withReconciler) });
    cfn.on(ListStackResourcesCommand).resolves({
      StackResourceSummaries: [...base, {
        LogicalResourceId: logicalId, PhysicalResourceId: physicalId ?? undefined, ResourceType: 'AWS::ApplicationAutoScaling::ScalingPolicy',
        ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0),
      }],
    });
  }

  beforeEach(async () => {
    conformingAccount();
    await deployed(perPoolTemplate());
    aas.on(DescribeScalingPoliciesCommand).resolves({ ScalingPolicies: [livePolicy()] });
  });

  test('PASS when the expression has datapoints; the request asks for every query, each metric at one minute, over 3 hours', async () => {
    cw.on(GetMetricDataCommand).callsFake(dataFor);
    const [check] = await scaling();
    expect(check).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(new RegExp("^2 datapoints of 'largest2' in the last 3 h, newest 0.8 \\(datapoints per metric: .*ml\\.g5\\.xlarge: 0\\)\\. "
        + 'No datapoints for ConcurrentRequestsPerModel ml\\.g5\\.xlarge: expected if.*; queries from the live policy \\(DescribeScalingPolicies\\)$')),
    });
    // The live policy is looked up by its scalable target's namespace and resource id and its name (literals here).
    expect(aas.commandCalls(DescribeScalingPoliciesCommand).map((c) => c.args[0].input)).toEqual([{
      ServiceNamespace: 'sagemaker', ResourceId: expect.stringMatching(/^endpoint\/Test-Llama-[0-9A-F]+\/variant\/preferred$/),
      PolicyNames: ['TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool'],
    }]);
    const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
    expect(input.MetricDataQueries!.every((q) => q.ReturnData === true)).toBe(true);
    expect(input.MetricDataQueries!.filter((q) => q.MetricStat).every((q) => q.MetricStat!.Period === 60)).toBe(true);
    expect(input.EndTime!.getTime() - input.StartTime!.getTime()).toBe(3 * 3600_000);
  });

  test('FAIL when CloudWatch refuses the queries, and when the expression has no datapoints', async () => {
    cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('The expression is not valid'), { name: 'ValidationError' }));
    expect(await scaling()).toEqual([expect.objectContaining({
      status: 'fail', detail: 'GetMetricData failed (a ValidationError means CloudWatch does not accept the queries): ValidationError: The expression is not valid'
        + '; queries from the live policy (DescribeScalingPolicies)',
    })]);
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'largest2', Values: [] }] });
    const [empty] = await scaling();
    expect(empty).toMatchObject({ status: 'fail', detail: expect.stringMatching(/no datapoints of 'largest2' in the last 3 h .*cannot scale out and the target cannot scale in/) });
  });

  test('an endpoint named by a token: the live policy (found on a later page, by ARN) is queried with its resolved name, PASS or FAIL on its data', async () => {
    await deployed(tokenNameTemplate());
    const other = livePolicy(POLICY_ARN.replace('6d8972f3', '0ther000'));
    aas.on(DescribeScalingPoliciesCommand).resolvesOnce({ ScalingPolicies: [other], NextToken: 'page2' }).resolves({ ScalingPolicies: [livePolicy()] });
    cw.on(GetMetricDataCommand).callsFake(dataFor);
    const [check] = await scaling();
    expect(check).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^2 datapoints of 'largest2' .*; queries from the live policy \(DescribeScalingPolicies\)$/) });
    const sent = cw.commandCalls(GetMetricDataCommand)[0].args[0].input.MetricDataQueries!;
    expect(sent.filter((q) => q.MetricStat).map((q) => q.MetricStat!.Metric!.Dimensions![0])).toEqual([
      { Name: 'EndpointName', Value: ENDPOINT }, { Name: 'EndpointName', Value: ENDPOINT },
    ]);
    expect(aas.commandCalls(DescribeScalingPoliciesCommand).map((c) => c.args[0].input)).toEqual([
      { ServiceNamespace: 'sagemaker', PolicyNames: ['TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool'] },
      { ServiceNamespace: 'sagemaker', PolicyNames: ['TestLlamaScalingpreferred10CE9C2A-ConcurrencyPerPool'], NextToken: 'page2' },
    ]);
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'largest2', Values: [] }] });
    aas.on(DescribeScalingPoliciesCommand).resolves({ ScalingPolicies: [livePolicy()] });
    const [empty] = await scaling();
    expect(empty).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^no datapoints of 'largest2' .*; queries from the live policy \(DescribeScalingPolicies\)$/) });
  });

  test('an endpoint named by a token and no live policy with the stack\'s ARN (or no physical id yet): SKIP naming why, nothing queried', async () => {
    await deployed(tokenNameTemplate());
    aas.on(DescribeScalingPoliciesCommand).resolves({ ScalingPolicies: [livePolicy(POLICY_ARN.replace('6d8972f3', '0ther000'))] });
    expect(await scaling()).toEqual([expect.objectContaining({
      status: 'skip', detail: `a value of its queries is a CloudFormation token in the template and no live policy was read (DescribeScalingPolicies lists no live policy with ARN ${POLICY_ARN}): not queried`,
    })]);
    await deployed(tokenNameTemplate(), null);
    expect(await scaling()).toEqual([expect.objectContaining({
      status: 'skip', detail: expect.stringMatching(/no live policy was read \(the stack lists no physical id for it \(not created yet\?\)\)/),
    })]);
    expect(cw.commandCalls(GetMetricDataCommand)).toEqual([]);
  });

  test('a refused DescribeScalingPolicies: a token in the template is SKIP naming the refusal, and the run goes on', async () => {
    await deployed(tokenNameTemplate());
    aas.on(DescribeScalingPoliciesCommand).rejects(denied);
    const results = await runVerify('Svc', clients('us-east-1'));
    expect(results.filter((r) => r.id.startsWith('scaling-metric:'))).toEqual([expect.objectContaining({
      status: 'skip', detail: 'a value of its queries is a CloudFormation token in the template and no live policy was read (DescribeScalingPolicies failed: '
        + 'AccessDeniedException: User is not authorized to perform: application-autoscaling:DescribeScalingPolicies): not queried',
    })]);
    expect(results.filter((r) => !r.id.startsWith('scaling-metric:')).length).toBeGreaterThan(0);
    expect(cw.commandCalls(GetMetricDataCommand)).toEqual([]);
  });

  test('a refused DescribeScalingPolicies and literal queries in the template: still checked, from the template, saying the live policy was not read', async () => {
    aas.on(DescribeScalingPoliciesCommand).rejects(denied);
    cw.on(GetMetricDataCommand).callsFake(dataFor);
    const [check] = await scaling();
    expect(check).toMatchObject({
      status: 'pass', detail: expect.stringMatching(/; queries from the deployed template \(no live policy read: DescribeScalingPolicies failed: AccessDeniedException: .*\)$/),
    });
    const sent = cw.commandCalls(GetMetricDataCommand)[0].args[0].input.MetricDataQueries!;
    expect(sent.find((q) => q.MetricStat)!.MetricStat!.Metric!.Dimensions![0]).toEqual({ Name: 'EndpointName', Value: expect.stringMatching(/^Test-Llama-/) });
  });
});
