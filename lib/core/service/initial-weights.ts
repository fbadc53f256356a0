/**
 * The routing weights a serving construct deploys before the reconciler's first run, one rule for both platforms:
 * the policy's own cost-mode plan (`routingPlan`, its warm floor included) for the planned demand with the planned
 * steady fleet ready. The reconciler's first tick in cost mode therefore keeps them instead of correcting a second
 * formula, and a fallback's initial share is the policy's warm floor (at most what its standby carries).
 */
import { DEFAULT_POLICY_CONFIG } from '../policy/defaults';
import { apportion, type ClassView, routingPlan } from '../policy/plan';
import { type PolicyClass } from '../policy/types';
import { type CapacityClass } from './capacity-class';

/** One weight of the router: an ALB target group (one class) or a SageMaker variant (its pools, priority 1 first). */
export interface InitialRoute {
  readonly name: string;
  readonly classes: readonly CapacityClass[];
  /** Replicas the plan keeps ready in steady state (EKS: the class's steady replicas; SageMaker: the variant's minimum). */
  readonly readyReplicas: number;
}

export interface InitialWeightOptions {
  /** @default DEFAULT_POLICY_CONFIG.warmFloorShare - the reconciler's default */
  readonly warmFloorShare?: number;
  /** Integer weights sum to this. @default DEFAULT_POLICY_CONFIG.weightTotal - the reconciler's default */
  readonly weightTotal?: number;
}

/** Integer weights by route name, summing to `weightTotal`. */
export function initialWeights(
  routes: readonly InitialRoute[],
  plannedTokensPerSecond: number,
  options: InitialWeightOptions = {},
): Record<string, number> {
  const config = {
    ...DEFAULT_POLICY_CONFIG,
    warmFloorShare: options.warmFloorShare ?? DEFAULT_POLICY_CONFIG.warmFloorShare,
    weightTotal: options.weightTotal ?? DEFAULT_POLICY_CONFIG.weightTotal,
  };
  // A route as the reconciler sees it before it knows instance counts (lib/core/reconciler/from-facts.ts): its first pool.
  const classes: PolicyClass[] = routes.map((r) => ({
    name: r.name,
    preferenceRank: Math.min(...r.classes.map((c) => c.preferenceRank)),
    tokensPerSecondPerReplica: r.classes[0].envelope.tokensPerSecondPerReplica,
    usdPerReplicaHour: r.classes[0].usdPerReplicaHour,
    placementAllowed: true,
  }));
  const views: ClassView[] = classes.map((cls, i) => {
    const ready = Math.max(0, routes[i].readyReplicas);
    return { cls, ready, capacity: ready * cls.tokensPerSecondPerReplica, eligible: ready > 0, steadyReady: ready };
  });
  const eligible = views.filter((v) => v.eligible);
  // Every class can grow in cost mode: a deficit goes to the cheapest, as the reconciler would send it.
  const { shares } = routingPlan(eligible, plannedTokensPerSecond, new Set(eligible.map((v) => v.cls.name)), config);
  return apportion(shares, classes, config.weightTotal);
}
