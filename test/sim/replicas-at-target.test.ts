// One count of replicas from throughput (`replicasAtTarget`, lib/core/service/sizing.ts): the plan's peak fleet, the
// Reconciler's replica floors and the simulator's fleet at time 0 agree at a boundary, where the four copies it
// replaced gave 5, 5, 6 and 6 (review R251: the simulator's divided by the plan's target rounded to 0.01).
import { DEFAULT_POLICY_CONFIG } from '../../lib/core/policy/defaults';
import { replicaFloors } from '../../lib/core/policy/plan';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { planCapacity, replicasAtTarget } from '../../lib/core/service/sizing';
import { simClassesFromPlan } from '../../lib/sim/classes';
import { HELD_OUT, SCENARIOS } from '../../lib/sim/scenarios';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

// A10G alone: envelope 400 tokens/s, headroom 0.2, so a target of 333.33... tokens/s per replica (the plan publishes
// 333.33); five replicas at their target carry `boundary`.
const [a10g] = defineCapacityClasses(llamaClasses().filter((c) => c.name === 'a10g'), { contract: LLAMA_CONTRACT });
const envelope = a10g.envelope.tokensPerSecondPerReplica;
const boundary = (5 * envelope) / 1.2;

test('n replicas at their target carry n targets; any more throughput needs one more', () => {
  expect(envelope).toBe(400);
  expect(replicasAtTarget(boundary, envelope, 0.2)).toBe(5);
  expect(replicasAtTarget(boundary + 0.01, envelope, 0.2)).toBe(6);
  expect(replicasAtTarget(0, envelope, 0.2)).toBe(0);
  // Without headroom, at the envelope.
  expect(replicasAtTarget(5 * envelope, envelope, 0)).toBe(5);
});

test('at the boundary the plan, the Reconciler\'s floor and the simulator\'s fleet at time 0 are the same count', () => {
  const contract = { ...LLAMA_CONTRACT, peakRequestsPerSecond: boundary / LLAMA_CONTRACT.requestShape.meanOutputTokens };
  const plan = planCapacity(contract, [a10g]);
  expect(plan.headroom).toBe(0.2);
  const policyClass = { name: 'a10g', preferenceRank: 0, tokensPerSecondPerReplica: envelope, usdPerReplicaHour: 1, placementAllowed: true };
  const floors = replicaFloors(
    [{ cls: policyClass, ready: 0, steadyReady: 0, capacity: 0, eligible: false }], boundary, new Set(['a10g']), DEFAULT_POLICY_CONFIG,
  );
  const [simulated] = simClassesFromPlan([a10g], plan, { a10g: { provisioningSeconds: 300 } }, contract, boundary);
  expect({ plan: plan.classes[0].replicasForPeak, floor: floors.get('a10g'), simulated: simulated.initialReplicas })
    .toEqual({ plan: 5, floor: 5, simulated: 5 });
});

test('every built-in scenario hands the simulated Reconciler the headroom of the plan its classes come from (the constructs\' way)', () => {
  for (const s of [...SCENARIOS, ...HELD_OUT].map((d) => d.build(1))) expect({ id: s.id, headroom: s.headroom }).toEqual({ id: s.id, headroom: 0.2 });
});
