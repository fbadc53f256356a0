import { replicasAtTarget } from '../service/sizing';
import { type PolicyClass, type PolicyConfig } from './types';

/** A class as seen this tick: its ready token capacity and whether it may take traffic. */
export interface ClassView {
  readonly cls: PolicyClass;
  /** Ready replicas the plan routes on: counted at this run where the input has the count, else the newest period's. */
  readonly ready: number;
  /**
   * Ready replicas a replica floor never goes below: the fewer of `ready` and the newest period's count. A count taken
   * at one instant can include pods that are about to go (a rolling update's surge pods are healthy before the old
   * ones drain); held as a floor, the autoscaler would keep them for the rest of capacity mode.
   */
  readonly steadyReady: number;
  /** Ready token capacity, tokens/s: ready replicas x envelope. */
  readonly capacity: number;
  /** Placement allowed and at least one ready replica. */
  readonly eligible: boolean;
}

/** Shares (0..1, summing to 1) by class name. */
export type Shares = Map<string, number>;

/** USD per output token at the envelope: price per hour / (3600 x tokens/s). */
export function usdPerToken(cls: PolicyClass): number {
  return cls.usdPerReplicaHour / (3600 * cls.tokensPerSecondPerReplica);
}

/** Cheapest per token first; preference rank, then name, break ties so the order is total and deterministic. */
export function byCost(a: PolicyClass, b: PolicyClass): number {
  const pa = usdPerToken(a);
  const pb = usdPerToken(b);
  // Prices equal up to float noise (0.8 / 200 vs 1.0 / 250) are a tie, decided by preference.
  const cost = Math.abs(pa - pb) <= 1e-9 * Math.max(pa, pb) ? 0 : pa - pb;
  return cost || a.preferenceRank - b.preferenceRank || a.name.localeCompare(b.name);
}

export function byPreference(a: Pick<PolicyClass, 'name' | 'preferenceRank'>, b: Pick<PolicyClass, 'name' | 'preferenceRank'>): number {
  return a.preferenceRank - b.preferenceRank || a.name.localeCompare(b.name);
}

/**
 * How the class that receives the deficit is asked to grow (`routingPlan`): by its routed load alone (`load`: no
 * replica floors applied), or by replica floors as the platform takes them (`PolicyInput.floorsTakenBy`).
 */
export type ReceiverGrowth = 'load' | 'published' | 'capacity-writes';

/**
 * The routing plan, the same in both modes: `demand` (the planned high quantile) is assigned cheapest per token first,
 * each class up to its ready envelope capacity (the measured sustainable rate at the SLO). What no ready capacity can
 * carry (the deficit) is given to the cheapest class that can grow, the receiver: unless replica floors ask for the
 * replicas, its autoscaler must *see* load above its target to add them, so it is routed part of the deficit above its
 * envelope (`growth`, `RECEIVER_LOAD_ABOVE_ENVELOPE`). A class that cannot grow (capacity evidence, or the preferred
 * class in capacity mode) gets no more than its ready capacity. The rest of the deficit is spread over every eligible
 * class in proportion to ready capacity, where the engines' queues absorb what they can and the admission limits shed
 * the rest (the least shedding: each class over its envelope by the same fraction); when no class can grow, all of
 * it. Every eligible class is then lifted to its warm floor.
 *
 * Why each class is filled to its envelope and not to envelope / (1 + headroom): autoscalers target
 * envelope / (1 + headroom) per replica (lib/core/service/sizing.ts). Capping the cheap class at that target would hold it
 * exactly at its target, so it would never scale out and the dearer class would carry the overflow for good. Filled to
 * its envelope it runs above its target, scales out, and the overflow drains back to it as replicas become ready.
 *
 * Why a receiver grown by its load takes load above its envelope, not just its proportional share of the spread: a
 * one-replica fallback given a share proportional to its one replica sees load at its target and never grows (the P1
 * reference experiment took 25 minutes to fall back that way).
 */
export function routingPlan(
  eligible: readonly ClassView[],
  demand: number,
  growable: ReadonlySet<string>,
  config: PolicyConfig,
  growth: ReceiverGrowth = 'load',
): { shares: Shares; deficit: number; receiver?: string } {
  const { ordered, carried: assigned, deficit } = fillReadyCheapestFirst(eligible, demand);
  const receiverView = deficit > 0 ? ordered.find((v) => growable.has(v.cls.name)) : undefined;
  const receiver = receiverView?.cls.name;
  const toReceiver = receiverView ? Math.min(deficit, receiverView.capacity * RECEIVER_LOAD_ABOVE_ENVELOPE[growth](config)) : 0;
  if (receiver) assigned.set(receiver, assigned.get(receiver)! + toReceiver);
  const spread = deficit - toReceiver;
  const readyTotal = eligible.reduce((s, v) => s + v.capacity, 0);
  if (spread > 0 && readyTotal > 0) for (const v of ordered) assigned.set(v.cls.name, assigned.get(v.cls.name)! + (spread * v.capacity) / readyTotal);
  const total = [...assigned.values()].reduce((s, v) => s + v, 0);
  const shares: Shares = new Map();
  for (const view of ordered) {
    // No demand: the cheapest class carries the (absent) traffic, the others keep their floor.
    shares.set(view.cls.name, total > 0 ? assigned.get(view.cls.name)! / total : view === ordered[0] ? 1 : 0);
  }
  return { shares: withWarmFloor(shares, eligible, demand, config), deficit, receiver };
}

/**
 * What the receiver is routed above its envelope, as a share of its ready capacity, by what grows it:
 * - `load`: up to its own ready capacity again. It runs at up to twice its envelope, so its autoscaler asks for
 *   2 x (1 + headroom) times its replicas per scale-out.
 * - `capacity-writes` (SageMaker): its headroom. The floor is sized on the typical (median) demand and target tracking
 *   takes back a written count its load does not hold (`floorDemand`, decide.ts), so the variant's own target tracking
 *   scales out for the bursts above the median, on load above its target; and its new instances are busy the moment
 *   they are in service.
 * - `published` (EKS): nothing, so it carries only its share of the spread. Growth is the floors' to ask: each is one
 *   more metric of the class's HPA (`replicaFloorTrigger`, lib/eks/manifests/keda.ts), which runs the largest count any
 *   metric asks for ("the maximum replica count across all metrics will be used": Kubernetes API autoscaling/v2,
 *   HorizontalPodAutoscalerSpec.metrics), so a floor holds the replicas whatever the load, and load above the envelope
 *   would only be shed on the receiver, often a fallback with one or two ready replicas. A deficit only the plan's high
 *   quantile sees (a one-period spike, a surge's first period) gets no floor, since floors are sized on the sustained
 *   demand, and no extra load either: the receiver's own request-count trigger asks for ceil(1.2 x n) replicas only
 *   while its actual load is at its declared envelope. Where a surge lasts, the receiver so grows a period later, when
 *   its floor asks. Measured on the simulator against the headroom (BENCHMARKS.md, stop 43): cost per SLO token 0.2-0.8%
 *   lower in 8 of 18 shortage scenarios, SLO within 0.06 pt, time to fallback up to 48 s later on average; keeping the
 *   headroom for a receiver whose floor asks for nothing more (review R65) gave back most of both.
 */
const RECEIVER_LOAD_ABOVE_ENVELOPE: Readonly<Record<ReceiverGrowth, (config: PolicyConfig) => number>> = {
  'load': () => 1,
  'capacity-writes': (config) => config.headroom,
  'published': () => 0,
};

/**
 * Demand filled cheapest per token first, each class up to its ready envelope: the views in that order, what each
 * carries, and the deficit no ready capacity carries. The first step of both the routing plan and the replica floors.
 */
function fillReadyCheapestFirst(views: readonly ClassView[], demand: number):
  { ordered: ClassView[]; carried: Map<string, number>; deficit: number } {
  const ordered = [...views].sort((a, b) => byCost(a.cls, b.cls));
  const carried = new Map<string, number>();
  let remaining = Math.max(demand, 0);
  for (const view of ordered) {
    const take = Math.min(view.capacity, remaining);
    carried.set(view.cls.name, take);
    remaining -= take;
  }
  // Relative tolerance: float sums of capacities must not create a deficit of rounding noise.
  return { ordered, carried, deficit: remaining > 1e-9 * Math.max(demand, 1) ? remaining : 0 };
}

/**
 * Replica floors of capacity mode: how many replicas each class that can grow needs so that, once they are ready, the
 * planned demand fits. Every class first carries up to its ready envelope, cheapest per token first (as in
 * `routingPlan`); what is left goes to the classes that can grow, cheapest first, each up to `maxReplicas` at its
 * scaling target (envelope / (1 + headroom), the per-replica value its autoscaler aims for: the headroom is the serving
 * contract's, which the Reconciler takes; `replicasAtTarget`, lib/core/service/sizing.ts). A floor is what that
 * autoscaler would ask for if it already saw the load, so writing it skips the detection lag (a fallback otherwise
 * grows only after shedding the load that shows it is short) without asking for more than the load needs. Classes
 * without a part of the deficit get 0 (no floor). Considers every placement-allowed class, ready or not.
 */
export function replicaFloors(
  allowed: readonly ClassView[],
  demand: number,
  growable: ReadonlySet<string>,
  config: PolicyConfig,
): Map<string, number> {
  const { ordered, carried, deficit } = fillReadyCheapestFirst(allowed, demand);
  let remaining = deficit;
  const floors = new Map(ordered.map((v) => [v.cls.name, 0]));
  for (const v of ordered) {
    if (remaining <= 1e-9 * Math.max(demand, 1)) break;
    if (!growable.has(v.cls.name)) continue;
    const target = v.cls.tokensPerSecondPerReplica / (1 + config.headroom);
    const room = Math.max(0, (v.cls.maxReplicas ?? Infinity) * target - carried.get(v.cls.name)!);
    const extra = Math.min(remaining, room);
    if (extra <= 0) continue;
    remaining -= extra;
    const replicas = replicasAtTarget(carried.get(v.cls.name)! + extra, v.cls.tokensPerSecondPerReplica, config.headroom);
    floors.set(v.cls.name, Math.min(v.cls.maxReplicas ?? Infinity, Math.max(v.steadyReady, replicas)));
  }
  return floors;
}

/**
 * Lifts every eligible class to its warm floor, taking the difference from the classes above their floor in proportion
 * to their excess. A floor never asks a class for more than its ready capacity, and all floors together never take
 * more than half the traffic.
 */
function withWarmFloor(shares: Shares, eligible: readonly ClassView[], demand: number, config: PolicyConfig): Shares {
  if (config.warmFloorShare <= 0 || eligible.length < 2) return shares;
  const floorOf = (v: ClassView) => (demand > 0 ? Math.min(config.warmFloorShare, v.capacity / demand) : config.warmFloorShare);
  const floors = new Map(eligible.map((v) => [v.cls.name, floorOf(v)]));
  const floorSum = [...floors.values()].reduce((s, v) => s + v, 0);
  if (floorSum > 0.5) for (const [name, f] of floors) floors.set(name, (f * 0.5) / floorSum);
  let deficit = 0;
  let excess = 0;
  for (const [name, share] of shares) {
    const floor = floors.get(name)!;
    if (share < floor) deficit += floor - share;
    else excess += share - floor;
  }
  if (deficit <= 0 || excess <= 0) return shares;
  const out: Shares = new Map();
  for (const [name, share] of shares) {
    const floor = floors.get(name)!;
    out.set(name, share < floor ? floor : share - ((share - floor) * deficit) / excess);
  }
  return out;
}

/**
 * Integer weights summing exactly to `total` (largest remainder). Ties go to the more preferred class, so equal
 * inputs always give equal weights.
 */
export function apportion(shares: Shares, classes: readonly PolicyClass[], total: number): Record<string, number> {
  const ordered = [...classes].sort(byPreference);
  const sum = ordered.reduce((s, c) => s + Math.max(shares.get(c.name) ?? 0, 0), 0);
  const exact = ordered.map((c) => (sum > 0 ? (Math.max(shares.get(c.name) ?? 0, 0) / sum) * total : 0));
  const weights = exact.map(Math.floor);
  let left = total - weights.reduce((s, w) => s + w, 0);
  const byRemainder = exact
    .map((x, i) => ({ i, rem: x - Math.floor(x) }))
    .filter((r) => r.rem > 1e-9)
    .sort((a, b) => b.rem - a.rem || a.i - b.i);
  for (const r of byRemainder) {
    if (left <= 0) break;
    weights[r.i] += 1;
    left -= 1;
  }
  const out: Record<string, number> = {};
  ordered.forEach((c, i) => (out[c.name] = weights[i]));
  return out;
}

/** Shares from (possibly unnormalized) weights; empty when they sum to zero. */
export function sharesOf(weights: Readonly<Record<string, number>>, classes: readonly PolicyClass[]): Shares {
  const sum = classes.reduce((s, c) => s + Math.max(weights[c.name] ?? 0, 0), 0);
  if (!(sum > 0)) return new Map();
  return new Map(classes.map((c) => [c.name, Math.max(weights[c.name] ?? 0, 0) / sum]));
}

/** Largest absolute difference between two share maps over `classes`. */
export function maxShareDelta(a: Shares, b: Shares, classes: readonly PolicyClass[]): number {
  return classes.reduce((m, c) => Math.max(m, Math.abs((a.get(c.name) ?? 0) - (b.get(c.name) ?? 0))), 0);
}

/**
 * One bounded step from `from` toward `to` (pass integer-apportioned shares for both, so the bound holds after
 * rounding): a convex combination, so the step keeps shares summing to 1 and no class
 * ever carries more than it did in `from` or will in `to` (both of which respect ready capacity).
 */
export function rampToward(
  from: Shares,
  to: Shares,
  classes: readonly PolicyClass[],
  step: number,
  total: number,
): { shares: Shares; reached: boolean } {
  // A whole number of weight units: from integer weights, a move of at most k units rounds to at most k units.
  const units = Math.floor(step * total + 1e-9) / total;
  const delta = maxShareDelta(from, to, classes);
  if (delta <= units + 1e-12) return { shares: to, reached: true };
  const alpha = units / delta;
  const shares: Shares = new Map(classes.map((c) => [c.name, (from.get(c.name) ?? 0) + alpha * ((to.get(c.name) ?? 0) - (from.get(c.name) ?? 0))]));
  return { shares, reached: false };
}
