import { type PlacementOptions } from './config';
import { type RoutingFacts } from './routing-facts';
import { routingTarget, type TargetState } from './targets';
import { defaultProvisioningGraceSeconds, fallbackProvisioningGraces, type GraceClass, graceWatchedClass, shortestSafeGraceSeconds } from '../policy/defaults';
import { type PolicyClass } from '../policy/types';

export { type PlacementOptions } from './config';

/**
 * The policy's view of each weight of a routing target: one class per ALB target group, one per SageMaker variant
 * (targets/alb.ts, targets/sagemaker.ts). A SageMaker variant holds up to five instance pools (classes); its envelope
 * and price are those of the pools it runs on right now when `instancesPerPool` gives their counts (from
 * DescribeEndpoint), otherwise of its first pool.
 */
export function policyClassesFromFacts(
  facts: RoutingFacts,
  placement: PlacementOptions = {},
  instancesPerPool: Readonly<Record<string, Readonly<Record<string, number>>>> = {},
): PolicyClass[] {
  const target: TargetState = { weights: {}, pools: instancesPerPool, replicas: {}, present: [] };
  return routingTarget(facts).policyClasses(facts, placement, target);
}

/**
 * The policy's classes with the replica-ready time each route's classes declare, for `defaultProvisioningGraceSeconds`:
 * the slowest of a SageMaker variant's pools (a scale-out may land on any of them), of those that declare one.
 */
export function graceClassesFromFacts(facts: RoutingFacts, placement: PlacementOptions = {}): GraceClass[] {
  const declared = new Map(routingTarget(facts).routes(facts).map((route) => {
    const times = route.classes.flatMap((c) => (c.replicaReadyTimeP95Seconds === undefined ? [] : [c.replicaReadyTimeP95Seconds]));
    return [route.name, times.length > 0 ? Math.max(...times) : undefined] as const;
  }));
  return policyClassesFromFacts(facts, placement).map((c) => {
    const ready = declared.get(c.name);
    return { ...c, ...(ready !== undefined ? { replicaReadyTimeP95Seconds: ready } : {}) };
  });
}

/**
 * The provisioning grace the Reconciler deploys for these facts unless one is set (`defaultProvisioningGraceSeconds`),
 * the shortest one a routine scale-out of the watched class cannot fill (`shortestSafeGraceSeconds`; undefined when
 * it declares no ready time), and each other class's own (`fallbackProvisioningGraces`; the Reconciler construct puts
 * them in `ReconcilerConfig.fallbackGraceSeconds`), over the declared ready times (`graceClassesFromFacts`: a variant
 * counts the slowest of its pools that declare one, for the preferred route and the fallbacks alike) on the window the
 * target's kind reads (`RoutingTarget.replicaWindow`).
 */
export function provisioningGraceFromFacts(
  facts: RoutingFacts, placement: PlacementOptions, metricDelaySeconds: number, periodSeconds: number,
): {
  readonly defaultSeconds: number; readonly safeSeconds: number | undefined; readonly watched: GraceClass | undefined;
  readonly fallbacks: Readonly<Record<string, number>>;
} {
  const classes = graceClassesFromFacts(facts, placement);
  const window = routingTarget(facts).replicaWindow;
  return {
    defaultSeconds: defaultProvisioningGraceSeconds(classes, window, metricDelaySeconds, periodSeconds),
    safeSeconds: shortestSafeGraceSeconds(classes, window, metricDelaySeconds, periodSeconds),
    watched: graceWatchedClass(classes),
    fallbacks: fallbackProvisioningGraces(classes, window, metricDelaySeconds, periodSeconds),
  };
}
