/**
 * The routing weights a serving construct deploys before the reconciler's first run, one rule for both platforms:
 * the policy's own cost-mode plan (`routingPlan`, its warm floor included) for the planned demand with the planned
 * steady fleet ready, over the routes as the reconciler sees them (`policyClassesFromFacts`, placement included). The
 * reconciler's first tick in cost mode therefore keeps them instead of correcting a second formula, a fallback's
 * initial share is the policy's warm floor (at most what its standby carries), and a route the placement forbids (a
 * class with `allowSensitive: false` when the service's requests are sensitive) gets 0 from the first deploy, as it
 * does from every run (review R221).
 */
import { DEFAULT_POLICY_CONFIG } from '../policy/defaults';
import { apportion, byPreference, type ClassView, routingPlan } from '../policy/plan';
import { type PlacementOptions, policyClassesFromFacts } from '../reconciler/from-facts';
import { type RoutingFacts } from '../reconciler/routing-facts';

export interface InitialWeightOptions {
  /** @default DEFAULT_POLICY_CONFIG.warmFloorShare - the reconciler's default */
  readonly warmFloorShare?: number;
  /** Integer weights sum to this. @default DEFAULT_POLICY_CONFIG.weightTotal - the reconciler's default */
  readonly weightTotal?: number;
  /** The placement the service's reconciler enforces (its `sensitive`). @default - no route is forbidden */
  readonly placement?: PlacementOptions;
}

/** The routes (ALB: classes; SageMaker: variants) `placement` forbids, by name: the reconciler's own decision. */
export function forbiddenRoutes(facts: RoutingFacts, placement: PlacementOptions): string[] {
  return policyClassesFromFacts(facts, placement).filter((cls) => !cls.placementAllowed).map((cls) => cls.name);
}

/**
 * Integer weights by route name (ALB target group: its class; SageMaker: its variant), summing to `weightTotal`.
 * `readyReplicas` are the replicas the plan keeps ready in steady state, by route name (EKS: the class's steady
 * replicas; SageMaker: the variant's minimum). Throws when the placement forbids every route: no weights would be
 * valid, and the Reconciler refuses that placement at synth before any construct asks (its `sensitive` rule).
 */
export function initialWeights(
  facts: RoutingFacts,
  readyReplicas: Readonly<Record<string, number>>,
  plannedTokensPerSecond: number,
  options: InitialWeightOptions = {},
): Record<string, number> {
  const config = {
    ...DEFAULT_POLICY_CONFIG,
    warmFloorShare: options.warmFloorShare ?? DEFAULT_POLICY_CONFIG.warmFloorShare,
    weightTotal: options.weightTotal ?? DEFAULT_POLICY_CONFIG.weightTotal,
  };
  // The reconciler's own view before it knows instance counts: a SageMaker variant is its first pool, and may take
  // sensitive requests only if every pool may (lib/core/reconciler/targets/sagemaker.ts, variantClass).
  const classes = policyClassesFromFacts(facts, options.placement ?? {});
  const allowed = classes.filter((cls) => cls.placementAllowed).sort(byPreference);
  if (allowed.length === 0) {
    throw new Error(`initialWeights(): the placement forbids every route (${classes.map((c) => c.name).join(', ')}); at least one must be allowed`);
  }
  // As the policy sees a tick (decide.ts): eligible = allowed by placement and ready.
  const views: ClassView[] = classes.map((cls) => {
    const ready = Math.max(0, readyReplicas[cls.name] ?? 0);
    return { cls, ready, capacity: ready * cls.tokensPerSecondPerReplica, eligible: cls.placementAllowed && ready > 0, steadyReady: ready };
  });
  const eligible = views.filter((v) => v.eligible);
  // No allowed route ready: the reconciler keeps traffic on the most preferred allowed class (decide.ts, never all zero).
  if (eligible.length === 0) return apportion(new Map([[allowed[0].name, 1]]), classes, config.weightTotal);
  // Every class can grow in cost mode: a deficit goes to the cheapest, as the reconciler would send it.
  const { shares } = routingPlan(eligible, plannedTokensPerSecond, new Set(eligible.map((v) => v.cls.name)), config);
  return apportion(shares, classes, config.weightTotal);
}
