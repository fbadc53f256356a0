/** Helpers the routing-target kinds share (nothing kind-specific lives here). */
import { classDimensions, type MetricSpec } from '../../metrics/contract';
import { type MetricStatSource } from '../../metrics/aws-published';
import { type PolicyClass } from '../../policy/types';
import { type PlacementOptions } from '../config';
import { type RoutedClassFacts } from '../routing-facts';
import { type ClassSignalProducers } from '../serving';
import { type Route, type TargetState } from './kind';
import { type Checker, isObject } from '../../validation/checker';
import { type ROUTING_FACTS_RULES } from '../../validation/routing-facts-rules';

/** A contract metric of one routed class (Service, CapacityClass), as the reconciler queries it. */
export function classMetric(spec: MetricSpec, service: string, className: string): MetricStatSource {
  return { namespace: spec.namespace, metricName: spec.name, dimensions: classDimensions(service, className), stat: spec.statistic };
}

export function placementAllows(c: RoutedClassFacts, placement: PlacementOptions): boolean {
  return !placement.sensitive || c.allowSensitive;
}

/** The policy's view of one class routed under `name`. */
export function policyClassOf(name: string, c: RoutedClassFacts, placement: PlacementOptions): PolicyClass {
  return {
    name,
    preferenceRank: c.preferenceRank,
    tokensPerSecondPerReplica: c.tokensPerSecondPerReplica,
    usdPerReplicaHour: c.usdPerReplicaHour,
    placementAllowed: placementAllows(c, placement),
    maxReplicas: c.maxReplicas,
  };
}

/** The status class(es) a route's servers shed overload with: 5XX unless the producers say otherwise. */
export function rejectionStatusOf(producers: ClassSignalProducers | undefined): '4xx' | '5xx' | 'mixed' {
  return producers?.rejectionStatus ?? '5xx';
}

/**
 * Routes the live target holds that the facts do not name and that still hold weight (a variant removed from the
 * configuration but not from the endpoint): a weights write sets them to 0, so no traffic goes where the policy
 * cannot see.
 */
export function stray(routes: readonly Route[], target: TargetState): string[] {
  const named = new Set(routes.map((r) => r.name));
  return Object.entries(target.weights).filter(([name, w]) => !named.has(name) && w > 0).map(([name]) => name).sort();
}

/**
 * The entries of a list in hand-editable facts that are objects (JSON can hold null or a number where a target group
 * or a pool belongs); each other entry is filed under `path[i]` when a checker is given. Validation then reports a
 * malformed configuration as invalid instead of failing on it.
 */
export function objectEntries<T extends object>(
  list: unknown, path: string, allowed: string, c?: Checker<typeof ROUTING_FACTS_RULES>,
): T[] {
  if (!Array.isArray(list)) return [];
  return list.filter((entry, i): entry is T => {
    const ok = isObject(entry);
    if (!ok) c?.add(`${path}[${i}]`, `is ${JSON.stringify(entry)}; allowed: ${allowed}`);
    return ok;
  });
}

