/**
 * A SageMaker real-time endpoint as a routing target: one weight per production variant, each variant up to five
 * instance pools (capacity classes). Replica floors are capacity writes: the reconciler raises a variant's desired
 * instance count itself (UpdateEndpointWeightsAndCapacities), after its weights.
 */
import { AWS_LATENCY_TO_MS, AwsDim, AwsMetrics, type MetricSpec, Metrics } from '../../metrics/contract';
import { sageMakerVariantDimensions, sageMakerVariantMetric } from '../../metrics/aws-published';
import { maxOfSearches, searchExpression } from '../../metrics/search';
import { type PolicyClass, type PolicyDecision } from '../../policy/types';
import { neighbour, type PermissionProbe } from '../../verify/probe';
import { counterPerSecond, type PlacementOptions, type SignalSource } from '../config';
import { type RoutedClassFacts, type SageMakerRoutingFacts } from '../routing-facts';
import { type ClassSignalProducers } from '../serving';
import { type ClassSignalSources, type Route, type RoutingTarget, type RoutingWrite, type TargetState } from './kind';
import { hasInstancePools } from './sagemaker-instances';
import { classMetric, objectEntries, placementAllows, policyClassOf, rejectionStatusOf, stray } from './shared';

const VARIANT = 'a production variant with its instance pools';
const POOL = 'an instance pool (capacity class)';

function routes(facts: SageMakerRoutingFacts): Route[] {
  return facts.variants.map((v) => ({
    name: v.variantName,
    classes: v.classes,
    // The variant's instances are those of all its pools, each bounded by its own quota, and all of them by the
    // variant's scaling maximum where the facts name it.
    maxReplicas: Math.min(v.maxInstances ?? Infinity, v.classes.reduce((s, c) => s + c.maxReplicas, 0)),
  }));
}

/**
 * A variant as one routed class. Its replicas are the instances of all its pools; envelope and price are the
 * instance-weighted means over the pools that have instances (a pool of the wrong kind still counts for what it
 * really serves), otherwise those of its first pool. A variant may take sensitive traffic only if every pool may:
 * SageMaker picks the pool, not us.
 */
function variantClass(route: Route, placement: PlacementOptions, counts: Readonly<Record<string, number>>, maxReplicas: number): PolicyClass {
  const pools = route.classes;
  const weighted = pools.map((c) => ({ c, n: Math.max(0, counts[c.instanceType] ?? 0) }));
  const instances = weighted.reduce((s, p) => s + p.n, 0);
  const mean = (f: (c: RoutedClassFacts) => number) =>
    instances > 0 ? weighted.reduce((s, p) => s + f(p.c) * p.n, 0) / instances : f(pools[0]);
  return {
    ...policyClassOf(route.name, pools[0], placement),
    preferenceRank: Math.min(...pools.map((c) => c.preferenceRank)),
    tokensPerSecondPerReplica: mean((c) => c.tokensPerSecondPerReplica),
    usdPerReplicaHour: mean((c) => c.usdPerReplicaHour),
    placementAllowed: pools.every((c) => placementAllows(c, placement)),
    maxReplicas,
  };
}

/**
 * SageMaker's endpoint metrics with instance pools (developer guide, "Deploy to multiple instance types with instance
 * pools", section "Monitoring instance pools", https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html):
 * "Existing CloudWatch metrics that are aggregated across all instances in a variant — such as Invocations,
 * ModelLatency, and CPUUtilization — continue to work the same way when you use instance pools", and "In addition,
 * CloudWatch publishes these metrics with an InstanceType dimension". So every variant is read on its variant-level
 * series [EndpointName, VariantName]; the per-InstanceType series are read only where the variant has several pools
 * and a per-type statistic is needed (the p95 latency). A variant with one class has no pools (the construct renders a
 * plain InstanceType for it), and the InstanceType series is documented only for variants that use pools.
 */
function signalSources(config: Parameters<RoutingTarget<SageMakerRoutingFacts>['signalSources']>[0], periodSeconds: number): Record<string, ClassSignalSources> {
  const facts = config.facts;
  const own = (variant: string, spec: MetricSpec): SignalSource => ({ metric: classMetric(spec, config.service, variant) });
  const perRequest = config.tokensPerRequest / periodSeconds;
  const out: Record<string, ClassSignalSources> = {};
  for (const v of facts.variants) {
    const producers = config.signals?.[v.variantName];
    const variantMetric = (metricName: string, stat: string) => sageMakerVariantMetric(metricName, facts.endpointName, v.variantName, stat);
    // Requests of all the variant's instances, whatever their type.
    const count = (metricName: string): SignalSource => ({ metric: variantMetric(metricName, 'Sum'), scale: perRequest });
    const latencySearch = (perInstanceType: boolean) =>
      variantSearch(facts.endpointName, v.variantName, AwsMetrics.sageMaker.modelLatency, 'p95', periodSeconds, perInstanceType);
    // Rejected demand is what the pools shed, in the status class their engines answer overload with (TGI 429, the
    // others 503). A variant whose pools shed differently reads both: the two queries are summed per period.
    const status = rejectionStatusOf(producers);
    const rejected = [
      ...(status !== '5xx' ? [count(AwsMetrics.sageMaker.invocation4xxErrors)] : []),
      ...(status !== '4xx' ? [count(AwsMetrics.sageMaker.invocation5xxErrors)] : []),
    ];
    out[v.variantName] = {
      // History of what DescribeEndpoint showed on earlier runs; the newest value comes from DescribeEndpoint itself.
      readyReplicas: own(v.variantName, Metrics.readyReplicas),
      desiredReplicas: own(v.variantName, Metrics.desiredReplicas),
      pendingScaleOut: own(v.variantName, Metrics.pendingScaleOut),
      ...(producers?.capacityErrors ? { capacityErrors: { metric: producers.capacityErrors } } : {}),
      // Microseconds to ms. A one-pool variant: its variant-level p95. A variant with several pools: the larger of
      // (1) the slowest instance type's p95, MAX over the per-InstanceType series SageMaker publishes "in addition"
      // with pools (the variant-level p95 alone would let a slow pool that takes few of the requests hide behind the
      // fast ones), and (2) the variant-level p95, which fills in when the per-type series are absent (documented for
      // pools, but a deployment may lack them): without it the latency would read no data and the trigger fail open.
      // Percentiles do not combine, but the p95 of all the requests lies between the smallest and the largest per-type
      // p95 (up to CloudWatch's percentile estimate), so while both exist the MAX is the per-type reading; either way it
      // is never below either one: a conservative reading. "The MAX value of an array of time series returns a single
      // time series" (CloudWatch metric math, https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
      // Both operands are SEARCHes: a source's expression cannot name the batch's other queries (buildQueryBatch).
      latencyP95Ms: hasInstancePools(v.classes.length)
        ? { expression: maxOfSearches([latencySearch(true), latencySearch(false)]), scale: AWS_LATENCY_TO_MS.sageMaker }
        : { metric: variantMetric(AwsMetrics.sageMaker.modelLatency, 'p95'), scale: AWS_LATENCY_TO_MS.sageMaker },
      // Tokens the server counted (Sum per period) to tokens per second, which excludes what it shed; without them,
      // Invocations x mean tokens. Invocations is "the number of InvokeEndpoint requests sent to a model endpoint", and
      // the 4XX/5XX metrics count "InvokeEndpoint requests where the model returned" such a code, "for each 4xx
      // response ... a 1; otherwise, 0" (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html):
      // requests the model shed were sent to it, so they are in Invocations already and demand must not add them again
      // (as with ALB RequestCount; a client's own 4xx then adds no demand either).
      ...(producers?.generatedTokens
        ? { servedTokensPerSecond: counterPerSecond(producers.generatedTokens, periodSeconds, producers.generatedTokensIntervalSeconds) }
        : { servedTokensPerSecond: count(AwsMetrics.sageMaker.invocations), servedIncludesRejected: true }),
      rejectedTokensPerSecond: rejected.length === 1 ? rejected[0] : rejected,
    };
  }
  return out;
}

/**
 * One AWS/SageMaker metric of a variant, as a SEARCH: with `perInstanceType` every per-InstanceType series (a variant
 * with instance pools), the schema [EndpointName, InstanceType, VariantName]; without, the variant-level series
 * [EndpointName, VariantName]. A schema matches only series with exactly its dimensions, so neither finds the other.
 */
function variantSearch(
  endpointName: string, variantName: string, metricName: string, stat: string, periodSeconds: number, perInstanceType: boolean,
): string {
  return searchExpression({
    namespace: AwsMetrics.sageMaker.namespace,
    dimensionNames: perInstanceType ? [AwsDim.ENDPOINT_NAME, AwsDim.INSTANCE_TYPE, AwsDim.VARIANT_NAME] : [AwsDim.ENDPOINT_NAME, AwsDim.VARIANT_NAME],
    metricName,
    pinned: { [AwsDim.ENDPOINT_NAME]: endpointName, [AwsDim.VARIANT_NAME]: variantName },
    stat,
    periodSeconds,
  });
}

/**
 * SageMaker: the variants whose desired instance count is below the decision's replica floor, furthest below first
 * (then by name). Floors only raise: a floor that lowered counts would be a second controller fighting Application
 * Auto Scaling, which scales in when the load falls. The reconciler re-raises on later runs while the floor holds, so a
 * scale-in below it lasts only until the next write. The one lowering write is `capacityToLower`'s, in capacity mode.
 */
export function capacitiesToRaise(
  floors: Readonly<Record<string, number>> | null,
  replicas: Readonly<Record<string, { readonly desired: number }>>,
): Array<{ name: string; from: number; to: number }> {
  return Object.entries(floors ?? {})
    .filter(([name, floor]) => replicas[name] !== undefined && Number.isInteger(floor) && floor > replicas[name].desired)
    .map(([name, to]) => ({ name, from: replicas[name].desired, to }))
    .sort((a, b) => b.to - b.from - (a.to - a.from) || a.name.localeCompare(b.name));
}

/**
 * SageMaker, capacity mode: the fallback variant furthest above what the routing needs, lowered to that. A fallback the
 * capacity event grew (its floors, or its own target tracking on the deficit it was routed) otherwise keeps its
 * instances until target tracking's scale-in alarm has seen every datapoint of its window low, 15 minutes
 * (ConcurrentRequestsPerModel "< 4.5 for 90 datapoints within 15 minutes" at target 5, AWS's faster-autoscaling example;
 * the SageMaker guide: high-resolution metrics scale in "at the same speed as it would for standard metrics": sources in
 * TARGET_TRACKING_ALARMS, lib/sim/platform.ts), paid while the preferred class is back and the fallback is routed its
 * warm floor. Traced on the simulator's H3 (spot-like
 * reclaims): 8 inf2 instances for 18 minutes on 2% of the traffic, the gap to retry-on-preferred's cost.
 * Lowered only where it cannot take what the routing needs:
 * - the decision is capacity mode's and the ready classes carry the planned demand (no deficit): in cost mode a
 *   fallback's count is its own autoscaler's, and while short the floors are raising;
 * - not the preferred class (its count is its own target tracking's and its standing ask's), nor a variant of several
 *   pools: what remains after a scale-in ("SageMaker AI releases instances starting with the lowest-priority pool",
 *   realtime-endpoints-heterogeneous.html) carries what its pools' envelopes give, not the instance-weighted mean the
 *   need is sized on;
 * - the variant is settled (in service = desired): lowering a scale-out in progress would cancel instances the
 *   routing may be waiting for;
 * - to no less than its need (`replicaNeeds`: what the plan routes it at the window's peak demand, at its scaling
 *   target, so target tracking sees its load at or below target and does not scale back out), its replica floor, and
 *   its scalable target's live MinCapacity (an operator's or a game day's pin holds; without bounds read, no write), and
 *   1: Application Auto Scaling allows a MinCapacity of 0 for a variant, but scaling an endpoint variant to zero
 *   instances is documented only for endpoints of inference components (R218).
 * One variant per run, like a raise (the endpoint takes one update at a time), after any raise.
 */
export function capacityToLower(
  facts: SageMakerRoutingFacts,
  decision: Pick<PolicyDecision, 'mode' | 'deficitTokensPerSecond' | 'preferredClass' | 'replicaNeeds'>,
  floors: Readonly<Record<string, number>> | null,
  replicas: TargetState['replicas'],
  bounds: TargetState['scalingBounds'],
): { name: string; from: number; to: number } | undefined {
  const needs = decision.replicaNeeds;
  if (decision.mode !== 'capacity' || !needs || decision.deficitTokensPerSecond > 0 || !bounds) return undefined;
  let lowest: { name: string; from: number; to: number } | undefined;
  for (const r of routes(facts)) {
    const live = replicas[r.name];
    const min = bounds[r.name]?.min;
    if (r.name === decision.preferredClass || hasInstancePools(r.classes.length) || !live || live.ready < live.desired || min === undefined) continue;
    const to = Math.max(needs[r.name] ?? live.desired, floors?.[r.name] ?? 0, min, 1);
    if (to < live.desired && (!lowest || live.desired - to > lowest.from - lowest.to)) lowest = { name: r.name, from: live.desired, to };
  }
  return lowest;
}

/**
 * The most instances a capacity write may ask of each variant: its maximum in the facts (fixed at synth), lowered to
 * the MaxCapacity of its scalable target as the run read it. UpdateEndpointWeightsAndCapacities sets DesiredInstanceCount
 * directly, past Application Auto Scaling, so without this the reconciler's own raises would break a game day's pin
 * (MinCapacity = MaxCapacity = the current count) or a maximum an operator lowered at runtime. A variant whose
 * scalable target the read did not find gets 0, so no write raises it: nothing would scale it back in, and its
 * operator's bounds are unknown (weights are still written). Without bounds read at all (the simulator), the facts alone.
 */
export function capacityCeilings(facts: SageMakerRoutingFacts, bounds: TargetState['scalingBounds']): Map<string, number> {
  return new Map(routes(facts).map((r) => [r.name, bounds ? Math.min(r.maxReplicas, bounds[r.name]?.max ?? 0) : r.maxReplicas]));
}

/**
 * The most instances the policy plans each variant for, by variant name: what a capacity write may ask of it
 * (`capacityCeilings`, the live MaxCapacity), so a variant pinned by a game day (MaxCapacity = its count) is planned as
 * unable to grow, and no replica floor, deficit or retried growth (`replicaFloors`, `retriesGrowth`) is planned on
 * instances no write would provision: the fallbacks that can grow get them instead. A variant whose scalable target the
 * read did not find is planned at its desired count (at least 1), its live maximum being unknown. When the read failed
 * (`capacityUnwritable`: no capacity write this run anyway), the bounds an earlier run read (`rememberedBounds`): a pin
 * stays in the plan and the weights do not move twice. With none (a cold start, or no read has succeeded since), and
 * when no read was made (the simulator), the facts' maxima: one failed read must not plan every variant as unable to
 * grow.
 */
function plannedMaxima(facts: SageMakerRoutingFacts, target: TargetState | undefined): Map<string, number> {
  const bounds = target?.capacityUnwritable ? target.rememberedBounds : target?.scalingBounds;
  if (!target || !bounds) return new Map(routes(facts).map((r) => [r.name, r.maxReplicas]));
  const ceilings = capacityCeilings(facts, bounds);
  return new Map(routes(facts).map((r) => [r.name, Math.max(1, bounds[r.name] !== undefined
    ? ceilings.get(r.name)!
    : Math.min(r.maxReplicas, target.replicas[r.name]?.desired ?? 1))]));
}

/**
 * The writer's calls (lambda/reconciler/targets/sagemaker.ts: DescribeEndpoint, DescribeScalableTargets,
 * UpdateEndpointWeightsAndCapacities) and the ones nearest to them it must not make.
 */
function writerProbes(facts: SageMakerRoutingFacts): PermissionProbe[] {
  const arn = facts.endpointArn;
  return [
    { action: 'sagemaker:DescribeEndpoint', resource: arn, expect: 'allowed', why: 'reads the variants\' weights and counts' },
    {
      action: 'application-autoscaling:DescribeScalableTargets', resource: '*', expect: 'allowed',
      why: 'reads each variant\'s live scaling bounds (no resource-level permissions)',
    },
    { action: 'application-autoscaling:RegisterScalableTarget', resource: '*', expect: 'denied', why: 'would change the bounds it must respect' },
    { action: 'sagemaker:UpdateEndpointWeightsAndCapacities', resource: arn, expect: 'allowed', why: 'writes the weights and replica floors' },
    { action: 'sagemaker:UpdateEndpointWeightsAndCapacities', resource: neighbour(arn), expect: 'denied', why: 'another endpoint' },
    { action: 'sagemaker:UpdateEndpoint', resource: arn, expect: 'denied', why: 'replaces the endpoint configuration' },
    { action: 'sagemaker:DeleteEndpoint', resource: arn, expect: 'denied', why: 'destructive' },
  ];
}

/**
 * Endpoint statuses that no wait ends (DescribeEndpoint `EndpointStatus`,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpoint.html): "Failed: Endpoint could not be
 * created, updated, or re-scaled"; "UpdateRollbackFailed: Both the rolling deployment and auto-rollback failed" (an
 * operator restores it); "OutOfService: Endpoint is not available to take incoming requests"; "Deleting". Creating,
 * Updating, SystemUpdating and RollingBack end in InService by themselves.
 */
const NEEDS_AN_OPERATOR: ReadonlySet<string> = new Set(['Failed', 'UpdateRollbackFailed', 'OutOfService', 'Deleting']);

/**
 * Whether the endpoint takes a write now (`UpdateEndpointWeightsAndCapacities` needs InService): a status a later run
 * may find InService again only defers the write (`notWritable`); one that needs an operator fails the run
 * (`unavailable`), so the failure alarm pages instead of the heartbeat beating over weights that cannot move.
 */
export function endpointWritability(
  endpointName: string,
  status: string | undefined,
  failureReason?: string,
): Pick<TargetState, 'notWritable' | 'unavailable'> {
  if (status === 'InService') return {};
  if (status !== undefined && NEEDS_AN_OPERATOR.has(status)) {
    const why = failureReason ? ` (${failureReason})` : '';
    return { unavailable: `endpoint ${endpointName} is ${status}${why}; no weight can be written until it is InService again` };
  }
  return { notWritable: `endpoint ${endpointName} is ${status}; weights are written on a later tick` };
}

/**
 * Why the facts do not describe the endpoint as the run found it: they name the endpoint configuration they were made
 * for (`endpointConfigName`) and DescribeEndpoint's `EndpointConfigName` is another ("The name of the endpoint
 * configuration associated with this endpoint", @aws-sdk/client-sagemaker 3.1142.0
 * dist-types/models/models_2.d.ts:6314-6318). A stack update that replaces the configuration updates the function and
 * the endpoint in no fixed order, so for a while new facts meet the old configuration or old facts the new one: the
 * variants differ (a stray zeroed, a new one missing) or their envelope and price do, and a write would set the endpoint
 * Updating, which makes CloudFormation's UpdateEndpoint fail. Undefined when they match, or when either side is unknown
 * (facts without the field behave as before it existed).
 */
export function otherConfiguration(facts: SageMakerRoutingFacts, running: string | undefined): string | undefined {
  const described = facts.endpointConfigName;
  if (described === undefined || running === undefined || running === described) return undefined;
  return `endpoint ${facts.endpointName} runs endpoint configuration '${running}', not '${described}' that the routing facts describe ` +
    '(a deployment is replacing it, or the endpoint was updated outside this stack); weights are written once they match';
}

/** The detail-type of the event SageMaker sends to EventBridge when an endpoint's status changes. */
export const SAGEMAKER_ENDPOINT_STATE_CHANGE = 'SageMaker Endpoint State Change';

export const SAGEMAKER_TARGET: RoutingTarget<SageMakerRoutingFacts> = {
  kind: 'sagemaker',
  loadBalancer: () => undefined,
  platform: 'sagemaker',
  floors: 'capacity-writes',
  routes,
  describeRoutes: (facts) => `variant(s) of endpoint ${facts.endpointName}`,
  describeTarget: (facts) => `SageMaker endpoint \`${facts.endpointName}\``,
  servingMetrics: {
    namespace: AwsMetrics.sageMaker.namespace,
    requests: AwsMetrics.sageMaker.invocations,
    serverErrors: AwsMetrics.sageMaker.invocation5xxErrors,
    clientErrors: AwsMetrics.sageMaker.invocation4xxErrors,
    latency: AwsMetrics.sageMaker.modelLatency,
    latencyToMs: AWS_LATENCY_TO_MS.sageMaker,
  },
  observedClasses: (facts) => facts.variants.flatMap((v) => v.classes.map((cls) => ({
    facts: cls,
    // A class of a variant with several instance pools is its pool's InstanceType series, which SageMaker publishes for
    // such variants besides the variant-level one (see signalSources); a single-class variant is its variant-level series.
    awsDimensions: sageMakerVariantDimensions(facts.endpointName, v.variantName, hasInstancePools(v.classes.length) ? cls.instanceType : undefined),
  }))),
  uniqueRouteNames: true,
  policyClasses: (facts, placement, target) => {
    const maxima = plannedMaxima(facts, target);
    return routes(facts).map((r) => variantClass(r, placement, target?.pools[r.name] ?? {}, maxima.get(r.name)!));
  },
  signalSources,
  classes: (facts) => objectEntries<SageMakerRoutingFacts['variants'][number]>(facts.variants, 'variants', VARIANT)
    .flatMap((v) => objectEntries<RoutedClassFacts>(v.classes, 'classes', POOL)),
  checkFacts: (facts, c) => {
    c.optional('endpointConfigName', facts.endpointConfigName);
    const variants = objectEntries<SageMakerRoutingFacts['variants'][number]>(facts.variants, 'variants', VARIANT, c);
    c.cross('variants', Array.isArray(facts.variants) ? facts.variants.length : 0);
    c.cross('variants[].variantName', variants.map((v) => v.variantName), 'variants');
    const allClassNames = SAGEMAKER_TARGET.classes(facts).map((cls) => cls.name);
    for (const v of variants) {
      const path = `variants['${v.variantName}']`;
      const classNames = objectEntries<RoutedClassFacts>(v.classes, `${path}.classes`, POOL, c).map((cls) => cls.name);
      c.cross('variants[].classes', Array.isArray(v.classes) ? v.classes.length : 0, `${path}.classes`);
      c.cross('variants[].variantName@classes', { variantName: v.variantName, classNames, allClassNames }, `${path}.variantName`);
      c.optional('variants[].maxInstances', v.maxInstances, `${path}.maxInstances`);
    }
  },
  desiredReplicasFrom: 'target-api',
  replicaWindow: 'live-newest',
  scaleOutsRollBack: true,
  // DescribeEndpoint gives the live instance counts themselves: there is no target group whose health to count.
  publishesHealthyTargets: false,
  // "SageMaker Endpoint State Change", source aws.sagemaker, with `EndpointName` and `EndpointStatus` in `detail`; the
  // event spells the status in upper snake case, "IN_SERVICE", where the API says InService (SageMaker developer guide,
  // automating-sagemaker-with-eventbridge, "SageMaker endpoint state change"; awsdocs/amazon-sagemaker-developer-guide@
  // 2d43c3e doc_source/automating-sagemaker-with-eventbridge.md:248-285). Matched on the name, not on `resources`: the
  // name in an endpoint's ARN is lower-cased in AWS's example and not in others, and matching is case-sensitive.
  // "InService" too, in case the spelling differs: an event that never matches would silently lose the runs. Delivery is
  // best effort and may repeat ("may send multiple events ... for each state change"), so the schedule stays, and the
  // runs make at most one write of each kind per period whatever triggers them (`planOf`, step.ts).
  writableAgain: (facts) => ({
    source: ['aws.sagemaker'],
    detailType: [SAGEMAKER_ENDPOINT_STATE_CHANGE],
    detail: { EndpointName: [facts.endpointName], EndpointStatus: ['IN_SERVICE', 'InService'] },
  }),
  autoscalerFloor: (floor) => floor,
  routedProducers: (serving) => {
    const out: Record<string, ClassSignalProducers> = {};
    for (const v of serving.routing.variants) {
      const classes = v.classes.map((c) => c.name);
      // A variant's pools may run different engines: its producers are those of its only class, when it has one.
      const producers = classes.length === 1 ? serving.signals.classes[classes[0]] : undefined;
      const statuses = new Set(classes.map((c) => serving.signals.classes[c]?.rejectionStatus ?? '5xx'));
      const rejectionStatus = statuses.size > 1 ? 'mixed' as const : statuses.has('4xx') ? '4xx' as const : undefined;
      const entry: ClassSignalProducers = {
        ...(producers?.capacityErrors ? { capacityErrors: producers.capacityErrors } : {}),
        ...(producers?.generatedTokens ? { generatedTokens: producers.generatedTokens } : {}),
        ...(producers?.generatedTokensIntervalSeconds ? { generatedTokensIntervalSeconds: producers.generatedTokensIntervalSeconds } : {}),
        ...(rejectionStatus ? { rejectionStatus } : {}),
      };
      if (Object.keys(entry).length > 0) out[v.variantName] = entry;
    }
    return { signals: out };
  },
  observations: (facts, target) => {
    const out: Record<string, { ready: number; desired: number; pools: Record<string, number> }> = {};
    for (const v of facts.variants) {
      const replicas = target.replicas[v.variantName];
      if (!replicas) continue;
      // By instance type; a one-class variant without pools has its whole count there too (`instancesByType`).
      const counts = target.pools[v.variantName] ?? {};
      out[v.variantName] = { ...replicas, pools: Object.fromEntries(v.classes.map((c) => [c.name, counts[c.instanceType] ?? 0])) };
    }
    return out;
  },
  plannedWrite: (facts, decision, target, floors): RoutingWrite | undefined => {
    // UpdateEndpointWeightsAndCapacities changes the weights of any variants *or* the capacity of one, and leaves the
    // endpoint Updating: weights go first (routing is the fast lever), one capacity per run after them.
    const zeroed = stray(routes(facts), target);
    if (decision.weightsChanged || zeroed.length > 0) return { kind: 'weights', weights: decision.weights, zeroed };
    // A run whose bounds read failed writes no capacity, whatever bounds it planned with: no ceiling above 0 and no
    // MinCapacity to lower to.
    const bounds = target.capacityUnwritable ? {} : target.scalingBounds;
    const max = capacityCeilings(facts, bounds);
    const capped = floors && Object.fromEntries(Object.entries(floors).map(([n, f]) => [n, Math.min(f, max.get(n) ?? f)]));
    const raise = capacitiesToRaise(capped, target.replicas)[0];
    if (!raise) {
      const lower = capacityToLower(facts, decision, floors, target.replicas, bounds);
      return lower && { kind: 'capacity', route: lower.name, from: lower.from, to: lower.to };
    }
    const floor = floors![raise.name];
    return { kind: 'capacity', route: raise.name, from: raise.from, to: raise.to, ...(floor > raise.to ? { floor } : {}) };
  },
  writerProbes,
  otherConfiguration: (facts, target) => otherConfiguration(facts, target.endpointConfigName),
  configurationOf: ({ endpointConfigName: name, ...without }) => (name === undefined ? undefined : { name, without }),
  // A class is found by its own name or its variant's; its capacity is the variant's (its scalable target).
  capacityHolder: (facts, className) => {
    const named = (variantName: string, c: { name: string; preferenceRank: number }) =>
      (className ? c.name === className || variantName === className : c.preferenceRank === 0);
    const v = facts.variants.find((x) => x.classes.some((c) => named(x.variantName, c)));
    if (!v) throw new Error(`no class ${className ?? 'of preference rank 0'}; variants: ${facts.variants.map((x) => x.variantName).join(', ')}`);
    return { kind: 'variant', routedClass: v.variantName, endpointName: facts.endpointName, variantName: v.variantName };
  },
};
