import { withFreshErrors } from '../core/reconciler/observe';
import { runsWhenWritable } from './library-policy';
import { availabilityAt, type SimClass } from './model';
import { type Decision, type Observation, type PolicyFactory, latest, normalise } from './policy';

/**
 * The alternatives the library's policy is compared with, each behind the same RoutingPolicy interface, plus the
 * oracle that bounds cost from below. They see exactly what the reconciler would see (published metrics only),
 * except the oracle, which knows the future.
 */

/** USD per output token of a class at its envelope. */
export function usdPerToken(c: SimClass): number {
  return c.usdPerReplicaHour / (3600 * c.tokensPerSecondPerReplica);
}

/** Class indices from cheapest to dearest per token (preference rank breaks ties). */
export function costOrder(classes: readonly SimClass[]): number[] {
  const byCost = (a: number, b: number) => usdPerToken(classes[a]) - usdPerToken(classes[b]) || classes[a].preferenceRank - classes[b].preferenceRank;
  return classes.map((_, i) => i).sort(byCost);
}

/**
 * Ready replicas per class as the library's Reconciler counts them now (SageMaker DescribeEndpoint, EKS
 * DescribeTargetHealth), else from the latest published datapoint (undefined when a class has none published): every
 * policy routes on the freshest count a deployed reconciler has.
 */
export function readyReplicas(o: Observation): Array<number | undefined> {
  return o.windows.map((w, i) => o.live?.[i]?.ready ?? o.healthyTargets?.[i] ?? latest(w)?.readyReplicas);
}

/** Demand in output tokens/s from the latest published datapoint. */
export function demandTokensPerSecond(o: Observation): number | undefined {
  const d = latest(o.demand);
  return d ? d.tokens / 60 : undefined;
}

/** Index of the most preferred class. */
export function preferredIndex(classes: readonly SimClass[]): number {
  let best = 0;
  classes.forEach((c, i) => {
    if (c.preferenceRank < classes[best].preferenceRank) best = i;
  });
  return best;
}

/**
 * Class `ci`'s capacity errors in the newest period of its window, as the library's Reconciler reads them
 * (`withFreshErrors`, lib/core/reconciler/observe.ts): its window is cut at the metric delay, but capacity errors
 * count up to the newest period CloudWatch has published, added to the window's newest slot. Undefined when the
 * window has no published datapoint.
 */
export function capacityErrorsNow(o: Observation, ci: number): number | undefined {
  const window = o.windows[ci];
  const newest = latest(window);
  if (!newest) return undefined;
  const newer: number[] = [];
  const metrics = o.metrics;
  if (metrics) {
    const s = metrics.series;
    // Past the newest datapoint only unpublished minutes (an outage's) may lie within the window: none is readable.
    for (let m = newest.minute + 1; m < s.minutes && (m + 1) * 60 <= o.now; m++) {
      if (metrics.readable(m, o.now)) newer.push(s.capacityErrors[m * s.classCount + ci]);
    }
  }
  const errors = withFreshErrors([newest.capacityErrors], newer, false);
  return errors[errors.length - 1] ?? 0;
}

const hold = (o: Observation, mode: string, reason: string): Decision => ({ weights: o.weights, mode, reason });

/**
 * A baseline that reacts to what it observes, deployed as a loop like the library's: through the same Reconciler
 * construct it would get the same runs, including the one when the routing target takes writes again (SageMaker's
 * IN_SERVICE rule, `runsWhenWritable`), so a write refused while the endpoint was Updating is made then rather than at
 * the next scheduled run (review R257: before, only the library had it). The static baselines (retry-on-preferred,
 * static weights) write nothing after their first run, and the oracles set replicas themselves: they need none.
 */
function reconciled(factory: PolicyFactory): PolicyFactory {
  return (ctx) => ({ ...factory(ctx), runsWhenWritable: runsWhenWritable(ctx.scenario) });
}

/** A retry loop: everything goes to the preferred class, which keeps asking for capacity. */
export const retryOnPreferred: PolicyFactory = ({ scenario }) => {
  const p = preferredIndex(scenario.classes);
  return {
    name: 'retry-on-preferred',
    decide: () => ({ weights: scenario.classes.map((_, i) => (i === p ? 1 : 0)), mode: 'preferred', reason: 'always the preferred class' }),
  };
};

/** Round-robin over all ready replicas: request-count weights, blind to how many tokens each replica sustains. */
export const roundRobin: PolicyFactory = reconciled(() => ({
  name: 'round-robin',
  decide: (o) => {
    const ready = readyReplicas(o);
    if (ready.some((r) => r === undefined)) return hold(o, 'round-robin', 'missing metrics: hold');
    return { weights: ready.map((r) => r ?? 0), mode: 'round-robin', reason: 'one share per ready replica' };
  },
}));

/** Static weights: each class's share of the planned token capacity (initial replicas x envelope); never reacts. */
export const staticWeights: PolicyFactory = ({ scenario }) => {
  const weights = normalise(scenario.classes.map((c) => Math.max(1, c.initialReplicas) * c.tokensPerSecondPerReplica));
  return { name: 'static-weights', decide: () => ({ weights, mode: 'static', reason: 'planned throughput shares' }) };
};

/**
 * Fills demand x (1 + headroom) with ready token capacity in cost order; what ready capacity cannot carry goes to the
 * cheapest class. Weights are proportional to the tokens assigned.
 */
export function costPlanWeights(classes: readonly SimClass[], ready: readonly number[], demand: number, headroom: number): number[] {
  const order = costOrder(classes);
  const assigned = classes.map(() => 0);
  let left = demand * (1 + headroom);
  for (const i of order) {
    const take = Math.min(left, ready[i] * classes[i].tokensPerSecondPerReplica);
    assigned[i] += take;
    left -= take;
  }
  if (left > 0) assigned[order[0]] += left;
  return assigned;
}

/** Cost-only: always the cost plan, no capacity mode, no warm floor. */
export const costOnly: PolicyFactory = reconciled(({ scenario }) => ({
  name: 'cost-only',
  decide: (o) => {
    const ready = readyReplicas(o);
    const demand = demandTokensPerSecond(o);
    if (demand === undefined || ready.some((r) => r === undefined)) return hold(o, 'cost', 'missing metrics: hold');
    return { weights: costPlanWeights(scenario.classes, ready.map((r) => r ?? 0), demand, 0.1), mode: 'cost', reason: 'cheapest ready capacity first' };
  },
}));

/** Capacity-only: weights proportional to ready token capacity of every class, always. */
export const capacityOnly: PolicyFactory = reconciled(({ scenario }) => ({
  name: 'capacity-only',
  decide: (o) => {
    const ready = readyReplicas(o);
    if (ready.some((r) => r === undefined)) return hold(o, 'capacity', 'missing metrics: hold');
    return {
      weights: ready.map((r, i) => (r ?? 0) * scenario.classes[i].tokensPerSecondPerReplica),
      mode: 'capacity',
      reason: 'proportional to ready token capacity',
    };
  },
}));

/**
 * The reference experiment's switcher: all traffic on the preferred class until it looks short (capacity errors,
 * latency breach or demand above its ready capacity), then a fixed split by measured breaking points; it flips back
 * as soon as the condition clears (no hysteresis, no stabilization window).
 */
export const twoStateSwitch: PolicyFactory = reconciled(({ scenario }) => {
  const classes = scenario.classes;
  const p = preferredIndex(classes);
  const split = normalise(classes.map((c) => c.tokensPerSecondPerReplica));
  const slo = scenario.service.ttftSeconds;
  return {
    name: 'two-state-switch',
    decide: (o) => {
      const dp = latest(o.windows[p]);
      const demand = demandTokensPerSecond(o);
      if (!dp || demand === undefined) return hold(o, o.weights[p] === 1 ? 'preferred' : 'fallback', 'missing metrics: hold');
      // Capacity errors as the library reads them (up to the newest published period), the rest from the cut window.
      const errors = o.capacityErrorSignal !== false && (capacityErrorsNow(o, p) ?? 0) > 0;
      // Defined: without a live count it is the same window's latest datapoint, `dp`.
      const ready = readyReplicas(o)[p]!;
      const short = errors || dp.latencyP95Seconds > slo * 4 || demand > ready * classes[p].tokensPerSecondPerReplica;
      return short
        ? { weights: split, mode: 'fallback', reason: 'preferred short: fixed split' }
        : { weights: classes.map((_, i) => (i === p ? 1 : 0)), mode: 'preferred', reason: 'preferred healthy' };
    },
  };
});

/** Oracle window: decisions are fixed per 5 minutes from the known future. */
const ORACLE_WINDOW_SECONDS = 300;

/**
 * Oracle: knows future demand and availability, provisions with zero delay, and runs the cheapest feasible mix per
 * 5-minute window sized for the window's peak minute at the envelope. Its cost is the reference lower bound.
 *
 * With `fleetStructure`, the same clairvoyance pays what every autoscaled fleet of the plan pays: replicas sized at
 * the scaling target (envelope / (1 + headroom)), never fewer than each class's autoscaling floor (the fallbacks'
 * warm standby). Regret against it is the cost of the policy's decisions alone, not of the fleet's structure.
 */
function clairvoyant(name: string, fleetStructure: boolean): PolicyFactory {
  return ({ scenario, trace }) => {
    const classes = scenario.classes;
    const windows = Math.ceil(scenario.durationSeconds / ORACLE_WINDOW_SECONDS);
    const minutePeak = new Float64Array(windows);
    const minuteTokens = new Float64Array(Math.ceil(scenario.durationSeconds / 60) + 1);
    for (let i = 0; i < trace.count; i++) minuteTokens[Math.floor(trace.time[i] / 60)] += trace.output[i];
    minuteTokens.forEach((tokens, m) => {
      const w = Math.floor((m * 60) / ORACLE_WINDOW_SECONDS);
      if (w < windows) minutePeak[w] = Math.max(minutePeak[w], tokens / 60);
    });
    const order = costOrder(classes);
    const plans = Array.from({ length: windows }, (_, w) => {
      const from = w * ORACLE_WINDOW_SECONDS;
      const replicas = classes.map(() => 0);
      const assigned = classes.map(() => 0);
      let left = minutePeak[w];
      for (const i of order) {
        const c = classes[i];
        let cap = c.maxReplicas;
        for (let t = from; t < from + ORACLE_WINDOW_SECONDS; t += 60) cap = Math.min(cap, availabilityAt(scenario.availability?.[c.name], t));
        // Interrupted replicas are lost: the oracle keeps no more than survive.
        for (const it of scenario.interruptions ?? []) {
          const overlaps = it.at - it.noticeSeconds < from + ORACLE_WINDOW_SECONDS && it.at >= from;
          if (it.className === c.name && overlaps) cap = Math.max(0, cap - it.replicas);
        }
        const speed = scenario.speedFactors?.[c.name] ?? 1;
        const perReplica = (fleetStructure ? c.targetTokensPerSecondPerReplica : c.tokensPerSecondPerReplica) * speed;
        const n = Math.max(fleetStructure ? Math.min(cap, c.minReplicas) : 0, Math.min(cap, Math.ceil(left / perReplica - 1e-9)));
        replicas[i] = n;
        assigned[i] = Math.min(left, n * c.tokensPerSecondPerReplica * speed);
        left -= assigned[i];
      }
      return { replicas, weights: assigned };
    });
    return {
      name,
      decide: (o) => {
        const plan = plans[Math.min(windows - 1, Math.floor(o.now / ORACLE_WINDOW_SECONDS))];
        return { weights: plan.weights, replicas: plan.replicas, mode: 'oracle', reason: 'cheapest feasible mix for the known future' };
      },
    };
  };
}

export const oracle: PolicyFactory = clairvoyant('oracle', false);
export const fleetOracle: PolicyFactory = clairvoyant('fleet-oracle', true);

/** Every policy the suite compares, in table order; the library's own is added by `suitePolicies()`. */
export const BASELINES: ReadonlyArray<{ readonly name: string; readonly factory: PolicyFactory }> = [
  { name: 'retry-on-preferred', factory: retryOnPreferred },
  { name: 'round-robin', factory: roundRobin },
  { name: 'static-weights', factory: staticWeights },
  { name: 'cost-only', factory: costOnly },
  { name: 'capacity-only', factory: capacityOnly },
  { name: 'two-state-switch', factory: twoStateSwitch },
  { name: 'fleet-oracle', factory: fleetOracle },
  { name: 'oracle', factory: oracle },
];
