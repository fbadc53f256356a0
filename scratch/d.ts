import { decide, DEFAULT_POLICY_CONFIG, policyWindowPeriods, type PolicyClass, type ClassSignals, type PolicyInput, type PolicyState } from '../lib/core';
const CLASSES: PolicyClass[] = [
  { name: 'inf2', preferenceRank: 0, tokensPerSecondPerReplica: 300, usdPerReplicaHour: 0.76, placementAllowed: true },
  { name: 'g6', preferenceRank: 1, tokensPerSecondPerReplica: 200, usdPerReplicaHour: 0.8, placementAllowed: true },
  { name: 'g5', preferenceRank: 2, tokensPerSecondPerReplica: 250, usdPerReplicaHour: 1.0, placementAllowed: true },
];
const W = policyWindowPeriods(DEFAULT_POLICY_CONFIG); const NOW = 1_800_000_000;
const flat = (v: number | null, n = W) => Array.from({ length: n }, () => v);
const healthy = (r: number, n = W): ClassSignals => ({ readyReplicas: flat(r, n), desiredReplicas: flat(r, n), capacityErrors: flat(0, n), latencyP95Ms: flat(400, n) });
const input = (signals: Record<string, ClassSignals>, demand: number | null, extra: Partial<PolicyInput> = {}): PolicyInput => ({ now: NOW, classes: CLASSES, signals, demandTokensPerSecond: flat(demand), config: { latencySloP95Ms: 1000 }, ...extra });
const cost = (w: Record<string, number>): PolicyState => ({ mode: 'cost', weights: w, modeSince: NOW - 3600, ramping: false });
const BASE = { inf2: healthy(3), g6: healthy(1), g5: healthy(1) };
const show = (l: string, s: any) => console.log(l, JSON.stringify({ mode: s.decision.mode, w: s.decision.weights, r: s.decision.reason.code, t: s.decision.reason.triggers, d: s.decision.deficitTokensPerSecond, st: s.state }));
show('1500 cost', decide(input(BASE, 1500), cost({ inf2: 96, g6: 2, g5: 2 })));
const sustained = { inf2: healthy(3), g6: healthy(1), g5: healthy(1) };
show('sustained 1500', decide(input(sustained, 1500), cost({ inf2: 70, g6: 13, g5: 17 })));
const errs = { ...BASE, inf2: { ...healthy(3), capacityErrors: [...flat(0, W - 1), 1] } };
show('err 800', decide(input(errs, 800), cost({ inf2: 96, g6: 2, g5: 2 })));
show('err 500', decide(input(errs, 500), cost({ inf2: 96, g6: 2, g5: 2 })));
show('zero', decide(input({ ...BASE, inf2: { ...healthy(0), capacityErrors: [...flat(0, W - 1), 3] } }, 300), cost({ inf2: 96, g6: 2, g5: 2 })));
show('relapse ramp', decide(input(errs, 800), { mode: 'cost', weights: { inf2: 77, g6: 11, g5: 12 }, modeSince: NOW - 60, ramping: true }));
show('cap stabil', decide(input({ ...BASE, inf2: { ...healthy(3), capacityErrors: flat(0).map((_, i) => (i === W - 5 ? 1 : 0)) } }, 500), { mode: 'capacity', weights: { inf2: 67, g6: 15, g5: 18 }, modeSince: NOW - 3600, ramping: false }));
show('cap deficit', decide(input(errs, 1500), { mode: 'capacity', weights: { inf2: 67, g6: 15, g5: 18 }, modeSince: NOW - 60, ramping: false }));
