import { P1 } from '../lib/sim/scenarios';
import { runSimulation } from '../lib/sim/simulator';
import { libraryPolicy } from '../lib/sim/library-policy';
import { capacityOnly } from '../lib/sim/baselines';
const platform = (process.argv[2] ?? 'sagemaker') as 'sagemaker' | 'eks';
const seed = Number(process.argv[3] ?? 1);
for (const [name, pol] of [['library', libraryPolicy()], ['capacity-only', capacityOnly]] as const) {
  const sc = { ...P1.build(seed), platform };
  const run = runSimulation(sc, pol as any, { seed });
  const s = run.series; const k = s.classCount;
  let tot = 0, late = 0; const rows: string[] = [];
  for (let m = 0; m < s.minutes; m++) {
    let c = 0, met = 0; const per: string[] = [];
    for (let i = 0; i < k; i++) { c += s.completed[m*k+i]; met += s.sloMetRequests[m*k+i];
      per.push(`${sc.classes[i].name} w${s.weights[m*k+i].toFixed(2)} ${s.readyReplicas[m*k+i]}/${s.desiredReplicas[m*k+i]} r${s.routedRequests[m*k+i]} late${s.completed[m*k+i]-s.sloMetRequests[m*k+i]}`); }
    tot += c; late += c - met;
    if (c - met > 20) rows.push(`${m} ${s.modes[m]} late ${c-met}/${c} | ${per.join(' | ')}`);
  }
  console.log(name, 'late', late, 'of', tot, (100*late/tot).toFixed(2)+'%');
  console.log(rows.slice(0, 40).join('\n'));
}
