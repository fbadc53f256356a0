import { libraryPolicy } from './lib/sim/library-policy';
import { computeMetrics } from './lib/sim/metrics';
import { routedScenario } from './lib/sim/model';
import { H9 } from './lib/sim/scenarios';
import { runSimulation } from './lib/sim/simulator';
const rows: Record<string, { slo: number[]; usd: number[] }> = {};
for (let seed = 1; seed <= 10; seed++) {
  const h9 = routedScenario({ ...H9.build(seed), platform: 'sagemaker' as const });
  const [l40s] = h9.pools!.preferred!;
  const hot = { ...h9, classes: h9.classes.map((c, i) => (i === 0 ? { ...c, targetConcurrencyPerReplica: l40s.targetConcurrencyPerReplica } : c)) };
  for (const [name, sc] of [['smallest target (default)', h9], ['priority-1 target', hot]] as const) {
    const m = computeMetrics(runSimulation(sc, libraryPolicy(), { seed }), sc);
    (rows[name] ??= { slo: [], usd: [] }).slo.push(m.sloAttainment * 100);
    rows[name].usd.push(m.usdPerMillionSloTokens);
  }
}
const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
for (const [k, v] of Object.entries(rows)) console.log(`${k}: SLO ${mean(v.slo).toFixed(2)}% (min ${Math.min(...v.slo).toFixed(2)}), $${mean(v.usd).toFixed(3)} per 1M SLO tokens`);
