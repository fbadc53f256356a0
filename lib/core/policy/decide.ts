/**
 * The routing policy: what makes this library a scheduler and not a retry loop.
 *
 * ```ts
 * function decide(input: PolicyInput, previous: PolicyState): PolicyStep;
 * // PolicyStep = { decision: PolicyDecision; state: PolicyState }
 * ```
 *
 * Pure and deterministic: no clock, no randomness, no I/O. Call it once per period (60 s by default) with the signal
 * windows ending at `input.now` and the state returned by the previous call (or the state the reconciler Lambda
 * rebuilds from its own decision metrics and the target's current weights; see `initialPolicyState`). Every piece
 * of memory (mode, when it was entered, recent entries, whether a return ramp is under way and when it last stepped,
 * the weights in force) is in `PolicyState`; timers over signals (grace periods, consecutive breaches, stabilization)
 * are read from the windows themselves.
 *
 * Rules (docs/reconciler.md, "The policy"):
 * - one plan in both modes (`routingPlan`): the planned demand (a high quantile of several periods, not one minute)
 *   goes cheapest per token first, each class up to its ready envelope; the deficit beyond every ready envelope goes to
 *   the cheapest class that can grow, so its autoscaler sees the load; every compatible ready class keeps a warm floor;
 * - in capacity mode the decision also carries replica floors (`replicaFloors`): the replicas each growable fallback
 *   needs for its part of the deficit, which the reconciler hands to the platform's autoscaler (SageMaker: the
 *   variant's desired instance count, raised only; EKS: a ScaledObject trigger on the published floor). The fallbacks
 *   then grow at once instead of after shedding the load that shows them short, so the plan routes the receiver only
 *   what its platform needs to keep the floor (SageMaker: its headroom above its envelope; EKS, where the floor is a
 *   metric of its HPA: no more than its share of the spread) and spreads the rest of the deficit by ready capacity,
 *   where it sheds least;
 * - the mode says whether the preferred class may be counted on to grow (on SageMaker, whose endpoint takes one update
 *   at a time, it retries growth in capacity mode once its loss is behind it, with a backoff: `retriesGrowth`). Capacity
 *   mode is entered on capacity evidence (capacity errors, desired > ready beyond the grace period without progress)
 *   while the preferred class alone cannot carry the planned demand, on a latency breach, or on a deficit that
 *   autoscaling had the whole grace period to fix and did not. Demand noise and autoscaling lag are not evidence:
 *   overflow spills down the cost order in either mode and the engines' admission limits shed what nothing can carry;
 * - cost mode returns only when no evidence is left, the preferred class has been healthy for the stabilization
 *   window, and capacity mode has lasted the return hold, which doubles with each re-entry of the same capacity event
 *   (an event ends after two hours of cost mode, the re-entry memory; `eventEntries`). A class that lost capacity,
 *   regained it and lost it again within the memory (`flapStability`) must also have stayed loss-free for twice its
 *   longest loss-free gap, and it must have been seen to get back the replicas it was refused at its newest loss
 *   (`recoverySeen`: quiet is not recovery). Within an event, the preferred class's evidence re-enters only when the
 *   ready classes cannot carry the planned demand (a flap the ready fleet absorbs is no reason to change mode);
 *   weights then ramp toward the plan by a bounded step per wall-clock period, however many times the reconciler
 *   runs in that period.
 *
 * Safety, whatever the mode: a class whose placement is forbidden never gets weight; a class without ready replicas
 * gets no weight unless no allowed class is ready (then weights stay on allowed classes, where capacity is coming);
 * missing data (demand, or ready replicas of an allowed class) holds the current weights; weights are never all zero.
 */
import { policyClassProblems, policyWindowPeriods, resolvePolicyConfig } from './defaults';
import { replicasAtTarget } from '../service/sizing';
import { asDelivered } from './envelope';
import { apportion, byCost, byPreference, type ClassView, maxShareDelta, rampToward, type ReceiverGrowth, replicaFloors, routingPlan, type Shares, sharesOf } from './plan';
import {
  doubledWindow, finiteOrNull, flapStability, healthyThroughout, latest, plannedDemand, recoverySeen, shortageEvidence, sustainedDeficit,
  sustainedDemand, tail, typicalDemand, windowPeriods,
} from './evidence';
import {
  type ClassSignals,
  type DecisionReason,
  type PolicyClass,
  type PolicyConfig,
  type PolicyInput,
  type PolicyState,
  type PolicyStep,
  type RoutingMode,
  type TriggerCode,
} from './types';

export function decide(input: PolicyInput, previous: PolicyState): PolicyStep {
  const config = resolvePolicyConfig(input.config);
  const classProblems = policyClassProblems(input.classes);
  if (classProblems.length > 0) throw new Error(`decide(): invalid classes: ${classProblems.join('; ')}`);
  const classes = [...input.classes].sort(byPreference);
  const allowed = classes.filter((c) => c.placementAllowed);
  const preferred = allowed[0];
  const total = config.weightTotal;
  const now = input.now;
  const entries = eventEntries(previous, now, config, input.signals[preferred.name]);

  // The weights in force, minus anything placement forbids; all on the preferred class if nothing usable is left.
  const heldShares = restrict(sharesOf(previous.weights, classes), allowed);
  const held = heldShares.size > 0 ? heldShares : new Map([[preferred.name, 1]]);
  const previousWeights = apportion(sharesOf(previous.weights, classes), classes, total);
  // Each class is planned at the envelope it has shown it delivers (`deliveredEnvelope`): never above the declared one.
  const planned = classes.map((declared) => asDelivered(declared, input.signals[declared.name], policyWindowPeriods(config)));
  const ctx: Context = { input, previous, config, classes, preferred, previousWeights, entries, envelopeNote: envelopeNote(classes, planned) };
  const keep = { modeSince: previous.modeSince, ramping: previous.ramping, lastStepAt: previous.lastStepAt };

  const unknownReady = allowed.filter((c) => readyNow(input.signals[c.name]) === null).map((c) => c.name);
  if (latest(input.demandTokensPerSecond) === null || unknownReady.length > 0) {
    const what = [...(latest(input.demandTokensPerSecond) === null ? ['demand'] : []), ...unknownReady.map((n) => `ready replicas of ${n}`)];
    return step(ctx, previous.mode, keep, apportion(held, classes, total), {
      code: 'missing-data',
      triggers: [],
      message: `Holding the current weights: no datapoint for ${what.join(', ')} in the newest period.`,
    }, { demand: null, ready: 0, deficit: 0, floors: null, needs: null });
  }
  const demand = plannedDemand(input.demandTokensPerSecond, config)!;
  const views: ClassView[] = planned.map((cls) => {
    const ready = Math.max(0, readyNow(input.signals[cls.name]) ?? 0);
    const steadyReady = Math.min(ready, Math.max(0, latest(input.signals[cls.name]?.readyReplicas) ?? ready));
    return { cls, ready, steadyReady, capacity: ready * cls.tokensPerSecondPerReplica, eligible: cls.placementAllowed && ready > 0 };
  });
  const eligible = views.filter((v) => v.eligible);
  if (eligible.length === 0) {
    return step(ctx, previous.mode, keep, apportion(held, classes, total), {
      code: 'nothing-ready',
      triggers: [],
      message: 'No allowed class has a ready replica: keeping traffic on the allowed classes it was on (never all zero).',
    }, { demand, ready: 0, deficit: demand, floors: null, needs: null });
  }

  const situation = assess(ctx, demand, views, heldShares);
  if (previous.mode !== 'capacity' && situation.entering.length > 0) return enterCapacity(ctx, situation);
  if (previous.mode === 'capacity') return inCapacityMode(ctx, situation);
  return inCostMode(ctx, situation);
}

/** The ready replicas the plan routes on: the count taken at this run where the input has one, else the newest datapoint. */
function readyNow(signals: ClassSignals | undefined): number | null {
  return finiteOrNull(signals?.readyNow) ?? latest(signals?.readyReplicas);
}

/** What one run knows once the data is complete: demand, ready capacity, evidence and how to plan in either mode. */
interface Situation {
  readonly demand: number;
  /** Ready tokens per second over the eligible classes. */
  readonly ready: number;
  /** Triggers in force (sustained deficit, the preferred class's evidence). */
  readonly active: readonly TriggerCode[];
  /** The triggers that enter capacity mode from cost mode. */
  readonly entering: readonly TriggerCode[];
  /** The weights in force restricted to eligible classes (the start of a ramp). */
  readonly from: Shares;
  readonly planFor: (mode: RoutingMode) => RoutingPlan;
  readonly floorsFor: (mode: RoutingMode) => Record<string, number>;
  /** Capacity mode's replicas per class at the window's peak demand (`PolicyDecision.replicaNeeds`). */
  readonly needsAtPeak: (decided: Readonly<Record<string, number>>) => Record<string, number>;
  /** How the plan's receiver of the deficit is asked to grow in each mode (`ReceiverGrowth`). */
  readonly growth: (mode: RoutingMode) => ReceiverGrowth;
  /**
   * Within a capacity event after a return: the preferred class shows capacity evidence, but the ready classes carry
   * the planned demand, so it does not re-enter (named in the audit line).
   */
  readonly flapAbsorbed: boolean;
  /** The preferred class's retry of growth in capacity mode (`retriesGrowth`): its loss record; null when it does not. */
  readonly growthRetry: GrowthRetry | null;
  /** Ready replicas by class name, as planned. */
  readonly readyReplicas: ReadonlyMap<string, number>;
}

type RoutingPlan = ReturnType<typeof routingPlan>;
type Figures = {
  demand: number | null; ready: number; deficit: number; floors: Record<string, number> | null;
  /** Capacity mode's `replicaNeeds` given the decided weights; null in cost mode and on holds. */
  needs: Situation['needsAtPeak'] | null;
};

function assess(ctx: Context, demand: number, views: readonly ClassView[], heldShares: Shares): Situation {
  const { input, previous, config, classes, preferred, entries } = ctx;
  const allowed = classes.filter((c) => c.placementAllowed);
  const eligible = views.filter((v) => v.eligible);
  const ready = eligible.reduce((s, v) => s + v.capacity, 0);
  // Each fallback on its own grace (`PolicyClass.provisioningGraceSeconds`); the preferred class on the policy's, which
  // times the mode's entry and return.
  const graceOf = (c: PolicyClass) =>
    (c.name === preferred.name ? config.provisioningGraceSeconds : c.provisioningGraceSeconds ?? config.provisioningGraceSeconds);
  const evidence = new Map(classes.map((c) => [c.name, shortageEvidence(input.signals[c.name], config, graceOf(c))]));
  const preferredEvidence = evidence.get(preferred.name)!;
  const preferredView = views.find((v) => v.cls.name === preferred.name)!;
  const preferredCapacity = preferredView.capacity;
  // The preferred class alone cannot carry the planned demand with the plan's headroom: only then does its shortage
  // call for a change (a capacity error on a scale-out it does not need is no reason to move traffic).
  const preferredShort = demand * (1 + config.headroom) > preferredCapacity * (1 + 1e-9);
  const sustained = sustainedDeficit(input.demandTokensPerSecond,
    allowed.map((c) => ({ tokensPerSecond: c.tokensPerSecondPerReplica, signals: input.signals[c.name] })), config);
  const active: TriggerCode[] = [...(sustained ? (['sustained-deficit'] as const) : []), ...preferredEvidence];
  // Hysteresis on the way in as well: within the capacity event after a return, the preferred class's capacity
  // evidence re-enters only when the summed ready capacity of the eligible classes cannot carry the planned demand
  // (`flapAbsorbed`). A flapping class shows a capacity error whenever it happens to ask for a replica during an
  // off-phase; while the classes already ready carry the demand, the overflow spills down the cost order in cost mode
  // and nothing calls for the fallbacks to grow, so a change of mode would only be undone at the next quiet stretch.
  const returnedRecently = previous.mode === 'cost' && entries.length > 0;
  const short = returnedRecently ? demand > ready * (1 + 1e-9) : preferredShort;
  const entering = active.filter((t) => t === 'sustained-deficit' || t === 'latency-breach' || short);
  const flapAbsorbed = returnedRecently && preferredEvidence.some((t) => t !== 'latency-breach') && entering.length === 0;

  // Growing is what a latency breach calls for; capacity errors or stuck replicas mean a class cannot grow now. For the
  // preferred class that judgement is the mode's (with its hysteresis), not one datapoint's, except where it retries
  // growth in capacity mode (`retriesGrowth`).
  const growthRetry = retriesGrowth(input, config, preferredView, active);
  const canGrow = (c: PolicyClass, mode: RoutingMode) =>
    c.name === preferred.name ? mode === 'cost' || growthRetry !== null : evidence.get(c.name)!.every((t) => t === 'latency-breach');
  const growable = (mode: RoutingMode) => new Set(classes.filter((c) => canGrow(c, mode)).map((c) => c.name));
  // Floors only in capacity mode: in cost mode the cheapest class's own autoscaler sees its overflow, and a floor
  // computed from noisy demand would be a second controller fighting it.
  const floorsFor = (mode: RoutingMode): Record<string, number> => {
    const need = floorDemand(input, config);
    const floors = mode === 'capacity'
      ? replicaFloors(views.filter((v) => v.cls.placementAllowed), need, growable(mode), config)
      : new Map<string, number>();
    // SageMaker's writes wait until the class shows no shortage of its own (`standingAsk`); a published floor asks always.
    const asking = input.floorsTakenBy === 'published' || (input.floorsTakenBy === 'capacity-writes' && preferredEvidence.length === 0);
    if (mode === 'capacity' && asking) {
      // The preferred class asks for its part of the cost plan: the demand classes cheaper per token than it leave over.
      const cheaper = eligible.filter((v) => byCost(v.cls, preferredView.cls) < 0).reduce((s, v) => s + v.capacity, 0);
      floors.set(preferred.name, standingAsk(preferredView, Math.max(0, need - cheaper), config));
    }
    return Object.fromEntries(classes.map((c) => [c.name, floors.get(c.name) ?? 0]));
  };
  // Floors are written only in capacity mode. Unset, the platform is taken to need the load, as capacity writes do.
  const growth = (mode: RoutingMode): ReceiverGrowth =>
    (mode === 'capacity' && config.replicaFloorsApplied ? input.floorsTakenBy ?? 'capacity-writes' : 'load');
  const planFor = (mode: RoutingMode) => routingPlan(eligible, demand, growable(mode), config, growth(mode));
  const from = restrict(heldShares, eligible.map((v) => v.cls));
  const readyReplicas = new Map(views.map((v) => [v.cls.name, v.ready]));
  // The peak of the stabilization window, the span a return to cost mode looks back on: a fallback the event grew keeps
  // what the plan would route it at that peak, so bursty demand does not see its instances lowered in a quiet minute
  // and asked for again at the next burst (traced on H5 SageMaker: 10 instances lowered to 1 the minute after they came).
  // Its share is the largest of that plan's, the weights in force and the decided ones: weights follow the plan only
  // past the dead band (`steady`) and a held weights write leaves the old ones in force, so a count sized on the plan
  // alone could leave the traffic actually routed above the target, and target tracking would scale it back out (R218).
  const needsAtPeak = (decided: Readonly<Record<string, number>>): Record<string, number> => {
    const recent = tail(input.demandTokensPerSecond, windowPeriods(config.stabilizationWindowSeconds, config));
    const peak = Math.max(demand, ...recent.map((v) => v ?? 0));
    const plan = routingPlan(eligible, peak, growable('capacity'), config, growth('capacity')).shares;
    const inForce = sharesOf(ctx.previousWeights, classes);
    const next = sharesOf(decided, classes);
    const share = (name: string) => Math.max(plan.get(name) ?? 0, inForce.get(name) ?? 0, next.get(name) ?? 0);
    return Object.fromEntries(views.map((v) => [
      v.cls.name, replicasAtTarget(share(v.cls.name) * peak, v.cls.tokensPerSecondPerReplica, config.headroom),
    ]));
  };
  return { demand, ready, active, entering, from, planFor, floorsFor, needsAtPeak, growth, flapAbsorbed, growthRetry, readyReplicas };
}

/**
 * The share of the loss-free time after which the preferred class retries growth in capacity mode (`retriesGrowth`): a
 * quarter of what a return requires (`flapStability`), or of the stabilization window doubled per loss episode where
 * that is longer (the return's own requirement stops doubling at `maxReturnHoldSeconds`, a backoff must not). With the
 * defaults: 150 s after a first loss (a SageMaker rollback is a capacity error the Reconciler derives, so the 180 s
 * capacity-error lookback binds first), then 300 (or a quarter of twice the longest gap between losses), 600, 1200,
 * 2400, 4800 s; from seven episodes within the two-hour memory not at all (9600 s is more than the memory holds).
 */
const GROWTH_RETRY_QUIET_SHARE = 0.25;

/**
 * Whether the preferred class counts as able to grow in capacity mode (its loss record, for the audit line; null when
 * not): it receives the deficit first (it is the cheapest) and no fallback is floored for that part. Only where floors
 * are capacity writes (SageMaker): the endpoint takes one update at a time, and a fallback's own scale-out holds it
 * until its instances are in service, so fallbacks grown while capacity has come back keep the preferred class from
 * growing, and its standing ask is never written (traced on H3, spot-like reclaims: the preferred variant held at 4
 * for 14 minutes while retry-on-preferred's grew to 8). Where floors are published (EKS) each class has its own
 * autoscaler, and the standing ask is enough. It retries only when
 * - it lost capacity within the memory (`flapStability` counts an episode): a capacity mode entered on a deficit alone
 *   grows the fallbacks, as the mode is for;
 * - nothing holds the mode now (no shortage evidence of its own, no sustained deficit, which would say that growth
 *   is not happening, no latency breach), and it has been loss-free for `GROWTH_RETRY_QUIET_SHARE` of a time that
 *   doubles with each loss episode: a backoff, so a class whose retries keep failing is asked less often;
 * - it has ready replicas below its maximum (SageMaker: the live MaxCapacity, a game day's pin included), so a class
 *   that could not be raised never takes the fallbacks' floors.
 * A retry that fails costs this much: the raise holds the endpoint Updating until the variant's provisioning timeout
 * (300 s by default) and is rolled back; in that time no new fallback floor is written (SageMaker floors only raise, so
 * the fallbacks keep the instances they have), and the preferred class is routed its headroom above its envelope for
 * its part of the deficit, which it sheds. The rollback, a capacity error at least the retry's quiet time plus the
 * provisioning timeout after the previous loss, is a new loss episode (losses more than the capacity-error lookback
 * apart are), so the next retry waits twice as long.
 * Measured on the simulator (SageMaker, 10 seeds): H3 96.95% -> 97.56% of requests within the SLO at 1.2% less cost per
 * SLO token, S2 +0.14 pt at 1.3% less, every other scenario within 0.06 pt (BENCHMARKS.md, stop 40).
 */
function retriesGrowth(input: PolicyInput, config: PolicyConfig, preferred: ClassView, active: readonly TriggerCode[]): GrowthRetry | null {
  if (input.floorsTakenBy !== 'capacity-writes' || active.length > 0) return null;
  if (!(preferred.ready < (preferred.cls.maxReplicas ?? Infinity))) return null;
  const flap = flapStability(input.signals[preferred.cls.name], config);
  if (flap.episodes < 1) return null;
  const backoff = Math.max(flap.requiredQuietSeconds, doubledWindow(config, flap.episodes - 1));
  const retryAfterSeconds = GROWTH_RETRY_QUIET_SHARE * backoff;
  return flap.quietSeconds >= retryAfterSeconds ? { episodes: flap.episodes, quietSeconds: flap.quietSeconds, retryAfterSeconds } : null;
}

/** A retry of growth (`retriesGrowth`): the loss episodes in memory, the loss-free time, and the time the backoff asks. */
interface GrowthRetry {
  readonly episodes: number;
  readonly quietSeconds: number;
  readonly retryAfterSeconds: number;
}

/** The audit clause of a retry of growth, when there is a deficit for the preferred class to take ('' otherwise). */
function retryNote(ctx: Context, situation: Situation, plan: { deficit: number }): string {
  const retry = situation.growthRetry;
  if (retry === null || !(plan.deficit > 0)) return '';
  return ` ${ctx.preferred.name} retries growth: no shortage of its own now, and loss-free for ${retry.quietSeconds} s, at least the ` +
    `${retry.retryAfterSeconds} s its backoff requires after ${retry.episodes} loss episode${retry.episodes === 1 ? '' : 's'} within ` +
    `${ctx.config.reentryMemorySeconds} s; it takes the deficit and no fallback is grown for it.`;
}

/**
 * The demand replica floors (and the preferred class's standing ask) are sized on, by how the platform holds a floor:
 * - published to the class's own autoscaler (EKS): the floor is a second metric of the HPA, which runs the higher of
 *   the two, so a floor holds for as long as it is published. Sized on the sustained demand, the bursts that lasted.
 * - capacity writes (SageMaker): UpdateEndpointWeightsAndCapacities sets the variant's desired count past Application
 *   Auto Scaling, whose target tracking takes back what the load does not hold once its low alarm holds (in AWS's
 *   example for this metric, every datapoint of 15 minutes below 90% of the target: TARGET_TRACKING_ALARMS in
 *   lib/sim/platform.ts; how much one scale-in removes is not published), and the next run's raise provisions the
 *   instances again. A count sized for the bursts is the most likely to be taken back; sized on the typical (median)
 *   demand, the variant's own target tracking scales out for the bursts (60 s cooldown on a 10-second metric).
 *   Measured on the simulator (10 seeds, SageMaker): a cost trade, 0.4% to 3.2% less cost per SLO token in 14 of 18
 *   shortage scenarios, SLO within 0.05 pt except H3 (-0.13) and H5 (-0.30) (BENCHMARKS.md). Where the median lags a
 *   surge, no floor asks yet for the deficit the plan (p90) sees; the plan still routes the receiving fallback only
 *   its headroom above its envelope, on which its own target tracking scales out. Routing it up to its ready capacity
 *   again instead, as without floors, was measured and is worse (review R28: 7 scenario-platform pairs dominated
 *   instead of 3).
 */
function floorDemand(input: PolicyInput, config: PolicyConfig): number {
  return (floorDemandBasis(input) === 'typical'
    ? typicalDemand(input.demandTokensPerSecond, config)
    : sustainedDemand(input.demandTokensPerSecond, config))!;
}

/** Which demand `floorDemand` sizes floors on, as the audit line names it. */
function floorDemandBasis(input: PolicyInput): 'typical' | 'sustained' {
  return input.floorsTakenBy === 'capacity-writes' ? 'typical' : 'sustained';
}

/**
 * The preferred class's ask in capacity mode: the replicas it needs to carry its part of the demand (`floorDemand`) at its
 * scaling target (what the cost plan would route to it: the demand less the ready capacity of classes cheaper per
 * token, which fill first in both modes), never below what it has ready. A class asked for more than either mode
 * routes to it would hold idle replicas, and their absence would read as a shortage that keeps capacity mode.
 * Capacity mode routes it at most its ready capacity, so its autoscaler, which scales on routed traffic, would ask only
 * for ceil(ready x (1 + headroom)) replicas, about one at a time: when capacity comes back it would regrow step by step
 * while the fallbacks carry the rest. The ask keeps it asking for its whole part, so it takes back what capacity
 * returns at once. How the ask reaches the class follows the platform:
 * - where floors are published to the class's own autoscaler (EKS: the ScaledObject's floor trigger), always. A floor
 *   the cloud cannot fill leaves pods Pending, which Karpenter keeps trying to place (the NodePool's capacity errors
 *   are the shortage evidence that holds capacity mode); it costs nothing until a node comes up. Measured on the
 *   simulator (10 seeds): H3 on EKS (spot-like reclaims) 98.47% -> 98.90% of requests within the SLO, cost per SLO
 *   token +0.5%; at most +2.3% cost elsewhere (S9), no SLO lost anywhere;
 * - where floors are capacity writes (SageMaker), only while the class shows no shortage evidence of its own (no
 *   capacity errors, no desired > ready beyond the grace period), i.e. when capacity looks available again while the
 *   mode still waits out its hold: a write the cloud cannot fill would leave the endpoint Updating and block the
 *   fallbacks' writes.
 */
function standingAsk(view: ClassView, demand: number, config: PolicyConfig): number {
  const asked = replicasAtTarget(demand, view.cls.tokensPerSecondPerReplica, config.headroom);
  return Math.min(view.cls.maxReplicas ?? Infinity, Math.max(view.steadyReady, asked));
}

function figures(situation: Situation, plan: { deficit: number }, mode: RoutingMode): Figures {
  return {
    demand: situation.demand, ready: situation.ready, deficit: plan.deficit, floors: situation.floorsFor(mode),
    needs: mode === 'capacity' ? situation.needsAtPeak : null,
  };
}

function describe(ctx: Context, triggers: readonly TriggerCode[]): string {
  return triggers.map((t) => describeTrigger(t, ctx.preferred, ctx.input.capacityErrorsIncludeRollbacks === true)).join('; ');
}

function enterCapacity(ctx: Context, situation: Situation): PolicyStep {
  const { previous, classes, config, entries } = ctx;
  const now = ctx.input.now;
  const plan = situation.planFor('capacity');
  // Re-entering the event under way on the preferred class's own evidence: say which rule let it through.
  const reentry = previous.mode === 'cost' && entries.length > 0 && situation.entering.some((t) => t === 'capacity-errors' || t === 'replicas-not-ready')
    ? ` (re-entering the capacity event under way, ${entries.length} earlier entr${entries.length === 1 ? 'y' : 'ies'}: the planned demand of ` +
      `${round(situation.demand)} tokens/s exceeds the summed ready capacity of the eligible classes, ${round(situation.ready)} tokens/s)`
    : '';
  const numbers = figures(situation, plan, 'capacity');
  return step(ctx, 'capacity', { modeSince: now, ramping: false, lastStepAt: previous.lastStepAt, entries: [...entries, now] },
    apportion(plan.shares, classes, config.weightTotal), {
      code: 'enter-capacity',
      triggers: situation.entering,
      message: `Entering capacity mode: ${describe(ctx, situation.entering)}${reentry}${deficitNote(ctx, situation, plan, 'capacity', numbers)}`,
    }, numbers);
}

/**
 * The audit clause of where the deficit goes. Where floors are published (EKS) the receiver takes only its share of the
 * spread (`RECEIVER_LOAD_ABOVE_ENVELOPE`, plan.ts), so only its floor grows it: the clause says when none asks (a
 * deficit only the plan's high quantile sees, or one whose floor went to a cheaper class with no ready replica).
 */
function deficitNote(
  ctx: Context, situation: Situation, plan: { deficit: number; receiver?: string }, mode: RoutingMode, numbers: Figures,
): string {
  const receiver = plan.receiver;
  if (!receiver) return '.';
  const ready = situation.readyReplicas.get(receiver) ?? 0;
  const max = ctx.classes.find((c) => c.name === receiver)?.maxReplicas;
  // Still its deficit (the cheapest class that shows no shortage), but "to grow" would be false: measured, a class at its
  // maximum passing the deficit on cost more than it saved (BENCHMARKS.md, stop 50).
  if (max !== undefined && ready >= max) {
    return `; the deficit of ${round(plan.deficit)} tokens/s to ${receiver}, which runs its most replicas (${max}) and cannot grow: ` +
      'what it cannot carry is shed.';
  }
  const floored = (numbers.floors?.[receiver] ?? 0) > ready;
  return situation.growth(mode) === 'published' && !floored
    ? `; the deficit of ${round(plan.deficit)} tokens/s is spread by ready capacity, and no replica floor asks ${receiver} to grow for it.`
    : `; the deficit of ${round(plan.deficit)} tokens/s to ${receiver} to grow.`;
}

/** In capacity mode: hold on evidence, stabilize until the preferred class is back for good, then return and ramp. */
function inCapacityMode(ctx: Context, situation: Situation): PolicyStep {
  const { input, previous, config, classes, preferred, entries } = ctx;
  const now = input.now;
  const keep = { modeSince: previous.modeSince, ramping: previous.ramping, lastStepAt: previous.lastStepAt };
  const plan = situation.planFor('capacity');
  const weights = steady(ctx, apportion(plan.shares, classes, config.weightTotal));
  const hold = returnHold(entries, config);
  if (situation.active.length > 0) {
    return step(ctx, 'capacity', keep, weights, {
      code: 'hold-capacity',
      triggers: situation.active,
      message: `Staying in capacity mode: ${describe(ctx, situation.active)}.`,
    }, figures(situation, plan, 'capacity'));
  }
  const healthy = healthyThroughout(input.signals[preferred.name], windowPeriods(config.stabilizationWindowSeconds, config), config);
  const dwelt = now - previous.modeSince >= hold;
  // A class that lost capacity, regained it and lost it again within the memory is not back until it has stayed
  // loss-free for longer than it did between its losses: one quiet stretch of a flap looks like a recovery.
  const flap = flapStability(input.signals[preferred.name], config);
  const stable = flap.quietSeconds >= flap.requiredQuietSeconds;
  // Quiet is not recovery: the class must have got back the replicas it was refused (or shown no loss for the memory).
  const recovery = recoverySeen(input.signals[preferred.name], config);
  if (!healthy || !dwelt || !stable || !recovery.seen) {
    return step(ctx, 'capacity', keep, weights, {
      code: 'stabilizing',
      triggers: [],
      message: stabilizingMessage(ctx, hold, { healthy, dwelt, stable, flap, recovery }) + retryNote(ctx, situation, plan),
    }, figures(situation, plan, 'capacity'));
  }
  const costPlan = situation.planFor('cost');
  const ramp = rampFrom(ctx, situation.from, costPlan.shares, currentPeriod(ctx));
  return step(ctx, 'cost', { modeSince: now, ramping: !ramp.reached, lastStepAt: ramp.lastStepAt }, ramp.weights, {
    code: 'return-to-cost',
    triggers: [],
    message: `Returning to cost mode: ${preferred.name} healthy for ${config.stabilizationWindowSeconds} s after a hold of ${hold} s` +
      (recovery.asked !== null ? `, and seen to recover (it has had the ${recovery.asked} replicas it was refused ${recovery.lostSecondsAgo} s ago); ` : '; ') +
      (ramp.reached ? 'plan reached.' : `ramping at most ${Math.round(config.rampStepShare * 100)}% per period.`) +
      (ramp.held ? ' First step held: a step may already have been taken in this period.' : ''),
  }, figures(situation, costPlan, 'cost'));
}

/**
 * The audit line of a hold in capacity mode once no evidence is left: it names only the conditions of the return that
 * still block it (health, the return hold, the flap's loss-free stretch, recovery), so a line never claims to wait for
 * what is already met.
 */
function stabilizingMessage(ctx: Context, hold: number, status: {
  healthy: boolean; dwelt: boolean; stable: boolean;
  flap: ReturnType<typeof flapStability>; recovery: ReturnType<typeof recoverySeen>;
}): string {
  const { input, previous, config, preferred, entries } = ctx;
  const { flap, recovery } = status;
  const name = preferred.name;
  const waits = [
    ...(status.healthy ? [] : [`${name} has been healthy for ${config.stabilizationWindowSeconds} s (not yet healthy throughout)`]),
    ...(status.dwelt ? [] : [`the mode has lasted its return hold of ${hold} s (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} ` +
      `in this capacity event; mode held ${input.now - previous.modeSince} s)`]),
    ...(status.stable ? [] : [`${name} has been free of capacity loss for ${flap.requiredQuietSeconds} s (loss-free for ${flap.quietSeconds} s` +
      (flap.episodes >= 2 ? `: it lost capacity ${flap.episodes} times within ${config.reentryMemorySeconds} s)` : ')')]),
    ...(recovery.seen ? [] : [`${name} has been seen to recover`]),
  ];
  return `Staying in capacity mode until ${waits.join(', and ')}.` +
    (recovery.seen ? '' : ` Recovery not yet seen: ${name} was refused capacity ${recovery.lostSecondsAgo} s ago while asking for ` +
      `${recovery.asked} replicas and has not had that many ready since; it returns once it has (or after ${config.reentryMemorySeconds} s ` +
      'without a loss).');
}

/** In cost mode without a reason to leave it: finish a return ramp, else follow the cost plan. */
function inCostMode(ctx: Context, situation: Situation): PolicyStep {
  const { previous, config, classes } = ctx;
  const plan = situation.planFor('cost');
  if (previous.ramping && situation.from.size > 0) {
    const ramp = rampFrom(ctx, situation.from, plan.shares, currentPeriod(ctx));
    return step(ctx, 'cost', { modeSince: previous.modeSince, ramping: !ramp.reached, lastStepAt: ramp.lastStepAt }, ramp.weights, {
      code: 'ramping',
      triggers: [],
      message: (ramp.held ? `Ramp step already taken in this period (since ${ramp.lastStepAt}): holding the weights.`
        : ramp.reached ? 'Ramp finished: weights follow the plan.' : 'Ramping toward the plan.') + absorbedNote(ctx, situation),
    }, figures(situation, plan, 'cost'));
  }
  const keep = { modeSince: previous.modeSince, ramping: previous.ramping, lastStepAt: previous.lastStepAt };
  const numbers = figures(situation, plan, 'cost');
  return step(ctx, 'cost', keep, steady(ctx, apportion(plan.shares, classes, config.weightTotal)), {
    code: 'cost-plan',
    triggers: [],
    message: `Planned demand ${round(situation.demand)} tokens/s (p${Math.round(config.demandQuantile * 100)} of ${config.demandWindowPeriods} periods) ` +
      `against ready capacity ${round(situation.ready)} tokens/s; cheapest classes first` +
      deficitNote(ctx, situation, plan, 'cost', numbers) + absorbedNote(ctx, situation),
  }, numbers);
}

/** The audit clause of a capacity-event re-entry the ready classes made unnecessary (`assess`, `flapAbsorbed`). */
function absorbedNote(ctx: Context, situation: Situation): string {
  if (!situation.flapAbsorbed) return '';
  const evidence = shortageEvidence(ctx.input.signals[ctx.preferred.name], ctx.config).filter((t) => t !== 'latency-breach');
  return ` Not re-entering capacity mode although ${describe(ctx, evidence)}: within the capacity event under way ` +
    `(${ctx.entries.length} entr${ctx.entries.length === 1 ? 'y' : 'ies'}) the ready classes carry the planned demand ` +
    `(${round(situation.demand)} of ${round(situation.ready)} tokens/s), so the overflow spills down the cost order.`;
}

/** The start of the wall-clock period `now` falls in (ramp steps are bounded per period). */
function currentPeriod(ctx: Context): number {
  return Math.floor(ctx.input.now / ctx.config.periodSeconds) * ctx.config.periodSeconds;
}

/**
 * The state to start from when nothing is known yet (first run, or the decision metric is missing): capacity mode
 * entered `now`, so cost mode is only taken after a full stabilization window of evidence. Fails safe: it may cost
 * money for ten minutes, never availability.
 */
export function initialPolicyState(weights: Readonly<Record<string, number>>, now: number): PolicyState {
  return { mode: 'capacity', weights, modeSince: now, ramping: false };
}

/**
 * The capacity-mode entries of the capacity event still under way. An event ends only when cost mode has lasted
 * `reentryMemorySeconds` since the last return and the preferred class has shown no capacity loss for as long: a
 * shortage that keeps recurring (flapping availability, sparse capacity errors on scale-outs, relapses the ready
 * classes absorbed without a re-entry) extends the memory instead of starting a fresh event the memory's length after
 * its first entry, so each re-entry keeps the stricter re-entry rule and the doubled return hold. Bounded: only the
 * newest entries that still lengthen the hold are kept (the hold is capped at `maxReturnHoldSeconds`).
 */
function eventEntries(previous: PolicyState, now: number, config: PolicyConfig, preferred: ClassSignals | undefined): number[] {
  const quietForMemory = () => recoverySeen(preferred, config).lostSecondsAgo === null;
  if (previous.mode === 'cost' && now - previous.modeSince >= config.reentryMemorySeconds && quietForMemory()) return [];
  const doublingsToCap = Math.ceil(Math.log2(Math.max(1, config.maxReturnHoldSeconds / Math.max(1, config.stabilizationWindowSeconds))));
  return (previous.entries ?? []).filter((t) => t <= now).slice(-(doublingsToCap + 1));
}

/**
 * How long capacity mode lasts at least before a return: the stabilization window, doubled for every further entry
 * of the same capacity event (`eventEntries`), at most `maxReturnHoldSeconds`. Flapping capacity thus costs a bounded
 * number of mode changes per hour, and the hold is back to the window once an event has ended.
 */
export function returnHold(entries: readonly number[], config: PolicyConfig): number {
  return Math.min(config.maxReturnHoldSeconds, doubledWindow(config, entries.length - 1));
}

interface Context {
  readonly input: PolicyInput;
  readonly previous: PolicyState;
  readonly config: PolicyConfig;
  readonly classes: readonly PolicyClass[];
  readonly preferred: PolicyClass;
  readonly previousWeights: Record<string, number>;
  readonly entries: readonly number[];
  /** The audit clause naming the classes planned below their declared envelope ('' when none is). */
  readonly envelopeNote: string;
}

/**
 * The audit clause for the preferred class's standing ask in capacity mode: its desired count (the HPA's on EKS, the
 * variant's on SageMaker) includes the ask, so "fewer ready replicas than desired" while it is unmet is the class
 * short of its part of the demand, not a scale-out of its own.
 */
function askNote(ctx: Context, mode: RoutingMode, numbers: Figures): string {
  const ask = numbers.floors?.[ctx.preferred.name] ?? 0;
  return mode === 'capacity' && ask > 0
    ? ` ${ctx.preferred.name} is asked for ${ask} replicas, its part of the ${floorDemandBasis(ctx.input)} demand (its desired count includes the ask).`
    : '';
}

/**
 * The audit clause for classes planned below their declared envelope (`deliveredEnvelope`): an operator reading a
 * decision must see that the plan counts a class slower than its contract says, and by how much.
 */
function envelopeNote(declared: readonly PolicyClass[], planned: readonly PolicyClass[]): string {
  const lowered = planned.flatMap((cls, i) => cls.tokensPerSecondPerReplica < declared[i].tokensPerSecondPerReplica
    ? [`${cls.name} ${round(cls.tokensPerSecondPerReplica)} of ${round(declared[i].tokensPerSecondPerReplica)}`] : []);
  return lowered.length === 0 ? ''
    : ` Planned below the declared envelope, at what it delivered while shedding (tokens/s per replica): ${lowered.join(', ')}.`;
}

/**
 * Keeps the weights in force when the target differs by less than the dead band and weights the same classes: demand
 * noise must not cost an API write per minute. A safety change (a class losing its ready replicas) is written at once.
 */
function steady(ctx: Context, target: Record<string, number>): Record<string, number> {
  const { classes, previousWeights, config } = ctx;
  const sameSet = classes.every((c) => (previousWeights[c.name] > 0) === (target[c.name] > 0));
  const small = maxShareDelta(sharesOf(previousWeights, classes), sharesOf(target, classes), classes) < config.minWeightChangeShare;
  return sameSet && small ? previousWeights : target;
}

/**
 * One bounded ramp step from the weights in force toward `to`, at most one per wall-clock period: when a step was
 * already written in this period, the weights in force are kept (minus classes no longer eligible).
 */
function rampFrom(ctx: Context, from: Shares, to: Shares, period: number):
  { weights: Record<string, number>; reached: boolean; held: boolean; lastStepAt: number | undefined } {
  const { classes, config, previous } = ctx;
  const total = config.weightTotal;
  const target = sharesOf(apportion(to, classes, total), classes);
  if (from.size === 0) return { weights: apportion(target, classes, total), reached: true, held: false, lastStepAt: period };
  if (previous.lastStepAt !== undefined && previous.lastStepAt >= period) {
    return { weights: apportion(from, classes, total), reached: false, held: true, lastStepAt: previous.lastStepAt };
  }
  const ramp = rampToward(from, target, classes, config.rampStepShare, total);
  return { weights: apportion(ramp.shares, classes, total), reached: ramp.reached, held: false, lastStepAt: period };
}

function step(
  ctx: Context,
  mode: RoutingMode,
  next: { modeSince: number; ramping: boolean; lastStepAt?: number; entries?: readonly number[] },
  weights: Record<string, number>,
  reason: DecisionReason,
  numbers: Figures,
): PolicyStep {
  const weightsChanged = ctx.classes.some((c) => weights[c.name] !== ctx.previousWeights[c.name]);
  const entries = next.entries ?? ctx.entries;
  const message = reason.message + askNote(ctx, mode, numbers) + ctx.envelopeNote;
  return {
    decision: {
      mode,
      weights,
      weightsChanged,
      modeChanged: mode !== ctx.previous.mode,
      reason: message === reason.message ? reason : { ...reason, message },
      fallbackShare: 1 - weights[ctx.preferred.name] / ctx.config.weightTotal,
      requiredTokensPerSecond: numbers.demand,
      deficitTokensPerSecond: numbers.deficit,
      readyTokensPerSecond: numbers.ready,
      preferredClass: ctx.preferred.name,
      replicaFloors: numbers.floors,
      replicaNeeds: numbers.needs ? numbers.needs(weights) : null,
    },
    state: {
      mode,
      weights,
      modeSince: next.modeSince,
      ramping: next.ramping,
      ...(entries.length > 0 ? { entries } : {}),
      ...(next.lastStepAt !== undefined ? { lastStepAt: next.lastStepAt } : {}),
    },
  };
}

/** Shares restricted to `keep` and renormalized; empty when nothing is left. */
function restrict(shares: Shares, keep: readonly PolicyClass[]): Shares {
  const names = new Set(keep.map((c) => c.name));
  const sum = [...shares].reduce((s, [name, v]) => s + (names.has(name) ? v : 0), 0);
  if (!(sum > 0)) return new Map();
  return new Map([...shares].filter(([name]) => names.has(name)).map(([name, v]) => [name, v / sum]));
}

function describeTrigger(trigger: TriggerCode, preferred: PolicyClass, rollbacks: boolean): string {
  switch (trigger) {
    case 'sustained-deficit':
      return 'demand exceeded every ready class\'s capacity for the whole grace period and autoscaling made no progress';
    case 'capacity-errors':
      return rollbacks
        ? `${preferred.name} reports capacity errors or had a scale-out rolled back without new instances`
        : `${preferred.name} reports capacity errors`;
    case 'replicas-not-ready':
      return `${preferred.name} has fewer ready replicas than desired beyond the grace period, without progress`;
    case 'latency-breach':
      return `${preferred.name} breaches the p95 latency SLO for consecutive periods`;
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
