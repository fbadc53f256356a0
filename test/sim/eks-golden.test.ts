// EKS results pinned on one short run per policy kind: a change meant for SageMaker (its target tracking, rollbacks,
// event runs) or for the event loop must leave EKS exactly as it was. When an EKS change is intended, rerun the bench,
// check that the EKS numbers moved as meant, and update the figures here (the test prints the new ones).
import { libraryPolicy } from '../../lib/sim/library-policy';
import { costOnly } from '../../lib/sim/baselines';
import { type PolicyFactory } from '../../lib/sim/policy';
import { S1, S9 } from '../../lib/sim/scenarios';
import { runSimulation } from '../../lib/sim/simulator';

const SHORT_LLM = { durationMinutes: 100, onsetMinute: 30, shortageMinutes: 40, meanRate: 10, preferredInstancesDuringShortage: 2, flapMinutes: 40 };

function fingerprint(scenario: Parameters<typeof runSimulation>[0], policy: PolicyFactory): string {
  const s = runSimulation(scenario, policy, { seed: 5 }).series;
  const sum = (a: ArrayLike<number>) => Array.from(a).reduce((x, y) => x + y, 0);
  return [sum(s.sloMetTokens), sum(s.rejected), sum(s.costUsd).toFixed(9), sum(s.desiredReplicas), s.modes.join('').length].join(' ');
}

test.each([
  ['S1', 'library', '19471532 308 16.797031667 748 636'],
  ['S1', 'cost-only', '19379630 707 15.836625000 690 400'],
  ['S9', 'library', '12695542 2172 14.950218004 670 628'],
])('EKS %s, %s: the run is the one the bench measured', (id, policy, expected) => {
  const scenario = { ...(id === 'S1' ? S1 : S9).build(5, SHORT_LLM), platform: 'eks' as const };
  const got = fingerprint(scenario, policy === 'library' ? libraryPolicy() : costOnly);
  if (got !== expected) console.log(`EKS ${id} ${policy}: ${got}`);
  expect(got).toBe(expected);
});
