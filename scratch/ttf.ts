import { findScenario } from '../lib/sim/scenarios';
import { policyFactory } from '../lib/sim/suite';
import { runSimulation } from '../lib/sim/simulator';
import { computeMetrics } from '../lib/sim/metrics';
import { generateTrace } from '../lib/sim/workload';
const [id, pols, seeds] = process.argv.slice(2);
for (const seed of (seeds ?? '1-10').split('-').map(Number).reduce((a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i) as any)) {
  const sc = findScenario(id).build(seed);
  const trace = generateTrace(sc.workload, sc.durationSeconds, seed);
  const out: string[] = [];
  for (const p of pols.split(',')) {
    const r = runSimulation(sc, policyFactory(p), { seed, trace });
    const m = computeMetrics(r, sc);
    // first deficit minute
    const s = r.series; const k = s.classCount; const ev = sc.capacityEvents![0]; const ci = sc.classes.findIndex((c) => c.name === ev.className);
    let first = -1; for (let mm = Math.floor(ev.onset / 60); mm < s.minutes; mm++) { const d = s.demandTokens[mm] - s.readyReplicas[mm * k + ci] * sc.classes[ci].tokensPerSecondPerReplica * 60; if (d > 0.02 * s.demandTokens[mm]) { first = mm; break; } }
    out.push(`${p}: slo ${(m.sloAttainment * 100).toFixed(2)} cost ${m.usdPerMillionSloTokens.toFixed(3)} ttf ${m.timeToFallbackSeconds} firstDeficit +${(first * 60 - ev.onset)} modes ${m.modeChanges}`);
  }
  console.log(seed, out.join(' | '));
}
