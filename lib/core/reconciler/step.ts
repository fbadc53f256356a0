/**
 * The reconciler's pure step: from one run's answers (the routing target's state and the GetMetricData results) to the
 * policy input, the decision, the next state, the one write to make (if any) and the replica floors to publish; then,
 * once the caller knows how the write went, the records to print (`runRecords`) and the memory to keep
 * (`rememberRun`). The Lambda (lambda/reconciler/reconcile.ts) is the I/O around it; a simulator calls the same
 * functions with metric windows as CloudWatch would publish them.
 *
 * ```ts
 * const q = metricQuery(config, nowMs);                 // what to ask GetMetricData for
 * const s = step(config, target, results, nowMs, memory); // results: the MetricDataResults of q
 * // s.ok === false: hold, print runRecords(config, s, { action: 'failed', ... }, nowMs)
 * // s.plan.action === 'write': apply s.plan.write to the target, then print runRecords(...) and keep rememberRun(...)
 * ```
 */
import { RECONCILER_TIMING_DEFAULTS } from '../platform/control-loop';
import { decide } from '../policy/decide';
import { latest } from '../policy/evidence';
import { type PolicyDecision, type PolicyInput, type PolicyState, type SignalWindow } from '../policy/types';
import { type ReconcilerConfig } from './config';
import { deferredEmf, failureAuditLine, failureEmf, type FailureReason, skippedAuditLine, weightInvariantProblems } from './faults';
import { auditInputLines, auditLine, decisionEmf, type MetricResult } from './io';
import { type ConfigurationMismatch, type RunMemory } from './memory';
import { type Observation, observe } from './observe';
import { routingTarget, type RoutingWrite, type TargetState } from './targets';

/** What a run does with its decision. */
export type StepPlan =
  | { readonly action: 'write'; readonly write: RoutingWrite; readonly detail?: string }
  | { readonly action: 'unchanged'; readonly detail?: string }
  | { readonly action: 'skipped'; readonly detail: string };

/** A run that cannot decide: the facts no longer match the target, or the decision would break a routing invariant. */
export interface StepFailure {
  readonly ok: false;
  readonly reason: FailureReason;
  readonly detail: string;
  /**
   * Not a fault: the routes the target lacks are those a deployment under way brings (`TargetState.arriving`), or the
   * facts describe another configuration of the target (`RoutingTarget.otherConfiguration`). The run is recorded as
   * skipped, with a `Decisions` datapoint (reason `deployment-under-way`) and no failure metric, so a deploy that adds
   * or renames routes pages neither the failure alarm nor the heartbeat. Another configuration found writable for
   * longer than a deploy leaves it (`RECONCILER_TIMING_DEFAULTS.configurationMismatchSeconds`) is no longer deferred.
   */
  readonly deferred?: boolean;
  /** The time counted towards that bound, for `rememberRun`; absent: the run found no other configuration (cleared). */
  readonly configurationMismatch?: ConfigurationMismatch;
  /** Printed with the audit line (e.g. the weights in force). */
  readonly context: Readonly<Record<string, unknown>>;
  readonly now: number;
}

export interface StepDecision {
  readonly ok: true;
  readonly observation: Observation;
  readonly input: PolicyInput;
  readonly decision: PolicyDecision;
  /** The policy state after this run if its write (if any) is applied. */
  readonly state: PolicyState;
  readonly plan: StepPlan;
  /**
   * Replica floors to publish as `ReplicaFloor` this run, by routed name: the decision's, or on a tick that holds
   * everything the floors in force, so an autoscaler reading the metric never loses them; null when none is known.
   */
  readonly floors: Readonly<Record<string, number>> | null;
  /** What the routing target held when the run read it. */
  readonly target: TargetState;
}

export type ReconcilerStep = StepFailure | StepDecision;

/** How the caller's write went (or that there was none). */
export interface RunOutcome {
  readonly action: 'applied' | 'unchanged' | 'skipped' | 'failed';
  readonly reason?: FailureReason;
  readonly detail?: string;
}

/**
 * One run's step. `nowMs` is the run's clock (epoch milliseconds); `memory` what the previous run in this execution
 * environment left (`rememberRun`), if any; `alarmed` the classes whose capacity-error alarm triggered the run
 * (`alarmedClasses`, lib/core/reconciler/alarm-trigger.ts).
 */
export function step(
  config: ReconcilerConfig,
  read: TargetState,
  results: readonly MetricResult[],
  nowMs: number,
  memory?: RunMemory,
  alarmed: readonly string[] = [],
): ReconcilerStep {
  const kind = routingTarget(config.facts);
  const target = withRememberedBounds(read, memory);
  const observation = observe(config, target, results, nowMs, memory, alarmed);
  const now = observation.query.now;
  const other = kind.otherConfiguration(config.facts, target);
  const clock = other === undefined ? undefined : configurationMismatchClock(memory?.configurationMismatch, target, nowMs);
  const counted = clock ? { configurationMismatch: clock } : {};
  if (target.unavailable) {
    return { ok: false, reason: 'target-unavailable', detail: `weights unchanged: ${target.unavailable}`, context: targetRead(target), now, ...counted };
  }
  // Before the routes are compared: facts of another configuration would read its variants as missing (a failure that
  // pages during every deploy that adds one) or as strays to zero, and any write would hold the endpoint Updating when
  // CloudFormation's UpdateEndpoint comes.
  if (other !== undefined) {
    const bound = RECONCILER_TIMING_DEFAULTS.configurationMismatchSeconds;
    // Past the bound no deploy explains it: fail, so the failure alarm pages rather than the heartbeat beating over
    // frozen weights. CloudFormation "updates only the changed resources" (AWS CloudFormation User Guide,
    // using-cfn-updating-stacks.html), so redeploying the same template leaves the endpoint where it is; UpdateEndpoint
    // with RetainAllVariantProperties (botocore@1.43.67 sagemaker service-2.json:49587-49618) points it back.
    const stuck = clock!.seconds >= bound;
    const detail = stuck
      ? `weights unchanged: ${other}; so for ${clock!.seconds} s with the endpoint InService, longer than a deployment leaves it (${bound} s): ` +
        'the endpoint was updated outside this stack, or its update failed or was rolled back. A stack update with an unchanged template changes ' +
        'nothing: run aws sagemaker update-endpoint --endpoint-name <the endpoint> --endpoint-config-name <the configuration the facts describe> ' +
        '--retain-all-variant-properties once the cause is fixed, or deploy a changed template'
      : `weights unchanged: ${other}`;
    return { ok: false, reason: 'target-mismatch', ...(stuck ? {} : { deferred: true }), detail, context: targetRead(target), now, ...counted };
  }
  if (observation.missingRoutes.length > 0) {
    const missing = observation.missingRoutes.map((m) => `'${m}'`).join(', ');
    const held = target.present.map((m) => `'${m}'`).join(', ') || 'none';
    if (observation.missingRoutes.every((m) => target.arriving?.includes(m))) {
      return {
        ok: false,
        reason: 'target-mismatch',
        deferred: true,
        detail: `weights unchanged: the deployment under way brings ${missing}, not yet among the ${kind.describeRoutes(config.facts)} ` +
          `(it holds: ${held}); weights are written once it is over`,
        context: targetRead(target),
        now,
      };
    }
    return {
      ok: false,
      reason: 'target-mismatch',
      detail: `weights unchanged: the routing facts name ${missing}, not among the ${kind.describeRoutes(config.facts)} ` +
        `(it holds: ${held}); a deploy that removes it is under way, or the target was changed outside this stack, where a stack update with ` +
        'an unchanged template changes nothing: ' +
        'point the target back at what the stack deploys (docs/reconciler.md, target-mismatch) or deploy a changed template',
      context: targetRead(target),
      now,
    };
  }
  const input: PolicyInput = {
    now,
    classes: observation.classes,
    signals: observation.signals,
    demandTokensPerSecond: observation.demandTokensPerSecond,
    config: config.policy,
    floorsTakenBy: kind.floors,
    capacityErrorsIncludeRollbacks: kind.scaleOutsRollBack,
  };
  const { decision, state } = decide(input, observation.previous);
  const broken = weightInvariantProblems(decision.weights, observation.classes);
  if (broken.length > 0) {
    return {
      ok: false, reason: 'internal-error', detail: `weights unchanged: the decision breaks a routing invariant: ${broken.join('; ')}`,
      context: targetRead(target), now,
    };
  }
  const floors = floorsToApply(config, decision, observation);
  const planned = kind.plannedWrite(config.facts, decision, target, floors);
  // Weights the period already wrote are held (`planOf`); the run's write is then the capacity one it would make if the
  // weights had not changed, so a raise does not wait behind them for another period.
  const write = planned?.kind === 'weights' && heldThisPeriod('weights', decision, memory, now)
    ? kind.plannedWrite(config.facts, { ...decision, weightsChanged: false }, target, floors) ?? planned
    : planned;
  return { ok: true, observation, input, decision, state, plan: planOf(write, target, decision, memory, now), floors, target };
}

/** The decision's floors (or, on a hold, those in force), each capped at its route's maximum and made visible to the autoscaler. */
function floorsToApply(config: ReconcilerConfig, decision: PolicyDecision, observation: Observation): Record<string, number> | null {
  const kind = routingTarget(config.facts);
  const floors = decision.replicaFloors ?? observation.floorsInForce;
  if (!floors) return null;
  const max = new Map(kind.routes(config.facts).map((r) => [r.name, r.maxReplicas]));
  const out: Record<string, number> = {};
  for (const [name, floor] of Object.entries(floors)) {
    if (!max.has(name) || !Number.isFinite(floor)) continue;
    const desired = latest(observation.signals[name]?.desiredReplicas);
    const asked = Math.max(0, Math.round(floor));
    // The preferred class's standing ask is published as it is: raised past the HPA's tolerance it would stick above
    // the ask (the HPA ignores the next, lower floor within its tolerance) and read as a shortage. Its own HPA, routed
    // its ready envelope in capacity mode, already asks 1 + headroom above its ready replicas.
    out[name] = Math.min(max.get(name)!, name === decision.preferredClass ? asked : kind.autoscalerFloor(asked, desired));
  }
  return out;
}

function planOf(
  write: RoutingWrite | undefined,
  target: TargetState,
  decision: PolicyDecision,
  memory: RunMemory | undefined,
  now: number,
): StepPlan {
  const held = target.capacityUnwritable;
  // A read the run went without is named on every audit line it counts a DegradedReads datapoint for, skipped or not.
  const withHeld = (detail: string | undefined) => [detail, held].filter((d) => d !== undefined).join('; ');
  if (!write) return held ? { action: 'unchanged', detail: held } : { action: 'unchanged' };
  if (target.notWritable) return { action: 'skipped', detail: withHeld(target.notWritable) };
  if (heldThisPeriod(write.kind, decision, memory, now)) {
    return { action: 'skipped', detail: withHeld(`a ${write.kind} write was already made in this period; the next period writes`) };
  }
  const detail = withHeld(describeWrite(write));
  return { action: 'write', write, ...(detail ? { detail } : {}) };
}

/**
 * One write of each kind per period, whatever the number of runs in it (EventBridge may deliver an event more than
 * once): a second weights write would outpace the ramp bound, a second capacity write raise a variant again on counts
 * the first has not changed yet. A capacity write after a weights write is not held: the weights' update is over once
 * the endpoint reads InService again (`notWritable`), and SageMaker's run on that state change is the capacity write's
 * turn. Held to the next period, it lost the endpoint to a fallback's own target tracking, whose alarm asks every minute
 * (traced on the simulator's H3: the preferred variant's ask went unwritten for 15 minutes). Entering capacity mode is
 * the exception: reacting at once to a capacity alarm is what the alarm-triggered run is for.
 */
function heldThisPeriod(kind: RoutingWrite['kind'], decision: PolicyDecision, memory: RunMemory | undefined, now: number): boolean {
  const entering = decision.modeChanged && decision.mode === 'capacity';
  return memory?.period === now && memory.wrote?.includes(kind) === true && !entering;
}

/** The audit line's words for a write (none for a plain weights write). */
export function describeWrite(write: RoutingWrite): string | undefined {
  if (write.kind === 'capacity') {
    if (write.to < write.from) {
      return `desired instances of ${write.route} lowered from ${write.from} to ${write.to}: what the routing needs at the window's peak demand`;
    }
    return write.floor === undefined
      ? `desired instances of ${write.route} raised from ${write.from} to its replica floor ${write.to}`
      : `desired instances of ${write.route} raised from ${write.from} to ${write.to}, its scalable target's MaxCapacity (replica floor ${write.floor})`;
  }
  return write.zeroed.length > 0 ? `weight 0 written for ${write.zeroed.map((n) => `'${n}'`).join(', ')}, which the routing facts do not name` : undefined;
}

/** The weights in force after the run: the decided ones if it wrote them or had nothing to write, else the target's. */
export function weightsInForce(s: StepDecision, outcome: RunOutcome): Readonly<Record<string, number>> {
  return recordedState(s, outcome).inForce;
}

/** The weights in force and the state to record after the run: the new ones if its write went through, else the old. */
function recordedState(s: StepDecision, outcome: RunOutcome): { inForce: Readonly<Record<string, number>>; recorded: PolicyState } {
  const kept = outcome.action === 'applied' || outcome.action === 'unchanged';
  const weightsWritten = kept && (s.plan.action !== 'write' || s.plan.write.kind === 'weights');
  const inForce = weightsWritten ? s.decision.weights : s.target.weights;
  // A capacity write made while changed weights were held leaves the old weights in force: record those.
  return { inForce, recorded: kept && weightsWritten ? s.state : { ...s.state, weights: s.target.weights } };
}

/**
 * Everything the run prints: EMF records (mode, ramp, shares, weight per route, floors, replicas; a failure datapoint
 * when it failed) and one audit line. Every run prints exactly one audit line (`routing-decision`); a run that decided
 * also one `routing-inputs` record per class with the signal windows it read (`auditInputLines`).
 */
export function runRecords(config: ReconcilerConfig, s: ReconcilerStep, outcome: RunOutcome, nowMs: number): Array<Record<string, unknown>> {
  if (!s.ok && s.deferred) return [deferredEmf(config.service, nowMs), skippedAuditLine(Math.floor(nowMs / 1000), s.detail, s.context)];
  if (!s.ok) {
    return [failureEmf(config.service, s.reason, nowMs), failureAuditLine(Math.floor(nowMs / 1000), s.reason, s.detail, s.context)];
  }
  const kind = routingTarget(config.facts);
  const { inForce, recorded } = recordedState(s, outcome);
  const written = outcome.action === 'applied' && s.plan.action === 'write' && s.plan.write.kind === 'weights';
  const newest = Object.fromEntries(Object.entries(s.input.signals)
    .map(([n, w]) => [n, { ready: latest(w.readyReplicas), desired: latest(w.desiredReplicas) }]));
  const records = decisionEmf({
    decision: { ...s.decision, weights: inForce },
    next: recorded,
    input: s.input,
    service: config.service,
    timestampMs: nowMs,
    weightTotal: s.observation.query.policy.weightTotal,
    written,
    deferred: outcome.action === 'skipped',
    degraded: Boolean(s.target.capacityUnwritable || s.target.healthUnread),
    floors: s.floors,
    observed: kind.observations(config.facts, s.target, newest),
    ...(s.target.healthyTargets ? { healthyTargets: s.target.healthyTargets } : {}),
    ...(s.observation.refusedScaleOuts ? { refused: newestRefusals(s.observation.refusedScaleOuts) } : {}),
  });
  if (outcome.reason) records.push(failureEmf(config.service, outcome.reason, nowMs));
  const run = new Date(nowMs).toISOString();
  const audit = auditLine(s.input, s.observation.previous, s.decision, recorded, {
    action: outcome.action,
    ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
  }, s.floors, run);
  records.push({ ...audit, ...healthRead(s.target) }, ...auditInputLines(s.input, run));
  return records;
}

/**
 * ALB: the live health the run read, for its audit line (null: the read failed, `healthUnread` says why). A decided
 * run's ready counts were checked against it (`emptyWhereUnpublished`); a run that failed after the read leaves the
 * weights in force, and the counts show whether the classes they send traffic to still had healthy targets.
 */
export function healthRead(target: TargetState): Pick<TargetState, 'healthyTargets' | 'healthUnread'> {
  const { healthyTargets, healthUnread } = target;
  return { ...(healthyTargets ? { healthyTargets } : {}), ...(healthUnread ? { healthUnread } : {}) };
}

/** A run that failed after reading the target: the weights it leaves in force, and the health they point at. */
export function targetRead(target: TargetState): Pick<TargetState, 'weights' | 'healthyTargets' | 'healthUnread'> {
  return { weights: target.weights, ...healthRead(target) };
}

/**
 * Per route, whether the newest sample shows a scale-out rolled back without new replicas (`Observation.refusedScaleOuts`):
 * the capacity error the reconciler derives on SageMaker, which publishes none, published so that dashboards show it.
 */
function newestRefusals(windows: Readonly<Record<string, SignalWindow>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, w] of Object.entries(windows)) {
    const v = latest(w);
    if (v !== null) out[name] = v;
  }
  return out;
}

/** What this run leaves the next run in the same execution environment (unchanged when it could not decide). */
export function rememberRun(s: ReconcilerStep, outcome: RunOutcome, memory?: RunMemory): RunMemory | undefined {
  if (!s.ok) {
    // Otherwise unchanged: only the configuration clock moves on a run that cannot decide.
    const { configurationMismatch: _counted, ...kept } = memory ?? {};
    const next: RunMemory = { ...kept, ...(s.configurationMismatch ? { configurationMismatch: s.configurationMismatch } : {}) };
    return Object.keys(next).length > 0 ? next : undefined;
  }
  const now = s.observation.query.now;
  const wroteNow = outcome.action === 'applied' && s.plan.action === 'write' ? [s.plan.write.kind] : [];
  const earlier = memory?.period === now ? memory.wrote ?? [] : [];
  const kinds = [...new Set([...earlier, ...wroteNow])];
  const wrote = kinds.length > 0 ? kinds : undefined;
  // The newest bounds read successfully: this run's, or, when its read failed, the earlier ones it planned with.
  const bounds = s.target.capacityUnwritable ? undefined : s.target.scalingBounds;
  const boundsRead = bounds ? { at: now, bounds } : memory?.boundsRead;
  return {
    period: now, state: recordedState(s, outcome).recorded, ...(wrote ? { wrote } : {}), floors: s.floors,
    ...(boundsRead ? { boundsRead } : {}),
  };
}

/**
 * The time runs have found the endpoint writable on another configuration than the facts describe, this run included:
 * the seconds since the previous run found it so are added only when this run finds it writable too. A run that finds
 * it not writable (Updating, Creating: CloudFormation's UpdateEndpoint under way, or an autoscaling scale-out) or
 * unavailable counts nothing and stops the count until the next writable run, without clearing it: an update ends
 * InService, on the facts' configuration (a match clears the count) or on another (counting goes on), and an endpoint
 * whose scale-outs keep it Updating every few minutes still reaches the bound (UpdateEndpointWeightsAndCapacities:
 * "When it receives the request, SageMaker sets the endpoint status to Updating",
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpointWeightsAndCapacities.html). The count
 * lives in the run memory: a cold start begins it again, so the bound can be reached later than it says, never sooner.
 */
function configurationMismatchClock(previous: ConfigurationMismatch | undefined, target: TargetState, nowMs: number): ConfigurationMismatch {
  const seconds = previous?.seconds ?? 0;
  if (target.notWritable !== undefined || target.unavailable !== undefined) return { seconds };
  const at = Math.floor(nowMs / 1000);
  const since = previous?.writableAt;
  return { seconds: seconds + (since !== undefined && at > since ? at - since : 0), writableAt: at };
}

/**
 * The target as the run plans with it: when its scaling bounds could not be read, those of the newest good read in
 * this execution environment (`TargetState.rememberedBounds`), named with their time in the audit line; still no
 * capacity write.
 */
function withRememberedBounds(read: TargetState, memory: RunMemory | undefined): TargetState {
  if (!read.capacityUnwritable || !memory?.boundsRead) return read;
  const at = new Date(memory.boundsRead.at * 1000).toISOString();
  return {
    ...read,
    rememberedBounds: memory.boundsRead.bounds,
    capacityUnwritable: `${read.capacityUnwritable}; planned within the scaling bounds read at ${at}`,
  };
}

