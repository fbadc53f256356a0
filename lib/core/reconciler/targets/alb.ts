/**
 * An ALB listener on EKS as a routing target: the target-group weights of a forward action (the listener's default
 * action, or one rule's on a shared listener), one target group per capacity class. Replica floors are published:
 * the `ReplicaFloor` metric, which each class's KEDA ScaledObject reads through a second trigger (lib/eks).
 */
import { AWS_LATENCY_TO_MS, AwsDim, AwsMetrics, Metrics } from '../../metrics/contract';
import { deploymentReplicasMetric } from '../../metrics/aws-published';
import { applicationLoadBalancer } from '../../metrics/load-balancer';
import { karpenterCapacityErrorMetric } from '../../metrics/karpenter-capacity';
import { neighbour, type PermissionProbe } from '../../verify/probe';
import { HPA_CONTROLLER_DEFAULTS } from '../../platform/control-loop';
import { counterPerSecond } from '../config';
import { type AlbRoutingFacts } from '../routing-facts';
import { type ClassSignalProducers } from '../serving';
import { type ClassSignalSources, type Route, type RoutingTarget, type RouteObservation } from './kind';
import { isObject } from '../../validation/checker';
import { classMetric, objectEntries, policyClassOf, rejectionStatusOf } from './shared';

const TARGET = 'a target group with its capacity class';
const CLASS = 'the capacity class of the target group';

/**
 * Where an ALB target's weights live and the ELBv2 calls that read and write them: the listener's default actions
 * (DescribeListeners, ModifyListener), or, for a service routed by host or path on a shared listener, the actions of
 * its one rule (DescribeRules, ModifyRule; "To modify the default action, use ModifyListener", ELBv2 API ModifyRule).
 * IAM (Service Authorization Reference, list_elasticloadbalancingv2): both Describe calls take no resource type ("*");
 * ModifyListener is scoped to `listener/app*`, ModifyRule to `listener-rule/app*`.
 */
export interface AlbWeightsLocation {
  readonly arn: string;
  readonly read: 'DescribeListeners' | 'DescribeRules';
  readonly write: 'ModifyListener' | 'ModifyRule';
  /** "listener <arn>" or "listener rule <arn>", for messages. */
  readonly description: string;
}

/**
 * The call that reads each target group's live health (lambda/reconciler/targets/alb.ts): how many targets are healthy
 * now, which tells an emptied target group (ALB then publishes no HealthyHostCount) from a metric not yet published
 * (`emptyWhereUnpublished`, lib/core/reconciler/observe.ts). IAM: no resource type, no condition keys, so "*"
 * (Service Authorization Reference, list_elasticloadbalancingv2.html).
 */
export const ALB_TARGET_HEALTH_READ = 'DescribeTargetHealth';

export function albWeightsLocation(facts: AlbRoutingFacts): AlbWeightsLocation {
  return facts.ruleArn
    ? { arn: facts.ruleArn, read: 'DescribeRules', write: 'ModifyRule', description: `listener rule ${facts.ruleArn}` }
    : { arn: facts.listenerArn, read: 'DescribeListeners', write: 'ModifyListener', description: `listener ${facts.listenerArn}` };
}

function routes(facts: AlbRoutingFacts): Route[] {
  return facts.targets.map((t) => ({ name: t.class.name, classes: [t.class], maxReplicas: t.class.maxReplicas }));
}

function signalSources(config: Parameters<RoutingTarget<AlbRoutingFacts>['signalSources']>[0], periodSeconds: number): Record<string, ClassSignalSources> {
  const facts = config.facts;
  const perRequest = config.tokensPerRequest / periodSeconds;
  const out: Record<string, ClassSignalSources> = {};
  for (const t of facts.targets) {
    const name = t.class.name;
    // The contract's token counter of the class, as the EKS construct's scrape publishes it.
    const contractTokens = classMetric(Metrics.generatedTokens, config.service, name);
    const derivedTokens = config.contractTokenCounters?.includes(name) ? { generatedTokens: contractTokens } : {};
    const producers = { ...config.signals?.[name], ...derivedTokens };
    const alb = (metricName: string, stat: string) => ({
      namespace: AwsMetrics.alb.namespace,
      metricName,
      dimensions: { TargetGroup: t.targetGroupFullName, LoadBalancer: facts.loadBalancerFullName },
      stat,
    });
    const capacityErrors = producers?.capacityErrors
      ?? (config.karpenterCapacityErrors ? karpenterCapacityErrorMetric(config.clusterName ?? '', t.nodePoolName) : undefined);
    const status = rejectionStatusOf(producers);
    const rejected = (metricName: string) => ({ metric: alb(metricName, 'Sum'), scale: perRequest });
    out[name] = {
      // Pods are registered by TargetGroupBinding; healthy targets are pods whose readiness probe (model loaded) passes.
      readyReplicas: { metric: alb(AwsMetrics.alb.healthyHostCount, 'Minimum') },
      // ALB publishes no HealthyHostCount for a target group with no target left (cds-snc/forms-terraform#918): those
      // periods read the healthy targets the reconciler's runs counted and published (HealthyTargets).
      readyReplicasSeen: { metric: classMetric(Metrics.healthyTargets, config.service, name) },
      // Container Insights enhanced observability (the amazon-cloudwatch-observability add-on): PodName holds the
      // Deployment's name (lib/core/metrics/aws-published.ts).
      desiredReplicas: {
        metric: deploymentReplicasMetric(AwsMetrics.containerInsights.replicasDesired, config.clusterName ?? '', t.namespace, t.deploymentName),
      },
      ...(capacityErrors ? { capacityErrors: { metric: capacityErrors } } : {}),
      // Seconds to milliseconds.
      latencyP95Ms: { metric: alb(AwsMetrics.alb.targetResponseTime, 'p95'), scale: 1000 },
      // Tokens the server counted (Sum per period) to tokens per second, which excludes what it shed; without them,
      // RequestCount x mean tokens. RequestCount "includes only the requests with a response generated by a target"
      // (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html):
      // the 4XX/5XX a target answered are already in it, so demand must not add them again.
      ...(producers?.generatedTokens
        ? { servedTokensPerSecond: counterPerSecond(producers.generatedTokens, periodSeconds, producers.generatedTokensIntervalSeconds) }
        : { servedTokensPerSecond: { metric: alb(AwsMetrics.alb.requestCount, 'Sum'), scale: perRequest }, servedIncludesRejected: true }),
      rejectedTokensPerSecond: status === 'mixed'
        ? [rejected(AwsMetrics.alb.target4xx), rejected(AwsMetrics.alb.target5xx)]
        : rejected(status === '4xx' ? AwsMetrics.alb.target4xx : AwsMetrics.alb.target5xx),
    };
  }
  return out;
}

/**
 * The floor to publish so that the HPA acts on it. The floor trigger is an external metric with an AverageValue target
 * of 1, so the HPA's ratio is floor / current replicas, and a ratio within its tolerance is ignored: "if
 * tolerances.isWithin(usageRatio) { return currentReplicas }", with isWithin(r) = (1 - down) <= r <= (1 + up)
 * (kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go, GetExternalPerPodMetricReplicas). At 10 or
 * more replicas a floor of current + 1 is within 10% and would never be honoured; the smallest count the HPA acts on,
 * the least integer above current x 1.1, is published instead (a floor is a minimum: one replica more, never one
 * fewer). `desired` stands for the HPA's current replicas (the Deployment's replicas; Container Insights
 * replicas_desired).
 */
export function hpaHonouredFloor(floor: number, desired: number | null): number {
  if (desired === null || desired < 1 || floor <= desired) return floor;
  // Integer arithmetic in thousandths (the tolerance is 0.1, HPA_CONTROLLER_DEFAULTS): floor / desired <= 1 + tolerance
  // <=>  1000 x floor <= (1000 + 1000 x tolerance) x desired.
  const within = 1000 + Math.round(1000 * HPA_CONTROLLER_DEFAULTS.tolerance);
  return 1000 * floor <= within * desired ? Math.floor((within * desired) / 1000) + 1 : floor;
}

/**
 * The writer's calls (lambda/reconciler/targets/alb.ts: DescribeListeners and ModifyListener, or DescribeRules and
 * ModifyRule for a rule on a shared listener; albWeightsLocation above) and the ones it must not make.
 */
function writerProbes(facts: AlbRoutingFacts): PermissionProbe[] {
  const at = albWeightsLocation(facts);
  const other = at.write === 'ModifyRule' ? 'another rule (another service on the shared listener)' : 'another listener';
  return [
    { action: `elasticloadbalancing:${at.read}`, resource: '*', expect: 'allowed', why: 'reads the forward action (no resource-level permissions)' },
    {
      action: `elasticloadbalancing:${ALB_TARGET_HEALTH_READ}`, resource: '*', expect: 'allowed',
      why: 'reads how many targets are healthy (no resource-level permissions); denied, an emptied class holds the weights',
    },
    { action: `elasticloadbalancing:${at.write}`, resource: at.arn, expect: 'allowed', why: 'writes the target-group weights' },
    { action: `elasticloadbalancing:${at.write}`, resource: neighbour(at.arn), expect: 'denied', why: other },
    { action: 'elasticloadbalancing:DeleteListener', resource: facts.listenerArn, expect: 'denied', why: 'destructive' },
    ...(at.write === 'ModifyRule'
      ? [{ action: 'elasticloadbalancing:ModifyListener', resource: facts.listenerArn, expect: 'denied' as const, why: 'the shared listener is not the service\'s' }]
      : []),
    ...facts.targets.slice(0, 1).map((t): PermissionProbe => ({
      action: 'elasticloadbalancing:RegisterTargets', resource: t.targetGroupArn, expect: 'denied', why: 'targets are the load balancer controller\'s',
    })),
  ];
}

export const ALB_TARGET: RoutingTarget<AlbRoutingFacts> = {
  kind: 'alb',
  loadBalancer: (facts) => applicationLoadBalancer(facts.loadBalancerFullName, facts.ruleArn !== undefined),
  platform: 'eks',
  floors: 'published',
  routes,
  describeRoutes: (facts) => `target group(s) of ${albWeightsLocation(facts).description}`,
  describeTarget: (facts) => `ALB \`${facts.loadBalancerFullName}\` (EKS)`,
  servingMetrics: {
    namespace: AwsMetrics.alb.namespace,
    requests: AwsMetrics.alb.requestCount,
    serverErrors: AwsMetrics.alb.target5xx,
    clientErrors: AwsMetrics.alb.target4xx,
    latency: AwsMetrics.alb.targetResponseTime,
    latencyToMs: AWS_LATENCY_TO_MS.alb,
  },
  observedClasses: (facts) => facts.targets.map((t) => ({
    facts: t.class,
    awsDimensions: { [AwsDim.LOAD_BALANCER]: facts.loadBalancerFullName, [AwsDim.TARGET_GROUP]: t.targetGroupFullName },
  })),
  uniqueRouteNames: false,
  policyClasses: (facts, placement) => facts.targets.map((t) => policyClassOf(t.class.name, t.class, placement)),
  signalSources,
  classes: (facts) => objectEntries<AlbRoutingFacts['targets'][number]>(facts.targets, 'targets', TARGET)
    .flatMap((t) => (isObject(t.class) ? [t.class] : [])),
  checkFacts: (facts, c) => {
    c.cross('targets', Array.isArray(facts.targets) ? facts.targets.length : 0);
    objectEntries(facts.targets, 'targets', TARGET, c);
    // Indexed in the list as given, malformed entries included, so the path names the entry a person edited.
    (Array.isArray(facts.targets) ? facts.targets : []).forEach((t: unknown, i) => {
      const cls = isObject(t) ? (t as { class?: unknown }).class : {};
      if (!isObject(cls)) c.add(`targets[${i}].class`, `is ${JSON.stringify(cls)}; allowed: ${CLASS}`);
    });
    // The writer calls ModifyRule on it (lambda/reconciler/targets/alb.ts): a string or absent, never empty.
    if (facts.ruleArn !== undefined && (typeof facts.ruleArn !== 'string' || facts.ruleArn.length === 0)) {
      c.add('ruleArn', `is ${JSON.stringify(facts.ruleArn)}; allowed: a listener rule ARN, or absent (the listener's default action)`);
    }
  },
  desiredReplicasFrom: 'container-insights',
  replicaWindow: 'published',
  // The HPA lowers the desired count of a Deployment whose load fell while pods were pending: not a refusal.
  scaleOutsRollBack: false,
  publishesHealthyTargets: true,
  // ModifyListener and ModifyRule are not refused while an earlier change settles: a run never waits for the listener.
  writableAgain: () => undefined,
  // A listener has no configuration of its own to be replaced: its actions are read and written as they are.
  otherConfiguration: () => undefined,
  configurationOf: () => undefined,
  autoscalerFloor: hpaHonouredFloor,
  routedProducers: (serving) => {
    const signals: Record<string, ClassSignalProducers> = {};
    for (const t of serving.routing.targets) {
      const p = serving.signals.classes[t.class.name];
      const entry: ClassSignalProducers = {
        ...(p?.capacityErrors ? { capacityErrors: p.capacityErrors } : {}),
        ...(p?.generatedTokens ? { generatedTokens: p.generatedTokens } : {}),
        ...(p?.generatedTokens && p.generatedTokensIntervalSeconds ? { generatedTokensIntervalSeconds: p.generatedTokensIntervalSeconds } : {}),
        ...(p?.rejectionStatus === '4xx' ? { rejectionStatus: '4xx' as const } : {}),
      };
      if (Object.keys(entry).length > 0) signals[t.class.name] = entry;
    }
    // Every target's capacity errors the Karpenter filter metric of its NodePool: say so in one flag instead of spelling
    // each out, to keep the configuration within Lambda's 4 KB environment.
    const cluster = serving.signals.containerInsightsClusterName;
    const derived = (t: AlbRoutingFacts['targets'][number]) => JSON.stringify(karpenterCapacityErrorMetric(cluster ?? '', t.nodePoolName));
    const karpenter = cluster !== undefined
      && serving.routing.targets.every((t) => JSON.stringify(signals[t.class.name]?.capacityErrors) === derived(t));
    // Likewise the token counters that are exactly the contract's metric of their class.
    const counters = Object.entries(signals)
      .filter(([name, p]) => p.generatedTokens
        && JSON.stringify(p.generatedTokens) === JSON.stringify(classMetric(Metrics.generatedTokens, serving.service, name)))
      .map(([name]) => name);
    const compact: Record<string, ClassSignalProducers> = {};
    for (const [name, { capacityErrors, generatedTokens, ...rest }] of Object.entries(signals)) {
      const entry = {
        ...(capacityErrors && !karpenter ? { capacityErrors } : {}),
        ...(generatedTokens && !counters.includes(name) ? { generatedTokens } : {}),
        ...rest,
      };
      if (Object.keys(entry).length > 0) compact[name] = entry;
    }
    return {
      signals: compact,
      ...(karpenter ? { karpenterCapacityErrors: true } : {}),
      ...(counters.length > 0 ? { contractTokenCounters: counters } : {}),
    };
  },
  observations: (facts, _target, latest) => {
    // EKS: the replica counts are the newest of the windows just read (ALB healthy hosts, a gap read from HealthyTargets
    // or, empty now, as 0; Container Insights desired); republishing them gives the contract's ReadyReplicas and
    // DesiredReplicas one source on both paths, aligned with each other for the ReplicaShortage alarm (the live health
    // count is published apart, as HealthyTargets: `runRecords`).
    const out: Record<string, RouteObservation> = {};
    for (const { class: cls } of facts.targets) {
      const seen = latest[cls.name];
      if (seen && seen.ready !== null && seen.desired !== null) out[cls.name] = { ready: seen.ready, desired: seen.desired };
    }
    return out;
  },
  // The reconciler owns only its target groups' weights: any other target group in the forward action is written
  // back as read (lambda/reconciler/targets/alb.ts), so there is no stray route to zero here.
  plannedWrite: (_facts, decision) => (decision.weightsChanged ? { kind: 'weights', weights: decision.weights, zeroed: [] } : undefined),
  writerProbes,
  // A class is its own route here; its capacity is its Karpenter NodePool.
  capacityHolder: (facts, className) => {
    const t = className ? facts.targets.find((x) => x.class.name === className) : facts.targets.find((x) => x.class.preferenceRank === 0);
    if (!t) throw new Error(`no class ${className ?? 'of preference rank 0'}; classes: ${facts.targets.map((x) => x.class.name).join(', ')}`);
    return {
      kind: 'nodepool', routedClass: t.class.name, nodePool: t.nodePoolName,
      namespace: t.namespace, deploymentName: t.deploymentName, maxReplicas: t.class.maxReplicas,
    };
  },
};

