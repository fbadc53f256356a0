import { type CapacityClass } from '../core/service/capacity-class';
import { type ServiceContract } from '../core/service/contract';
import { type CapacityPlan, HOURS_PER_MONTH, planCapacity, type PlanOptions, replicasAtTarget } from '../core/service/sizing';

/** How the service degrades at one demand level, if the fleet scales to its bounds. */
export interface DegradationStep {
  /** Demand as a multiple of the contract's peak. */
  readonly multipleOfPeak: number;
  readonly demandTokensPerSecond: number;
  /** Tokens/s each class carries, in preference order (the preferred class first, fallbacks absorbing the rest). */
  readonly carried: Readonly<Record<string, number>>;
  /** Share of demand the fallbacks carry. */
  readonly fallbackShare: number;
  /** Share of demand shed (admission control rejects it: no class can meet the deadline). */
  readonly shedShare: number;
  /** Hourly cost of the replicas carrying that demand at their scaling targets, standby included. */
  readonly usdPerHour: number;
}

export interface DegradationReport {
  readonly plan: CapacityPlan;
  /** Demand (tokens/s) at which each class is full, cumulatively in preference order. */
  readonly saturation: ReadonlyArray<{ readonly name: string; readonly tokensPerSecond: number; readonly cumulativeTokensPerSecond: number }>;
  /** The same ladder with the preferred class unavailable (a shortage at zero). */
  readonly withPreferred: readonly DegradationStep[];
  readonly withoutPreferred: readonly DegradationStep[];
}

function ladder(classes: readonly CapacityClass[], plan: CapacityPlan, multiples: readonly number[], preferredAvailable: boolean): DegradationStep[] {
  const peak = plan.peakTokensPerSecond;
  return multiples.map((multiple) => {
    const demand = peak * multiple;
    let left = demand;
    const carried: Record<string, number> = {};
    let usdPerHour = 0;
    classes.forEach((cls, i) => {
      const p = plan.classes[i];
      const capacity = i === 0 && !preferredAvailable ? 0 : p.maxReplicas * cls.envelope.tokensPerSecondPerReplica;
      const take = Math.min(left, capacity);
      carried[cls.name] = take;
      left -= take;
      // Replicas at the scaling target to carry `take`, never below the class's autoscaling floor (standby).
      const atTarget = replicasAtTarget(take, cls.envelope.tokensPerSecondPerReplica, plan.headroom);
      const replicas = i === 0 && !preferredAvailable ? 0 : Math.min(p.maxReplicas, Math.max(i === 0 ? 0 : p.minReplicas, atTarget));
      usdPerHour += Math.ceil(replicas / cls.replicasPerInstance) * cls.usdPerHour;
    });
    const fallback = classes.slice(1).reduce((a, c) => a + carried[c.name], 0);
    return {
      multipleOfPeak: multiple,
      demandTokensPerSecond: demand,
      carried,
      fallbackShare: demand > 0 ? fallback / demand : 0,
      shedShare: demand > 0 ? Math.max(0, left) / demand : 0,
      usdPerHour,
    };
  });
}

/**
 * The capacity plan of a service (the library's own `planCapacity`) and how it saturates and degrades: at what
 * demand each class is full, what the fallbacks absorb, and what share is shed beyond that. Its cost is each class as a
 * fleet of its own (the EKS layout); a SageMaker endpoint's pooled variants run less standby (its `plannedCost`).
 */
export function degradationReport(contract: ServiceContract, classes: readonly CapacityClass[], options: PlanOptions = {},
  multiples: readonly number[] = [0.5, 1, 1.5, 2, 3]): DegradationReport {
  const plan = planCapacity(contract, classes, options);
  let cumulative = 0;
  const saturation = classes.map((cls, i) => {
    const t = plan.classes[i].maxReplicas * cls.envelope.tokensPerSecondPerReplica;
    cumulative += t;
    return { name: cls.name, tokensPerSecond: t, cumulativeTokensPerSecond: cumulative };
  });
  return { plan, saturation, withPreferred: ladder(classes, plan, multiples, true), withoutPreferred: ladder(classes, plan, multiples, false) };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const usd = (v: number) => `$${v.toFixed(2)}`;

export function formatDegradationReport(contract: ServiceContract, classes: readonly CapacityClass[], r: DegradationReport): string {
  const plan = r.plan;
  const perRequest = contract.requestShape.meanOutputTokens;
  const out: string[] = [];
  out.push(`Capacity plan for ${plan.service}: peak ${contract.peakRequestsPerSecond} req/s = ${plan.peakTokensPerSecond} tokens/s, ` +
    `planned with ${Math.round(plan.headroom * 100)}% headroom = ${plan.plannedTokensPerSecond} tokens/s`);
  out.push('');
  out.push(table([
    ['class', 'role', 'instance', 'min', 'steady', 'max', 'target tok/s/replica', 'target in-flight', 'target req/s', '$/1M tok', 'steady $/h', 'saturates at tok/s'],
    ...plan.classes.map((p, i) => [p.name, p.role, classes[i].instanceType, String(p.minReplicas), String(p.steadyReplicas), String(p.maxReplicas),
      p.targetTokensPerSecondPerReplica.toFixed(1), p.targetConcurrencyPerReplica.toFixed(1), p.targetRequestsPerSecondPerReplica.toFixed(3),
      p.usdPerMillionTokens.toFixed(3), usd(p.steadyUsdPerHour), r.saturation[i].tokensPerSecond.toFixed(0)]),
  ]));
  out.push('');
  out.push(`Steady cost: ${usd(plan.steadyUsdPerHour)}/h, ${usd(plan.steadyUsdPerMonth)}/month (${HOURS_PER_MONTH} h), ` +
    `of which warm standby of fallbacks ${usd(plan.standbyUsdPerHour)}/h, ${usd(plan.standbyUsdPerHour * HOURS_PER_MONTH)}/month.`);
  out.push(`Fallbacks alone cover ${(plan.fallbackCoverage * 100).toFixed(0)}% of planned peak; with no preferred capacity at all, ` +
    `${(plan.shedShareWithoutPreferred * 100).toFixed(1)}% of peak demand is shed.`);
  out.push('');
  out.push('Saturation (each class at its autoscaling maximum, in preference order):');
  for (const s of r.saturation) {
    out.push(`  ${s.name}: full at ${s.tokensPerSecond.toFixed(0)} tokens/s (${(s.tokensPerSecond / perRequest).toFixed(1)} req/s); ` +
      `service full at ${s.cumulativeTokensPerSecond.toFixed(0)} tokens/s (${(s.cumulativeTokensPerSecond / perRequest).toFixed(1)} req/s)`);
  }
  const ladderTable = (title: string, steps: readonly DegradationStep[]) => {
    out.push('');
    out.push(title);
    out.push(table([
      ['demand', 'tokens/s', ...classes.map((c) => c.name), 'fallback share', 'shed share', '$/h'],
      ...steps.map((s) => [`${s.multipleOfPeak}x peak`, s.demandTokensPerSecond.toFixed(0), ...classes.map((c) => s.carried[c.name].toFixed(0)),
        `${(s.fallbackShare * 100).toFixed(1)}%`, `${(s.shedShare * 100).toFixed(1)}%`, usd(s.usdPerHour)]),
    ]));
  };
  ladderTable('Degradation with all classes available (tokens/s carried per class):', r.withPreferred);
  ladderTable(`Degradation with no capacity for ${classes[0].name} (a shortage):`, r.withoutPreferred);
  return out.join('\n');
}
