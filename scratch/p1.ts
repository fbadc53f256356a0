import { findScenario } from '../lib/sim/scenarios';
import { policyFactory } from '../lib/sim/suite';
import { runSimulation } from '../lib/sim/simulator';
import { computeMetrics } from '../lib/sim/metrics';
import { generateTrace } from '../lib/sim/workload';
const seed = Number(process.argv[2] ?? 1);
const sc = findScenario('P1').build(seed);
const trace = generateTrace(sc.workload, sc.durationSeconds, seed);
const r = runSimulation(sc, policyFactory('library'), { seed, trace });
const m = computeMetrics(r, sc);
console.log('ttf', m.timeToFallbackSeconds, 'floor', m.physicalFloorSeconds, 'slo', m.sloAttainment, 'modes', m.modeChanges);
const s = r.series; const k = s.classCount;
for (let mm = 175; mm < 240; mm += 1) {
  const row = r.classNames.map((n, c) => `${n.slice(0,6)} r${s.readyReplicas[mm*k+c]}/d${s.desiredReplicas[mm*k+c]} w${(s.weights[mm*k+c]*100).toFixed(0)} x${s.rejected[mm*k+c]}`).join(' ');
  const served = r.classNames.map((_, c) => s.servedTokens[mm*k+c]);
  const def = s.demandTokens[mm] - s.readyReplicas[mm*k]*sc.classes[0].tokensPerSecondPerReplica*60;
  console.log(mm, (s.demandTokens[mm]/60).toFixed(2), 'def', (def/60).toFixed(2), 'fb', ((served.slice(1).reduce((a,b)=>a+b,0))/60).toFixed(2), s.modes[mm], row, s.reasons[mm].slice(0, 60));
}
