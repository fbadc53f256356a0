import { type ClassState } from './class-state';
import { type ClassDatapoint } from './model';

/**
 * One evaluation of a class's autoscaler at `now` from the newest published datapoint: the replicas it wants, never
 * below `floor` (the class's minimum, or the policy's replica floor) nor above the class's maximum. Updates the
 * autoscaler's memory (recommendations, cooldown clocks) kept on the class state.
 */
export function autoscale(cs: ClassState, dp: ClassDatapoint | undefined, floor: number, now: number): number {
  const spec = cs.spec;
  if (dp) {
    const rec = Math.min(spec.maxReplicas, Math.max(floor, Math.ceil(dp.routedTokens / 60 / spec.targetTokensPerSecondPerReplica - 1e-9)));
    if (spec.autoscaler.kind === 'keda') {
      const window = spec.autoscaler.scaleDownStabilizationSeconds ?? 300;
      cs.recommendations.push({ at: now, value: rec });
      while (cs.recommendations.length > 0 && cs.recommendations[0].at <= now - window) cs.recommendations.shift();
      cs.desired = Math.max(...cs.recommendations.map((x) => x.value));
    } else {
      const out = spec.autoscaler.scaleOutCooldownSeconds ?? 60;
      const inCd = spec.autoscaler.scaleInCooldownSeconds ?? 300;
      if (rec > cs.desired && now - cs.lastScaleOut >= out) {
        cs.desired = rec;
        cs.lastScaleOut = now;
      } else if (rec < cs.desired && now - cs.lastScaleIn >= inCd && now - cs.lastScaleOut >= inCd) {
        cs.desired = rec;
        cs.lastScaleIn = now;
      }
    }
  }
  return Math.min(spec.maxReplicas, Math.max(floor, cs.desired));
}
