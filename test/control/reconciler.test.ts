import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Duration, Lazy, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { type RoutedClassFacts, type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { environmentBytes, RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';
import { RECONCILER_SERVICE_ENV } from '../../lib/core/reconciler/faults';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { decisionsRecord } from '../../lib/core/reconciler/io';
import { Reconciler } from '../../lib/control/reconciler';
import { type IInferenceServing } from '../../lib/control/serving';
import { ACCOUNT, allows, REGION, roleStatements } from '../permissions/iam-policy';
import { nagFindings, nistFindings, testStack } from '../util';
import { servingOf } from './serving-fixture';

const cls = (name: string, rank: number, instanceType: string, tps: number, usd: number, allowSensitive = true): RoutedClassFacts => ({
  name, preferenceRank: rank, tokensPerSecondPerReplica: tps, safeConcurrency: 8, usdPerReplicaHour: usd, allowSensitive,
  maxReplicas: 10, instanceType,
});

const SAGEMAKER: RoutingFacts = {
  kind: 'sagemaker',
  endpointName: 'llm',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  variants: [
    { variantName: 'preferred', classes: [cls('l40s', 0, 'ml.g6e.xlarge', 1200, 2.6), cls('a10g', 1, 'ml.g5.xlarge', 400, 1.4)] },
    { variantName: 'fallback', classes: [cls('inf2', 2, 'ml.inf2.xlarge', 300, 0.99)] },
  ],
};
const LISTENER = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/50dc6c495c0c9188/f2f7dc8efc522ab2';
const tg = (name: string, id: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/${id}`;
const ALB: RoutingFacts = {
  kind: 'alb',
  listenerArn: LISTENER,
  loadBalancerFullName: 'app/llm/50dc6c495c0c9188',
  targets: [
    { class: cls('l40s', 0, 'g6e.xlarge', 1200, 2.6), targetGroupArn: tg('l40s', '73e2d6bc24d8a067'), targetGroupFullName: 'targetgroup/l40s/73e2d6bc24d8a067',
      namespace: 'serving', deploymentName: 'l40s', nodePoolName: 'l40s' },
    { class: cls('inf2', 1, 'inf2.xlarge', 300, 0.76), targetGroupArn: tg('inf2', '1234567890abcdef'), targetGroupFullName: 'targetgroup/inf2/1234567890abcdef',
      namespace: 'serving', deploymentName: 'inf2', nodePoolName: 'inf2' },
  ],
};
const karpenterErrors = (nodePool: string) =>
  new cloudwatch.Metric({ namespace: 'Karpenter', metricName: 'InsufficientCapacityErrors', dimensionsMap: { NodePool: nodePool }, statistic: 'Sum', period: Duration.minutes(1) });

describe('Reconciler on a SageMaker endpoint', () => {
  let stack: Stack;
  let template: Template;
  let reconciler: Reconciler;
  beforeAll(() => {
    ({ stack } = testStack('Test', { stageAssets: true }));
    const external = new cloudwatch.Alarm(stack, 'External', { metric: karpenterErrors('x'), threshold: 1, evaluationPeriods: 1 });
    reconciler = new Reconciler(stack, 'Reconciler', {
      serving: servingOf(SAGEMAKER, 'llama3-chat', 250),
      policy: { latencySloP95: Duration.millis(1500), stabilizationWindow: Duration.minutes(15) },
      capacityAlarms: [external],
    });
    template = Template.fromStack(stack);
  });

  test('runs every minute, with reserved concurrency 1, no async retries, on the newest Node.js runtime', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ReconcilerFunction'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Handler: 'index.handler',
      ReservedConcurrentExecutions: 1,
      Timeout: 30,
      Architectures: ['arm64'],
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('ReconcilerLogs') } },
    });
    // Lambda's async queue drops an event older than one period instead of retrying it for up to 6 hours (its default).
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
  });

  test('fails when a trigger event may wait longer than one period (a backlog would run the reconciler late, on superseded data)', () => {
    const { stack: s5 } = testStack('FiveMinutes');
    new Reconciler(s5, 'R', { serving: servingOf(SAGEMAKER, 'svc', 100), policy: { period: Duration.minutes(5) } });
    const t = Template.fromStack(s5);
    const ages = [
      ...Object.values(t.findResources('AWS::Lambda::EventInvokeConfig')).map((c) => c.Properties.MaximumEventAgeInSeconds),
      ...Object.values(t.findResources('AWS::Events::Rule')).flatMap((r) => r.Properties.Targets.map((x: { RetryPolicy: { MaximumEventAgeInSeconds: number } }) => x.RetryPolicy.MaximumEventAgeInSeconds)),
    ];
    // Lambda's own queue, the schedule and the run when the endpoint takes writes again.
    expect(ages).toEqual([300, 300, 300]);
  });

  test('the degraded-reads alarm spans a quarter hour of periods whatever the period, never fewer than 3', () => {
    for (const [minutes, periods] of [[2, 8], [5, 3], [15, 3]] as const) {
      const { stack: s } = testStack(`Degraded${minutes}`);
      new Reconciler(s, 'R', { serving: servingOf(SAGEMAKER, 'svc', 100), policy: { period: Duration.minutes(minutes) } });
      Template.fromStack(s).hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'DegradedReads', Statistic: 'Minimum', Period: minutes * 60, EvaluationPeriods: periods, DatapointsToAlarm: periods,
        AlarmDescription: Match.stringLikeRegexp(`^svc: for ${minutes * periods} minutes every reconciler run went on without a read it uses`),
      });
    }
  });

  test('triggerOnAlarms adds alarms to the same rule', () => {
    const { stack: s2 } = testStack('Later');
    const r = new Reconciler(s2, 'R', { serving: servingOf(SAGEMAKER, 'svc', 100) });
    expect(r.alarmRule).toBeUndefined();
    const a = new cloudwatch.Alarm(s2, 'A', { metric: karpenterErrors('a'), threshold: 1, evaluationPeriods: 1 });
    const b = new cloudwatch.Alarm(s2, 'B', { metric: karpenterErrors('b'), threshold: 1, evaluationPeriods: 1 });
    r.triggerOnAlarms([a]);
    r.triggerOnAlarms([b, a]);
    const t = Template.fromStack(s2);
    const alarmRules = Object.values(t.findResources('AWS::Events::Rule')).filter((x) => x.Properties.EventPattern?.source?.[0] === 'aws.cloudwatch');
    expect(alarmRules).toHaveLength(1);
    const rule = alarmRules[0];
    expect(rule.Properties.EventPattern.resources).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^A/), 'Arn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/^B/), 'Arn'] },
    ]);
  });

  test('fails when one rule would match so many alarms that its pattern could pass EventBridge\'s 2,048 characters: six a rule', () => {
    const { stack: s3 } = testStack('ManyAlarms');
    const r = new Reconciler(s3, 'R', { serving: servingOf(SAGEMAKER, 'svc', 100) });
    const alarms = Array.from({ length: 13 }, (_, i) => new cloudwatch.Alarm(s3, `A${i}`, { metric: karpenterErrors(`c${i}`), threshold: 1, evaluationPeriods: 1 }));
    r.triggerOnAlarms(alarms.slice(0, 4));
    r.triggerOnAlarms([...alarms.slice(2), alarms[0]]);
    const rules = Object.values(Template.fromStack(s3).findResources('AWS::Events::Rule')).filter((x) => x.Properties.EventPattern?.source?.[0] === 'aws.cloudwatch');
    expect(rules.map((x) => x.Properties.EventPattern.resources.length)).toEqual([6, 6, 1]);
    expect(r.alarmRules).toHaveLength(3);
    expect(r.alarmRule).toBe(r.alarmRules[0]);
    // Each alarm matched once, by one rule.
    const arns = rules.flatMap((x) => x.Properties.EventPattern.resources.map((ref: { 'Fn::GetAtt': string[] }) => ref['Fn::GetAtt'][0]));
    expect(new Set(arns).size).toBe(13);
    // Every rule within the limit with each ARN at its longest (a 255-character alarm name in aws-us-gov).
    const longest = `arn:aws-us-gov:cloudwatch:ap-southeast-4:123456789012:alarm:${'n'.repeat(255)}`;
    for (const rule of rules) {
      const pattern = { ...rule.Properties.EventPattern, resources: rule.Properties.EventPattern.resources.map(() => longest) };
      expect(JSON.stringify(pattern).length).toBeLessThanOrEqual(2048);
    }
  });

  test('runs at once when a capacity alarm changes state', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.cloudwatch'],
        'detail-type': ['CloudWatch Alarm State Change'],
        resources: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('External'), 'Arn'] }],
      },
    });
  });

  test('runs at once when the endpoint is InService again (its event spells the status IN_SERVICE), with the schedule\'s retry policy', () => {
    expect(reconciler.writableRule).toBeDefined();
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.sagemaker'],
        'detail-type': ['SageMaker Endpoint State Change'],
        // On the name, not on the ARN: the name in an endpoint's ARN may be lower-cased, and matching is case-sensitive.
        detail: { EndpointName: ['llm'], EndpointStatus: ['IN_SERVICE', 'InService'] },
      },
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ReconcilerFunction'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })],
    });
  });

  test('IAM: only DescribeEndpoint and UpdateEndpointWeightsAndCapacities on the endpoint, the scaling bounds read, GetMetricData, its own log streams', () => {
    const policies = template.findResources('AWS::IAM::Policy');
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual([
      { Action: 'cloudwatch:GetMetricData', Effect: 'Allow', Resource: '*' },
      {
        Action: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'],
        Effect: 'Allow',
        Resource: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
      },
      // No resource types in the Service Authorization Reference: "*" (SageMakerCapacityEndpoint.grantRouting).
      { Action: 'application-autoscaling:DescribeScalableTargets', Effect: 'Allow', Resource: '*' },
      // log-stream actions (Service Authorization Reference) on the streams of its own group, not on the group's Arn
      // attribute (already ending in :*) with another :* (review R249).
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':logs:us-east-1:123456789012:log-group:', { Ref: expect.stringMatching(/^ReconcilerLogs/) }, ':log-stream:*']] },
      },
    ]);
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
  });

  test("Lambda may write the function's streams in the reconciler's own log group and no other group (review R249)", () => {
    const json = template.toJSON();
    const role = Object.keys(template.findResources('AWS::IAM::Role')).find((id) => id.startsWith('ReconcilerRole'))!;
    const group = Object.keys(template.findResources('AWS::Logs::LogGroup')).find((id) => id.startsWith('ReconcilerLogs'))!;
    const statements = roleStatements(json, role);
    // The permissions resolver gives a log group without LogGroupName the made-up name /generated/<logical id>.
    const own = `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/generated/${group}`;
    const stream = `${own}:log-stream:2026/01/01/[$LATEST]0123456789abcdef0123456789abcdef`;
    for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents']) {
      expect(allows(statements, { action, resource: stream, context: {} })).toBe(true);
      expect(allows(statements, { action, resource: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/other:log-stream:x`, context: {} })).toBe(false);
    }
    expect(allows(statements, { action: 'logs:CreateLogGroup', resource: `${own}:log-stream:`, context: {} })).toBe(false);
  });

  test('keeps its logs (EMF metrics and audit lines) for three months', () => {
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  test('passes the routing facts and the policy (in seconds) as its configuration', () => {
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const config = JSON.parse(fn.Properties.Environment.Variables.RECONCILER_CONFIG);
    expect(config).toEqual({
      facts: SAGEMAKER,
      placement: { sensitive: false },
      policy: { latencySloP95Ms: 1500, stabilizationWindowSeconds: 900 },
      service: 'llama3-chat',
      tokensPerRequest: 250,
      metricDelaySeconds: 120,
    });
  });

  test('deploys the prebuilt bundle from assets/lambda/reconciler (no Docker, no esbuild at synth)', () => {
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    expect(fn.Properties.Code.S3Key).toMatch(/^[0-9a-f]{64}\.zip$/);
    const hash = (fn.Properties.Code.S3Key as string).replace('.zip', '');
    const dir = join((stack.node.root as App).synth().directory, `asset.${hash}`);
    const bundle = join(__dirname, '..', '..', 'assets', 'lambda', 'reconciler', 'index.js');
    expect(readFileSync(join(dir, 'index.js')).equals(readFileSync(bundle))).toBe(true);
    expect(existsSync(join(dir, 'index.ts'))).toBe(false);
  });

  test('has no unacknowledged cdk-nag AwsSolutions or NIST 800-53 rev 5 findings', () => {
    expect(nagFindings(stack)).toEqual([]);
    expect(nistFindings(reconciler)).toEqual([]); // the fixture alarm External is the test's own
  });

  test('the same statements without the acknowledgements are findings (the acknowledgements do suppress)', () => {
    const { stack: bare } = testStack('Bare');
    const role = new iam.Role(bare, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }));
    expect(nagFindings(bare).some((f) => f.startsWith('AwsSolutions-IAM5'))).toBe(true);
  });

  test('every alarm (failed runs, Lambda errors, runs without a read they use, runs held on missing data) notifies its encrypted topic on ALARM and OK', () => {
    const topic = { Ref: stack.getLogicalId(reconciler.alarmTopic.node.defaultChild as sns.CfnTopic) };
    const alarms = template.findResources('AWS::CloudWatch::Alarm', { Properties: { AlarmName: Match.absent() } });
    const own = Object.entries(alarms).filter(([id]) => id.startsWith('Reconciler'));
    expect(own.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(['ReconcilerDegradedRuns', 'ReconcilerFailures', 'ReconcilerFunctionErrors', 'ReconcilerMissingDataRuns']);
    for (const [, alarm] of own) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda', MetricName: 'Errors', Statistic: 'Sum', Period: 60, Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: stack.getLogicalId(reconciler.function.node.defaultChild as lambda.CfnFunction) } }],
      TreatMissingData: 'notBreaching',
    });
    // Every run for a quarter hour without a read it uses: a lasting denial, not a throttled minute.
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'CapacityAwareInference', MetricName: 'DegradedReads', Statistic: 'Minimum', Period: 60, Threshold: 1, EvaluationPeriods: 15,
      DatapointsToAlarm: 15, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'ignore',
      Dimensions: [{ Name: 'Service', Value: 'llama3-chat' }],
    });
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ReconcilerAlarmTopicKey'), 'Arn'] } });
    // Its TLS-only policy replaces SNS's default one: without its own Allow no alarm could publish.
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [topic],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish', Resource: topic })]),
      },
    });
  });

  /** Review R120: a run that holds on missing data succeeds and is a heartbeat, so nothing else pages while it lasts. */
  test('pages when every run of 10 minutes held the weights on missing data while requests reached the classes', () => {
    const [alarm] = Object.values(template.findResources('AWS::CloudWatch::Alarm'))
      .map((r) => r.Properties).filter((p) => JSON.stringify(p.Metrics ?? []).includes('missing-data'));
    // M of N: the platform's request counts arrive after the run's EMF, by up to the metric delay (120 s: 2 periods).
    expect(alarm).toMatchObject({
      Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', DatapointsToAlarm: 10, EvaluationPeriods: 12, TreatMissingData: 'ignore',
    });
    const byId = Object.fromEntries((alarm.Metrics as Array<{ Id: string }>).map((q) => [q.Id, q]));
    expect(byId.expr_1).toMatchObject({ Expression: 'IF(held >= runs, (rq0 + rq1) > 0, 0)', ReturnData: true });
    type Stat = { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] }; Stat: string; Period: number };
    const stat = (id: string) => (byId[id] as unknown as { MetricStat: Stat }).MetricStat;
    // Exactly the series each decided run publishes once (value 1): its reason, and the Service rollup.
    type Directive = { Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> };
    const emf = decisionsRecord('llama3-chat', 0, 'missing-data');
    const [directive] = (emf._aws as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics;
    expect(directive.Dimensions).toEqual([['Service', 'Reason'], ['Service']]);
    expect(stat('held')).toEqual({
      Metric: { Namespace: directive.Namespace, MetricName: directive.Metrics[0].Name, Dimensions: [{ Name: 'Reason', Value: emf.Reason }, { Name: 'Service', Value: emf.Service }] },
      Stat: 'SampleCount', Period: 60,
    });
    expect(stat('runs')).toEqual({
      Metric: { Namespace: directive.Namespace, MetricName: directive.Metrics[0].Name, Dimensions: [{ Name: 'Service', Value: emf.Service }] },
      Stat: 'SampleCount', Period: 60,
    });
    // The requests SageMaker counted per routed class, on each variant's variant-level series whatever its pools, as the
    // other alarms read them (review R252): a pool's per-InstanceType series may be missing and would read as no traffic.
    expect(stat('rq0')).toEqual({
      Metric: { Namespace: 'AWS/SageMaker', MetricName: 'Invocations', Dimensions: [{ Name: 'EndpointName', Value: 'llm' }, { Name: 'VariantName', Value: 'preferred' }] },
      Stat: 'Sum', Period: 60,
    });
    expect(stat('rq1').Metric.Dimensions).toEqual([{ Name: 'EndpointName', Value: 'llm' }, { Name: 'VariantName', Value: 'fallback' }]);
    expect(JSON.stringify(alarm.Metrics)).not.toContain('InstanceType');
    expect(reconciler.missingDataAlarm.alarmArn).toBeDefined();
  });

  test('the missing-data alarm follows the period and the metric delay: at least 3 periods, N within one day', () => {
    const { stack: slow } = testStack('Slow');
    const r = new Reconciler(slow, 'Reconciler', {
      serving: servingOf(SAGEMAKER, 'llama3-chat', 250), policy: { period: Duration.minutes(5) }, metricDelay: Duration.minutes(11),
    });
    const p = r.missingDataAlarm.node.defaultChild as cloudwatch.CfnAlarm;
    expect([p.datapointsToAlarm, p.evaluationPeriods]).toEqual([3, 6]);
    const { stack: longest } = testStack('Longest');
    const l = new Reconciler(longest, 'Reconciler', { serving: servingOf(SAGEMAKER, 'llama3-chat', 250), policy: { period: Duration.hours(6), maxReturnHold: Duration.hours(6) } });
    const q = l.missingDataAlarm.node.defaultChild as cloudwatch.CfnAlarm;
    expect([q.datapointsToAlarm, q.evaluationPeriods]).toEqual([3, 4]);
    const periods = (q.metrics as Array<{ metricStat?: { period: number } }>).flatMap((m) => (m.metricStat ? [m.metricStat.period] : []));
    // held, runs, and one request series per routed class (two variants).
    expect(periods).toEqual(Array(4).fill(21_600));
  });

  test('the audit-trail log group is encrypted with a rotating key that CloudWatch Logs may use', () => {
    const keyId = stack.getLogicalId(reconciler.logEncryptionKey.node.defaultChild as kms.CfnKey);
    template.hasResourceProperties('AWS::Logs::LogGroup', { KmsKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] }, RetentionInDays: 90 });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'logs.us-east-1.amazonaws.com' }, Condition: { ArnLike: Match.anyValue() } })]) },
    });
  });

  test('exposes its decision metrics from the metric contract', () => {
    expect(stack.resolve(reconciler.metricPolicyMode().toMetricConfig().metricStat)).toMatchObject({
      namespace: 'CapacityAwareInference', metricName: 'PolicyMode', dimensions: [{ name: 'Service', value: 'llama3-chat' }], statistic: 'Maximum',
    });
    expect(reconciler.metricRouteWeight('fallback').dimensions).toEqual({ Service: 'llama3-chat', CapacityClass: 'fallback' });
    expect(reconciler.metricFallbackShare().metricName).toBe('FallbackShareRequests');
    expect(reconciler.metricDecisions('enter-capacity').dimensions).toEqual({ Service: 'llama3-chat', Reason: 'enter-capacity' });
  });
});

describe('Reconciler on an ALB listener', () => {
  let stack: Stack;
  let template: Template;
  beforeAll(() => {
    ({ stack } = testStack());
    new Reconciler(stack, 'Reconciler', {
      serving: servingOf(ALB, 'llama3-chat', 250, {
        containerInsightsClusterName: 'prod',
        classes: { l40s: { capacityErrors: { namespace: 'Karpenter', metricName: 'InsufficientCapacityErrors', dimensions: { NodePool: 'l40s' }, stat: 'Sum' } } },
      }),
    });
    template = Template.fromStack(stack);
  });

  test('IAM: ModifyListener on the listener only; DescribeListeners, DescribeTargetHealth and GetMetricData cannot be scoped', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual(expect.arrayContaining([
      { Action: ['elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth'], Effect: 'Allow', Resource: '*' },
      { Action: 'elasticloadbalancing:ModifyListener', Effect: 'Allow', Resource: LISTENER },
    ]));
    expect(statements).toHaveLength(4);
    expect(JSON.stringify(statements)).not.toContain('sagemaker');
  });

  test('no run on a target state change: a listener takes every write at once', () => {
    expect(JSON.stringify(template.findResources('AWS::Events::Rule'))).not.toContain('aws.sagemaker');
  });

  test('the missing-data alarm counts the requests of each target group (ALB RequestCount, Sum)', () => {
    const [alarm] = Object.values(template.findResources('AWS::CloudWatch::Alarm'))
      .map((r) => r.Properties).filter((p) => JSON.stringify(p.Metrics ?? []).includes('missing-data'));
    type Query = { Id: string; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] } } };
    const requests = (alarm.Metrics as Query[])
      .filter((q) => q.Id.startsWith('rq')).map((q) => q.MetricStat!.Metric);
    expect(requests).toEqual(['targetgroup/l40s/73e2d6bc24d8a067', 'targetgroup/inf2/1234567890abcdef'].map((group) => ({
      Namespace: 'AWS/ApplicationELB', MetricName: 'RequestCount', Dimensions: expect.arrayContaining([{ Name: 'TargetGroup', Value: group }]),
    })));
  });

  test('alarms on each capacity-error metric and runs at once on its state changes', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Karpenter', MetricName: 'InsufficientCapacityErrors', Dimensions: [{ Name: 'NodePool', Value: 'l40s' }],
      Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching',
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ resources: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('CapacityErrorsl40s'), 'Arn'] }] }),
    });
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0];
    const config = JSON.parse(fn.Properties.Environment.Variables.RECONCILER_CONFIG);
    expect(config.signals).toEqual({ l40s: { capacityErrors: { namespace: 'Karpenter', metricName: 'InsufficientCapacityErrors', dimensions: { NodePool: 'l40s' }, stat: 'Sum' } } });
    expect(config.clusterName).toBe('prod');
  });

  test('the capacity-error alarms notify the topic passed in (no topic of its own is created)', () => {
    const { stack: s2 } = testStack('UserTopic');
    const onCall = new sns.Topic(s2, 'OnCall', { enforceSSL: true });
    new Reconciler(s2, 'Reconciler', {
      serving: servingOf(ALB, 'llama3-chat', 250, {
        containerInsightsClusterName: 'prod',
        classes: { l40s: { capacityErrors: { namespace: 'Karpenter', metricName: 'InsufficientCapacityErrors', dimensions: { NodePool: 'l40s' }, stat: 'Sum' } } },
      }),
      alarmTopic: onCall,
    });
    const t = Template.fromStack(s2);
    t.resourceCountIs('AWS::SNS::Topic', 1);
    const topic = { Ref: s2.getLogicalId(onCall.node.defaultChild as sns.CfnTopic) };
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.filter((a) => a.Properties.Namespace === 'Karpenter')).toHaveLength(1);
    for (const a of alarms) {
      expect(a.Properties.AlarmActions).toEqual([topic]);
      expect(a.Properties.OKActions).toEqual([topic]);
    }
  });

  test('has no unacknowledged cdk-nag AwsSolutions or NIST 800-53 rev 5 findings', () => {
    expect(nagFindings(stack)).toEqual([]);
    expect(nistFindings(stack)).toEqual([]);
  });
});

describe('Reconciler: the rejected-demand signal follows each engine', () => {
  test('a class whose server sheds with 429 (TGI) is read on the 4XX metric; a variant mixing 429 and 503 pools reads both (fails when it reads only 5XX)', () => {
    const { stack } = testStack();
    new Reconciler(stack, 'Alb', {
      serving: servingOf(ALB, 'chat', 250, { containerInsightsClusterName: 'prod', classes: { inf2: { rejectionStatus: '4xx' }, l40s: { rejectionStatus: '5xx' } } }),
    });
    const mixed: RoutingFacts = { ...SAGEMAKER, variants: [SAGEMAKER.variants[0], { ...SAGEMAKER.variants[1], classes: [...SAGEMAKER.variants[1].classes, cls('g6', 2, 'ml.g6.xlarge', 400, 1.2)] }] };
    const poolNames = mixed.variants.map((v) => v.classes.map((c) => c.name));
    new Reconciler(stack, 'Sm', {
      serving: servingOf(mixed, 'chat-sm', 250, { classes: Object.fromEntries([...poolNames[0], poolNames[1][0]].map((n) => [n, { rejectionStatus: '4xx' as const }])) }),
    });
    const configs = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))
      .map((f) => JSON.parse(f.Properties.Environment.Variables.RECONCILER_CONFIG));
    const alb = configs.find((c) => c.service === 'chat');
    expect(alb.signals).toEqual({ inf2: { rejectionStatus: '4xx' } });
    const sm = configs.find((c) => c.service === 'chat-sm');
    // The first variant's pools all shed with 429; the second mixes a 429 pool with a 503 one: both status classes.
    expect(sm.signals).toEqual({ [mixed.variants[0].variantName]: { rejectionStatus: '4xx' }, [mixed.variants[1].variantName]: { rejectionStatus: 'mixed' } });
    const rejected = signalPlan(sm, 60).classes[mixed.variants[1].variantName].rejectedTokensPerSecond;
    expect([rejected].flat().map((q) => ('metric' in q! ? q.metric.metricName : ''))).toEqual(['Invocation4XXErrors', 'Invocation5XXErrors']);
  });
});

describe('Reconciler: the serving construct grants the routing writes', () => {
  const statementsOf = (stack: Stack) => Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);

  test('fails when the Reconciler writes a routing-target statement itself: its role holds what grantRouting gave, nothing more', () => {
    const { stack } = testStack();
    const granted: iam.IGrantable[] = [];
    const serving = {
      ...servingOf(SAGEMAKER, 'svc', 100),
      // A serving that grants only a read, to tell its statement from anything the Reconciler might add.
      grantRouting: (grantee: iam.IGrantable) => {
        granted.push(grantee);
        return iam.Grant.addToPrincipal({ grantee, actions: ['sagemaker:DescribeEndpoint'], resourceArns: [SAGEMAKER.endpointArn] });
      },
    };
    const r = new Reconciler(stack, 'R', { serving });
    expect(granted).toEqual([r.role]);
    const actions = statementsOf(stack).flatMap((st) => [st.Action].flat());
    expect(actions).toEqual(['cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint', 'logs:CreateLogStream', 'logs:PutLogEvents']);
  });

  test('fails when a serving of your own grants nothing (plain JavaScript, no grantRouting): a synth error, not a TypeError', () => {
    const { stack } = testStack();
    const { servingDescription } = servingOf(SAGEMAKER, 'svc', 100);
    expect(() => new Reconciler(stack, 'R', { serving: { servingDescription } as unknown as IInferenceServing })).toThrow(
      /serving\.grantRouting: is undefined; allowed: a function \(the construct that owns the routing target grants the routing writes on it\)/,
    );
  });
});

describe('Reconciler: longer periods and the contract\'s SLO', () => {
  const configOf = (stack: Stack, service: string) => Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))
    .map((f) => JSON.parse(f.Properties.Environment.Variables.RECONCILER_CONFIG))
    .find((c) => c.service === service);

  test('fails when a 2- or 5-minute period is refused: the default windows are rounded up to whole periods', () => {
    const { stack } = testStack();
    new Reconciler(stack, 'Two', { serving: servingOf(SAGEMAKER, 'two', 100), policy: { period: Duration.minutes(2) } });
    new Reconciler(stack, 'Five', { serving: servingOf(ALB, 'five', 100, { classes: {}, containerInsightsClusterName: 'prod' }), policy: { period: Duration.minutes(5) } });
    expect(configOf(stack, 'two').policy).toEqual({ periodSeconds: 120, capacityErrorLookbackSeconds: 240, provisioningGraceSeconds: 360 });
    expect(configOf(stack, 'five').policy).toEqual({ periodSeconds: 300, capacityErrorLookbackSeconds: 300 });
    Template.fromStack(stack).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    // A window the user sets is theirs: still checked against the period.
    const { stack: bad } = testStack('Bad');
    expect(() => new Reconciler(bad, 'R', {
      serving: servingOf(SAGEMAKER, 'svc', 100), policy: { period: Duration.minutes(2), capacityErrorLookback: Duration.minutes(3) },
    })).toThrow(/policy\.capacityErrorLookback: is 180 s, not a whole number of 120 s periods; allowed: a whole number of periods, at least one/);
  });

  test('fails when the latency trigger is off by default: it watches the serving\'s SLO unless the policy names its own', () => {
    const { stack } = testStack();
    const withSlo = (service: string) => {
      const base = servingOf(SAGEMAKER, service, 100);
      return { ...base, servingDescription: () => ({ ...base.servingDescription(), latencySloP95Ms: 30_000 }) };
    };
    new Reconciler(stack, 'Contract', { serving: withSlo('contract') });
    new Reconciler(stack, 'Own', { serving: withSlo('own'), policy: { latencySloP95: Duration.seconds(5) } });
    expect(configOf(stack, 'contract').policy).toEqual({ latencySloP95Ms: 30_000 });
    expect(configOf(stack, 'own').policy).toEqual({ latencySloP95Ms: 5_000 });
  });

  test('takes the serving\'s headroom; a serving that gives none leaves the policy\'s own (review R251)', () => {
    const { stack } = testStack();
    const withHeadroom = (service: string, headroom: number) => {
      const base = servingOf(SAGEMAKER, service, 100);
      return { ...base, servingDescription: () => ({ ...base.servingDescription(), headroom }) };
    };
    new Reconciler(stack, 'Contract', { serving: withHeadroom('contract', 0) });
    new Reconciler(stack, 'Custom', { serving: servingOf(SAGEMAKER, 'custom', 100), policy: { headroom: 0.3 } });
    expect(configOf(stack, 'contract').policy).toEqual({ headroom: 0 });
    expect(configOf(stack, 'custom').policy).toEqual({ headroom: 0.3 });
    // Another value than the serving's is refused (test/control/reconciler-sagemaker.test.ts has the message); its own
    // rule's problem is reported alone.
    const { stack: bad } = testStack('Bad');
    expect(() => new Reconciler(bad, 'R', { serving: withHeadroom('svc', 0), policy: { headroom: 0.2 } })).toThrow(
      /policy\.headroom: is 0\.2, and the serving plans with headroom 0: /,
    );
    const { stack: range } = testStack('Range');
    expect(() => new Reconciler(range, 'R', { serving: withHeadroom('svc', 0), policy: { headroom: 5 } })).toThrow(
      "Reconciler 'Range/R' is invalid (1 problem):\n  - policy.headroom: is 5; allowed: a finite number from 0 to 4",
    );
  });
});

describe('Reconciler validation', () => {
  test('fails when props are invalid, listing every problem with the construct path, the value and what is allowed', () => {
    const { stack } = testStack();
    expect(() => new Reconciler(stack, 'Bad', {
      serving: servingOf(ALB, 'llama3\tchat', 0, { classes: { h100: {} } }),
      policy: { stabilizationWindow: Duration.seconds(90), weightTotal: 1000 },
    })).toThrow([
      "Reconciler 'Test/Bad' is invalid (6 problems):",
      '  - serving.signals.containerInsightsClusterName: is undefined; allowed: the Container Insights cluster name wherever the routing target '
        + 'is an ALB (desired replicas of EKS classes come from Container Insights)',
      "  - serving.service: is 'llama3\tchat'; allowed: a CloudWatch dimension value: 1 to 255 printable ASCII characters, not all blank "
        + '(the Service dimension of every metric and alarm; CloudWatch alarms document 255 characters)',
      '  - serving.tokensPerRequest: is 0 tokens; allowed: a finite number above 0 tokens',
      "  - serving.signals.classes['h100']: names no capacity class of the routing facts (known: l40s, inf2); allowed: names of capacity "
        + 'classes of the routing facts',
      '  - policy.weightTotal: is 1000; allowed: a whole number from 10 to 999 (ALB accepts at most 999 per target group)',
      '  - policy.stabilizationWindow: is 90 s, not a whole number of 60 s periods; allowed: a whole number of periods, at least one',
    ].join('\n'));
  });

  test('the demand quantile, its window and the return hold\'s memory and bound reach the policy, and are checked', () => {
    const { stack } = testStack();
    const r = new Reconciler(stack, 'Tuned', {
      serving: servingOf(SAGEMAKER, 'svc', 100),
      policy: { demandWindowPeriods: 10, demandQuantile: 0.95, reentryMemory: Duration.hours(2), maxReturnHold: Duration.hours(1) },
    });
    const fn = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    const config = JSON.parse(Object.values(fn)[0].Properties.Environment.Variables.RECONCILER_CONFIG);
    expect(config.policy).toMatchObject({ demandWindowPeriods: 10, demandQuantile: 0.95, reentryMemorySeconds: 7200, maxReturnHoldSeconds: 3600 });
    expect(r).toBeDefined();
    const { stack: bad } = testStack('Bad');
    expect(() => new Reconciler(bad, 'R', {
      serving: servingOf(SAGEMAKER, 'svc', 100),
      policy: { demandQuantile: 1.5, maxReturnHold: Duration.minutes(5) },
    })).toThrow('  - policy.demandQuantile: is 1.5; allowed: a finite number from 0 to 1\n'
      + '  - policy.maxReturnHold: is 300 s, below stabilizationWindow 600 s; allowed: at least stabilizationWindow');
  });

  test('binds replica floors through the serving; a serving that cannot gets a policy that grows fallbacks by load alone', () => {
    const { stack } = testStack();
    let calls = 0;
    const binding = { ...servingOf(SAGEMAKER, 'svc', 100), enableReplicaFloors: () => (calls += 1) };
    new Reconciler(stack, 'Bound', { serving: binding });
    expect(calls).toBe(1);
    const { servingDescription, grantRouting } = servingOf(SAGEMAKER, 'svc2', 100);
    new Reconciler(stack, 'Unbound', { serving: { servingDescription, grantRouting } });
    const configs = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))
      .map((f) => JSON.parse(f.Properties.Environment.Variables.RECONCILER_CONFIG));
    expect(configs.find((c) => c.service === 'svc').policy).toEqual({});
    expect(configs.find((c) => c.service === 'svc2').policy).toEqual({ replicaFloorsApplied: false });
  });

  test('fails when placement forbids every class', () => {
    const { stack } = testStack();
    const variants = SAGEMAKER.variants.map((v) => ({ ...v, classes: v.classes.map((c) => ({ ...c, allowSensitive: false })) }));
    const facts: RoutingFacts = { ...SAGEMAKER, variants };
    expect(() => new Reconciler(stack, 'Sensitive', { serving: servingOf(facts, 's', 100), sensitive: true })).toThrow(
      '  - sensitive: is true but every routed class has allowSensitive: false; allowed: a routed class that may take sensitive requests',
    );
  });

  test('fails when five vLLM classes on EKS are refused: the environment is counted with each token at its longest resolved value', () => {
    const { stack } = testStack();
    // As EksInferenceService hands them over: ARNs and full names are tokens, each class counts its generated tokens.
    const lazy = (value: string) => Lazy.string({ produce: () => value });
    const names = ['h100-vllm', 'l40s-vllm', 'a10g-vllm', 'l4-vllm', 'inf2-vllm'];
    const facts: RoutingFacts = {
      kind: 'alb',
      listenerArn: lazy(`${LISTENER}`),
      loadBalancerFullName: lazy('app/llm/50dc6c495c0c9188'),
      targets: names.map((n, i) => ({
        class: cls(n, i, 'g6e.xlarge', 1200 - 100 * i, 2.6 - 0.3 * i),
        targetGroupArn: lazy(tg(`llama3-chat-${n}`, '73e2d6bc24d8a067')),
        targetGroupFullName: lazy(`targetgroup/llama3-chat-${n}/73e2d6bc24d8a067`),
        namespace: 'llama3-chat', deploymentName: `llama3-chat-${n}`, nodePoolName: `llama3-chat-${n}`,
      })),
    };
    const tokens = (n: string) => ({ namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'llama3-chat', CapacityClass: n }, stat: 'Sum' });
    const signals = { containerInsightsClusterName: 'llama3-cluster', classes: Object.fromEntries(names.map((n) => [n, { generatedTokens: tokens(n), rejectionStatus: '5xx' as const }])) };
    const r = new Reconciler(stack, 'Five', { serving: servingOf(facts, 'llama3-chat', 250, signals) });
    const variables = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'))[0].Properties.Environment.Variables as Record<string, string>;
    const resolved = Object.entries(variables).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    const bound = environmentBytes(r.config, RECONCILER_CONFIG_ENV, RECONCILER_SERVICE_ENV);
    // An upper bound of what CloudFormation resolves, within Lambda's 4 KB.
    expect(resolved).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThanOrEqual(4096);
    // The contract's token counters are derived, not spelt out: the same sources, fewer bytes.
    expect(r.config.contractTokenCounters).toEqual(names);
    expect(r.config.signals).toBeUndefined();
    for (const n of names) expect(signalPlan(r.config, 60).classes[n].servedTokensPerSecond).toEqual({ metric: tokens(n), scale: 1 / 60 });
  });

  test('fails when a service name of 255 characters makes the function description or the topic name too long (R109)', () => {
    const synth = (service: string) => {
      const { stack } = testStack();
      new Reconciler(stack, 'R', { serving: servingOf(SAGEMAKER, service, 100) });
      const template = Template.fromStack(stack);
      const only = (type: string) => Object.values(template.findResources(type))[0].Properties;
      return { description: only('AWS::Lambda::Function').Description as string, topic: only('AWS::SNS::Topic').DisplayName as string };
    };
    // Lambda takes a description of 256 characters, SNS a topic display name of 100: both are cut short, with '...'.
    const longest = synth('s'.repeat(255));
    expect(longest.description).toBe(`Capacity-aware routing reconciler for ${'s'.repeat(256 - 41)}...`);
    expect(longest.description).toHaveLength(256);
    expect(longest.topic).toBe(`Inference alarms: ${'s'.repeat(100 - 21)}...`);
    expect(longest.topic).toHaveLength(100);
    expect(synth('llama3-chat')).toEqual({ description: 'Capacity-aware routing reconciler for llama3-chat', topic: 'Inference alarms: llama3-chat' });
    // A name known only at deploy is left out: its length is unknown at synth, and a long one would fail the deploy.
    expect(synth(Lazy.string({ produce: () => 'llama3-chat' }))).toEqual({ description: 'Capacity-aware routing reconciler', topic: 'Inference alarms' });
  });

  test('fails when the configuration would not fit in the Lambda environment', () => {
    const { stack } = testStack();
    const many = Array.from({ length: 10 }, (_, v) => ({
      variantName: `variant-${v}`,
      classes: Array.from({ length: 5 }, (_, p) => cls(`class-${v}-${p}-with-a-long-descriptive-name`, v * 5 + p, 'ml.g5.12xlarge', 100, 7)),
    }));
    expect(() => new Reconciler(stack, 'Huge', { serving: servingOf({ ...SAGEMAKER, variants: many }, 's', 100) })).toThrow(
      /facts: the configuration needs up to \d+ bytes of environment once resolved \(Lambda allows 4096\)/,
    );
  });
});
