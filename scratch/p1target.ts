import { P1 } from '../lib/sim/scenarios';
import { runSimulation } from '../lib/sim/simulator';
import { libraryPolicy } from '../lib/sim/library-policy';
import { capacityOnly, costOnly, staticWeights } from '../lib/sim/baselines';
import { computeMetrics } from '../lib/sim/metrics';
const mode = process.argv[2] ?? 'declared';
for (const [name, pol] of [['library', libraryPolicy()], ['capacity-only', capacityOnly], ['cost-only', costOnly], ['static', staticWeights]] as const) {
  const acc: number[][] = [];
  for (const seed of [1, 2, 3]) {
    const base = { ...P1.build(seed), platform: 'sagemaker' as const };
    const classes = base.classes.map((c) => mode === 'little'
      ? { ...c, targetConcurrencyPerReplica: Math.min(c.safeConcurrency, c.tokensPerSecondPerReplica * 0.9) / 1.2 } : c);
    const sc = { ...base, classes };
    const m = computeMetrics(runSimulation(sc, pol as any, { seed }), sc);
    acc.push([m.sloAttainment * 100, m.usdPerMillionSloTokens]);
  }
  const mean = (i: number) => (acc.reduce((a, r) => a + r[i], 0) / acc.length).toFixed(3);
  console.log(mode, name, mean(0), mean(1));
}
