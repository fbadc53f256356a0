import { DEFAULT_POLICY_CONFIG } from '../../lib/core/policy/defaults';
import { apportion, routingPlan } from '../../lib/core/policy/plan';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { initialWeights } from '../../lib/core/service/initial-weights';
import { planCapacity } from '../../lib/core/service/sizing';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const classes = defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT, platform: 'ec2' });
const plan = planCapacity(LLAMA_CONTRACT, classes);
const routes = classes.map((cls, i) => ({ name: cls.name, classes: [cls], readyReplicas: plan.classes[i].steadyReplicas }));

describe('initial weights: the policy\'s cost plan at planned demand, for both serving constructs', () => {
  test('the cheapest class per token carries the planned demand; every other ready class keeps the warm floor', () => {
    // 6000 tok/s planned; l40s 5 x 1200 carries it and is the cheapest per token; a10g and inf2 standbys keep 2 %.
    expect(initialWeights(routes, plan.plannedTokensPerSecond)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
  });

  test('equals what the reconciler\'s policy routes in cost mode with that fleet ready (its first tick keeps them)', () => {
    const policyClasses = classes.map((cls) => ({
      name: cls.name, preferenceRank: cls.preferenceRank, tokensPerSecondPerReplica: cls.envelope.tokensPerSecondPerReplica,
      usdPerReplicaHour: cls.usdPerReplicaHour, placementAllowed: true,
    }));
    const views = policyClasses.map((cls, i) => {
      const ready = plan.classes[i].steadyReplicas;
      return { cls, ready, steadyReady: ready, capacity: ready * cls.tokensPerSecondPerReplica, eligible: true };
    });
    const { shares } = routingPlan(views, plan.plannedTokensPerSecond, new Set(policyClasses.map((c) => c.name)), DEFAULT_POLICY_CONFIG);
    expect(initialWeights(routes, plan.plannedTokensPerSecond)).toEqual(apportion(shares, policyClasses, DEFAULT_POLICY_CONFIG.weightTotal));
  });

  test('a fallback cheaper per token than the preferred class is filled first, up to what its standby carries', () => {
    const cheapInf2 = routes.map((r) => (r.name === 'inf2' ? { ...r, classes: [{ ...r.classes[0], usdPerReplicaHour: 0.1 }] } : r));
    // inf2's one standby replica carries 300 of 6000 tok/s: 5 %.
    expect(initialWeights(cheapInf2, plan.plannedTokensPerSecond)).toEqual({ l40s: 93, a10g: 2, inf2: 5 });
  });

  test('the warm floor is bounded by what a standby carries, and a class without ready replicas gets nothing', () => {
    expect(initialWeights(routes, plan.plannedTokensPerSecond, { warmFloorShare: 0.2 })).toEqual({ l40s: 88, a10g: 7, inf2: 5 });
    expect(initialWeights(routes.map((r) => (r.name === 'a10g' ? { ...r, readyReplicas: 0 } : r)), plan.plannedTokensPerSecond)).toEqual({ l40s: 98, a10g: 0, inf2: 2 });
  });
});
