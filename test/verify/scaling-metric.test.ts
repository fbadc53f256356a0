// verify's scaling check: the metric math of a pooled variant's per-pool policy (scaling.perPoolTargets), read from the
// deployed template and run through GetMetricData on the policy's own queries.
import { GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import { GetMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { Template } from 'aws-cdk-lib/assertions';
import { clients, runVerify } from '../../bin/verify';
import { scalingMetricCheck, scalingMetricPolicies } from '../../lib/core/verify/scaling-metric';
import { endpointStack, TWO_VARIANTS } from '../sagemaker/fixtures';
import { cfn, conformingAccount, cw, resetAccount } from './account';

beforeEach(resetAccount);

/** The template of the example's endpoint with per-pool targets on its pooled variant, as CloudFormation returns it. */
function perPoolTemplate(): ReturnType<Template['toJSON']> {
  const { stack } = endpointStack({ variants: [{ ...TWO_VARIANTS[0], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]] });
  return Template.fromStack(stack).toJSON();
}

test('finds the per-pool policy and its queries as GetMetricData takes them (each metric at one minute); none without perPoolTargets', () => {
  const [policy, ...others] = scalingMetricPolicies(perPoolTemplate());
  expect(others).toEqual([]);
  expect(policy.queries!.map((q) => [q.Id, q.ReturnData, q.MetricStat?.Period, q.MetricStat?.Stat])).toEqual([
    ['pool1', false, 60, 'Average'], ['pool2', false, 60, 'Average'], ['largest2', true, undefined, undefined],
  ]);
  expect(policy.queries![0].MetricStat!.Metric.Dimensions.map((d) => d.Name)).toEqual(['EndpointName', 'VariantName', 'InstanceType']);
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

test('a token in a query is not queried (SKIP), never guessed', () => {
  const template = perPoolTemplate();
  const [id] = scalingMetricPolicies(template).map((p) => p.logicalId);
  const metrics = template.Resources[id].Properties.TargetTrackingScalingPolicyConfiguration.CustomizedMetricSpecification.Metrics;
  metrics[0].MetricStat.Metric.Dimensions[0].Value = { Ref: 'EndpointName' };
  const [policy] = scalingMetricPolicies(template);
  expect(policy.queries).toBeUndefined();
  expect(scalingMetricCheck(policy, undefined, 3)).toMatchObject({ status: 'skip', detail: expect.stringMatching(/CloudFormation token/) });
});

describe('runVerify', () => {
  const scaling = async () => (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('scaling-metric:'));
  beforeEach(() => {
    conformingAccount();
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(perPoolTemplate()) });
  });

  test('PASS when the expression has datapoints; the request asks for every query, each metric at one minute, over 3 hours', async () => {
    cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => ({ Id: q.Id, Values: q.Id === 'pool2' ? [] : [0.8, 0.7] })),
    }));
    const [check] = await scaling();
    expect(check).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(new RegExp("^2 datapoints of 'largest2' in the last 3 h, newest 0.8 \\(datapoints per metric: .*ml\\.g5\\.xlarge: 0\\)\\. "
        + 'No datapoints for ConcurrentRequestsPerModel ml\\.g5\\.xlarge: expected if')),
    });
    const input = cw.commandCalls(GetMetricDataCommand)[0].args[0].input;
    expect(input.MetricDataQueries!.every((q) => q.ReturnData === true)).toBe(true);
    expect(input.EndTime!.getTime() - input.StartTime!.getTime()).toBe(3 * 3600_000);
  });

  test('FAIL when CloudWatch refuses the queries, and when the expression has no datapoints', async () => {
    cw.on(GetMetricDataCommand).rejects(Object.assign(new Error('The expression is not valid'), { name: 'ValidationError' }));
    expect(await scaling()).toEqual([expect.objectContaining({
      status: 'fail', detail: 'GetMetricData failed (a ValidationError means CloudWatch does not accept the queries): ValidationError: The expression is not valid',
    })]);
    cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'largest2', Values: [] }] });
    const [empty] = await scaling();
    expect(empty).toMatchObject({ status: 'fail', detail: expect.stringMatching(/no datapoints of 'largest2' in the last 3 h .*cannot scale out and the target cannot scale in/) });
  });
});
