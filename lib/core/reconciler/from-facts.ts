import { type RoutedClassFacts, type RoutingFacts, type SageMakerRoutingFacts } from './routing-facts';
import { type PolicyClass } from '../policy/types';

/** Placement options of the service whose traffic is routed. */
export interface PlacementOptions {
  /** The service's requests are marked sensitive: classes with `allowSensitive: false` are forbidden. @default false */
  readonly sensitive?: boolean;
}

/**
 * The policy's view of each weight of a routing target: one class per ALB target group, one per SageMaker variant.
 * A SageMaker variant holds up to five instance pools (classes); its envelope and price are those of the pools it runs
 * on right now when `instancesPerPool` gives their counts (from DescribeEndpoint), otherwise of its first pool.
 */
export function policyClassesFromFacts(
  facts: RoutingFacts,
  placement: PlacementOptions = {},
  instancesPerPool: Readonly<Record<string, Readonly<Record<string, number>>>> = {},
): PolicyClass[] {
  if (facts.kind === 'alb') return facts.targets.map((t) => fromClass(t.class, placement));
  return facts.variants.map((v) => variantClass(v, placement, instancesPerPool[v.variantName] ?? {}));
}

function fromClass(c: RoutedClassFacts, placement: PlacementOptions): PolicyClass {
  return {
    name: c.name,
    preferenceRank: c.preferenceRank,
    tokensPerSecondPerReplica: c.tokensPerSecondPerReplica,
    usdPerReplicaHour: c.usdPerReplicaHour,
    placementAllowed: placementAllows(c, placement),
    maxReplicas: c.maxReplicas,
  };
}

function placementAllows(c: RoutedClassFacts, placement: PlacementOptions): boolean {
  return !placement.sensitive || c.allowSensitive;
}

/**
 * A variant as one routed class. Its replicas are the instances of all its pools; envelope and price are the
 * instance-weighted means over the pools that have instances (a pool of the wrong kind still counts for what it
 * really serves). A variant may take sensitive traffic only if every pool may: SageMaker picks the pool, not us.
 */
function variantClass(
  variant: SageMakerRoutingFacts['variants'][number],
  placement: PlacementOptions,
  counts: Readonly<Record<string, number>>,
): PolicyClass {
  const pools = variant.classes;
  const weighted = pools.map((c) => ({ c, n: Math.max(0, counts[c.instanceType] ?? 0) }));
  const instances = weighted.reduce((s, p) => s + p.n, 0);
  const mean = (f: (c: RoutedClassFacts) => number) =>
    instances > 0 ? weighted.reduce((s, p) => s + f(p.c) * p.n, 0) / instances : f(pools[0]);
  return {
    name: variant.variantName,
    preferenceRank: Math.min(...pools.map((c) => c.preferenceRank)),
    tokensPerSecondPerReplica: mean((c) => c.tokensPerSecondPerReplica),
    usdPerReplicaHour: mean((c) => c.usdPerReplicaHour),
    placementAllowed: pools.every((c) => placementAllows(c, placement)),
    // The variant's instances are those of all its pools, each bounded by its own quota, and all of them by the
    // variant's scaling maximum where the facts name it.
    maxReplicas: Math.min(variant.maxInstances ?? Infinity, pools.reduce((s, c) => s + c.maxReplicas, 0)),
  };
}
