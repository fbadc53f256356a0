// usage: ts-node perseed.ts SCEN PLATFORM seeds policyA,policyB [k=v libraryConfig...]
import { runJob } from '../lib/sim/suite';
const [scen, platform, seedsArg, pols, ...cfg] = process.argv.slice(2);
const [a, b] = seedsArg.split('-').map(Number);
const libraryConfig: Record<string, number> = {};
for (const kv of cfg) { const [k, v] = kv.split('='); libraryConfig[k] = Number(v); }
const policies = pols.split(',');
let sums: Record<string, number[]> = {};
for (let s = a; s <= (b ?? a); s++) {
  const r = runJob({ scenarioId: scen, seed: s, policies, charts: false, platform: platform as any, libraryConfig });
  const row = policies.map((p) => { const m = r.metrics[p] as any; (sums[p] ??= [0, 0, 0]); sums[p][0] += m.sloAttainment; sums[p][1] += m.usdPerMillionSloTokens; sums[p][2] += m.fallbackCostUsd;
    return `${p.slice(0, 8)} ${(100 * m.sloAttainment).toFixed(2)} ${m.usdPerMillionSloTokens.toFixed(3)} fb$${m.fallbackCostUsd.toFixed(1)} mc${m.modeChanges}`; });
  console.log(s, row.join(' | '));
}
const n = (b ?? a) - a + 1;
for (const p of policies) console.log(p, (100 * sums[p][0] / n).toFixed(2), (sums[p][1] / n).toFixed(3), 'fb', (sums[p][2] / n).toFixed(2));
