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
 * of memory (mode, when it was entered, whether a return ramp is under way, the weights in force) is in `PolicyState`;
 * timers over signals (grace periods, consecutive breaches, stabilization) are read from the windows themselves, so a
 * stateless caller only needs windows at least `policyWindowPeriods(config)` periods long.
 *
 * Rules (ARCHITECTURE.md 3.4):
 * - cost mode holds while ready token capacity covers demand x (1 + headroom); it assigns demand cheapest per token
 *   first, each class up to its envelope (so the cheap class runs above its autoscaling target and grows; see
 *   `costPlan`), and keeps a warm floor on every compatible ready class;
 * - capacity mode weights eligible classes by ready token capacity (replicas x envelope tokens/s);
 * - capacity mode is entered at once on any trigger: the cost plan cannot cover demand with headroom, the preferred
 *   class reports capacity errors, has desired > ready for the whole grace period, or breaches the latency SLO for
 *   consecutive periods;
 * - cost mode returns only when no trigger is active, the preferred class has been healthy for the whole stabilization
 *   window, and capacity mode has lasted that long; weights then ramp toward the cost plan by a bounded step per tick.
 *
 * Safety, whatever the mode: a class whose placement is forbidden never gets weight; a class without ready replicas
 * gets no weight unless no allowed class is ready (then weights stay on allowed classes, where capacity is coming);
 * missing data (demand, or ready replicas of an allowed class) holds the current weights; weights are never all zero.
 */
import { policyClassProblems, resolvePolicyConfig } from './defaults';
import {
  apportion,
  byPreference,
  capacityShares,
  type ClassView,
  costPlan,
  maxShareDelta,
  rampToward,
  type Shares,
  sharesOf,
} from './plan';
import { healthyThroughout, latest, preferredClassTriggers, windowPeriods } from './signals';
import {
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

  // The weights in force, minus anything placement forbids; all on the preferred class if nothing usable is left.
  const heldShares = restrict(sharesOf(previous.weights, classes), allowed);
  const held = heldShares.size > 0 ? heldShares : new Map([[preferred.name, 1]]);
  const previousWeights = apportion(sharesOf(previous.weights, classes), classes, total);
  const ctx: Context = { input, previous, config, classes, preferred, previousWeights };

  const demand = latest(input.demandTokensPerSecond);
  const unknownReady = allowed.filter((c) => latest(input.signals[c.name]?.readyReplicas) === null).map((c) => c.name);
  if (demand === null || unknownReady.length > 0) {
    const what = [...(demand === null ? ['demand'] : []), ...unknownReady.map((n) => `ready replicas of ${n}`)];
    return step(ctx, previous.mode, previous.modeSince, previous.ramping, apportion(held, classes, total), {
      code: 'missing-data',
      triggers: [],
      message: `Holding the current weights: no datapoint for ${what.join(', ')} in the newest period.`,
    }, { demand: null, ready: 0 });
  }

  const views: ClassView[] = classes.map((cls) => {
    const ready = Math.max(0, latest(input.signals[cls.name]?.readyReplicas) ?? 0);
    return { cls, ready, capacity: ready * cls.tokensPerSecondPerReplica, eligible: cls.placementAllowed && ready > 0 };
  });
  const eligible = views.filter((v) => v.eligible);
  const ready = eligible.reduce((s, v) => s + v.capacity, 0);
  const figures = { demand, ready };

  if (eligible.length === 0) {
    return step(ctx, previous.mode, previous.modeSince, previous.ramping, apportion(held, classes, total), {
      code: 'nothing-ready',
      triggers: ['insufficient-capacity'],
      message: 'No allowed class has a ready replica: keeping traffic on the allowed classes it was on (never all zero).',
    }, figures);
  }

  const plan = costPlan(eligible, demand, config);
  const triggers: TriggerCode[] = [
    ...(plan.covered ? [] : (['insufficient-capacity'] as const)),
    ...preferredClassTriggers(input.signals[preferred.name], config),
  ];
  const capacity = capacityShares(eligible);
  const costTarget = sharesOf(apportion(plan.shares, classes, total), classes);
  const from = restrict(heldShares, eligible.map((v) => v.cls));

  if (triggers.length > 0) {
    const entering = previous.mode !== 'capacity';
    return step(ctx, 'capacity', entering ? input.now : previous.modeSince, false, apportion(capacity, classes, total), {
      code: entering ? 'enter-capacity' : 'hold-capacity',
      triggers,
      message: `${entering ? 'Entering' : 'Staying in'} capacity mode: ${triggers.map((t) => describeTrigger(t, preferred)).join('; ')}.`,
    }, figures);
  }

  if (previous.mode === 'capacity') {
    const window = windowPeriods(config.stabilizationWindowSeconds, config);
    const healthy = healthyThroughout(input.signals[preferred.name], window, config);
    const dwelt = input.now - previous.modeSince >= config.stabilizationWindowSeconds;
    if (!healthy || !dwelt) {
      return step(ctx, 'capacity', previous.modeSince, false, apportion(capacity, classes, total), {
        code: 'stabilizing',
        triggers: [],
        message: `Staying in capacity mode until ${preferred.name} has been healthy for ${config.stabilizationWindowSeconds} s` +
          ` (${healthy ? 'healthy throughout' : 'not yet healthy throughout'}, mode held ${input.now - previous.modeSince} s).`,
      }, figures);
    }
    const ramp = from.size > 0 ? rampToward(from, costTarget, classes, config.rampStepShare, total) : { shares: costTarget, reached: true };
    return step(ctx, 'cost', input.now, !ramp.reached, apportion(ramp.shares, classes, total), {
      code: 'return-to-cost',
      triggers: [],
      message: `Returning to cost mode: ${preferred.name} healthy for ${config.stabilizationWindowSeconds} s; ` +
        (ramp.reached ? 'cost plan reached.' : `ramping at most ${Math.round(config.rampStepShare * 100)}% per tick.`),
    }, figures);
  }

  if (previous.ramping && from.size > 0) {
    const ramp = rampToward(from, costTarget, classes, config.rampStepShare, total);
    return step(ctx, 'cost', previous.modeSince, !ramp.reached, apportion(ramp.shares, classes, total), {
      code: 'ramping',
      triggers: [],
      message: ramp.reached ? 'Ramp finished: weights follow the cost plan.' : 'Ramping toward the cost plan.',
    }, figures);
  }

  // Steady cost mode, with a dead band against demand noise. It never delays a safety change: a class losing its
  // ready replicas, or the set of weighted classes changing, is written at once.
  const target = apportion(costTarget, classes, total);
  const sameSet = classes.every((c) => (previousWeights[c.name] > 0) === (target[c.name] > 0));
  const small = maxShareDelta(sharesOf(previousWeights, classes), sharesOf(target, classes), classes) < config.minWeightChangeShare;
  return step(ctx, 'cost', previous.modeSince, false, sameSet && small ? previousWeights : target, {
    code: 'cost-plan',
    triggers: [],
    message: `Ready capacity ${round(ready)} tokens/s covers ${round(demand * (1 + config.headroom))} tokens/s ` +
      `(demand + ${Math.round(config.headroom * 100)}% headroom); demand goes to the cheapest classes first.`,
  }, figures);
}

/**
 * The state to start from when nothing is known yet (first run, or the decision metric is missing): capacity mode
 * entered `now`, so cost mode is only taken after a full stabilization window of evidence. Fails safe: it may cost
 * money for ten minutes, never availability.
 */
export function initialPolicyState(weights: Readonly<Record<string, number>>, now: number): PolicyState {
  return { mode: 'capacity', weights, modeSince: now, ramping: false };
}

interface Context {
  readonly input: PolicyInput;
  readonly previous: PolicyState;
  readonly config: PolicyConfig;
  readonly classes: readonly PolicyClass[];
  readonly preferred: PolicyClass;
  readonly previousWeights: Record<string, number>;
}

function step(
  ctx: Context,
  mode: RoutingMode,
  modeSince: number,
  ramping: boolean,
  weights: Record<string, number>,
  reason: DecisionReason,
  figures: { demand: number | null; ready: number },
): PolicyStep {
  const weightsChanged = ctx.classes.some((c) => weights[c.name] !== ctx.previousWeights[c.name]);
  return {
    decision: {
      mode,
      weights,
      weightsChanged,
      modeChanged: mode !== ctx.previous.mode,
      reason,
      fallbackShare: 1 - weights[ctx.preferred.name] / ctx.config.weightTotal,
      requiredTokensPerSecond: figures.demand === null ? null : figures.demand * (1 + ctx.config.headroom),
      readyTokensPerSecond: figures.ready,
      preferredClass: ctx.preferred.name,
    },
    state: { mode, weights, modeSince, ramping },
  };
}

/** Shares restricted to `keep` and renormalized; empty when nothing is left. */
function restrict(shares: Shares, keep: readonly PolicyClass[]): Shares {
  const names = new Set(keep.map((c) => c.name));
  const sum = [...shares].reduce((s, [name, v]) => s + (names.has(name) ? v : 0), 0);
  if (!(sum > 0)) return new Map();
  return new Map([...shares].filter(([name]) => names.has(name)).map(([name, v]) => [name, v / sum]));
}

function describeTrigger(trigger: TriggerCode, preferred: PolicyClass): string {
  switch (trigger) {
    case 'insufficient-capacity':
      return 'ready capacity cannot cover demand plus headroom in cost order';
    case 'capacity-errors':
      return `${preferred.name} reports capacity errors`;
    case 'replicas-not-ready':
      return `${preferred.name} has fewer ready replicas than desired beyond the grace period`;
    case 'latency-breach':
      return `${preferred.name} breaches the p95 latency SLO for consecutive periods`;
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
