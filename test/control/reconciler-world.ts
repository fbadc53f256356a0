/**
 * The AWS world both reconciler handler suites run against (reconciler-handler.test.ts, reconciler-faults.test.ts):
 * aws-sdk-client-mock clients, a fixed clock, GetMetricData answered from per-class series, and DescribeEndpoint
 * answers. Each test file gets its own instances (jest isolates modules per file).
 */
import {
  ApplicationAutoScalingClient, DescribeScalableTargetsCommand, type DescribeScalableTargetsCommandInput,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { DescribeTargetHealthCommand, ElasticLoadBalancingV2Client, TargetHealthStateEnum } from '@aws-sdk/client-elastic-load-balancing-v2';
import { type DescribeEndpointCommandOutput, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { buildQueryBatch } from '../../lib/core/reconciler/io';
import { type RoutedClassFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';

export const cw = mockClient(CloudWatchClient);
export const sm = mockClient(SageMakerClient);
export const elb = mockClient(ElasticLoadBalancingV2Client);
export const aas = mockClient(ApplicationAutoScalingClient);
export const clients = {
  cloudwatch: new CloudWatchClient({}), sagemaker: new SageMakerClient({}), elbv2: new ElasticLoadBalancingV2Client({}),
  autoScaling: new ApplicationAutoScalingClient({}),
};

/**
 * Answers DescribeScalableTargets with a scalable target for each requested variant resource id, bounded as given
 * (by variant name; a variant given `null` has none). @default every variant 1..10 (the facts' maxReplicas)
 */
export function scalableTargets(bounds: Record<string, { min: number; max: number } | null> = {}): void {
  aas.on(DescribeScalableTargetsCommand).callsFake(scalableTargetsAnswer(bounds));
}

/** The DescribeScalableTargets answer `scalableTargets` gives. */
export function scalableTargetsAnswer(bounds: Record<string, { min: number; max: number } | null> = {}) {
  return (input: DescribeScalableTargetsCommandInput) => ({
    ScalableTargets: (input.ResourceIds ?? []).flatMap((id) => {
      const variant = id.split('/')[3];
      const b = variant in bounds ? bounds[variant] : { min: 1, max: 10 };
      return b ? [{
        ServiceNamespace: 'sagemaker', ResourceId: id, ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        MinCapacity: b.min, MaxCapacity: b.max, RoleARN: 'arn:aws:iam::123456789012:role/scaling', CreationTime: new Date(0),
      }] : [];
    }),
  });
}

/** Resets every mock (call in beforeEach); every variant has a scalable target bounded 1..10. */
export function resetWorld(): void {
  cw.reset();
  sm.reset();
  elb.reset();
  aas.reset();
  scalableTargets();
  // Every target group with two healthy pods, unless a test says otherwise.
  const healthy = { TargetHealth: { State: TargetHealthStateEnum.HEALTHY } };
  elb.on(DescribeTargetHealthCommand).resolves({ TargetHealthDescriptions: [healthy, healthy] });
}

/**
 * Each ALB target group with this many healthy pods now (DescribeTargetHealth), by class: the live count the policy
 * routes on, so a world whose published HealthyHostCount says 3 says 3 here too unless a test means otherwise.
 */
export function targetsHealthy(counts: Readonly<Record<string, number>>): void {
  const healthy = { TargetHealth: { State: TargetHealthStateEnum.HEALTHY } };
  // By the target group's name (arn:...:targetgroup/<name>/<id>): the listeners of these tests carry their own ids.
  const count = (arn = '') => counts[arn.split(':targetgroup/')[1]?.split('/')[0] ?? ''] ?? 0;
  elb.on(DescribeTargetHealthCommand).callsFake((input: { TargetGroupArn?: string }) => ({
    TargetHealthDescriptions: Array.from({ length: count(input.TargetGroupArn) }, () => healthy),
  }));
}

export const cls = (name: string, rank: number, instanceType: string, tps: number, usd: number, allowSensitive = true): RoutedClassFacts => ({
  name, preferenceRank: rank, tokensPerSecondPerReplica: tps, safeConcurrency: 8, usdPerReplicaHour: usd, allowSensitive, maxReplicas: 10,
  instanceType,
});

/** A SageMaker endpoint with a preferred (inf2, 300 tok/s) and a fallback (g5, 250 tok/s) variant. */
export const ENDPOINT: SageMakerRoutingFacts = {
  kind: 'sagemaker',
  endpointName: 'llm',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  variants: [
    { variantName: 'preferred', classes: [cls('inf2', 0, 'ml.inf2.xlarge', 300, 0.76)] },
    { variantName: 'fallback', classes: [cls('g5', 1, 'ml.g5.xlarge', 250, 1.0)] },
  ],
};

// 12:00:30 UTC: signals end at 11:58 (2-minute delay), the window starts at 11:48, the own history runs to the end of the
// current period (12:01), so a decision an earlier run recorded at 12:00 is seen.
export const NOW_MS = Date.UTC(2026, 10, 30, 12, 0, 30);
export const START = Date.UTC(2026, 10, 30, 11, 48) / 1000;
export const SLOTS = 12;
/** Invocations per minute that make `tokens` tokens/s at 200 tokens per request. */
export const perMinute = (tokens: number) => (tokens * 60) / 200;
export const fill = (value: number | null, n = SLOTS) => Array.from({ length: n }, () => value);

export type Series = Array<number | null>;
export type ClassSeries = Partial<Record<
  'readyReplicas' | 'readyReplicasSeen' | 'desiredReplicas' | 'pendingScaleOut' | 'capacityErrors' | 'latencyP95Ms' | 'servedTokensPerSecond'
  | 'rejectedTokensPerSecond',
  Series
>>;

/** A class's series; without `pendingScaleOut`, the one a reconciler running once a minute publishes: desired - ready. */
function classSeries(c: ClassSeries | undefined, signal: keyof ClassSeries): Series | undefined {
  if (signal !== 'pendingScaleOut' || !c || c.pendingScaleOut) return c?.[signal];
  const { readyReplicas: r, desiredReplicas: d } = c;
  return r && d ? r.map((v, i) => (v === null || d[i] === null || d[i] === undefined ? null : Math.max(0, d[i]! - v))) : undefined;
}
export interface World {
  mode?: Series;
  ramping?: Series;
  /** CapacityEventEntries: the entries of the capacity event under way the reconciler published. */
  eventEntries?: Series;
  /** The ReplicaFloor the reconciler published earlier, by routed class (EKS only reads it back). */
  floors?: Record<string, Series>;
  classes: Record<string, ClassSeries>;
}

/** Answers GetMetricData from per-class series (raw metric values, one per minute from START), checking the batch asked. */
export function serveMetrics(config: ReconcilerConfig, world: World): void {
  const batch = buildQueryBatch(signalPlan(config, 60), 60);
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
    expect(input.MetricDataQueries).toEqual(batch.queries);
    return {
      MetricDataResults: batch.index.map((e) => {
        const series: Series | undefined = e.signal === 'mode' ? world.mode
          : e.signal === 'ramping' ? world.ramping
            : e.signal === 'eventEntries' ? world.eventEntries
              : e.signal === 'floor' ? world.floors?.[e.className!]
                : classSeries(world.classes[e.className!], e.signal);
        const points = (series ?? []).map((v, i) => ({ v, ts: new Date((START + i * 60) * 1000) })).filter((p) => p.v !== null);
        return { Id: e.id, Timestamps: points.map((p) => p.ts), Values: points.map((p) => p.v as number), StatusCode: 'Complete' };
      }),
    };
  });
}

export type VariantState = { name: string; weight: number; ready: number; desired: number; type: string };

/**
 * A DescribeEndpoint answer for ENDPOINT with these variants. ENDPOINT's variants have one class each, which
 * SageMakerCapacityEndpoint renders with a plain InstanceType: their summaries list no `InstancePools` (`type` unused).
 * With `pools`, each lists a one-entry `InstancePools` of its `type` instead (an endpoint configuration written by hand
 * or by a version of the library that rendered pools for every variant).
 */
export function endpoint(status: string, variants: VariantState[], shape: 'plain' | 'pools' = 'plain'): DescribeEndpointCommandOutput {
  return {
    $metadata: {},
    EndpointName: ENDPOINT.endpointName,
    EndpointArn: ENDPOINT.endpointArn,
    EndpointStatus: status as 'InService',
    CreationTime: new Date(0),
    LastModifiedTime: new Date(0),
    ProductionVariants: variants.map((v) => ({
      VariantName: v.name,
      CurrentWeight: v.weight,
      DesiredWeight: v.weight,
      CurrentInstanceCount: v.ready,
      DesiredInstanceCount: v.desired,
      ...(shape === 'pools' ? { InstancePools: [{ InstanceType: v.type as 'ml.g5.xlarge', CurrentInstanceCount: v.ready }] } : {}),
    })),
  };
}

export const healthyHistory = (ready: number) => ({ readyReplicas: fill(ready), desiredReplicas: fill(ready) });

/** A class behind an ALB target group (its Deployment and NodePool named after it). */
export const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0001`;
export const albTarget = (name: string, rank: number, tps: number, usd: number, allowSensitive = true) => ({
  class: cls(name, rank, `${name}.xlarge`, tps, usd, allowSensitive),
  targetGroupArn: tg(name),
  targetGroupFullName: `targetgroup/${name}/0001`,
  namespace: 'serving',
  deploymentName: name,
  nodePoolName: name,
});
/** What every reconciler configuration of the handler suites shares: the service, its request shape, the delay. */
const SERVICE = { placement: {}, policy: {}, service: 'chat', tokensPerRequest: 200, metricDelaySeconds: 120 };
/** The SageMaker endpoint's reconciler (ENDPOINT). */
export const SM: ReconcilerConfig = { facts: ENDPOINT, ...SERVICE };
/** An EKS listener forwarding to inf2 and g6 (Karpenter capacity errors off: tests turn them on). */
export const ALB: ReconcilerConfig = {
  facts: {
    kind: 'alb',
    listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/abc/def',
    loadBalancerFullName: 'app/llm/abc',
    targets: [albTarget('inf2', 0, 300, 0.76), albTarget('g6', 1, 200, 0.8)],
  },
  ...SERVICE,
  clusterName: 'prod',
};

/** DescribeListeners of that listener forwarding with `weights` (by class). */
export const listener = (weights: Record<string, number>) => ({
  Listeners: [{
    ListenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/abc/def',
    DefaultActions: [{ Type: 'forward' as const, ForwardConfig: { TargetGroups: Object.entries(weights).map(([n, w]) => ({ TargetGroupArn: tg(n), Weight: w })) } }],
  }],
});
