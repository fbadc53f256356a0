import { isUnresolved } from '../validation/tokens';

/** How far (relative) an autoscaler target set on a serving construct may sit from the plan's before it warns. */
export const TARGET_OVERRIDE_TOLERANCE = 0.05;

/**
 * A note when an autoscaler target set on the construct (SageMaker `scaling.targetConcurrencyPerInstance`, EKS
 * `classOptions.targetRequestsPerReplicaPerPeriod`) differs from the plan's, envelope / (1 + headroom): the serving
 * hands the plan's headroom to the Reconciler (`ServingDescription.headroom`), which sizes replica floors and SageMaker
 * capacity writes at the plan's target while the autoscaler holds the other one. Undefined within the tolerance, or
 * for a target not known at synth.
 */
export function overriddenTargetNote(o: {
  readonly subject: string; readonly field: string; readonly target: number; readonly planned: number; readonly headroom: number;
}): string | undefined {
  if (isUnresolved(o.target) || !(o.planned > 0) || !(o.target > 0)) return undefined;
  const off = o.target / o.planned - 1;
  if (Math.abs(off) <= TARGET_OVERRIDE_TOLERANCE + 1e-9) return undefined;
  // The headroom whose plan target is this one: envelope / (1 + h') = target.
  const matching = Math.round(((1 + o.headroom) * o.planned / o.target - 1) * 1000) / 1000;
  return `${o.subject}: ${o.field} is ${o.target}, ${Math.round(Math.abs(off) * 100)}% ${off > 0 ? 'above' : 'below'} the capacity plan's ` +
    `${Math.round(o.planned * 1000) / 1000} (the envelope / (1 + headroom ${o.headroom})). The Reconciler sizes replica floors, and on SageMaker ` +
    'its capacity writes, at the plan\'s target while this autoscaler holds the other: the floors it sets are not what the autoscaler keeps, ' +
    'and a fallback it lowers can be scaled back out by target tracking (the endpoint Updating again and again). Set the contract\'s ' +
    `headroom instead (${matching} gives this target${matching < 0 ? ', below 0: not allowed, so keep the plan\'s target' : ''}) ` +
    'and leave the target unset, or acknowledge this warning on the stack.';
}
