/** Helpers the routing-target kinds share (nothing kind-specific lives here). */
import { type PolicyClass } from '../../policy/types';
import { type PlacementOptions } from '../config';
import { type RoutedClassFacts } from '../routing-facts';
import { type ClassSignalProducers } from '../serving';
import { type Route, type TargetState } from './kind';

/** A CloudWatch search term's quoted value. */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
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
