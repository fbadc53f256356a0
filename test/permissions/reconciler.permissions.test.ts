/**
 * Permissions of the reconciler, end to end, on both platforms: the handler runs through its exported entry point
 * (`handler` of lambda/reconciler, with the function's environment exactly as the example stacks synthesize it) with
 * the real AWS SDK against the recording endpoint on 127.0.0.1, through steady state, a shortage, replica floors, the
 * return to cost mode and faults. Every call is resolved to its IAM action and resource ARN and must be allowed by the
 * reconciler role the example synthesized; the role may grant nothing the handler never calls (Lambda's own log
 * delivery aside).
 *
 * The world is read from the synthesized template, not from the reconciler's configuration format: the endpoint, its
 * variants and instance types (SageMaker), the listener and its target groups (ALB). Metric answers are keyed by
 * metric name only, so the handler's query layout may change without touching this test.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EksStableDiffusionStack } from '../../examples/eks-stable-diffusion';
import { SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import type * as reconcilerModule from '../../lambda/reconciler';
import { type CapturedCall, fault, RecordingEndpoint, type Reply } from './aws-endpoint';
import { LAMBDA_LOG_DELIVERY, permissionReport, withEnvironment } from './harness';
import { ACCOUNT, REGION, resolver, roleStatements, type Template as Json } from './iam-policy';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
type ReconcilerModule = typeof reconcilerModule;

/** The reconciler function of a synthesized stack: its role and its environment as deployed. */
function reconcilerOf(template: Json, functionPrefix = 'ReconcilerFunction'): { roleId: string; environment: Record<string, string> } {
  const resources = template.Resources as Resources;
  const resolve = resolver(template);
  const [, fn] = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(functionPrefix))!;
  const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  return { roleId, environment: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(resolve(v))])) };
}

/** One moment of the world: what the routing target shows and what each metric reads, per routed class or variant. */
interface Moment {
  readonly weights: Record<string, number>;
  readonly replicas: Record<string, { ready: number; desired: number }>;
  /** Datapoint of a metric (by name) for a route (variant name or class) at a slot of the queried window. */
  readonly metric: (metricName: string, route: string | undefined, slot: number, slots: number) => number | null;
  /** Calls answered with a fault once, as `service:Operation`. */
  readonly faults?: Set<string>;
  /** Calls answered with this fault every time. */
  readonly deny?: Record<string, { code: string; status: number }>;
}

/** GetMetricData: one series per query, every period of the asked window, from the moment's metric table. */
function metricData(call: CapturedCall, moment: Moment): Reply {
  const input = call.input as {
    MetricDataQueries: Array<{
      Id: string; ReturnData?: boolean; Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions?: Array<{ Name: string; Value: string }> }; Period: number };
    }>;
    StartTime: number; EndTime: number;
  };
  const period = input.MetricDataQueries.find((q) => q.MetricStat)?.MetricStat?.Period ?? 60;
  const slots = Math.round((input.EndTime - input.StartTime) / period);
  return {
    output: {
      MetricDataResults: input.MetricDataQueries.filter((q) => q.ReturnData !== false).map((q) => {
        // A metric stat names its metric; a SEARCH expression names it as MetricName="..." with dimension="value" terms.
        const terms = Object.fromEntries([...(q.Expression ?? '').matchAll(/(\w+)=\\?"([^"\\]*)\\?"/g)].map((m) => [m[1], m[2]]));
        const name = q.MetricStat?.Metric.MetricName ?? terms.MetricName;
        const dims: Record<string, string> = q.MetricStat
          ? Object.fromEntries((q.MetricStat.Metric.Dimensions ?? []).map((d) => [d.Name, d.Value]))
          : terms;
        const route = dims.VariantName ?? dims.CapacityClass ?? dims.TargetGroup ?? dims.PodName;
        const points = Array.from({ length: slots }, (_, i) => ({
          t: input.StartTime + i * period, v: name ? moment.metric(name, route, i, slots) : null,
        }))
          .filter((p) => p.v !== null);
        return { Id: q.Id, Timestamps: points.map((p) => p.t), Values: points.map((p) => p.v), StatusCode: 'Complete' };
      }),
    },
  };
}

function once(moment: Moment, call: CapturedCall): Reply | undefined {
  const key = `${call.service}:${call.operation}`;
  if (moment.faults?.delete(key)) return fault(call.service === 'elasticloadbalancing' ? 'Throttling' : 'ThrottlingException', 400, 'Rate exceeded');
  const denied = moment.deny?.[key];
  return denied ? fault(denied.code, denied.status, 'not authorized') : undefined;
}

async function runTicks(environment: Record<string, string>, world: (call: CapturedCall) => Reply, ticks: number[]) {
  const endpoint = new RecordingEndpoint(world);
  await endpoint.start();
  const results: Array<{ ok: boolean; result?: unknown; error?: string }> = [];
  const lines: string[] = [];
  try {
    await withEnvironment({ ...endpoint.sdkEnvironment(REGION), ...environment }, async () => {
      const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
      try {
        for (const now of ticks) {
          jest.spyOn(Date, 'now').mockReturnValue(now);
          // A fresh module per tick: clients and configuration are cached per execution environment.
          const { handler } = jest.requireActual<ReconcilerModule>('../../lambda/reconciler');
          jest.resetModules();
          try {
            results.push({ ok: true, result: await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' }) });
          } catch (e) {
            results.push({ ok: false, error: (e as Error).message });
          }
        }
      } finally {
        log.mockRestore();
        jest.restoreAllMocks();
      }
    });
  } finally {
    await endpoint.stop();
  }
  return { results, exchanges: endpoint.exchanges, lines };
}

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 11, 1, 12, 0, 30);

describe('reconciler permissions on SageMaker (examples/sagemaker-llm, real SDK against 127.0.0.1)', () => {
  const app = new App();
  const stack = new SageMakerLlmStack(app, 'SageMakerLlm', { env: { account: ACCOUNT, region: REGION } });
  const template = Template.fromStack(stack).toJSON();
  const { roleId, environment } = reconcilerOf(template);
  const resources = template.Resources as Resources;
  const endpointName = String(Object.values(resources).find((r) => r.Type === 'AWS::SageMaker::Endpoint')!.Properties.EndpointName);
  const variants = (Object.values(resources).find((r) => r.Type === 'AWS::SageMaker::EndpointConfig')!.Properties.ProductionVariants as Array<{
    VariantName: string; InstancePools?: Array<{ InstanceType: string }>;
  }>);

  test('steady state, shortage, floors, return and faults: every call allowed, nothing else granted', async () => {
    let moment: Moment;
    const written: unknown[] = [];
    const world = (call: CapturedCall): Reply => {
      const injected = once(moment, call);
      if (injected) return injected;
      switch (`${call.service}:${call.operation}`) {
        case 'sagemaker:DescribeEndpoint':
          return { output: {
            EndpointName: endpointName, EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${endpointName.toLowerCase()}`, EndpointStatus: 'InService',
            CreationTime: 0, LastModifiedTime: 0,
            ProductionVariants: variants.map((v) => ({
              VariantName: v.VariantName, CurrentWeight: moment.weights[v.VariantName], DesiredWeight: moment.weights[v.VariantName],
              CurrentInstanceCount: moment.replicas[v.VariantName].ready, DesiredInstanceCount: moment.replicas[v.VariantName].desired,
              // As rendered: a variant of one class has no pools (a plain InstanceType), and DescribeEndpoint lists none.
              ...(v.InstancePools
                ? { InstancePools: [{ InstanceType: v.InstancePools[0].InstanceType, CurrentInstanceCount: moment.replicas[v.VariantName].ready }] }
                : {}),
            })),
          } };
        case 'sagemaker:UpdateEndpointWeightsAndCapacities':
          written.push(call.input);
          return { output: { EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${endpointName.toLowerCase()}` } };
        case 'application-autoscaling:DescribeScalableTargets':
          // Every variant's scalable target, bounded as the example registers it (wide enough for every floor here).
          return { output: { ScalableTargets: ((call.input.ResourceIds ?? []) as string[]).map((id) => ({
            ServiceNamespace: 'sagemaker', ResourceId: id, ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
            MinCapacity: 1, MaxCapacity: 20, RoleARN: `arn:aws:iam::${ACCOUNT}:role/scaling`, CreationTime: 0,
          })) } };
        case 'monitoring:GetMetricData': return metricData(call, moment);
        default: return fault('UnknownOperationException', 400);
      }
    };
    const [preferred, fallback] = variants.map((v) => v.VariantName);
    const invocations = (route: string | undefined) => (route === preferred ? 1200 : 30);
    const steady: Moment = {
      weights: { [preferred]: 50, [fallback]: 50 },
      replicas: { [preferred]: { ready: 5, desired: 5 }, [fallback]: { ready: 1, desired: 1 } },
      metric: (name, route) => (name === 'Invocations' ? invocations(route) : name === 'PolicyMode' ? 0 : null),
    };
    // Shortage: the preferred variant wants 8 instances and has 2, for longer than the provisioning grace.
    const short = { [preferred]: { ready: 2, desired: 8 }, [fallback]: { ready: 1, desired: 1 } };
    const shortage = (mode: (slot: number, slots: number) => number | null): Moment => ({
      weights: { [preferred]: 98, [fallback]: 2 },
      replicas: short,
      metric: (name, route, slot, slots) => {
        if (name === 'Invocations') return invocations(route);
        if (name === 'ReadyReplicas') return short[route!]?.ready ?? null;
        if (name === 'DesiredReplicas') return short[route!]?.desired ?? null;
        if (name === 'PolicyMode') return mode(slot, slots);
        return null;
      },
    });
    // Back: capacity mode for the whole window, the preferred variant healthy again throughout.
    const healthy = { [preferred]: { ready: 8, desired: 8 }, [fallback]: { ready: 6, desired: 6 } };
    const back = (weights: Record<string, number>, faults: string[] = [], deny: Moment['deny'] = {}): Moment => ({
      weights,
      replicas: healthy,
      metric: (name, route) => {
        if (name === 'Invocations') return invocations(route);
        if (name === 'ReadyReplicas') return healthy[route!]?.ready ?? null;
        if (name === 'DesiredReplicas') return healthy[route!]?.desired ?? null;
        if (name === 'PolicyMode') return 1;
        return null;
      },
      faults: new Set(faults),
      deny,
    });
    const results: unknown[] = [];
    const exchanges: Parameters<typeof permissionReport>[0][number][] = [];
    let lastTick: string[] = [];
    const phases: Array<[Moment | (() => Moment), number]> = [
      [steady, T0],
      [shortage(() => 0), T0 + MINUTE],
      [() => ({ ...shortage((slot, slots) => (slot >= slots - 2 ? 1 : 0)), weights: lastWeights() }), T0 + 2 * MINUTE],
      [() => back(lastWeights()), T0 + 30 * MINUTE],
      // Faults: a throttled read of each kind (retried), then a write the service refuses (the run fails, loudly).
      [{ ...steady, faults: new Set(['monitoring:GetMetricData', 'sagemaker:DescribeEndpoint']),
        deny: { 'sagemaker:UpdateEndpointWeightsAndCapacities': { code: 'AccessDeniedException', status: 400 } } }, T0 + 31 * MINUTE],
    ];
    function lastWeights(): Record<string, number> {
      type Write = { DesiredWeightsAndCapacities: Array<{ VariantName: string; DesiredWeight?: number }> };
      const w = [...(written as Write[])].reverse().find((x) => x.DesiredWeightsAndCapacities[0].DesiredWeight !== undefined)!;
      return Object.fromEntries(w.DesiredWeightsAndCapacities.map((d) => [d.VariantName, d.DesiredWeight ?? 0]));
    }
    for (const [phase, now] of phases) {
      moment = typeof phase === 'function' ? phase() : phase;
      const run = await runTicks(environment, world, [now]);
      results.push(...run.results);
      exchanges.push(...run.exchanges);
      lastTick = run.exchanges.map((e) => `${e.call.service}:${e.call.operation}`);
    }
    // What happened: a weight write in steady state, the move to capacity mode, a replica floor, the return, a failed write.
    // Each tick is a cold start, which holds its period's ramp step (`stepAssumed`): the return writes no weights.
    expect(results).toEqual([
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: true, result: expect.objectContaining({ action: 'applied', detail: expect.stringMatching(/replica floor/) }) },
      { ok: true, result: expect.objectContaining({ action: 'unchanged' }) },
      { ok: false, error: expect.stringMatching(/AccessDenied/) },
    ]);
    const writes = written as Array<{ DesiredWeightsAndCapacities: Array<Record<string, unknown>> }>;
    expect(writes.some((w) => w.DesiredWeightsAndCapacities.some((d) => 'DesiredInstanceCount' in d))).toBe(true);
    expect(writes.filter((w) => w.DesiredWeightsAndCapacities.every((d) => 'DesiredWeight' in d)).length).toBeGreaterThanOrEqual(2);
    // Each throttled read was retried once; the refused write was not retried (a denial is final).
    expect(lastTick.filter((o) => o === 'monitoring:GetMetricData')).toHaveLength(2);
    expect(lastTick.filter((o) => o === 'sagemaker:DescribeEndpoint')).toHaveLength(2);
    expect(lastTick.filter((o) => o === 'sagemaker:UpdateEndpointWeightsAndCapacities')).toHaveLength(1);
    const statements = roleStatements(template, roleId);
    const report = permissionReport(exchanges, statements, LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual([
      'application-autoscaling:DescribeScalableTargets', 'cloudwatch:GetMetricData', 'sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities',
    ]);
    // The check fails when a needed action is missing: the same calls against the role without the write action.
    const readOnly = statements.map((st) => ({ ...st, Action: [st.Action].flat().filter((a) => a !== 'sagemaker:UpdateEndpointWeightsAndCapacities') }));
    expect(permissionReport(exchanges, readOnly, LAMBDA_LOG_DELIVERY).denied)
      .toEqual([`sagemaker:UpdateEndpointWeightsAndCapacities arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${endpointName.toLowerCase()}`]);
  });
});

describe('reconciler permissions on an ALB listener (examples/eks-stable-diffusion, real SDK against 127.0.0.1)', () => {
  const app = new App();
  const stack = new EksStableDiffusionStack(app, 'EksStableDiffusion', { env: { account: ACCOUNT, region: REGION } });
  const template = Template.fromStack(stack).toJSON();
  const { roleId, environment } = reconcilerOf(template);
  const resources = template.Resources as Resources;
  const resolve = resolver(template);
  const [listenerId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::ElasticLoadBalancingV2::Listener')!;
  const listenerArn = resolve({ Ref: listenerId }) as string;
  // The target groups the listener's default action forwards to (the example's second service is routed by a rule of
  // its own: its target groups are not in this action).
  type Forward = { ForwardConfig?: { TargetGroups: Array<{ TargetGroupArn: { Ref: string } }> } };
  const forwarded = new Set((resources[listenerId].Properties!.DefaultActions as Forward[])
    .flatMap((a) => a.ForwardConfig?.TargetGroups ?? []).map((tg) => tg.TargetGroupArn.Ref));
  const targetGroups = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::ElasticLoadBalancingV2::TargetGroup' && forwarded.has(id)).map(([id]) => ({
    arn: resolve({ Ref: id }) as string, fullName: resolve({ 'Fn::GetAtt': [id, 'TargetGroupFullName'] }) as string,
  }));

  test('steady state, shortage, return and faults: every call allowed, nothing else granted', async () => {
    // Every phase starts from weights no policy would choose, so that each decision is written.
    const offPlan = () => Object.fromEntries(targetGroups.map((tg, i) => [tg.arn, i === 0 ? 10 : 40]));
    let weights: Record<string, number> = offPlan();
    let moment: Moment;
    const world = (call: CapturedCall): Reply => {
      const injected = once(moment, call);
      if (injected) return injected;
      switch (`${call.service}:${call.operation}`) {
        case 'elasticloadbalancing:DescribeListeners':
          return { output: { Listeners: [{ ListenerArn: listenerArn, Port: 80, Protocol: 'HTTP', DefaultActions: [{
            Type: 'forward', Order: 1, ForwardConfig: { TargetGroups: targetGroups.map((tg) => ({ TargetGroupArn: tg.arn, Weight: weights[tg.arn] })) },
          }] }] } };
        case 'elasticloadbalancing:ModifyListener': {
          const p = call.input as Record<string, string>;
          const next: Record<string, number> = {};
          for (const [k, v] of Object.entries(p)) {
            const m = /^(DefaultActions\.member\.\d+\.ForwardConfig\.TargetGroups\.member\.\d+)\.TargetGroupArn$/.exec(k);
            if (m) next[v] = Number(p[`${m[1]}.Weight`]);
          }
          weights = next;
          return { output: { Listeners: [{ ListenerArn: listenerArn }] } };
        }
        case 'elasticloadbalancing:DescribeTargetHealth':
          return { output: { TargetHealthDescriptions: [1, 2].map((n) => ({ Target: { Id: `10.0.0.${n}`, Port: 8080 }, TargetHealth: { State: 'healthy' } })) } };
        case 'monitoring:GetMetricData': return metricData(call, moment);
        default: return fault('UnknownOperationException', 400);
      }
    };
    // The preferred class is inf2 (the example's first): its target group, Deployment and NodePool all carry its name.
    const preferred = (name: string, route: string | undefined) => (route ?? name).includes('inf2');
    const table = (o: { desiredPreferred: number; capacityErrors: (slot: number, slots: number) => number; mode: number }): Moment['metric'] =>
      (name, route, slot, slots) => {
        const p = preferred(name, route);
        if (name === 'RequestCount') return p ? 600 : 10;
        if (name === 'HealthyHostCount') return 2;
        if (name === 'replicas_desired') return p ? o.desiredPreferred : 2;
        if (name.startsWith('InsufficientCapacity/')) return p ? o.capacityErrors(slot, slots) : 0;
        if (name === 'PolicyMode') return o.mode;
        if (name === 'HTTPCode_Target_5XX_Count') return 0;
        return null;
      };
    const steady: Moment = { weights: {}, replicas: {}, metric: table({ desiredPreferred: 2, capacityErrors: () => 0, mode: 0 }) };
    const shortage: Moment = { weights: {}, replicas: {}, metric: table({ desiredPreferred: 6, capacityErrors: () => 2, mode: 0 }) };
    const back: Moment = { weights: {}, replicas: {}, metric: table({ desiredPreferred: 2, capacityErrors: () => 0, mode: 1 }) };
    const results: unknown[] = [];
    const exchanges: Parameters<typeof permissionReport>[0][number][] = [];
    let lastTick: string[] = [];
    const modes: unknown[] = [];
    const phases: Array<[Moment, number]> = [
      [steady, T0],
      [shortage, T0 + MINUTE],
      [back, T0 + 30 * MINUTE],
      // Faults: throttled reads (retried), then a write the service refuses from weights the policy wants to change.
      [{ ...steady, faults: new Set(['elasticloadbalancing:DescribeListeners', 'monitoring:GetMetricData']),
        deny: { 'elasticloadbalancing:ModifyListener': { code: 'AccessDenied', status: 403 } } }, T0 + 31 * MINUTE],
    ];
    for (const [phase, now] of phases) {
      weights = offPlan();
      moment = phase;
      const run = await runTicks(environment, world, [now]);
      results.push(...run.results);
      exchanges.push(...run.exchanges);
      lastTick = run.exchanges.map((e) => `${e.call.service}:${e.call.operation}`);
      // The mode each run's audit line records.
      modes.push(run.lines.map((l) => JSON.parse(l) as { audit?: string; mode?: string }).find((l) => l.audit !== undefined)?.mode);
    }
    // Each tick is a cold start, which holds its period's ramp step (`stepAssumed`): the return writes no weights.
    expect(results).toEqual([
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: true, result: expect.objectContaining({ action: 'unchanged' }) },
      { ok: false, error: expect.stringMatching(/AccessDenied/) },
    ]);
    // Throttled once, read again; and once more just before the write (the actions must be as the run read them).
    expect(lastTick.filter((o) => o === 'elasticloadbalancing:DescribeListeners')).toHaveLength(3);
    expect(lastTick.filter((o) => o === 'monitoring:GetMetricData')).toHaveLength(2);
    expect(lastTick.filter((o) => o === 'elasticloadbalancing:ModifyListener')).toHaveLength(1);
    // The shortage of the preferred class put the loop in capacity mode; the healthy hour after it brought it back.
    expect(modes.slice(0, 3)).toEqual(['cost', 'capacity', 'cost']);
    const report = permissionReport(exchanges, roleStatements(template, roleId), LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual([
      'cloudwatch:GetMetricData', 'elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:ModifyListener',
    ]);
  });
});

describe('reconciler permissions on a rule of a shared ALB listener (the example\'s chat service, real SDK against 127.0.0.1)', () => {
  const app = new App();
  const stack = new EksStableDiffusionStack(app, 'EksStableDiffusion', { env: { account: ACCOUNT, region: REGION } });
  const template = Template.fromStack(stack).toJSON();
  const { roleId, environment } = reconcilerOf(template, 'ChatReconcilerFunction');
  const resources = template.Resources as Resources;
  const resolve = resolver(template);
  const [ruleId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::ElasticLoadBalancingV2::ListenerRule')!;
  const ruleArn = resolve({ Ref: ruleId }) as string;
  const targetGroups = Object.entries(resources)
    .filter(([id, r]) => r.Type === 'AWS::ElasticLoadBalancingV2::TargetGroup' && id.startsWith('ChatTargetGroup'))
    .map(([id]) => resolve({ Ref: id }) as string);

  test('steady state, shortage and a refused write: DescribeRules and ModifyRule on its own rule, nothing on the listener', async () => {
    let weights: Record<string, number> = {};
    let moment: Moment;
    const world = (call: CapturedCall): Reply => {
      const injected = once(moment, call);
      if (injected) return injected;
      switch (`${call.service}:${call.operation}`) {
        case 'elasticloadbalancing:DescribeRules':
          return { output: { Rules: [{ RuleArn: ruleArn, Priority: '10', Actions: [{
            Type: 'forward', Order: 1, ForwardConfig: { TargetGroups: targetGroups.map((tg) => ({ TargetGroupArn: tg, Weight: weights[tg] })) },
          }] }] } };
        case 'elasticloadbalancing:ModifyRule': {
          const p = call.input as Record<string, string>;
          const next: Record<string, number> = {};
          for (const [k, v] of Object.entries(p)) {
            const m = /^(Actions\.member\.\d+\.ForwardConfig\.TargetGroups\.member\.\d+)\.TargetGroupArn$/.exec(k);
            if (m) next[v] = Number(p[`${m[1]}.Weight`]);
          }
          weights = next;
          return { output: { Rules: [{ RuleArn: ruleArn }] } };
        }
        case 'elasticloadbalancing:DescribeTargetHealth':
          return { output: { TargetHealthDescriptions: [1, 2].map((n) => ({ Target: { Id: `10.0.0.${n}`, Port: 8080 }, TargetHealth: { State: 'healthy' } })) } };
        case 'monitoring:GetMetricData': return metricData(call, moment);
        default: return fault('UnknownOperationException', 400);
      }
    };
    // The chat service's preferred class is l40s-vllm.
    const table = (o: { desiredPreferred: number; capacityErrors: number }): Moment['metric'] => (name, route) => {
      const p = (route ?? name).includes('l40s');
      if (name === 'RequestCount') return p ? 600 : 10;
      // The engines' token counter (tokens per minute; the chat classes publish it through the scrape).
      if (name === 'GeneratedTokens') return p ? 60_000 : 600;
      if (name === 'HealthyHostCount') return 2;
      if (name === 'replicas_desired') return p ? o.desiredPreferred : 2;
      if (name.startsWith('InsufficientCapacity/')) return p ? o.capacityErrors : 0;
      if (name === 'PolicyMode') return 0;
      if (name.startsWith('HTTPCode_Target_')) return 0;
      return null;
    };
    const steady: Moment = { weights: {}, replicas: {}, metric: table({ desiredPreferred: 2, capacityErrors: 0 }) };
    const shortage: Moment = { weights: {}, replicas: {}, metric: table({ desiredPreferred: 6, capacityErrors: 2 }) };
    const results: unknown[] = [];
    const exchanges: Parameters<typeof permissionReport>[0][number][] = [];
    const phases: Array<[Moment, number]> = [
      [steady, T0],
      [shortage, T0 + MINUTE],
      [{ ...steady, deny: { 'elasticloadbalancing:ModifyRule': { code: 'AccessDenied', status: 403 } } }, T0 + 31 * MINUTE],
    ];
    for (const [phase, now] of phases) {
      // Weights no policy would choose, so that each decision is written.
      weights = Object.fromEntries(targetGroups.map((tg, i) => [tg, i === 0 ? 10 : 90]));
      moment = phase;
      const run = await runTicks(environment, world, [now]);
      results.push(...run.results);
      exchanges.push(...run.exchanges);
    }
    expect(results).toEqual([
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: true, result: expect.objectContaining({ action: 'applied' }) },
      { ok: false, error: expect.stringMatching(/AccessDenied/) },
    ]);
    const written = exchanges.filter((e) => e.call.operation === 'ModifyRule').map((e) => (e.call.input as Record<string, string>).RuleArn);
    expect(new Set(written)).toEqual(new Set([ruleArn]));
    const statements = roleStatements(template, roleId);
    const report = permissionReport(exchanges, statements, LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual([
      'cloudwatch:GetMetricData', 'elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:ModifyRule',
    ]);
    // The check fails when the write is missing: the same calls against the role without ModifyRule.
    const readOnly = statements.map((st) => ({ ...st, Action: [st.Action].flat().filter((a) => a !== 'elasticloadbalancing:ModifyRule') }));
    expect(permissionReport(exchanges, readOnly, LAMBDA_LOG_DELIVERY).denied).toEqual([`elasticloadbalancing:ModifyRule ${ruleArn}`]);
  });
});
