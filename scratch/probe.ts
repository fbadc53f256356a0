import { findScenario } from '../lib/sim/scenarios';
import { policyFactory } from '../lib/sim/suite';
import { runSimulation } from '../lib/sim/simulator';
import { generateTrace } from '../lib/sim/workload';
const [id, seedS, pols, from, to] = process.argv.slice(2);
const seed = Number(seedS);
const sc = findScenario(id).build(seed);
const trace = generateTrace(sc.workload, sc.durationSeconds, seed);
for (const p of pols.split(',')) {
  const r = runSimulation(sc, policyFactory(p), { seed, trace });
  const s = r.series; const k = s.classCount;
  const rej = r.classNames.map((_, c) => { let x = 0; for (let m = 0; m < s.minutes; m++) x += s.rejected[m * k + c]; return x; });
  console.log(p, 'rejected by class', r.classNames.map((n, i) => `${n}:${rej[i]}`).join(' '), 'arrivals', r.totalArrivals);
  for (let m = Number(from ?? 55); m < Number(to ?? 80); m++) {
    const row = r.classNames.map((n, c) => `${n} r${s.readyReplicas[m*k+c]}/d${s.desiredReplicas[m*k+c]} w${(s.weights[m*k+c]*100).toFixed(0)} rej${s.rejected[m*k+c]} ce${s.capacityErrors[m*k+c]}`).join(' | ');
    console.log(m, (s.demandTokens[m]/60).toFixed(0), s.modes[m], row, s.reasons[m].slice(0, 90));
  }
}
