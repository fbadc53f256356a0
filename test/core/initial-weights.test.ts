import { DEFAULT_POLICY_CONFIG, policyWindowPeriods } from '../../lib/core/policy/defaults';
import { apportion, routingPlan } from '../../lib/core/policy/plan';
import { decide } from '../../lib/core/policy/decide';
import { policyClassesFromFacts } from '../../lib/core/reconciler/from-facts';
import { type AlbRoutingFacts, routedClassFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { forbiddenRoutes, initialWeights } from '../../lib/core/service/initial-weights';
import { planCapacity } from '../../lib/core/service/sizing';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const classes = defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT, platform: 'ec2' });
const plan = planCapacity(LLAMA_CONTRACT, classes);
const ready = Object.fromEntries(classes.map((cls, i) => [cls.name, plan.classes[i].steadyReplicas]));

/** The listener's facts, one target group per class (ARNs do not enter the weights). */
function alb(of: readonly CapacityClass[] = classes): AlbRoutingFacts {
  return {
    kind: 'alb', listenerArn: 'listener', loadBalancerFullName: 'app/lb/1',
    targets: of.map((cls) => ({ class: routedClassFacts(cls), targetGroupArn: cls.name, targetGroupFullName: cls.name, namespace: 'n', deploymentName: 'd', nodePoolName: 'p' })),
  };
}
const facts = alb();
/** R221's input: inf2 and a10g may not take sensitive requests. */
const restricted = defineCapacityClasses(
  llamaClasses().map((c) => (c.name === 'l40s' ? c : { ...c, placement: { allowSensitive: false } })), { contract: LLAMA_CONTRACT, platform: 'ec2' },
);
const sensitive = { sensitive: true };

describe('initial weights: the policy\'s cost plan at planned demand, for both serving constructs', () => {
  test('the cheapest class per token carries the planned demand; every other ready class keeps the warm floor', () => {
    // 6000 tok/s planned; l40s 5 x 1200 carries it and is the cheapest per token; a10g and inf2 standbys keep 2 %.
    expect(initialWeights(facts, ready, plan.plannedTokensPerSecond)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
  });

  test('equals what the reconciler\'s policy routes in cost mode with that fleet ready (its first tick keeps them)', () => {
    const policyClasses = classes.map((cls) => ({
      name: cls.name, preferenceRank: cls.preferenceRank, tokensPerSecondPerReplica: cls.envelope.tokensPerSecondPerReplica,
      usdPerReplicaHour: cls.usdPerReplicaHour, placementAllowed: true,
    }));
    const views = policyClasses.map((cls, i) => {
      const n = plan.classes[i].steadyReplicas;
      return { cls, ready: n, steadyReady: n, capacity: n * cls.tokensPerSecondPerReplica, eligible: true };
    });
    const { shares } = routingPlan(views, plan.plannedTokensPerSecond, new Set(policyClasses.map((c) => c.name)), DEFAULT_POLICY_CONFIG);
    expect(initialWeights(facts, ready, plan.plannedTokensPerSecond)).toEqual(apportion(shares, policyClasses, DEFAULT_POLICY_CONFIG.weightTotal));
  });

  test('a fallback cheaper per token than the preferred class is filled first, up to what its standby carries', () => {
    const cheapInf2 = alb(classes.map((c) => (c.name === 'inf2' ? { ...c, usdPerReplicaHour: 0.1 } : c)));
    // inf2's one standby replica carries 300 of 6000 tok/s: 5 %.
    expect(initialWeights(cheapInf2, ready, plan.plannedTokensPerSecond)).toEqual({ l40s: 93, a10g: 2, inf2: 5 });
  });

  test('the warm floor is bounded by what a standby carries, and a class without ready replicas gets nothing', () => {
    expect(initialWeights(facts, ready, plan.plannedTokensPerSecond, { warmFloorShare: 0.2 })).toEqual({ l40s: 88, a10g: 7, inf2: 5 });
    expect(initialWeights(facts, { ...ready, a10g: 0 }, plan.plannedTokensPerSecond)).toEqual({ l40s: 98, a10g: 0, inf2: 2 });
  });
});

describe('initial weights under the placement the reconciler enforces (review R221)', () => {
  test('a class the placement forbids gets 0, as the reconciler gives it, and the allowed classes share the traffic', () => {
    // R221: {l40s: 96, inf2: 2, a10g: 2} were deployed for a sensitive service whose inf2 and a10g have allowSensitive: false.
    expect(initialWeights(alb(restricted), ready, plan.plannedTokensPerSecond, { placement: sensitive })).toEqual({ l40s: 100, a10g: 0, inf2: 0 });
    // Not sensitive: the placement forbids nothing.
    const notSensitive = { placement: { sensitive: false } };
    expect(initialWeights(alb(restricted), ready, plan.plannedTokensPerSecond, notSensitive)).toEqual({ l40s: 96, a10g: 2, inf2: 2 });
    expect(forbiddenRoutes(alb(restricted), sensitive)).toEqual(['a10g', 'inf2']);
  });

  test('the reconciler\'s first cost-mode tick on that fleet keeps them (no forbidden class, no correction)', () => {
    const restrictedFacts = alb(restricted);
    const weights = initialWeights(restrictedFacts, ready, plan.plannedTokensPerSecond, { placement: sensitive });
    const policyClasses = policyClassesFromFacts(restrictedFacts, sensitive);
    const series = (v: number) => Array.from({ length: policyWindowPeriods(DEFAULT_POLICY_CONFIG) }, () => v);
    const tick = (held: Record<string, number>) => decide({
      now: 1_800_000_000,
      classes: policyClasses,
      // The plan's demand is the contract's peak with its headroom; the policy adds the same headroom to what it reads.
      demandTokensPerSecond: series(plan.plannedTokensPerSecond / (1 + DEFAULT_POLICY_CONFIG.headroom)),
      signals: Object.fromEntries(policyClasses.map((c) => [c.name, {
        readyReplicas: series(ready[c.name]), desiredReplicas: series(ready[c.name]), capacityErrors: series(0),
      }])),
    }, { mode: 'cost', weights: held, modeSince: 1_800_000_000 - 3600, ramping: false });
    const { decision } = tick(weights);
    expect(decision.mode).toBe('cost');
    expect(decision.weights).toEqual(weights);
    expect(decision.weightsChanged).toBe(false);
    // The weights R221 found deployed are the ones the first run had to correct.
    expect(tick({ l40s: 96, a10g: 2, inf2: 2 }).decision).toMatchObject({ weights: weights, weightsChanged: true });
  });

  test('a SageMaker variant is forbidden when any of its pools is (SageMaker picks the pool, not the reconciler)', () => {
    const [l40s, a10g, inf2] = restricted;
    const variants: SageMakerRoutingFacts = {
      kind: 'sagemaker', endpointName: 'e', endpointArn: 'arn',
      variants: [
        { variantName: 'preferred', classes: [routedClassFacts(l40s), routedClassFacts(a10g)] },
        { variantName: 'fallback', classes: [routedClassFacts(inf2)] },
        { variantName: 'open', classes: [routedClassFacts(classes[1])] },
      ],
    };
    expect(forbiddenRoutes(variants, sensitive)).toEqual(['preferred', 'fallback']);
    const weights = initialWeights(variants, { preferred: 5, fallback: 1, open: 1 }, plan.plannedTokensPerSecond, { placement: sensitive });
    expect(weights).toEqual({ preferred: 0, fallback: 0, open: 100 });
  });

  test('no allowed class ready: all on the most preferred allowed class, as the reconciler holds it (never all zero)', () => {
    const none = { ...ready, l40s: 0 };
    expect(initialWeights(alb(restricted), none, plan.plannedTokensPerSecond, { placement: sensitive })).toEqual({ l40s: 100, a10g: 0, inf2: 0 });
  });

  test('a placement that forbids every class has no weights: it throws, naming the routes', () => {
    const none = alb(restricted.map((c) => ({ ...c, placement: { allowSensitive: false } })));
    expect(() => initialWeights(none, ready, plan.plannedTokensPerSecond, { placement: sensitive })).toThrow(
      'initialWeights(): the placement forbids every route (l40s, a10g, inf2); at least one must be allowed',
    );
  });
});
