/**
 * The post-deploy conformance command against mocked AWS clients (aws-sdk-client-mock): each check passes on the
 * answer a conforming account gives and fails, naming what it saw, on the answer a broken one gives.
 */
import { DescribeAddonCommand, DescribeAddonConfigurationCommand } from '@aws-sdk/client-eks';
import { ListMetricsCommand, type ListMetricsCommandInput } from '@aws-sdk/client-cloudwatch';
import { TestMetricFilterCommand, type TestMetricFilterCommandInput } from '@aws-sdk/client-cloudwatch-logs';
import { SimulatePrincipalPolicyCommand, type SimulatePrincipalPolicyCommandInput } from '@aws-sdk/client-iam';
import { allows } from '../permissions/iam-policy';
import { GetFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import { GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { clients, main, parseArgs, runVerify, UsageError } from '../../bin/verify';
import { KARPENTER_CAPACITY_NAMESPACE } from '../../lib/core/metrics/karpenter-capacity';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { AwsDim, AwsMetrics, METRIC_NAMESPACE } from '../../lib/core/metrics/contract';
import { expectedMetrics, metricPresenceCheck, publishedOnlyOn } from '../../lib/core/verify/metric-presence';
import {
  ACCOUNT, ADDON_VERSION, cfn, conformingAccount, contextOf, cw, EKS_CONFIG, eks, healthyAccountBeforeAnyEvent, iam, KARPENTER_STATEMENTS, lambda,
  logs, resetAccount, ROLE_ARN, simulator, target, TEMPLATE,
} from './account';

beforeEach(resetAccount);

test('which read metrics are published only on an event (the rest fail when ListMetrics lists none)', () => {
  const alb = (name: string) => publishedOnlyOn({ namespace: AwsMetrics.alb.namespace, name, dimensions: { [AwsDim.LOAD_BALANCER]: 'lb', [AwsDim.TARGET_GROUP]: 'tg' } });
  const sm = (name: string) => publishedOnlyOn({ namespace: AwsMetrics.sageMaker.namespace, name, dimensions: { [AwsDim.ENDPOINT_NAME]: 'e', [AwsDim.VARIANT_NAME]: 'v' } });
  expect(alb(AwsMetrics.alb.target5xx)).toBe('HTTP 5XX response of a target');
  expect(alb(AwsMetrics.alb.target4xx)).toBe('HTTP 4XX response of a target');
  expect(alb(AwsMetrics.alb.requestCount)).toBeUndefined();
  expect(alb(AwsMetrics.alb.healthyHostCount)).toBeUndefined();
  // SageMaker sends 0 or 1 per invocation: its error metrics come with traffic, like Invocations.
  expect(sm(AwsMetrics.sageMaker.invocation5xxErrors)).toBeUndefined();
  expect(sm(AwsMetrics.sageMaker.invocations)).toBeUndefined();
  expect(publishedOnlyOn({ namespace: KARPENTER_CAPACITY_NAMESPACE, name: 'InsufficientCapacity/prod/np', dimensions: {} }))
    .toBe('insufficient-capacity launch failure of the NodePool');
  expect(publishedOnlyOn({ namespace: METRIC_NAMESPACE, name: 'PolicyMode', dimensions: { Service: 's' } })).toBeUndefined();
});

test('a missing metric names the cause its contract spec declares (whyAbsent), else traffic', () => {
  // Carried from the contract: HealthyTargets declares its cause (the reconciler's own DescribeTargetHealth read), for
  // each class that reads it; RequestCount (AWS-published) and PolicyMode (the reconciler's, with no cause declared) do not.
  const read = expectedMetrics(EKS_CONFIG);
  const whyAbsent = (namespace: string, name: string, dimension: string) =>
    read.filter((m) => m.namespace === namespace && m.name === name && Object.values(m.dimensions).includes(dimension)).map((m) => m.whyAbsent);
  const describeTargetHealth = 'the reconciler publishes it from each run\'s DescribeTargetHealth read: a role without '
    + 'elasticloadbalancing:DescribeTargetHealth never does, see its probe';
  expect(whyAbsent(METRIC_NAMESPACE, 'HealthyTargets', 'inf2')).toEqual([describeTargetHealth]);
  expect(whyAbsent(METRIC_NAMESPACE, 'HealthyTargets', 'a10g')).toEqual([describeTargetHealth]);
  expect(whyAbsent(AwsMetrics.alb.namespace, AwsMetrics.alb.requestCount, 'targetgroup/inf2/0001')).toEqual([undefined]);
  expect(whyAbsent(METRIC_NAMESPACE, 'PolicyMode', 'sd21')).toEqual([undefined]);
  // The check reads the field, whichever metric carries it.
  const policyMode = { namespace: METRIC_NAMESPACE, name: 'PolicyMode', dimensions: { Service: 's' }, readBy: ['policyMode'] };
  expect(metricPresenceCheck({ ...policyMode, whyAbsent: 'only a run in capacity mode publishes it' }, []).detail)
    .toMatch(/ \(new metrics take up to 15 minutes to appear; only a run in capacity mode publishes it\)$/);
  expect(metricPresenceCheck(policyMode, []).detail).toMatch(/; traffic-driven metrics need traffic\)$/);
});

describe('parseArgs', () => {
  test('help, and a stack', () => {
    expect(parseArgs([])).toEqual({ command: 'help' });
    expect(parseArgs(['--help'])).toEqual({ command: 'help' });
    expect(parseArgs(['--stack', 'Svc', '--region', 'us-east-1', '--json'])).toEqual({ command: 'verify', stack: 'Svc', region: 'us-east-1', json: true, bursts: [], timeWeightUpdate: false });
  });
  test('fails without --stack, or with an option it does not take', () => {
    expect(() => parseArgs(['--region', 'us-east-1'])).toThrow(new UsageError('--stack <name> is required'));
    expect(() => parseArgs(['--stack', 'Svc', '--hold', '5m'])).toThrow(/Unknown option '--hold'; verify takes --stack, --region, --json, --kube-context, --burst/);
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
    expect(results.filter((r) => r.id.startsWith('filter:SdService-CapacityErrors0-7KQ2')).map((r) => r.settles)).toEqual([
      "metric filter SdService-CapacityErrors0-7KQ2 counts Karpenter's insufficient-capacity launch failure of NodeClaim sd21-inf2-x7k2p",
      'metric filter SdService-CapacityErrors0-7KQ2 does not count a plain-text line of a foreign pod sd21-inf2-server-6c9d7-q2w3e',
      "metric filter SdService-CapacityErrors0-7KQ2 does not count Karpenter's launch failure for a NodeClass that is not ready (not a capacity error)",
    ]);
    expect(results.filter((r) => r.id.startsWith('addon:')).map((r) => r.status)).toEqual(['pass', 'pass']);
    expect(ids).toEqual(expect.arrayContaining([
      `iam:reconciler role SdService-ReconcilerRole-9F3K:elasticloadbalancing:ModifyListener:${(EKS_CONFIG.facts as { listenerArn: string }).listenerArn}`,
      'iam:KEDA operator role SdService-KedaOperatorRole-2M7P:cloudwatch:PutMetricData:*',
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
  test('an AWS error fails its group of checks, named, and every other group still reports', async () => {
    conformingAccount();
    // EKS does not know the pinned add-on version: DescribeAddonConfiguration answers with an error.
    eks.on(DescribeAddonConfigurationCommand).rejects(Object.assign(new Error('Addon version 9.9.9 is not supported'), { name: 'InvalidParameterException' }));
    const results = await runVerify('Svc', clients('us-east-1'));
    expect(results.filter((r) => r.status === 'fail')).toEqual([{
      id: 'addon:error', status: 'fail', settles: 'the addon checks could run', detail: 'InvalidParameterException: Addon version 9.9.9 is not supported',
    }]);
    expect(results.filter((r) => r.id.startsWith('filter:') && r.status === 'pass').length).toBeGreaterThan(0);
    expect(results.filter((r) => r.id.startsWith('metric:')).length).toBe(expectedMetrics(EKS_CONFIG).length);
  });

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

  test('the run-fed alarms\' own inputs: a reconciler that publishes no Decisions, DesiredReplicas or ReadyReplicas fails each, naming the alarm', async () => {
    conformingAccount();
    const unpublished = new Set(['Decisions', 'DesiredReplicas', 'ReadyReplicas']);
    cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => ({
      Metrics: input.Namespace === METRIC_NAMESPACE && unpublished.has(input.MetricName!) ? []
        : [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: (input.Dimensions ?? []).map((d) => ({ Name: d.Name, Value: d.Value ?? 'any' })) }],
    }));
    const failed = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.status === 'fail');
    expect(failed.map((r) => [r.id, r.settles])).toEqual([
      ['metric:CapacityAwareInference:Decisions:Service=sd21', "CapacityAwareInference Decisions is published under [Service] for Service=sd21 (read by ReconcilerHeartbeat alarm's decisions)"],
      ...['inf2', 'a10g'].flatMap((c) => [['DesiredReplicas', 'desired'], ['ReadyReplicas', 'ready']].map(([name, what]) => [
        `metric:CapacityAwareInference:${name}:Service=sd21,CapacityClass=${c}`,
        `CapacityAwareInference ${name} is published under [CapacityClass, Service] for Service=sd21, CapacityClass=${c} (read by ReplicaShortage alarm's ${c} ${what} replicas)`,
      ])),
    ]);
    for (const r of failed) expect(r.detail).toMatch(/^ListMetrics lists no such metric: nothing published it in the past two weeks/);
    // Listed only under another set: the alarm's query reads nothing.
    const decisions = expectedMetrics(EKS_CONFIG).find((m) => m.name === 'Decisions')!;
    expect(metricPresenceCheck(decisions, [{ Namespace: METRIC_NAMESPACE, MetricName: 'Decisions', Dimensions: [{ Name: 'Service', Value: 'sd21' }, { Name: 'Reason', Value: 'x' }] }]).detail)
      .toBe("ListMetrics lists it only under [Reason, Service]: the ReconcilerHeartbeat alarm's query reads nothing");
  });

  test('a metric never published: FAIL when it is always published, SKIP when only an event publishes it', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    const results = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('metric:'));
    const byName = (name: string) => results.filter((r) => r.id.startsWith(`metric:${name}:`));
    // Always published (with traffic): FAIL.
    for (const r of [...byName('AWS/ApplicationELB:HealthyHostCount'), ...byName('AWS/ApplicationELB:RequestCount'), ...byName('CapacityAwareInference:PolicyMode')]) {
      expect([r.status, r.detail]).toEqual(['fail', expect.stringMatching(/^ListMetrics lists no such metric: nothing published it in the past two weeks/)]);
    }
    // The reconciler's own HealthyTargets does not wait on traffic: it needs the health read, and the detail says so.
    const healthy = byName('CapacityAwareInference:HealthyTargets');
    expect(healthy.length).toBeGreaterThan(0);
    for (const r of healthy) expect([r.status, r.detail]).toEqual(['fail', expect.stringContaining('a role without elasticloadbalancing:DescribeTargetHealth')]);
    // Reported only when non-zero (ALB), or by a metric filter without a default value (Karpenter): SKIP.
    const target5xx = byName('AWS/ApplicationELB:HTTPCode_Target_5XX_Count');
    const capacity = results.filter((r) => r.id.startsWith(`metric:${KARPENTER_CAPACITY_NAMESPACE}:`));
    expect(target5xx).toHaveLength(2);
    expect(capacity).toHaveLength(2);
    expect(target5xx.map((r) => [r.status, r.detail])).toEqual(Array(2).fill(
      ['skip', 'not yet published (expected until the first HTTP 5XX response of a target): ListMetrics lists no such metric']));
    expect(capacity.map((r) => [r.status, r.detail])).toEqual(Array(2).fill(
      ['skip', 'not yet published (expected until the first insufficient-capacity launch failure of the NodePool): ListMetrics lists no such metric']));
    expect(results.filter((r) => r.status === 'skip')).toHaveLength(4);
  });

  test('a metric published continuously is asked for over the past 3 hours (RecentlyActive PT3H); one only an event publishes, over two weeks', async () => {
    conformingAccount();
    await runVerify('Svc', clients('us-east-1'));
    const asked = cw.commandCalls(ListMetricsCommand).map((c) => c.args[0].input);
    const recently = (name: string) => asked.filter((i) => i.MetricName === name).map((i) => i.RecentlyActive);
    // Each listed within the 3 hours: no second, two-week call.
    for (const name of [AwsMetrics.alb.healthyHostCount, AwsMetrics.alb.requestCount, 'PolicyMode', 'HealthyTargets']) {
      expect(recently(name).length).toBeGreaterThan(0);
      expect(recently(name)).toEqual(recently(name).map(() => 'PT3H'));
    }
    expect(recently(AwsMetrics.alb.target5xx)).toEqual([undefined, undefined]);
    expect(asked.filter((i) => i.Namespace === KARPENTER_CAPACITY_NAMESPACE).map((i) => i.RecentlyActive)).toEqual([undefined, undefined]);
  });

  test('a metric that stopped publishing fails although ListMetrics still lists it over the two weeks', async () => {
    conformingAccount();
    // PolicyMode and the inf2 RequestCount have no datapoint in the past 3 hours; the rest do.
    cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => {
      const stale = input.MetricName === 'PolicyMode' || (input.MetricName === AwsMetrics.alb.requestCount && input.Dimensions?.some((d) => d.Value === 'targetgroup/inf2/0001'));
      return { Metrics: stale && input.RecentlyActive ? [] : [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: (input.Dimensions ?? []).map((d) => ({ Name: d.Name, Value: d.Value ?? 'any' })) }] };
    });
    const metrics = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('metric:'));
    expect(metrics.filter((r) => r.status !== 'pass').map((r) => [r.id, r.status, r.detail])).toEqual([
      ['metric:AWS/ApplicationELB:RequestCount:TargetGroup=targetgroup/inf2/0001,LoadBalancer=app/sd/abc', 'fail',
        'last published more than 3 h ago: ListMetrics lists it under [LoadBalancer, TargetGroup] in the past two weeks, not with RecentlyActive PT3H '
        + '(traffic-driven metrics need traffic)'],
      ['metric:CapacityAwareInference:PolicyMode:Service=sd21', 'fail',
        'last published more than 3 h ago: ListMetrics lists it under [Service] in the past two weeks, not with RecentlyActive PT3H (traffic-driven metrics need traffic)'],
    ]);
    expect(metrics.find((r) => r.id.startsWith('metric:CapacityAwareInference:PolicyRamping:'))?.detail).toBe('ListMetrics lists it under [Service] with data in the past 3 h');
  });

  test('an event-published metric listed under another dimension set still fails', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).callsFake((input: ListMetricsCommandInput) => ({
      Metrics: [{ Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: [{ Name: 'LoadBalancer', Value: 'app/sd/abc' }] }],
    }));
    const target5xx = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('metric:AWS/ApplicationELB:HTTPCode_Target_5XX_Count:'));
    expect(target5xx.map((r) => r.status)).toEqual(['fail', 'fail']);
  });

  test('a healthy stack without 5XX responses or capacity errors exits 0 with those metrics SKIP', async () => {
    healthyAccountBeforeAnyEvent();
    const out: string[] = [];
    expect(await main(['--stack', 'Svc', '--region', 'us-east-1'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(out.filter((l) => l.startsWith('SKIP'))).toHaveLength(4);
    expect(out.at(-1)).toMatch(/^\d+ passed, 0 failed, 4 skipped$/);
  });

  test('a filter that counts the foreign pod\'s line, or misses Karpenter\'s', async () => {
    conformingAccount();
    logs.on(TestMetricFilterCommand).callsFake((input: TestMetricFilterCommandInput) => ({
      matches: (input.logEventMessages ?? []).slice(1, 2).map((m) => ({ eventNumber: 2, eventMessage: m })),
    }));
    const filters = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('filter:SdService-CapacityErrors0-7KQ2'));
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
    iam.on(SimulatePrincipalPolicyCommand).callsFake(simulator((_, a) => a !== 'elasticloadbalancing:ModifyListener'));
    const failed = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('iam:reconciler') && r.status === 'fail').map((r) => r.settles);
    expect(failed).toEqual(expect.arrayContaining([
      expect.stringMatching(/can call elasticloadbalancing:ModifyListener on arn:.*listener\/app\/sd\/abc\/def \(writes the target-group weights\)$/),
      expect.stringMatching(/cannot call cloudwatch:PutMetricData on \* /),
      expect.stringMatching(/cannot call elasticloadbalancing:DeleteListener on /),
    ]));
  });

  test('conditioned calls are simulated with their ContextEntries; a Karpenter policy without the NodePool condition fails', async () => {
    conformingAccount();
    await runVerify('Svc', clients('us-east-1'));
    const sent = iam.commandCalls(SimulatePrincipalPolicyCommand).map((c) => c.args[0].input)
      .filter((i) => i.ActionNames?.includes('iam:PassRole') && i.ResourceArns?.[0].endsWith('KarpenterNodeRole-7C2D'));
    expect(sent.map((i) => i.ContextEntries)).toEqual([
      [{ ContextKeyName: 'iam:PassedToService', ContextKeyValues: ['ec2.amazonaws.com'], ContextKeyType: 'string' }],
      [{ ContextKeyName: 'iam:PassedToService', ContextKeyValues: ['lambda.amazonaws.com'], ContextKeyType: 'string' }],
    ]);
    // The launch statement loses its NodePool condition: any launch tagged for the cluster is allowed.
    const loose = KARPENTER_STATEMENTS.map((st) => (st.Sid === 'AllowScopedEC2InstanceActionsWithTags' ? { ...st, Condition: { StringEquals: st.Condition!.StringEquals } } : st));
    iam.on(SimulatePrincipalPolicyCommand).callsFake(simulator((input, a) => ({
      allowed: allows(loose, { action: a, resource: input.ResourceArns![0], context: contextOf(input) }),
      // The simulator names the condition keys a probe did not give: for a call on an ARN, under ResourceSpecificResults.
      ...(a === 'eks:DescribeCluster' ? { missing: ['aws:RequestedRegion'] } : {}),
    })));
    const karpenter = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('iam:Karpenter'));
    expect(karpenter.filter((r) => r.status === 'fail').map((r) => r.settles)).toEqual([
      'Karpenter controller role SdService-KarpenterControllerRole-4H8T cannot call ec2:RunInstances on arn:aws:ec2:us-east-1:123456789012:instance/i-0000000000verify ' +
        'with aws:RequestTag/kubernetes.io/cluster/prod=owned, aws:RequestTag/eks:eks-cluster-name=prod (an instance no NodePool claims)',
    ]);
    expect(karpenter.find((r) => r.id.includes('eks:DescribeCluster'))?.detail).toMatch(/context keys the policies test but the probe does not give: aws:RequestedRegion$/);
  });

  test('the simulator\'s earlier answer (one result per action and resource, the ARN in EvalResourceName) is still read', async () => {
    conformingAccount();
    const earlier = simulator((input, a) => ({ allowed: a === 'cloudwatch:GetMetricData' || a.startsWith('elasticloadbalancing:Describe')
      || (a === 'elasticloadbalancing:ModifyListener' && input.ResourceArns![0].endsWith(':listener/app/sd/abc/def')), missing: ['aws:SourceVpc'] }));
    iam.on(SimulatePrincipalPolicyCommand).callsFake((input: SimulatePrincipalPolicyCommandInput) => ({
      EvaluationResults: earlier(input).EvaluationResults.map((r) => ({
        EvalActionName: r.EvalActionName, EvalResourceName: input.ResourceArns![0], EvalDecision: r.EvalDecision, MissingContextValues: ['aws:SourceVpc'],
      })),
    }));
    const reconciler = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('iam:reconciler'));
    expect(reconciler.length).toBeGreaterThan(5);
    expect(reconciler.filter((r) => r.status !== 'pass')).toEqual([]);
    const missing = /; context keys the policies test but the probe does not give: aws:SourceVpc$/;
    expect(reconciler.map((r) => r.detail)).toEqual(reconciler.map(() => expect.stringMatching(missing)));
  });

  test('a call the organization\'s service control policies deny fails, saying so', async () => {
    conformingAccount();
    // The simulator evaluates SCPs (OrganizationsDecisionDetail): here one denies the listener write the reconciler needs.
    iam.on(SimulatePrincipalPolicyCommand).callsFake(simulator((_, a) => (a === 'elasticloadbalancing:ModifyListener'
      ? { allowed: false, deniedByOrganizations: true }
      : ['cloudwatch:GetMetricData', 'elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth'].includes(a))));
    const failed = (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('iam:reconciler') && r.status === 'fail');
    expect(failed.map((r) => [r.id.split(':').slice(2, 4).join(':'), r.detail])).toEqual([[
      'elasticloadbalancing:ModifyListener',
      `SimulatePrincipalPolicy(${ROLE_ARN}): explicitDeny; your organization's service control policies deny it`,
    ]]);
  });

  test('main exits 1 and prints FAIL when a check fails; a stack without a reconciler is an error', async () => {
    conformingAccount();
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    const out: string[] = [];
    expect(await main(['--stack', 'Svc', '--region', 'us-east-1'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(1);
    expect(out.some((l) => l.startsWith('FAIL'))).toBe(true);
    lambda.on(GetFunctionConfigurationCommand).resolves({ Role: ROLE_ARN, Environment: { Variables: {} } });
    const err: string[] = [];
    expect(await main(['--stack', 'Svc', '--region', 'us-east-1'], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
    expect(err).toEqual(['Svc has no reconciler function (no Lambda function with RECONCILER_CONFIG): is it a stack of this library?']);
  });
});

describe('the stack\'s reconciler is picked from its template: only its configuration is read (R250)', () => {
  const denied = Object.assign(new Error('not authorized to perform: lambda:GetFunctionConfiguration'), { name: 'AccessDeniedException' });

  test('lambda:GetFunctionConfiguration granted on the reconciler alone: the stack\'s other functions are not read, and verify runs', async () => {
    conformingAccount();
    lambda.on(GetFunctionConfigurationCommand, { FunctionName: 'svc-other' }).rejects(denied);
    const results = await runVerify('Svc', clients('us-east-1'));
    expect(results.filter((r) => r.status !== 'pass' && r.status !== 'skip')).toEqual([]);
    expect(lambda.commandCalls(GetFunctionConfigurationCommand).map((c) => c.args[0].input)).toEqual([{ FunctionName: 'svc-reconciler' }]);
  });

  test('no reconciler in the template: an error, naming the nested stacks whose resources are not read when there are some', async () => {
    conformingAccount();
    const template = { Resources: { ...TEMPLATE.Resources, ReconcilerFn: { Type: 'AWS::Lambda::Function', Properties: {} } } };
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(template) });
    await expect(runVerify('Svc', clients('us-east-1')))
      .rejects.toThrow(new Error('Svc has no reconciler function (no Lambda function with RECONCILER_CONFIG): is it a stack of this library?'));
    expect(lambda.commandCalls(GetFunctionConfigurationCommand)).toEqual([]);
    const nestedId = 'arn:aws:cloudformation:us-east-1:123456789012:stack/Svc-ServingNestedStack-1A2B/0f1e2d3c';
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify({ Resources: { ...template.Resources, Serving: { Type: 'AWS::CloudFormation::Stack', Properties: {} } } }) });
    cfn.on(ListStackResourcesCommand).resolves({
      StackResourceSummaries: [{ LogicalResourceId: 'Serving', PhysicalResourceId: nestedId, ResourceType: 'AWS::CloudFormation::Stack', ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0) }],
    });
    await expect(runVerify('Svc', clients('us-east-1'))).rejects.toThrow(new Error('Svc has no reconciler function (no Lambda function with RECONCILER_CONFIG); '
      + `it nests stacks whose resources are not read: Serving (${nestedId}): if the reconciler is in one of them, pass that nested stack's name or ID with --stack`));
  });
});

describe('a SageMaker deployment', () => {
  const SM_CONFIG: ReconcilerConfig = {
    facts: {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: `arn:aws:sagemaker:us-east-1:${ACCOUNT}:endpoint/llm`,
      variants: [
        { variantName: 'pooled', classes: [{ ...target('l40s', 0).class, instanceType: 'ml.g6e.xlarge' }, { ...target('a10g', 1).class, instanceType: 'ml.g5.xlarge' }] },
        { variantName: 'single', classes: [{ ...target('inf2', 2).class, instanceType: 'ml.inf2.xlarge' }] },
      ],
    },
    placement: {}, policy: {}, service: 'chat', tokensPerRequest: 200, metricDelaySeconds: 120,
  };
  /** The reconciler's reads of AWS/SageMaker (the alarms' are `alarmReadBy`). */
  const sageMakerReads = () => expectedMetrics(SM_CONFIG).filter((m) => m.namespace === 'AWS/SageMaker' && m.readBy.length > 0).map((m) => [m.name, m.dimensions, m.readBy]);
  const variant = (VariantName: string) => ({ EndpointName: 'llm', VariantName });
  const pool = (InstanceType: string) => ({ EndpointName: 'llm', VariantName: 'pooled', InstanceType });

  test('the request metrics of every variant are read under [EndpointName, VariantName]; only the pooled variant\'s latency is searched per InstanceType, '
    + 'and at the variant level too', () => {
    // Strict: an InstanceType searched over is an undefined value, which toEqual would not tell from no InstanceType.
    expect(sageMakerReads()).toStrictEqual([
      ['ModelLatency', { EndpointName: 'llm', InstanceType: undefined, VariantName: 'pooled' }, ['pooled latencyP95Ms']],
      ['ModelLatency', variant('pooled'), ['pooled latencyP95Ms']],
      ['Invocations', variant('pooled'), ['pooled servedTokensPerSecond']],
      ['Invocation5XXErrors', variant('pooled'), ['pooled rejectedTokensPerSecond']],
      ['ModelLatency', variant('single'), ['single latencyP95Ms']],
      ['Invocations', variant('single'), ['single servedTokensPerSecond']],
      ['Invocation5XXErrors', variant('single'), ['single rejectedTokensPerSecond']],
    ]);
  });

  test('the alarms\' reads are checked too: every variant\'s variant-level series (which the reconciler reads too), and the per-InstanceType '
    + 'requests of the pooled variant\'s fallback pool (FallbackShare\'s alone)', () => {
    const alarms = expectedMetrics(SM_CONFIG).filter((m) => m.alarmReadBy && m.namespace === 'AWS/SageMaker').map((m) => [m.name, m.dimensions, m.readBy, m.alarmReadBy]);
    expect(alarms).toStrictEqual([
      ['Invocations', variant('pooled'), ['pooled servedTokensPerSecond'], ["DeadlineExhaustion alarm's pooled requests"]],
      ['Invocation5XXErrors', variant('pooled'), ['pooled rejectedTokensPerSecond'], ["DeadlineExhaustion alarm's pooled shed requests"]],
      ['Invocations', variant('single'), ['single servedTokensPerSecond'], ["DeadlineExhaustion alarm's single requests"]],
      ['Invocation5XXErrors', variant('single'), ['single rejectedTokensPerSecond'], ["DeadlineExhaustion alarm's single shed requests"]],
      ['Invocations', pool('ml.g5.xlarge'), [], ["FallbackShare alarm's a10g requests"]],
    ]);
    // A variant whose pools shed in both status classes (TGI 429 beside vLLM 503): both of its variant-level series.
    const mixed = expectedMetrics({ ...SM_CONFIG, signals: { pooled: { rejectionStatus: 'mixed' } } })
      .filter((m) => m.alarms?.includes('DeadlineExhaustion') && m.dimensions.VariantName === 'pooled').map((m) => [m.name, 'InstanceType' in m.dimensions]);
    expect(mixed).toEqual([['Invocations', false], ['Invocation4XXErrors', false], ['Invocation5XXErrors', false]]);
  });

  const pooledPerType = 'metric:AWS/SageMaker:ModelLatency:EndpointName=llm,InstanceType=*,VariantName=pooled';
  const pooledVariantLevel = 'metric:AWS/SageMaker:ModelLatency:EndpointName=llm,VariantName=pooled';
  const smAccount = () => {
    conformingAccount(SM_CONFIG);
    iam.on(SimulatePrincipalPolicyCommand).callsFake(simulator((input, a) => a === 'cloudwatch:GetMetricData' || a === 'application-autoscaling:DescribeScalableTargets'
      || (['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'].includes(a) && input.ResourceArns![0].endsWith('endpoint/llm'))));
  };
  const sageMakerChecks = async () => (await runVerify('Svc', clients('us-east-1'))).filter((r) => r.id.startsWith('metric:AWS/SageMaker:'));
  /** ListMetrics as CloudWatch answers it: the metrics carrying every filtered dimension (a value where given), more dimensions allowed. */
  const listing = (published: ReadonlyArray<Record<string, string>>) => (input: ListMetricsCommandInput) => ({
    Metrics: published
      .filter((dims) => (input.Dimensions ?? []).every((f) => f.Name! in dims && (f.Value === undefined || dims[f.Name!] === f.Value)))
      .map((dims) => ({
        Namespace: input.Namespace, MetricName: input.MetricName, Dimensions: Object.entries(dims).map(([Name, Value]) => ({ Name, Value })),
      })),
  });
  const variantLevel = ['pooled', 'single'].map((VariantName) => ({ EndpointName: 'llm', VariantName }));
  const perType = [
    { EndpointName: 'llm', InstanceType: 'ml.g6e.xlarge', VariantName: 'pooled' }, { EndpointName: 'llm', InstanceType: 'ml.g5.xlarge', VariantName: 'pooled' },
    { EndpointName: 'llm', InstanceType: 'ml.inf2.xlarge', VariantName: 'single' },
  ];

  test('the pooled variant\'s two ModelLatency reads are each the other\'s fallback; every other read has none', () => {
    const fallbacks = expectedMetrics(SM_CONFIG).filter((m) => m.namespace === 'AWS/SageMaker' && m.readBy.length > 0).map((m) => [m.name, m.readBy, m.fallbacks]);
    expect(fallbacks).toStrictEqual([
      ['ModelLatency', ['pooled latencyP95Ms'], [{ namespace: 'AWS/SageMaker', name: 'ModelLatency', dimensions: { EndpointName: 'llm', VariantName: 'pooled' } }]],
      ['ModelLatency', ['pooled latencyP95Ms'], [{ namespace: 'AWS/SageMaker', name: 'ModelLatency', dimensions: { EndpointName: 'llm', InstanceType: undefined, VariantName: 'pooled' } }]],
      ...[['Invocations', 'pooled servedTokensPerSecond'], ['Invocation5XXErrors', 'pooled rejectedTokensPerSecond'], ['ModelLatency', 'single latencyP95Ms'],
        ['Invocations', 'single servedTokensPerSecond'], ['Invocation5XXErrors', 'single rejectedTokensPerSecond']].map(([name, reader]) => [name, [reader], undefined]),
    ]);
  });

  test('passes when SageMaker lists each metric under the set read', async () => {
    smAccount();
    const pass = await runVerify('Svc', clients('us-east-1'));
    expect(pass.filter((r) => r.id.startsWith('iam:reconciler') || r.id.startsWith('metric:')).filter((r) => r.status !== 'pass')).toEqual([]);
    // One id per check: the pooled variant's two ModelLatency reads differ in the InstanceType they search over.
    const metricIds = pass.filter((r) => r.id.startsWith('metric:')).map((r) => r.id);
    expect(new Set(metricIds).size).toBe(metricIds.length);
  });

  test('without the InstanceType series: fails the pooled per-InstanceType latency, saying the reconciler reads the variant-level p95 alone and loses the per-pool p95', async () => {
    smAccount();
    cw.on(ListMetricsCommand).callsFake(listing(variantLevel));
    const sm = await sageMakerChecks();
    const none = 'ListMetrics lists no such metric: nothing published it in the past two weeks (new metrics take up to 15 minutes to appear; traffic-driven metrics need traffic)';
    expect(sm.filter((r) => r.status !== 'pass').map((r) => [r.id, r.status, r.detail])).toEqual([
      [pooledPerType, 'fail', `${none}, so the reconciler's pooled latencyP95Ms reads ModelLatency under [EndpointName, VariantName] alone (checked on its own), `
        + 'not per InstanceType: the largest value of any one InstanceType is lost (one that takes few of the requests can hide in the series over all of them)'],
      // FallbackShare's requests of the fallback pool beside the preferred one: FILLed there, and absent on a healthy
      // endpoint whose lower-priority pool runs no instance, so SKIP, not FAIL (review R252).
      ['metric:AWS/SageMaker:Invocations:EndpointName=llm,VariantName=pooled,InstanceType=ml.g5.xlarge', 'skip',
        'FILLed by the alarm: absent while the pool runs no instance (SageMaker provisions a variant\'s priority-1 pool first and a lower one only '
        + 'when the pools above it lack capacity): ListMetrics lists no such metric'],
    ]);
    expect(sm.filter((r) => r.status === 'pass').map((r) => r.id)).toEqual(expect.arrayContaining([pooledVariantLevel]));
    expect(sm.filter((r) => r.status === 'pass')).toHaveLength(6);
  });

  test('a pool\'s series the alarms read, listed only under another set: the alarm\'s query reads nothing', () => {
    const read = expectedMetrics(SM_CONFIG).find((m) => m.name === 'Invocations' && m.dimensions.InstanceType === 'ml.g5.xlarge')!;
    const withZone = { Namespace: 'AWS/SageMaker', MetricName: 'Invocations', Dimensions: Object.entries({ ...pool('ml.g5.xlarge'), AvailabilityZone: 'us-east-1a' }).map(([Name, Value]) => ({ Name, Value })) };
    expect(metricPresenceCheck(read, [withZone])).toStrictEqual({
      id: 'metric:AWS/SageMaker:Invocations:EndpointName=llm,VariantName=pooled,InstanceType=ml.g5.xlarge', status: 'fail',
      settles: 'AWS/SageMaker Invocations is published under [EndpointName, InstanceType, VariantName] for EndpointName=llm, VariantName=pooled, InstanceType=ml.g5.xlarge '
        + "(read by FallbackShare alarm's a10g requests)",
      detail: "ListMetrics lists it only under [AvailabilityZone, EndpointName, InstanceType, VariantName]: the FallbackShare alarm's query reads nothing",
    });
  });

  test('the per-InstanceType latency listed only under another set reads nothing there, and the same fallback', () => {
    const perTypeRead = expectedMetrics(SM_CONFIG).find((m) => m.dimensions.InstanceType === undefined && 'InstanceType' in m.dimensions)!;
    const withZone = { Namespace: 'AWS/SageMaker', MetricName: 'ModelLatency', Dimensions: Object.entries({ ...perType[0], AvailabilityZone: 'us-east-1a' }).map(([Name, Value]) => ({ Name, Value })) };
    expect(metricPresenceCheck(perTypeRead, [withZone])).toMatchObject({ id: pooledPerType, status: 'fail',
      detail: 'ListMetrics lists it only under [AvailabilityZone, EndpointName, InstanceType, VariantName]: the reconciler reads nothing under [EndpointName, InstanceType, VariantName], '
        + "so the reconciler's pooled latencyP95Ms reads ModelLatency under [EndpointName, VariantName] alone (checked on its own), not per InstanceType: "
        + 'the largest value of any one InstanceType is lost (one that takes few of the requests can hide in the series over all of them)' });
  });

  test('with only the InstanceType series: the pooled variant-level latency fails with only its fill-in lost; the reads without a fallback read nothing', async () => {
    smAccount();
    cw.on(ListMetricsCommand).callsFake(listing(perType));
    const failed = (await sageMakerChecks()).filter((r) => r.status !== 'pass');
    expect(failed.map((r) => r.id)).toEqual([pooledVariantLevel, ...['Invocations', 'Invocation5XXErrors'].map((n) => `metric:AWS/SageMaker:${n}:EndpointName=llm,VariantName=pooled`),
      ...['ModelLatency', 'Invocations', 'Invocation5XXErrors'].map((n) => `metric:AWS/SageMaker:${n}:EndpointName=llm,VariantName=single`)]);
    expect(failed[0].detail).toBe('ListMetrics lists it only under [EndpointName, InstanceType, VariantName]: the reconciler reads nothing under [EndpointName, VariantName], '
      + "so the reconciler's pooled latencyP95Ms reads ModelLatency under [EndpointName, InstanceType, VariantName] alone (checked on its own): "
      + "the per-InstanceType reading stays; lost is this series' fill-in for when those are missing");
    const onlyUnder = 'ListMetrics lists it only under [EndpointName, InstanceType, VariantName]: ';
    // Every variant's request metrics are DeadlineExhaustion's series as well; the latency is the reconciler's alone.
    const both = `${onlyUnder}the reconciler's and the DeadlineExhaustion alarm's queries read nothing`;
    expect(failed.slice(1).map((r) => r.detail)).toEqual([both, both, `${onlyUnder}the reconciler's query reads nothing`, both, both]);
  });
});
