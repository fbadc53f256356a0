import { Annotations as CoreAnnotations, type CfnElement, Duration, type Stack, Stack as CdkStack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { Dim, Metrics } from '../../lib/core/metrics/contract';
import { initialPolicyState } from '../../lib/core/policy/decide';
import { type PolicyDecision, type PolicyInput } from '../../lib/core/policy/types';
import { decisionEmf } from '../../lib/core/reconciler/io';
import { endpointStack, synthError } from '../sagemaker/fixtures';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { LLAMA_CONTRACT, llamaClasses, nagFindings, testStack, FETCHER_IMAGE } from '../util';

/**
 * The flow the deployment guardrail documents: its rollback alarm is the deadline exhaustion alarm InferenceAlarms makes
 * from the endpoint's own description, added after both exist (review R122: the missing alarm used to fail that read).
 */
test('a deployment that rolls back on InferenceAlarms\' deadline exhaustion alarm, added after the alarms and the Reconciler, synthesizes', () => {
  const built = endpointStack({ deployment: { bakeTime: Duration.minutes(10) } });
  const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
  new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms: obs.capacityAlarms });
  built.endpoint.addRollbackAlarm(obs.alarms.deadlineExhaustionAlarm!);
  expect(synthError(built.stack)).toBe('');
  const [endpoint] = Object.values(Template.fromStack(built.stack).findResources('AWS::SageMaker::Endpoint'));
  expect(built.stack.resolve(endpoint.Properties.DeploymentConfig.AutoRollbackConfiguration.Alarms))
    .toEqual([{ AlarmName: built.stack.resolve(obs.alarms.deadlineExhaustionAlarm!.alarmName) }]);
});

/** The alarms of the dashboard's status row, each `@<logical id>` (the ARN's Fn::GetAtt); undefined without the row. */
function statusRow(stack: Stack, template: Template): string[] | undefined {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const body = stack.resolve(dashboard.Properties.DashboardBody);
  const parts = typeof body === 'string' ? [body] : (body['Fn::Join'][1] as unknown[]);
  const text = parts.map((p) => (typeof p === 'string' ? p : `@${(p as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[0] ?? 'REF'}`)).join('');
  const widgets = JSON.parse(text).widgets as Array<{ type: string; properties: { alarms?: string[] } }>;
  return widgets.find((w) => w.type === 'alarm')?.properties.alarms;
}

test('a Reconciler in another stack: the status row keeps InferenceAlarms\' alone, and the two stacks synthesize without a cycle', () => {
  const built = endpointStack();
  const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
  const other = new CdkStack(built.app, 'ReconcilerStack', { env: { account: built.stack.account, region: built.stack.region } });
  new Reconciler(other, 'Reconciler', { serving: built.endpoint, capacityAlarms: obs.capacityAlarms });
  expect(synthError(built.stack)).toBe('');
  expect(statusRow(built.stack, Template.fromStack(built.stack))).toEqual(obs.alarms.alarms.map((a) => `@${built.stack.getLogicalId(a.node.defaultChild as CfnElement)}`));
});

/**
 * The observability constructs on the real SageMaker endpoint's routing facts, wired to the real reconciler: the
 * capacity alarms trigger it at once.
 */
describe('InferenceObservability with SageMakerCapacityEndpoint and Reconciler', () => {
  let stack: Stack;
  let template: Template;
  let obs: InferenceObservability;
  let reconciler: Reconciler;

  beforeAll(() => {
    const built = endpointStack();
    stack = built.stack;
    obs = new InferenceObservability(stack, 'Observability', { serving: built.endpoint });
    reconciler = new Reconciler(stack, 'Reconciler', {
      serving: built.endpoint,
      capacityAlarms: obs.capacityAlarms,
    });
    template = Template.fromStack(stack);
  });

  test('one replica shortage alarm per variant, and the preferred class is the rank-0 pool', () => {
    const facts = obs.alarms.metrics.facts;
    expect(facts.kind).toBe('sagemaker');
    expect(obs.alarms.metrics.routes.map((r) => r.name)).toEqual(['preferred', 'fallback']);
    expect(obs.alarms.replicaShortageAlarms).toHaveLength(2);
    expect(obs.alarms.metrics.preferred.map((c) => c.facts.name)).toEqual(['l40s']);
  });

  test('the reconciler runs when a capacity alarm changes state', () => {
    expect(reconciler.alarmRule).toBeDefined();
    const rules = Object.values(template.findResources('AWS::Events::Rule'))
      .filter((r) => r.Properties.EventPattern?.['detail-type']?.includes('CloudWatch Alarm State Change'));
    expect(rules).toHaveLength(1);
    const resources = stack.resolve(rules[0].Properties.EventPattern.resources) as unknown[];
    const arns = obs.capacityAlarms.map((a) => stack.resolve(a.alarmArn));
    expect(resources).toEqual(expect.arrayContaining(arns));
  });

  test('the heartbeat reads the Service rollup of Decisions, which the reconciler publishes on every run', () => {
    const decision: PolicyDecision = {
      mode: 'cost', weights: { preferred: 98, fallback: 2 }, weightsChanged: false, modeChanged: false,
      reason: { code: 'cost-plan', triggers: [], message: 'cost plan' },
      fallbackShare: 0.02, requiredTokensPerSecond: 6000, deficitTokensPerSecond: 0, readyTokensPerSecond: 9000, preferredClass: 'preferred',
      replicaFloors: { preferred: 0, fallback: 0 },
      replicaNeeds: null,
    };
    const input: PolicyInput = { now: 0, classes: [], signals: {}, demandTokensPerSecond: [] };
    const records = decisionEmf({
      decision, next: initialPolicyState(decision.weights, 0), input, service: 'llama3-chat', timestampMs: 0, weightTotal: 100, written: false,
      floors: decision.replicaFloors,
    });
    type Directive = { Dimensions: string[][]; Metrics: Array<{ Name: string }> };
    const sets = records.flatMap((r) => (r._aws as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics)
      .filter((d) => d.Metrics.some((m) => m.Name === Metrics.decisions.name))
      .flatMap((d) => d.Dimensions);
    expect(sets).toContainEqual([Dim.SERVICE]);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Decisions',
      Dimensions: [{ Name: 'Service', Value: 'llama3-chat' }],
      TreatMissingData: 'breaching',
    });
  });

  test('the dashboard\'s status row shows every alarm of the service: InferenceAlarms\' and the Reconciler\'s, defined after the dashboard', () => {
    const ids = (alarms: readonly cloudwatch.IAlarm[]) => alarms.map((a) => `@${stack.getLogicalId(a.node.defaultChild as CfnElement)}`);
    expect(statusRow(stack, template)).toEqual(ids([
      ...obs.alarms.alarms, reconciler.failureAlarm, reconciler.errorsAlarm, reconciler.degradedReadsAlarm, reconciler.missingDataAlarm,
      ...reconciler.capacityErrorAlarms,
    ]));
  });

  test('the whole stack is cdk-nag clean', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});

/** InferenceObservability on an EksInferenceService of the llama classes, on an imported cluster. */
function eksObservability(): { stack: Stack; obs: InferenceObservability } {
  const { stack } = testStack();
  const cluster = eks.Cluster.fromClusterAttributes(stack, 'Imported', {
    clusterName: 'prod-inference',
    clusterSecurityGroupId: 'sg-0123456789abcdef0',
    vpc: ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-0123456789abcdef0', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a', 'us-east-1b'],
      privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] }),
    kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(stack, 'Kubectl', {
      serviceToken: 'arn:aws:lambda:us-east-1:123456789012:function:kubectl-provider',
    }),
  });
  const service = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
  const obs = new InferenceObservability(stack, 'Observability', { serving: service });
  return { stack, obs };
}

describe('InferenceObservability with EksInferenceService (ALB target groups)', () => {
  test('builds from the service routing facts: one shortage alarm per target group, latency per target group', () => {
    const { stack, obs } = eksObservability();
    expect(obs.alarms.metrics.routes.map((r) => r.name)).toEqual(['l40s', 'a10g', 'inf2']);
    // The preferred class's Karpenter capacity-error filter and one replica shortage per target group.
    expect(obs.capacityAlarms).toHaveLength(4);
    const latency = obs.alarms.metrics.latencyMs(obs.alarms.metrics.classes[1], 'p95', 'x');
    const raw = Object.values(latency.usingMetrics)[0] as cloudwatch.Metric;
    expect(Object.keys(raw.dimensions ?? {}).sort()).toEqual(['LoadBalancer', 'TargetGroup']);
    // fallback share, deadline exhaustion (shed over arriving requests per target group), the ALB's own 5XX share,
    // preferred capacity errors, 3 replica shortages, heartbeat
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 8);
  });
});

/**
 * An alarm whose metric math FILLs turns a newest period not yet published into the fill value, so with M = N the
 * newest point would always be that value: "You can work around this by using a M out of N alarm" (CloudWatch user
 * guide, metric math, FILL: awsdocs/amazon-cloudwatch-user-guide@cc40332 doc_source/using-metric-math.md:111).
 */
describe('every alarm whose expression FILLs is M of N, with periods to spare for a late datapoint', () => {
  const filling = (t: Template) => Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties)
    .filter((p) => (p.Metrics ?? []).some((q: { Expression?: string }) => q.Expression?.includes('FILL(')));
  const sageMakerObservability = () => {
    const built = endpointStack();
    new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
    return built.stack;
  };
  const name = (p: { AlarmDescription: string }) =>
    ['to protect the deadline', 'reported capacity errors', 'wanted more replicas', 'served by fallback classes', 'itself with a 5XX']
      .find((f) => p.AlarmDescription.includes(f));

  test.each([
    // The endpoint's preferred variant has a fallback pool (a10g), which the fallback share FILLs.
    ['SageMaker', sageMakerObservability, ['to protect the deadline', 'wanted more replicas', 'wanted more replicas', 'served by fallback classes']],
    ['EKS', () => eksObservability().stack, ['reported capacity errors', 'to protect the deadline', 'itself with a 5XX']],
  ])('%s: deadline exhaustion, capacity errors, SageMaker replica shortages, load balancer errors, a fallback share over instance pools', (_, build, expected) => {
    const alarms = filling(Template.fromStack(build()));
    expect(alarms.map(name).sort()).toStrictEqual([...expected].sort());
    for (const a of alarms) {
      // The default durations in one-minute periods, out of 2 more: the 120 s CloudWatch publishes a period late.
      expect(a.DatapointsToAlarm).toBeLessThan(a.EvaluationPeriods);
      expect(a.EvaluationPeriods - a.DatapointsToAlarm).toBe(2);
      // A description with a duration says M of N, not "for" it (which would promise consecutive periods).
      if (name(a) !== 'reported capacity errors') {
        expect(a.AlarmDescription).toContain(`in ${a.DatapointsToAlarm} of ${a.EvaluationPeriods} periods of 1 minute`);
      }
    }
  });
});

/** The alarms fed by reconciler runs (replica shortage, heartbeat) read one datapoint per run: they follow its period. */
describe('a Reconciler that runs every 2 minutes', () => {
  const alarmOf = (t: Template, fragment: string) =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties).find((p) => String(p.AlarmDescription).includes(fragment))!;

  test('its replica shortage and heartbeat alarms are evaluated per run, the others per minute, their default durations in whole runs', () => {
    const built = endpointStack();
    const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint, reconcilerPeriod: Duration.minutes(2) });
    new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms: obs.capacityAlarms, policy: { period: Duration.minutes(2) } });
    const t = Template.fromStack(built.stack);
    const shortage = alarmOf(t, 'has wanted more replicas than are ready');
    const periods = (a: { Metrics: Array<{ MetricStat?: { Period: number } }> }) =>
      [...new Set(a.Metrics.flatMap((q) => (q.MetricStat ? [q.MetricStat.Period] : [])))];
    expect(periods(shortage)).toEqual([120]);
    // 5 minutes rounded up to whole runs: 6 minutes, 3 periods, out of one more (FILL: the 120 s a period is late).
    expect([shortage.EvaluationPeriods, shortage.DatapointsToAlarm]).toEqual([4, 3]);
    const heartbeat = alarmOf(t, 'has recorded no decision');
    expect([heartbeat.Period, heartbeat.EvaluationPeriods, heartbeat.DatapointsToAlarm]).toEqual([120, 5, 5]);
    const fallback = alarmOf(t, 'served by fallback classes');
    expect(periods(fallback)).toEqual([60]);
  });

  test('refuses capacity alarms made for a one-minute reconciler, naming the alarm and both periods', () => {
    const built = endpointStack();
    const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
    const capacityAlarms = obs.capacityAlarms;
    expect(() => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms, policy: { period: Duration.minutes(2) } }))
      .toThrow("policy.period: is 120 s, and InferenceAlarms 'Test/Observability/Alarms' (its 'Test/Observability/Alarms/ReplicaShortage0' is "
        + 'in capacityAlarms) evaluates its replica shortage and heartbeat alarms every 60 s (its reconcilerPeriod, one minute unless set): set '
        + "that InferenceObservability's (or InferenceAlarms') reconcilerPeriod to this Reconciler's policy.period, Duration.seconds(120), or leave "
        + "its alarms out of capacityAlarms; allowed: the reconcilerPeriod of every InferenceAlarms that reads this Reconciler's runs");
  });

  test('refuses capacity alarms made for a slower reconciler: a 2-minute shortage would pair two runs\' counts', () => {
    const built = endpointStack();
    const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint, reconcilerPeriod: Duration.minutes(2) });
    expect(() => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms: obs.capacityAlarms }))
      .toThrow(new RegExp("policy.period: is 60 s, and InferenceAlarms '[^']*' \\(its '[^']*ReplicaShortage0' is in capacityAlarms\\) evaluates "
        + 'its replica shortage and heartbeat alarms every 120 s'));
  });

  test('capacityAlarms are held to the same rule as an InferenceAlarms on the serving: once per InferenceAlarms, only its run-fed alarms', () => {
    // An InferenceAlarms the serving check cannot see (another app): only capacityAlarms bring it to the Reconciler.
    const other = endpointStack();
    const elsewhere = new InferenceObservability(other.stack, 'Observability', { serving: other.endpoint });
    const built = endpointStack();
    const capacityAlarms = [elsewhere.alarms.reconcilerHeartbeatAlarm!, ...elsewhere.capacityAlarms];
    expect(() => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms, policy: { period: Duration.minutes(2) } }))
      .toThrow("Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - policy.period: is 120 s, and InferenceAlarms 'Test/Observability/Alarms' "
        + "(its 'Test/Observability/Alarms/ReconcilerHeartbeat' is in capacityAlarms) evaluates its replica shortage and heartbeat alarms every 60 s");
    // The fallback share reads the platform's metrics at its own period: no Reconciler's period is its business.
    expect(() => new Reconciler(built.stack, 'Reconciler2', {
      serving: built.endpoint, capacityAlarms: [elsewhere.alarms.fallbackShareAlarm!], policy: { period: Duration.minutes(2) },
    })).not.toThrow();
  });

  test('with a 5-minute period the other alarms read 5 minutes, the run-fed ones still one run each: accepted by the Reconciler', () => {
    const built = endpointStack();
    const obs = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint, period: Duration.minutes(5) });
    expect(() => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, capacityAlarms: obs.capacityAlarms })).not.toThrow();
    const t = Template.fromStack(built.stack);
    const shortage = alarmOf(t, 'has wanted more replicas than are ready');
    const periods = shortage.Metrics.flatMap((q: { MetricStat?: { Period: number } }) => (q.MetricStat ? [q.MetricStat.Period] : []));
    expect([...new Set(periods)]).toEqual([60]);
    expect([shortage.EvaluationPeriods, shortage.DatapointsToAlarm]).toEqual([7, 5]);
    // 15 minutes in 5-minute periods, out of one more for the 120 s metricDelay: the share FILLs the preferred variant's a10g pool.
    expect([alarmOf(t, 'served by fallback classes').EvaluationPeriods, alarmOf(t, 'served by fallback classes').DatapointsToAlarm]).toEqual([4, 3]);
  });

  test('a reconcilerPeriod that is not whole minutes, or durations that are not whole runs, fail at synth', () => {
    const built = endpointStack();
    expect(() => new InferenceObservability(built.stack, 'Observability', {
      serving: built.endpoint, reconcilerPeriod: Duration.seconds(90), replicaShortage: { duration: Duration.minutes(3) },
    })).toThrow(/reconcilerPeriod: is 90 s; allowed: a whole number from 60 to 21_600 s, a multiple of 60/);
    expect(() => new InferenceObservability(built.stack, 'Observability2', {
      serving: built.endpoint, reconcilerPeriod: Duration.minutes(2), replicaShortage: { duration: Duration.minutes(5) },
    })).toThrow(/replicaShortage.duration: is 5 minutes with a period of 120 s/);
  });
});

/**
 * A Reconciler and the InferenceAlarms of its serving, in either order: checked at synth (review R120). The heartbeat is
 * the only alarm that pages when runs stop, and it reads one datapoint per run at InferenceAlarms' reconcilerPeriod.
 */
describe('a Reconciler and the InferenceAlarms of the same serving', () => {
  const noHeartbeat = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('reconciler-no-heartbeat'));

  test.each(['observability first', 'reconciler first'])('fails at synth when their periods differ (%s), naming both paths and both periods', (order) => {
    const built = endpointStack();
    const observe = () => new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
    const reconcile = () => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, policy: { period: Duration.minutes(15) } });
    if (order === 'observability first') { observe(); reconcile(); } else { reconcile(); observe(); }
    expect(synthError(built.stack)).toContain("Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - policy.period: is 900 s, and InferenceAlarms "
      + "'Test/Observability/Alarms' of the same serving evaluates its replica shortage and heartbeat alarms every 60 s (its reconcilerPeriod, "
      + "one minute unless set): set that InferenceObservability's (or InferenceAlarms') reconcilerPeriod to this Reconciler's policy.period, "
      + "Duration.seconds(900); allowed: the reconcilerPeriod of every InferenceAlarms that reads this Reconciler's runs");
  });

  test('synthesizes when reconcilerPeriod is the Reconciler\'s period, or when no alarm reads its runs', () => {
    const same = endpointStack();
    new Reconciler(same.stack, 'Reconciler', { serving: same.endpoint, policy: { period: Duration.minutes(15) } });
    new InferenceObservability(same.stack, 'Observability', { serving: same.endpoint, reconcilerPeriod: Duration.minutes(15) });
    expect(synthError(same.stack)).toBe('');
    const none = endpointStack();
    new Reconciler(none.stack, 'Reconciler', { serving: none.endpoint, policy: { period: Duration.minutes(15) } });
    new InferenceObservability(none.stack, 'Observability', { serving: none.endpoint, replicaShortage: { enabled: false }, reconcilerHeartbeat: { enabled: false } });
    expect(synthError(none.stack)).toBe('');
  });

  test.each(['observability first', 'reconciler first'])(
    'fails at synth when the Reconciler declares a longer metricDelay than the alarms leave room for (%s), naming both and both delays',
    (order) => {
      const built = endpointStack();
      const observe = () => new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
      const reconcile = () => new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, metricDelay: Duration.minutes(5) });
      if (order === 'observability first') { observe(); reconcile(); } else { reconcile(); observe(); }
      expect(synthError(built.stack)).toContain("Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - metricDelay: is 300 s, and InferenceAlarms "
        + "'Test/Observability/Alarms' of the same serving leaves its M of N alarms 120 s for a datapoint to land (its metricDelay, 120 s unless "
        + "set): set that InferenceObservability's (or InferenceAlarms') metricDelay to this Reconciler's, Duration.seconds(300); allowed: at most "
        + 'the metricDelay of every InferenceAlarms on the same serving (or whose replica shortage or heartbeat alarm is in capacityAlarms) that has an '
        + 'M of N alarm');
    },
  );

  test('refuses capacityAlarms of alarms made for a shorter metricDelay; synthesizes with the same one, a longer one, or no M of N alarm', () => {
    const short = endpointStack();
    const obs = new InferenceObservability(short.stack, 'Observability', { serving: short.endpoint, metricDelay: Duration.minutes(3) });
    expect(() => new Reconciler(short.stack, 'Reconciler', { serving: short.endpoint, capacityAlarms: obs.capacityAlarms, metricDelay: Duration.minutes(4) }))
      .toThrow("metricDelay: is 240 s, and InferenceAlarms 'Test/Observability/Alarms' (its 'Test/Observability/Alarms/ReplicaShortage0' is in "
        + 'capacityAlarms) leaves its M of N alarms 180 s for a datapoint to land');
    for (const [id, delay] of [['Same', 3], ['Longer', 2]] as const) {
      const built = endpointStack();
      const alarms = new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint, metricDelay: Duration.minutes(3) });
      new Reconciler(built.stack, id, { serving: built.endpoint, capacityAlarms: alarms.capacityAlarms, metricDelay: Duration.minutes(delay) });
      expect(synthError(built.stack)).toBe('');
    }
    // SageMaker without deadline exhaustion, replica shortage and fallback share (it FILLs the preferred variant's fallback
    // pool) alarms: only the heartbeat, which has no FILL.
    const none = endpointStack();
    new InferenceObservability(none.stack, 'Observability', {
      serving: none.endpoint, deadlineExhaustion: { enabled: false }, replicaShortage: { enabled: false }, fallbackShare: { enabled: false },
    });
    new Reconciler(none.stack, 'Reconciler', { serving: none.endpoint, metricDelay: Duration.minutes(15) });
    expect(synthError(none.stack)).toBe('');
  });

  test('warns when no heartbeat watches the Reconciler: how to add one, and the alarm to write otherwise', () => {
    const built = endpointStack();
    new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, policy: { period: Duration.minutes(2) } });
    const warnings = noHeartbeat(built.stack);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].id).toBe('/Test/Reconciler');
    const text = String(warnings[0].entry.data);
    expect(text).toContain('nothing pages when runs stop');
    expect(text).toContain('reconcilerPeriod: Duration.seconds(120)');
    expect(text).toContain(`${Metrics.decisions.namespace} ${Metrics.decisions.name} with dimension ${Dim.SERVICE}=${LLAMA_CONTRACT.name} only, `
      + 'statistic SampleCount, period 120 s, less than 1 in 5 of 5 periods, missing data breaching');
    expect(text).toContain('[ack: cdk-capacity-aware-inference:reconciler-no-heartbeat]');
  });

  test('the warning\'s InferenceObservability declares the Reconciler\'s metricDelay when it is not the default', () => {
    const built = endpointStack();
    new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint, metricDelay: Duration.minutes(5) });
    const [warning] = noHeartbeat(built.stack);
    expect(String(warning.entry.data)).toContain('{ serving, reconcilerPeriod: Duration.seconds(60), metricDelay: Duration.seconds(300) }');
  });

  test('warns when the only InferenceObservability of the serving has its heartbeat off, or is in another app', () => {
    const off = endpointStack();
    new Reconciler(off.stack, 'Reconciler', { serving: off.endpoint });
    new InferenceObservability(off.stack, 'Observability', { serving: off.endpoint, reconcilerHeartbeat: { enabled: false } });
    expect(noHeartbeat(off.stack)).toHaveLength(1);
    const other = endpointStack();
    new Reconciler(other.stack, 'Reconciler', { serving: other.endpoint });
    const elsewhere = endpointStack();
    new InferenceObservability(elsewhere.stack, 'Observability', { serving: other.endpoint });
    expect(noHeartbeat(other.stack)).toHaveLength(1);
  });

  test('no warning with InferenceObservability on the same serving, created after the Reconciler; none once acknowledged on its stack', () => {
    const built = endpointStack();
    new Reconciler(built.stack, 'Reconciler', { serving: built.endpoint });
    new InferenceObservability(built.stack, 'Observability', { serving: built.endpoint });
    expect(noHeartbeat(built.stack)).toEqual([]);
    const own = endpointStack();
    new Reconciler(own.stack, 'Reconciler', { serving: own.endpoint });
    // On a scope above it: "The acknowledgement will apply to all child scopes" (aws-cdk-lib 2.269.0 core/lib/annotations.d.ts).
    CoreAnnotations.of(own.stack).acknowledgeWarning('cdk-capacity-aware-inference:reconciler-no-heartbeat', 'our own alarm on Decisions');
    expect(noHeartbeat(own.stack)).toEqual([]);
  });
});
