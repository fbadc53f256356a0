import { interruptionHoldSeconds } from '../core/platform/control-loop';
import { capacitiesToRaise } from '../core/reconciler/io';
import { queuedRequestDroppedAfterSeconds } from '../core/runtime/abandonment';
import { servesAfterSigtermSeconds } from '../core/runtime/shutdown';
import { HpaAutoscaler, TargetTracking, type TrackingDatapoint, type TrackingPolicy, variantTrackingPolicies } from './autoscaler';
import { replicaCostUsd } from '../core/report/cost';
import { ClassState, counts, DRAINING, GONE, PENDING, Pool, READY, type Replica } from './class-state';
import { calibratedSlotRate } from './envelope-calibration';
import { EventHeap } from './heap';
import { LATENCY_BUCKETS, latencyBucket } from './histogram';
import { MetricHistory, Publication } from './metric-history';
import {
  availabilityAt, availabilityStepAt, declaredTokensPerRequest, poolsOf, routedScenario, scalingPinColumns, type ScenarioInstance, type SimClass,
} from './model';
import { type HpaModel, type PlatformModel, publicationDelaySeconds, rollbackDuration, scenarioPlatform, type TargetTrackingModel } from './platform';
import { type Decision, type PolicyFactory, type PublishedMetrics, type RoutingPolicy, normalise } from './policy';
import { Rng } from './rng';
import { createRunSeries, type RunSeries } from './run-series';
import { type Trace, generateTrace, rateMultiplierAt, tokenDistributionMean } from './workload';

export { type RunSeries } from './run-series';

/**
 * Discrete-event simulation of one service under one routing policy on one platform: arrivals from a seeded trace, a
 * weighted router, one FIFO queue per class with its servers' admission, replicas with `safeConcurrency` slots each, the
 * platform's autoscalers (EKS: the HPA of each class's ScaledObject every 15 s; SageMaker: each variant's target
 * tracking alarms every 10 s, at a phase of their own), provisioning delays and cloud availability, a 60 s metrics pipeline
 * with publication delay, and a reconciler that calls the policy every 60 s on periods older than its metric delay and
 * writes as the deployed one does. Events are requests' completions, replica readiness, autoscaler evaluations and
 * minute ticks, kept in one typed-array heap; no per-token events.
 */

const EV_COMPLETE = 0;
const EV_READY = 1;
const EV_TICK = 2;
const EV_SYNC = 3;
/**
 * SageMaker: one variant's target-tracking alarms are evaluated (every high-resolution period, at the variant's own
 * phase; payload: the variant x the periods in a minute + the period's index in its minute).
 */
const EV_TRACK = 4;
/** SageMaker: the Reconciler run its construct's `writableRule` triggers when the endpoint is InService again. */
const EV_WRITABLE = 5;
/** The Reconciler's scheduled run, at its phase of the minute (`reconcilerPhase`), when that is not the tick's instant. */
const EV_RUN = 6;
/** An interrupted pod the PodDisruptionBudget held is deleted: it drains (payload: the replica). */
const EV_DRAIN = 7;
/** SageMaker: a removed instance's server stops serving what it still holds (payload: the replica). */
const EV_STOP = 8;
/** SageMaker: a high-resolution period ends; each variant's datapoint of it is recorded (payload: its end / the period). */
const EV_PERIOD = 9;

export interface LittleCheck {
  readonly className: string;
  /** Time-average number in system (queue + service). */
  readonly inSystem: number;
  /** Admitted arrivals per second. */
  readonly arrivalRate: number;
  /** Mean time in system of admitted requests, seconds. */
  readonly meanTimeInSystem: number;
}

export interface RunResult {
  readonly scenarioId: string;
  readonly policyName: string;
  readonly seed: number;
  readonly durationSeconds: number;
  readonly classNames: readonly string[];
  readonly series: RunSeries;
  readonly little: readonly LittleCheck[];
  /** Waiting times in queue of all admitted requests, when `recordWaits` was set. */
  readonly waits?: Float64Array;
  readonly totalArrivals: number;
}

export interface RunOptions {
  readonly seed: number;
  /** Record every request's wait (for queueing validation). */
  readonly recordWaits?: boolean;
  /** A pre-generated trace (shared across policies so comparisons are paired). */
  readonly trace?: Trace;
}

export function runSimulation(scenario: ScenarioInstance, policyFactory: PolicyFactory, options: RunOptions): RunResult {
  return new Simulation(routedScenario(scenario), policyFactory, options).run();
}

/** One run's world: the requests in flight, the classes' replicas and queues, the router and the control loop. */
class Simulation {
  private readonly trace: Trace;
  private readonly classes: readonly SimClass[];
  private readonly k: number;
  private readonly minutes: number;
  private readonly s: RunSeries;
  private readonly states: ClassState[];
  private readonly replicas: Replica[] = [];
  private readonly heap = new EventHeap(4096);
  /** Prompt tokens of a request (the queue's prompt-token budget). */
  private readonly promptOf = (req: number): number => this.trace.prompt[req];
  private readonly routeRng: Rng;
  private readonly provisionRng: Rng;
  private readonly workNorm: number;
  // Per request (index into the trace).
  private readonly reqClass: Int32Array;
  private readonly reqReplica: Int32Array;
  private readonly reqSlot: Int32Array;
  private readonly reqWork: Float64Array;
  private readonly reqDeadline: Float64Array;
  private readonly waits: Float64Array | undefined;
  private waitCount = 0;
  private readonly history: MetricHistory;
  private readonly policy: RoutingPolicy;
  /** Weights the router applies now (SageMaker: each variant's CurrentWeight). */
  private weights: number[];
  /**
   * SageMaker: weights written and not yet in force, routed as `routedWeights` gives them (DesiredWeight while the
   * endpoint is Updating), and when the write is over (`due`: its own update's end, whatever else keeps the endpoint
   * Updating); they take effect then (`settleWeights`).
   */
  private pendingWrite: { readonly weights: number[]; readonly due: number } | undefined;
  private readonly cumulative: Float64Array;
  private readonly platform: PlatformModel;
  private readonly publication: Publication;
  /** SageMaker: the endpoint accepts no update before this time (it is Updating). */
  private updatingEnds = -Infinity;
  /**
   * SageMaker: each variant's one-minute alarms (the per-pool policy's) are evaluated at this many seconds past every
   * minute, its high-resolution ones at this many seconds modulo the period past every period.
   */
  private readonly alarmPhases: readonly number[];
  /**
   * SageMaker: per high-resolution period and variant (period x k + variant), the mean in-flight requests and the
   * instances in service at its end (`recordPeriod`): the predefined policy's datapoints.
   */
  private readonly periodInFlight: Float64Array;
  private readonly periodInService: Int32Array;
  /** Each variant's Little's-law area at the start of the current high-resolution period. */
  private readonly areaAtPeriodStart: Float64Array;
  /** SageMaker: each variant's target-tracking policies as its last one-minute evaluation found them. */
  private readonly trackingPolicies: TrackingPolicy[][] = [];
  /** Seconds past every minute at which the Reconciler's schedule fires (`PlatformModel.reconciler.phaseSeconds`). */
  private readonly reconcilerPhase: number;
  /** SageMaker: draws how long each rollback lasts. */
  private readonly rollbackRng: Rng;
  /** Counts the changes of `updatingUntil`: an event run scheduled for an update that has since changed is not made. */
  private updatingChanges = 0;

  private get updatingUntil(): number {
    return this.updatingEnds;
  }

  /**
   * Every end of an update is an IN_SERVICE event: a policy that runs when the endpoint is writable again (the deployed
   * Reconciler) runs `writableRunSeconds` after it, unless the update was extended or cut short meanwhile.
   */
  private set updatingUntil(until: number) {
    if (until === this.updatingEnds) return;
    this.updatingEnds = until;
    this.updatingChanges++;
    const update = this.platform.endpointUpdate;
    const at = until + (update?.writableRunSeconds ?? 0);
    // Not past the run's end: its last minute is closed by then.
    if (!update || !this.policy.runsWhenWritable || !Number.isFinite(until) || at >= this.minutes * 60) return;
    this.heap.push(at, EV_WRITABLE, this.updatingChanges);
  }
  /** The oracle sets replicas itself; the platform's autoscalers then stand aside. */
  private oracle = false;
  /** The simulated CloudWatch a policy may query itself. */
  private readonly published: PublishedMetrics;
  /** SageMaker: each column's pinned scalable-target bounds while a scenario's `scalingPins` holds it. */
  private readonly pinned: Array<{ readonly min: number; readonly max: number } | undefined>;
  /** The routed column of each of the scenario's scaling pins (checked once: `scalingPinColumns`). */
  private readonly pinColumns: readonly number[];

  constructor(private readonly scenario: ScenarioInstance, policyFactory: PolicyFactory, private readonly options: RunOptions) {
    const seed = options.seed;
    this.trace = options.trace ?? generateTrace(scenario.workload, scenario.durationSeconds, seed);
    this.classes = scenario.classes;
    this.k = this.classes.length;
    this.minutes = Math.ceil(scenario.durationSeconds / 60);
    this.pinned = this.classes.map(() => undefined);
    this.pinColumns = scalingPinColumns(scenario);
    const service = scenario.service;
    const meanOut = tokenDistributionMean(scenario.workload.outputTokens);
    const meanPrompt = tokenDistributionMean(scenario.workload.promptTokens);
    // Work units: output tokens plus prefill, scaled so a request's mean work equals the mean output length.
    this.workNorm = meanOut / (meanOut + service.prefillWeight * meanPrompt);
    this.routeRng = Rng.derive(seed, 'route');
    this.provisionRng = Rng.derive(seed, 'provision');
    this.platform = scenarioPlatform(scenario);
    const measuredOn = scenario.envelopeWorkload ?? scenario.workload;
    this.states = this.classes.map((spec) => new ClassState(spec, poolsOf(scenario, spec).map((p) => {
      const slotRate = service.envelopeUtilization !== undefined
        ? p.tokensPerSecondPerReplica / (service.envelopeUtilization * p.safeConcurrency)
        : calibratedSlotRate({
          tokensPerSecondPerReplica: p.tokensPerSecondPerReplica,
          safeConcurrency: p.safeConcurrency,
          inFlight: p.envelopeInFlight ?? p.safeConcurrency,
          promptTokens: measuredOn.promptTokens,
          outputTokens: measuredOn.outputTokens,
          prefillWeight: service.prefillWeight,
          workNorm: this.workNorm,
        });
      const droppedAfter = queuedRequestDroppedAfterSeconds(p.engine ?? '', service.deadlineSeconds * 1000, this.platform.kind);
      return new Pool(p, slotRate, scenario.speedFactors?.[p.name] ?? 1, droppedAfter);
    })));
    const n = this.trace.count;
    this.reqClass = new Int32Array(n);
    this.reqReplica = new Int32Array(n).fill(-1);
    this.reqSlot = new Int32Array(n);
    this.reqWork = new Float64Array(n);
    this.reqDeadline = new Float64Array(n);
    this.waits = options.recordWaits ? new Float64Array(n) : undefined;
    this.s = createRunSeries(this.minutes, this.k);

    // Times in 1/1024 s: sums of phases, timeouts and cooldowns stay exact, so a comparison of two of them never
    // slips a minute by a rounding error.
    const phaseRng = Rng.derive(seed, 'alarm-phase');
    this.alarmPhases = this.classes.map(() => this.platform.endpointUpdate?.alarmPhaseSeconds ?? Math.floor(phaseRng.next() * 60 * 1024) / 1024);
    this.rollbackRng = Rng.derive(seed, 'rollback');
    const tracking = this.platform.autoscaler.kind === 'target-tracking' ? this.platform.autoscaler : undefined;
    const periods = tracking ? this.minutes * (60 / tracking.highResolutionPeriodSeconds) : 0;
    this.periodInFlight = new Float64Array(periods * this.k);
    this.periodInService = new Int32Array(periods * this.k);
    this.areaAtPeriodStart = new Float64Array(this.k);
    // Drawn like the alarms' phases: from the seed alone, so every policy on a seed runs at the same second.
    this.reconcilerPhase = this.platform.reconciler.phaseSeconds ?? Math.floor(Rng.derive(seed, 'reconciler-phase').next() * 60 * 1024) / 1024;
    this.publication = new Publication(publicationDelaySeconds(scenario), scenario.metricOutages ?? []);
    // Initial state: steady operation at time 0.
    this.states.forEach((cs, ci) => {
      const count = this.launchByPriority(ci, cs.spec.initialReplicas, 0, true).count;
      cs.desired = count;
      cs.minReadyInMinute = cs.readyCount;
      const autoscaler = this.platform.autoscaler;
      if (autoscaler.kind === 'hpa') cs.hpa = new HpaAutoscaler(autoscaler, count);
      else {
        cs.tracking = new TargetTracking(autoscaler, this.platform.endpointUpdate?.scaleInSeconds);
        this.trackingPolicies[ci] = variantTrackingPolicies(autoscaler, cs.spec.targetConcurrencyPerReplica, cs.spec.poolTargets, cs.pools, 0);
      }
    });
    const initialDemandTokens = scenario.workload.meanRatePerSecond * rateMultiplierAt(scenario.workload.rateProfile, 0) * meanOut * 60;
    this.history = new MetricHistory(this.s, this.publication, this.platform.reconciler.metricDelaySeconds, declaredTokensPerRequest(scenario),
      this.platform, this.states, initialDemandTokens, meanOut);
    this.published = {
      series: this.s,
      readable: (m, at) => this.publication.readable(m, at),
      steady: (ci) => this.history.steady[ci],
    };
    this.policy = policyFactory({ scenario, trace: this.trace });
    this.cumulative = new Float64Array(this.k);
    this.weights = normalise(this.states.map(() => 1));
  }

  run(): RunResult {
    // As at every minute's start, interruptions first, so the first run sees them; that run sets the steady state the
    // simulated hour starts from, and the HPAs sync on it.
    this.rollBackExpiredScaleOuts(0);
    this.interrupt(0, 0);
    this.control(0);
    if (this.platform.autoscaler.kind === 'hpa') this.syncAutoscalers(0);
    this.scheduleAutoscalers(0);
    this.heap.push(60, EV_TICK, 1);
    const heap = this.heap;
    const times = this.trace.time;
    const n = this.trace.count;
    let next = 0;
    for (;;) {
      const tArrival = next < n ? times[next] : Infinity;
      const tEvent = heap.peekTime();
      if (tArrival === Infinity && tEvent === Infinity) break;
      if (this.pendingWrite && Math.min(tArrival, tEvent) >= this.pendingWrite.due) this.settleWeights();
      if (tArrival < tEvent) {
        this.arrive(next++, tArrival);
        continue;
      }
      const kind = heap.topKind();
      const payload = heap.topPayload();
      heap.pop();
      if (kind === EV_COMPLETE) this.complete(payload, tEvent);
      else if (kind === EV_READY) this.makeReady(this.replicas[payload], tEvent);
      else if (kind === EV_SYNC) this.syncAutoscalers(tEvent);
      else if (kind === EV_TRACK) this.trackTarget(payload, tEvent);
      else if (kind === EV_PERIOD) this.recordPeriod(payload, tEvent);
      else if (kind === EV_RUN) this.control(tEvent);
      else if (kind === EV_DRAIN) {
        const r = this.replicas[payload];
        if (r.state === READY) this.drain(r, tEvent);
      }
      else if (kind === EV_STOP) {
        const r = this.replicas[payload];
        if (r.state === DRAINING) this.kill(r, tEvent);
      }
      else if (kind === EV_WRITABLE) {
        if (payload === this.updatingChanges) this.control(tEvent);
      }
      else this.tick(payload, tEvent);
    }
    return this.result();
  }

  // ---- Requests ---------------------------------------------------------------------------------------------

  private arrive(req: number, now: number): void {
    const s = this.s;
    const k = this.k;
    const m = this.minuteOf(now);
    const out = this.trace.output[req];
    s.demandRequests[m]++;
    s.demandTokens[m] += out;
    const u = this.routeRng.next();
    let ci = 0;
    while (ci < k - 1 && u >= this.cumulative[ci]) ci++;
    const cs = this.states[ci];
    const cell = m * k + ci;
    s.routedRequests[cell]++;
    s.routedTokens[cell] += out;
    this.reqClass[req] = ci;
    const service = this.scenario.service;
    this.reqWork[req] = (out + service.prefillWeight * this.trace.prompt[req]) * this.workNorm;
    this.reqDeadline[req] = service.itlSeconds > 0
      ? Math.min(service.deadlineSeconds, service.ttftSeconds + out * service.itlSeconds)
      : service.deadlineSeconds;
    if (cs.readyCount === 0) {
      s.unroutable[cell]++;
      s.rejected[cell]++;
      s.rejectedTokens[cell] += out;
      return;
    }
    // Least outstanding requests among ready replicas with a free slot.
    let best: Replica | undefined;
    const reps = cs.replicas;
    for (let i = 0; i < reps.length; i++) {
      const r = reps[i];
      if (r.state === READY && r.busy < r.slots.length && (!best || r.busy < best.busy)) best = r;
    }
    // Admission as deployed (`serverAdmission()`): every ready replica holds at most its server's in-flight bound (its
    // slots plus its queue slots) and, on vLLM, its prompt-token budget; past that the engine sheds at once (429/503)
    // rather than queue past the deadline. Every simulated request asks for one sequence (n = 1).
    if (!best && !cs.admitsQueued(now, this.trace.prompt[req])) {
      s.rejected[cell]++;
      s.rejectedTokens[cell] += out;
      return;
    }
    s.admitted[cell]++;
    cs.admittedTotal++;
    cs.changeInSystem(now, 1);
    if (best) this.start(req, best, now);
    else cs.enqueue(req, now, this.trace.prompt[req]);
  }

  private start(req: number, r: Replica, now: number): void {
    const pool = this.states[r.cls].pools[r.pool];
    r.busy++;
    const slot = r.free[--r.freeTop];
    r.slots[slot] = req;
    this.reqSlot[req] = slot;
    this.reqReplica[req] = r.id;
    if (this.waits) this.waits[this.waitCount++] = now - this.trace.time[req];
    this.heap.push(now + this.reqWork[req] / (pool.slotRate * pool.speed), EV_COMPLETE, req);
  }

  private complete(req: number, now: number): void {
    const rid = this.reqReplica[req];
    if (rid < 0) return; // lost with its replica
    const r = this.replicas[rid];
    r.busy--;
    const slot = this.reqSlot[req];
    r.slots[slot] = -1;
    r.free[r.freeTop++] = slot;
    r.unscrapedTokens += this.trace.output[req];
    this.recordEnd(req, now, true);
    if (r.state === READY) this.pull(r, now);
    else if (r.state === DRAINING && r.busy === 0) this.removeReplica(r, now, r.doomed);
  }

  /**
   * Pulls queued requests onto a replica's free slots, oldest first. One leaves the queue unserved only as deployed: its
   * connection closed by the platform and its server one that notices (`Pool.droppedAfterSeconds`); else it is served
   * however late, an SLO miss that still takes its slot. Nothing here reads its output length: no server knows it.
   */
  private pull(r: Replica, now: number): void {
    const cs = this.states[r.cls];
    const droppedAfter = cs.pools[r.pool].droppedAfterSeconds;
    while (r.busy < r.slots.length && cs.qLen > 0) {
      const req = cs.dequeue(this.promptOf);
      if (droppedAfter !== undefined && now >= this.trace.time[req] + droppedAfter) {
        this.s.closedByBalancer[this.minuteOf(now) * this.k + r.cls]++;
        this.recordEnd(req, now, false);
        continue;
      }
      this.start(req, r, now);
    }
  }

  private recordEnd(req: number, now: number, served: boolean): void {
    const s = this.s;
    const ci = this.reqClass[req];
    const cs = this.states[ci];
    const latency = now - this.trace.time[req];
    cs.changeInSystem(now, -1);
    cs.sumTimeInSystem += latency;
    const cell = this.minuteOf(now) * this.k + ci;
    const tokens = this.trace.output[req];
    if (!served) {
      s.rejected[cell]++;
      s.rejectedTokens[cell] += tokens;
      return;
    }
    s.completed[cell]++;
    s.servedTokens[cell] += tokens;
    if (this.replicas[this.reqReplica[req]].pool > 0) s.lowerPoolServedTokens[cell] += tokens;
    if (latency <= this.reqDeadline[req]) {
      s.sloMetRequests[cell]++;
      s.sloMetTokens[cell] += tokens;
    }
    s.latency[cell * LATENCY_BUCKETS + latencyBucket(latency)]++;
  }

  // ---- Replicas ---------------------------------------------------------------------------------------------

  /** Launches one replica of a class's pool; returns when it will be ready. */
  private launch(ci: number, pi: number, now: number, instant: boolean): number {
    const cs = this.states[ci];
    const pool = cs.pools[pi];
    const c = pool.slots;
    const r: Replica = {
      // Replicas of the steady state at time 0 have been scraped before (the oracle's, launched at once later, read no
      // metric: their counters do not matter).
      id: this.replicas.length, cls: ci, pool: pi, state: PENDING, busy: 0, readyAt: now, doomed: false, held: false,
      unscrapedTokens: 0, sampled: instant,
      slots: new Int32Array(c).fill(-1), free: Int32Array.from({ length: c }, (_, i) => c - 1 - i), freeTop: c,
    };
    this.replicas.push(r);
    cs.replicas.push(r);
    const nodes = this.platform.nodes;
    // An empty node not yet consolidated takes the pod: no new node, its image cached (`PlatformModel.nodes`), and no
    // sooner ready than the pod it was launched for would have been (`IdleNode`).
    const podReadyFrom = !instant && nodes !== undefined ? pool.takeIdleNode(now) : undefined;
    const warm = podReadyFrom !== undefined;
    if (!warm) pool.changeAlive(now, 1);
    if (instant) {
      this.makeReady(r, now);
      return now;
    }
    const readyAt = Math.max(now + this.drawProvisioning(pool.spec) * (warm ? nodes!.warmStartShare : 1), podReadyFrom ?? now);
    r.readyAt = readyAt;
    this.heap.push(readyAt, EV_READY, r.id);
    return readyAt;
  }

  private drawProvisioning(spec: SimClass): number {
    const p = spec.provisioningSeconds;
    return typeof p === 'number' ? p : this.provisionRng.uniform(p[0], p[1]);
  }

  private makeReady(r: Replica, now: number): void {
    if (r.state !== PENDING) return;
    r.state = READY;
    this.states[r.cls].pools[r.pool].readyCount++;
    this.pull(r, now);
  }

  /** `nodeLost`: the node went with the pod (an interruption); else on EKS it stays until consolidated. */
  private removeReplica(r: Replica, now: number, nodeLost = false): void {
    const cs = this.states[r.cls];
    const pool = cs.pools[r.pool];
    if (r.state === READY) cs.leaveReady(r.pool, now);
    r.state = GONE;
    const nodes = this.platform.nodes;
    // The oracle provisions and releases instantly: it keeps no empty node.
    if (nodes && !nodeLost && !this.oracle) {
      pool.expireIdle(now);
      pool.idleNodes.push({ until: now + nodes.consolidateAfterSeconds, podReadyFrom: r.readyAt });
    } else pool.changeAlive(now, -1);
    const i = cs.replicas.indexOf(r);
    if (i >= 0) cs.replicas.splice(i, 1);
  }

  /** Loses a replica at once (an interruption, or a removed SageMaker instance's SIGKILL): its requests in service end unserved. */
  private kill(r: Replica, now: number): void {
    for (let i = 0; i < r.slots.length; i++) {
      const req = r.slots[i];
      if (req < 0) continue;
      this.reqReplica[req] = -2;
      this.s.lostWithReplica[this.minuteOf(now) * this.k + r.cls]++;
      this.recordEnd(req, now, false);
      r.slots[i] = -1;
    }
    r.busy = 0;
    this.removeReplica(r, now, true);
  }

  /**
   * Removes pending replicas first, then drains the least busy ready ones; of a variant's pools, the lowest-priority
   * pool's first, its pending and then its ready ones ("SageMaker AI releases instances starting with the lowest-priority
   * pool", realtime-endpoints-heterogeneous.html, "Auto-scaling with instance pools"; the order within a pool is not
   * documented).
   */
  private scaleDown(cs: ClassState, count: number, now: number): void {
    for (let c = 0; c < count; c++) {
      // Within a pool a pending replica goes first (rank -1), then the least busy ready one; the first found on a tie.
      const rank = (r: Replica) => (r.state === PENDING ? -1 : r.busy);
      let victim: Replica | undefined;
      for (const r of cs.replicas) {
        if (!counts(r)) continue;
        if (!victim || r.pool > victim.pool || (r.pool === victim.pool && rank(r) < rank(victim))) victim = r;
      }
      if (!victim) return;
      if (victim.state === PENDING) this.removeReplica(victim, now);
      else this.drain(victim, now);
    }
  }

  /** A ready replica leaves service: it takes no new request, finishes those it serves, and then goes. */
  private drain(r: Replica, now: number): void {
    if (r.busy === 0) {
      this.removeReplica(r, now, r.doomed);
      return;
    }
    r.state = DRAINING;
    this.states[r.cls].leaveReady(r.pool, now);
    if (this.platform.stopsRemovedInstances) {
      const engine = this.states[r.cls].pools[r.pool].spec.engine ?? '';
      this.heap.push(now + servesAfterSigtermSeconds(engine, this.scenario.service.deadlineSeconds, this.platform.kind), EV_STOP, r.id);
    }
  }

  // ---- Control loop -----------------------------------------------------------------------------------------

  /**
   * A minute's close and its start: the scenario's interruptions and, on EKS, the HPAs' sync of this instant (with
   * the provisioning it calls for; SageMaker's alarms keep their own phases: `trackTarget`), then the minute's
   * scheduled Reconciler run, at the tick itself with a phase of 0, else `reconcilerPhase` later.
   */
  private tick(tick: number, now: number): void {
    this.closeMinute(tick - 1, now);
    if (tick < this.minutes) {
      this.startMinute(now);
      if (this.reconcilerPhase === 0) this.control(now);
      else this.heap.push(now + this.reconcilerPhase, EV_RUN, 0);
      this.heap.push((tick + 1) * 60, EV_TICK, tick + 1);
      this.scheduleAutoscalers(now);
    }
  }

  /** What happens at each minute's start whatever the Reconciler does: interruptions, and on EKS the HPAs' sync. */
  private startMinute(now: number): void {
    this.rollBackExpiredScaleOuts(now);
    this.pin(now);
    this.interrupt(now, this.minuteOf(now));
    if (this.platform.autoscaler.kind === 'hpa') this.syncAutoscalers(now);
  }

  /** The autoscalers' evaluations within the minute from `now` that are not part of the tick's own run. */
  private scheduleAutoscalers(now: number): void {
    const autoscaler = this.platform.autoscaler;
    if (autoscaler.kind === 'hpa') {
      // Minute 0 has the initial run's sync only (the first syncs between ticks start at minute 1).
      if (now > 0) for (let t = now + autoscaler.syncSeconds; t < now + 60; t += autoscaler.syncSeconds) this.heap.push(t, EV_SYNC, 0);
    } else {
      // The minute's period ends first, so an evaluation at the same instant finds its datapoint recorded.
      const period = autoscaler.highResolutionPeriodSeconds;
      const perMinute = 60 / period;
      for (let j = 1; j <= perMinute; j++) this.heap.push(now + j * period, EV_PERIOD, Math.round(now / period) + j);
      for (let j = 0; j < perMinute; j++) {
        this.alarmPhases.forEach((phase, ci) => this.heap.push(now + (phase % period) + j * period, EV_TRACK, ci * perMinute + j));
      }
    }
  }

  /** One Reconciler run: scheduled (`tick`), or on the endpoint's IN_SERVICE event (SageMaker, `EV_WRITABLE`). */
  private control(now: number): void {
    this.rollBackExpiredScaleOuts(now);
    this.history.publish(now);
    const live = this.platform.liveReplicaCounts
      ? this.states.map((cs, ci) => ({
        ready: cs.readyCount, desired: cs.desired, pools: cs.pools.map((p) => p.readyCount), bounds: this.boundsOf(ci),
      }))
      : undefined;
    const healthyTargets = this.platform.targetGroupHealth ? this.states.map((cs) => cs.readyCount) : undefined;
    const decision = this.policy.decide({
      now, classes: this.classes, windows: this.history.classes, demand: this.history.demand, weights: this.desiredWeights(), live, healthyTargets,
      capacityErrorSignal: this.platform.capacityErrorSignal, updating: now < this.updatingUntil, metrics: this.published,
    });
    const m = this.minuteOf(now);
    this.s.modes[m] = decision.mode;
    this.s.reasons[m] = decision.reason;
    this.oracle = decision.replicas !== undefined;
    if (this.oracle) {
      this.applyWeights(decision.weights);
      this.states.forEach((cs, ci) => {
        cs.desired = Math.max(0, Math.min(cs.spec.maxReplicas, Math.round(decision.replicas![ci])));
        this.provision(cs, ci, now, m, true);
      });
      return;
    }
    if (this.platform.floors === 'metric') this.writeRoutingAndPublishFloors(decision, now);
    else if (decision.deployedWrite) this.applyEndpointWrite(decision, now, m);
    else this.writeEndpoint(decision, now, m);
  }

  /** EKS: listener weights are written at once; the floors go out as a metric the HPA reads a publication later. */
  private writeRoutingAndPublishFloors(decision: Decision, now: number): void {
    this.applyWeights(decision.weights);
    const visibleAt = now + this.platform.floorPublicationSeconds;
    if (!this.publication.survives(visibleAt)) return;
    this.states.forEach((cs, ci) => {
      cs.floorPoints.push({ at: now, value: decision.minReplicas?.[ci] ?? 0 });
      if (cs.floorPoints.length > 8) cs.floorPoints.shift();
    });
  }

  /**
   * SageMaker, as the deployed Reconciler writes (lambda/reconciler/reconcile.ts): nothing while the endpoint is
   * Updating; changed weights first; otherwise the one largest floor raise (`capacitiesToRaise`), which leaves the
   * endpoint Updating until the instances are in service.
   */
  private writeEndpoint(decision: Decision, now: number, m: number): void {
    const update = this.platform.endpointUpdate!;
    if (now < this.updatingUntil) return;
    const next = this.routedWeights(decision.weights);
    if (next.some((w, i) => w !== this.desiredWeights()[i])) {
      this.writeWeights(next, now, now + update.weightsSeconds);
      return;
    }
    const floors = Object.fromEntries(this.classes.map((c, ci) => [c.name, decision.minReplicas?.[ci] ?? 0]));
    const replicas = Object.fromEntries(this.states.map((cs) => [cs.spec.name, { desired: cs.desired }]));
    const raise = capacitiesToRaise(floors, replicas)[0];
    if (!raise) return;
    const ci = this.classes.findIndex((c) => c.name === raise.name);
    const cs = this.states[ci];
    cs.desired = Math.min(cs.spec.maxReplicas, raise.to);
    // provision() first: a retry that gets the rest ends the update sooner, which a maximum read before it would undo.
    const done = this.provision(cs, ci, now, m, false);
    this.updatingUntil = Math.max(this.updatingUntil, done);
  }

  /** SageMaker, the write the deployed reconciler step planned (it already held back while the endpoint was Updating). */
  private applyEndpointWrite(decision: Decision, now: number, m: number): void {
    const update = this.platform.endpointUpdate!;
    const next = this.routedWeights(decision.weights);
    if (next.some((w, i) => w !== this.desiredWeights()[i])) this.writeWeights(next, now, now + update.weightsSeconds);
    const raise = decision.capacityWrite;
    if (!raise || raise.classIndex < 0) return;
    const cs = this.states[raise.classIndex];
    const before = cs.desired;
    // Capped at the scalable target's maximum as before (the deployed step never writes past the live bounds it reads:
    // `capacityCeilings`, lib/core/reconciler/targets/sagemaker.ts); no floor from its minimum, which a write may pass.
    cs.desired = Math.min(this.boundsOf(raise.classIndex).max, raise.desired);
    const done = this.provision(cs, raise.classIndex, now, m, false);
    // A write that lowers the count is a scale-in, which keeps the endpoint Updating as target tracking's own does.
    this.updatingUntil = Math.max(this.updatingUntil, cs.desired < before ? now + update.scaleInSeconds : done);
  }

  /** EKS: every class's HPA sync at `now` (the minute's own at the tick, `startMinute`; at time 0 after the first run). */
  private syncAutoscalers(now: number): void {
    if (this.oracle) return;
    const model = this.platform.autoscaler as HpaModel;
    const m = this.minuteOf(now);
    this.states.forEach((cs, ci) => {
      const spec = cs.spec;
      const load = { value: this.loadMetric(ci, now, model), target: spec.targetRequestsPerSecondPerReplica * model.metricPeriodSeconds };
      const floor = { value: this.floorMetric(cs, now, model), target: model.floor.target };
      cs.desired = cs.hpa!.evaluate(now, [load, floor], { current: cs.desired, min: spec.minReplicas, max: spec.maxReplicas });
      this.provision(cs, ci, now, m, false);
    });
  }

  /**
   * The newest RequestCount datapoint KEDA reads at `now`: periods starting in [end - collection, end), end = now minus
   * the offset truncated to the period, scanned newest first, the first value taken (kedacore/keda@v2.20.2
   * pkg/scalers/aws_cloudwatch_scaler.go:185-188, 226, 304-305). A minute in which no request reached the class's
   * targets has no datapoint: ALB "reports metrics to CloudWatch only when requests are flowing through the load
   * balancer ... If there are no requests flowing through the load balancer or no data for a metric, the metric is not
   * reported" (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html),
   * read per target group (the page's RequestCount row says "Always reported", which does not settle a target group
   * with no request while others have some; the read taken changes only a class routed nothing, for at most the window).
   * No datapoint in the window reads as minMetricValue, 0 (same file :296-309; lib/eks/manifests/keda.ts leaves
   * `ignoreNullValues` at its default, true, :42).
   */
  private loadMetric(ci: number, now: number, model: HpaModel): number {
    const end = Math.floor((now - model.endTimeOffsetSeconds) / model.metricPeriodSeconds) * model.metricPeriodSeconds;
    for (let m = end / 60 - 1; m * 60 >= end - model.collectionSeconds; m--) {
      if (m < 0) return this.history.targetedRequests(ci, m);
      const requests = this.publication.readable(m, now) ? this.history.targetedRequests(ci, m) : 0;
      if (requests > 0) return requests;
    }
    return 0;
  }

  /** The newest ReplicaFloor datapoint KEDA reads at `now` (the same truncated window); none reads as 0 (no floor). */
  private floorMetric(cs: ClassState, now: number, model: HpaModel): number {
    const end = Math.floor((now - model.floor.endTimeOffsetSeconds) / 60) * 60;
    for (let i = cs.floorPoints.length - 1; i >= 0; i--) {
      const p = cs.floorPoints[i];
      if (p.at >= end - model.floor.collectionSeconds && p.at < end && p.at + this.platform.floorPublicationSeconds <= now) return p.value;
    }
    return 0;
  }

  /**
   * SageMaker: one evaluation of a variant's target-tracking alarms (`alarmPhases`): the predefined policy's on the
   * newest high-resolution datapoint it can read (`highResolutionPublicationSeconds` after its period ends), and once a
   * minute, at the variant's phase of the minute, the per-pool policy's on the newest finished minute; then the
   * provisioning a scaling calls for, and once a minute the provisioning within a wait (launching what capacity
   * allows). An alarm invokes its scaling when it enters ALARM and once a minute while it stays there ("Except for Auto
   * Scaling actions, the actions happen only on state transitions",
   * docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-actions.html), so a scaling the endpoint refuses while
   * Updating (typically behind the Reconciler's write, or another variant's wait) is asked again a minute later.
   */
  private trackTarget(payload: number, now: number): void {
    const model = this.platform.autoscaler as TargetTrackingModel;
    const period = model.highResolutionPeriodSeconds;
    const perMinute = 60 / period;
    const ci = Math.floor(payload / perMinute);
    const minutely = payload % perMinute === Math.floor(this.alarmPhases[ci] / period);
    this.rollBackExpiredScaleOuts(now);
    if (this.oracle) return;
    const cs = this.states[ci];
    const spec = cs.spec;
    const m = this.minuteOf(now);
    const k = this.k;
    const before = cs.desired;
    if (this.publication.survives(now)) {
      // While the endpoint is Updating the alarms still evaluate their datapoints; only the scaling waits.
      const datapoints: Array<TrackingDatapoint | null | undefined> = [];
      const newest = Math.floor((now - model.highResolutionPublicationSeconds) / period) - 1;
      if (newest >= 0) datapoints[0] = { inFlight: this.periodInFlight[newest * k + ci], inService: this.periodInService[newest * k + ci] };
      const last = m - 1;
      if (minutely && last >= 0 && spec.poolTargets) {
        const policies = variantTrackingPolicies(model, spec.targetConcurrencyPerReplica, spec.poolTargets, cs.pools, last * 60);
        // No pool in service since the minute began: no datapoint.
        if (policies.length > 1) this.trackingPolicies[ci] = policies;
        datapoints[1] = policies.length > 1 ? { inFlight: this.s.inFlight[last * k + ci], inService: this.s.readyReplicas[last * k + ci] } : null;
      }
      const bounds = { current: before, ...this.boundsOf(ci) };
      cs.desired = cs.tracking!.evaluate(now, datapoints, this.trackingPolicies[ci], bounds, now >= this.updatingUntil);
    }
    if (!minutely && cs.desired === before) return;
    const until = this.provision(cs, ci, now, m, false);
    if (cs.desired === before) return;
    this.updatingUntil = Math.max(this.updatingUntil, cs.desired < before ? now + this.platform.endpointUpdate!.scaleInSeconds : until);
  }

  /**
   * SageMaker: the high-resolution period ending at `now` (the `end`th): each variant's mean in-flight requests over it
   * (its area read, not accrued, so the minute's sums stay as they were) and the instances in service at its end.
   */
  private recordPeriod(end: number, now: number): void {
    const period = (this.platform.autoscaler as TargetTrackingModel).highResolutionPeriodSeconds;
    this.states.forEach((cs, ci) => {
      const area = cs.areaAt(now);
      const cell = (end - 1) * this.k + ci;
      this.periodInFlight[cell] = (area - this.areaAtPeriodStart[ci]) / period;
      this.periodInService[cell] = cs.readyCount;
      this.areaAtPeriodStart[ci] = area;
    });
  }

  /** Weights as the router applies them: finite, non-negative, normalised; all-zero routes to the preferred class. */
  private routedWeights(w: readonly number[]): number[] {
    const k = this.k;
    const next = normalise(w.map((x, i) => (Number.isFinite(x) && x > 0 && i < k ? x : 0)));
    return next.every((x) => x === 0) ? this.states.map((_, i) => (i === 0 ? 1 : 0)) : next;
  }

  /** SageMaker: the weights a DescribeEndpoint shows as each variant's DesiredWeight (the current ones when none is pending). */
  private desiredWeights(): readonly number[] {
    return this.pendingWrite?.weights ?? this.weights;
  }

  /**
   * SageMaker: an UpdateEndpointWeightsAndCapacities of the weights. The endpoint is Updating until `until` and traffic
   * keeps the current weights meanwhile: while Updating after that call a variant's DesiredWeight and CurrentWeight
   * differ (ProductionVariantSummary, docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantSummary.html:
   * "If you sent a request to the UpdateEndpointWeightsAndCapacities API and the endpoint status is Updating, you get
   * different desired and current values"). That the new split applies at once when the update ends, not gradually
   * during it, is assumed.
   */
  private writeWeights(routed: number[], now: number, until: number): void {
    this.updatingUntil = until;
    // The run starts in steady operation: the first run's weights are those in force before it.
    if (now === 0) this.route(routed);
    // Else settled by `run` before the next arrival or event at or past `until`, also when that is now (a 0 s update).
    // At the write's own end: a scale-out the model starts meanwhile (it keeps the endpoint Updating up to its
    // provisioning timeout) must not hold the weights back with it (review R102).
    else this.pendingWrite = { weights: routed, due: until };
  }

  /** The pending weights take effect: the update that wrote them is over (`run` calls it at the first instant past it). */
  private settleWeights(): void {
    const w = this.pendingWrite!.weights;
    this.pendingWrite = undefined;
    this.route(w);
  }

  private applyWeights(w: readonly number[]): void {
    this.route(this.routedWeights(w));
  }

  /** The router takes weights as `routedWeights` gave them (normalising them again could change them by a rounding). */
  private route(next: number[]): void {
    this.weights = next;
    let c = 0;
    for (let i = 0; i < this.k; i++) {
      c += next[i];
      this.cumulative[i] = c;
    }
  }

  /** A column's scaling bounds now: its scalable target's as rendered (`minReplicas`, `maxReplicas`), or a pin's. */
  private boundsOf(ci: number): { readonly min: number; readonly max: number } {
    return this.pinned[ci] ?? { min: this.classes[ci].minReplicas, max: this.classes[ci].maxReplicas };
  }

  /**
   * The scenario's scaling pins (`ScalingPin`) starting or ending within the minute from `now`: a pin holds the variant
   * at the instances it has in service (at least 1: RegisterScalableTarget refuses a variant's MinCapacity below 1), and
   * a desired count above them falls to them, its pending instances given up (RegisterScalableTarget "changes the
   * resource's current capacity to a value that is inside of this range"; whether a scale-out already under way is
   * cancelled so is not documented); its end restores the bounds as rendered.
   */
  private pin(now: number): void {
    const within = (t: number) => t <= now && t > now - 60;
    (this.scenario.scalingPins ?? []).forEach((p, i) => {
      const ci = this.pinColumns[i];
      const cs = this.states[ci];
      if (within(p.from)) {
        const count = Math.max(1, p.instances ?? cs.readyCount);
        this.pinned[ci] = { min: count, max: count };
        cs.desired = count;
        this.provision(cs, ci, now, this.minuteOf(now), false);
      }
      if (within(p.to)) this.pinned[ci] = undefined;
    });
  }

  /** Interruptions (of a class: the pool of that instance type, wherever it is routed): notice, then loss. */
  private interrupt(now: number, m: number): void {
    for (const it of this.scenario.interruptions ?? []) {
      const ci = this.states.findIndex((c) => c.pools.some((p) => p.spec.name === it.className));
      if (ci < 0) continue;
      const cs = this.states[ci];
      const pi = cs.pools.findIndex((p) => p.spec.name === it.className);
      if (it.at - it.noticeSeconds <= now && it.at - it.noticeSeconds > now - 60) {
        const doomed = cs.replicas.filter((r) => r.pool === pi && r.state === READY && !r.doomed).slice(0, it.replicas);
        for (const r of doomed) r.doomed = true;
        const marked = doomed.length;
        // EKS: the first pod drains at the notice, the budget holds the others until Karpenter deletes them.
        const drain = this.platform.interruptionDrain;
        // SageMaker: no notice reaches the endpoint, so its instances count, for SageMaker and its autoscaler alike,
        // until they are lost (docs/simulator.md; helper 295: the replacements were started at the notice).
        if (!drain) {
          for (const r of doomed) r.held = true;
        } else {
          const deadline = this.scenario.service.deadlineSeconds;
          const hold = interruptionHoldSeconds(drain.deregistrationDelaySeconds(deadline) + deadline);
          doomed.forEach((r, i) => {
            if (i === 0 || hold === 0) this.drain(r, now);
            else {
              r.held = true;
              this.heap.push(now + hold, EV_DRAIN, r.id);
            }
          });
        }
        this.s.interruptionNotices[m * this.k + ci] += marked;
        // EKS: Karpenter marks the interrupted nodes' offering unavailable (`KARPENTER_UNAVAILABLE_OFFERING_SECONDS`).
        const pool = cs.pools[pi];
        if (drain && marked > 0 && pool.spec.singleOffering === true) pool.offeringUnavailableUntil = now + drain.offeringUnavailableSeconds;
        // The pool's empty nodes are reclaimed with it, from the notice (fail safe: a reclaim of its instance type that
        // spared them, and let the replacements start warm on them, would be kinder; a scenario's interruption counts
        // the pods it takes, not which nodes).
        cs.pools[pi].dropIdleNodes(now);
      }
      if (it.at <= now && it.at > now - 60) {
        for (const r of [...cs.replicas]) if (r.pool === pi && r.doomed) this.kill(r, now);
      }
    }
  }

  /**
   * Brings the class to its desired count: launches within the cloud's availability (a shortfall is a capacity error,
   * retried after the platform's `capacityRetrySeconds`; none while every pool's offering is unavailable after a notice) or scales
   * down. Returns when the launched replicas will be ready (`now` when none were launched; the retry time when some
   * could not be).
   */
  private provision(cs: ClassState, ci: number, now: number, m: number, instant: boolean): number {
    const have = cs.counted();
    const timeout = this.platform.endpointUpdate?.provisionTimeoutSeconds;
    if (cs.desired <= have) cs.rollbackAt = Infinity;
    // SageMaker starts provisioning a fresh ask at once; within a wait it launches what capacity allows every
    // `capacityRetrySeconds`. EKS (Karpenter) retries an unavailable offering after its cache expires.
    const fresh = timeout !== undefined && cs.rollbackAt === Infinity;
    let done = now;
    if (cs.desired > have) {
      if (instant || fresh || now >= cs.retryAt) {
        const launched = this.launchByPriority(ci, cs.desired - have, now, instant);
        const count = launched.count;
        done = launched.readyAt;
        if (count === cs.desired - have && count > 0 && cs.rollbackAt !== Infinity) {
          // A retry within the timeout got the rest: the update ends when they are in service, not at the timeout.
          cs.rollbackAt = Infinity;
          const waiting = this.states.filter((o) => o.rollbackAt !== Infinity).map((o) => this.waitEnd(o));
          this.updatingUntil = Math.max(done, ...waiting);
        }
        // A pool whose offering Karpenter holds unavailable is not asked for capacity: its pods wait, with no error.
        if (count < cs.desired - have && launched.asked) {
          this.s.capacityErrors[m * this.k + ci]++;
          cs.retryAt = now + this.platform.capacityRetrySeconds;
          // SageMaker keeps trying until the provisioning timeout.
          if (timeout !== undefined && cs.rollbackAt === Infinity) {
            cs.rollbackAt = now + timeout;
            cs.rollbackSeconds = rollbackDuration(this.rollbackRng, this.platform.endpointUpdate!.rollbackSeconds);
          }
        }
      }
    } else if (cs.desired < have) {
      this.scaleDown(cs, have - cs.desired, now);
    }
    if (cs.rollbackAt !== Infinity) {
      // The endpoint is Updating for as long as a variant waits for capacity, whoever asked and whichever call this is.
      this.updatingUntil = Math.max(this.updatingUntil, this.waitEnd(cs));
      done = Math.max(done, this.waitEnd(cs));
    }
    return done;
  }

  /** SageMaker: when a variant's wait for capacity ends, should it last to its timeout: after the rollback. */
  private waitEnd(cs: ClassState): number {
    return cs.rollbackAt + cs.rollbackSeconds;
  }

  /**
   * Launches up to `need` replicas of a class within the cloud's availability, its pools in priority order: SageMaker
   * tries a variant's pools so, the next on insufficient capacity ("falls back to the next pool in priority order",
   * realtime-endpoints-heterogeneous.html), at no cost in time (assumed). A pool has no maximum of its own
   * ("DesiredInstanceCount: The variant's capacity"): only the availability of its type. Returns how many were launched,
   * when the last will be ready (`now` when none), and whether the cloud was asked (some pool's offering is available).
   */
  private launchByPriority(ci: number, need: number, now: number, instant: boolean): { count: number; readyAt: number; asked: boolean } {
    const cs = this.states[ci];
    let count = 0;
    let readyAt = now;
    let asked = false;
    cs.pools.forEach((pool, pi) => {
      pool.expireIdle(now);
      // Empty nodes (counted in `alive`) take pods without asking the cloud for capacity; an unavailable offering
      // (EKS, after a notice) gets no new node, except the oracles' (`instant`: they provision with zero delay, and the
      // TTL is Karpenter's delay, not a shortage of the cloud's they would know of).
      const offered = instant || now >= pool.offeringUnavailableUntil;
      const steps = this.scenario.availability?.[pool.spec.name];
      const fresh = offered ? Math.max(0, availabilityAt(steps, now) - pool.alive) : 0;
      // A limit refuses what it does not allow before any cloud is asked (`AvailabilityStep.limit`): no capacity error.
      asked = asked || (offered && availabilityStepAt(steps, now)?.limit !== true);
      const n = Math.min(need - count, pool.idleNodes.length + fresh);
      for (let i = 0; i < n; i++) readyAt = Math.max(readyAt, this.launch(ci, pi, now, instant));
      count += n;
    });
    return { count, readyAt, asked };
  }

  /**
   * SageMaker: a variant still short of capacity at its provisioning timeout is rolled back (`RollingBack` "to its
   * previous configuration"): its desired count falls back to the instances it has (whether instances that came up
   * during the wait are kept is not documented; the model keeps them), and the endpoint takes writes again when the
   * rollback is over (`rollbackDuration`, drawn when the wait began; `provision` set `updatingUntil` to it). Runs
   * before anything else acts at `now`: a Reconciler run or a scaling at the same instant sees the variant rolled back.
   */
  private rollBackExpiredScaleOuts(now: number): void {
    for (const cs of this.states) {
      if (now < cs.rollbackAt) continue;
      cs.desired = Math.min(cs.desired, cs.counted());
      cs.rollbackAt = Infinity;
    }
  }

  private closeMinute(m: number, now: number): void {
    const s = this.s;
    this.states.forEach((cs, ci) => {
      const cell = m * this.k + ci;
      cs.changeInSystem(now, 0);
      s.inFlight[cell] = (cs.area - cs.areaAtMinuteStart) / 60;
      cs.areaAtMinuteStart = cs.area;
      // Each pool at its own instance type's price.
      let cost = 0;
      cs.pools.forEach((pool, pi) => {
        pool.changeAlive(now, 0);
        const c = replicaCostUsd(pool.replicaSeconds, pool.spec.usdPerReplicaHour);
        cost += c;
        if (pi > 0) s.lowerPoolCostUsd[cell] += c;
        pool.replicaSeconds = 0;
      });
      s.costUsd[cell] = cost;
      s.readyCapacity[cell] = cs.readyCapacity();
      s.readyCapacityAtSpeed[cell] = cs.readyCapacity(true);
      s.firstPoolReadyCapacity[cell] = cs.pools[0].readyCount * cs.pools[0].spec.tokensPerSecondPerReplica;
      s.readyReplicas[cell] = cs.readyCount;
      // A replica ready during the minute raises the count only from then: the minute's minimum is the lower of its
      // start (the last close) and every dip since.
      s.minReadyReplicas[cell] = Math.min(cs.minReadyInMinute, cs.readyCount);
      cs.minReadyInMinute = cs.readyCount;
      s.pendingReplicas[cell] = cs.pending();
      s.desiredReplicas[cell] = cs.desired;
      s.weights[cell] = this.weights[ci];
      this.scrapeTokenCounters(cs, cell);
    });
    if (m + 1 < this.minutes) s.modes[m + 1] = s.modes[m];
  }

  /**
   * The CloudWatch agent's scrape of each running replica's token counter at the end of the minute (the model stamps
   * the delta in the minute the tokens were generated, as it stamps completions). A replica's first sample publishes
   * nothing; a replica removed since its last scrape took its tokens with it (review R29, docs/simulator.md).
   */
  private scrapeTokenCounters(cs: ClassState, cell: number): void {
    for (const r of cs.replicas) {
      if (r.state !== READY && r.state !== DRAINING) continue;
      if (r.sampled) {
        this.s.publishedTokens[cell] += r.unscrapedTokens;
        this.s.scrapedReplicas[cell]++;
      }
      r.sampled = true;
      r.unscrapedTokens = 0;
    }
  }

  private minuteOf(t: number): number {
    return Math.min(this.minutes - 1, Math.floor(t / 60));
  }

  // ---- Result -----------------------------------------------------------------------------------------------

  private result(): RunResult {
    // Requests still queued when nothing can serve them any more end at the last event.
    const end = Math.max(this.scenario.durationSeconds, ...this.states.map((cs) => cs.lastChange));
    for (const cs of this.states) while (cs.qLen > 0) this.recordEnd(cs.dequeue(this.promptOf), end, false);
    const little = this.states.map((cs) => {
      cs.changeInSystem(end, 0);
      return {
        className: cs.spec.name,
        inSystem: cs.area / end,
        arrivalRate: cs.admittedTotal / end,
        meanTimeInSystem: cs.admittedTotal > 0 ? cs.sumTimeInSystem / cs.admittedTotal : 0,
      };
    });
    return {
      scenarioId: this.scenario.id,
      policyName: this.policy.name,
      seed: this.options.seed,
      durationSeconds: this.scenario.durationSeconds,
      classNames: this.classes.map((c) => c.name),
      series: this.s,
      little,
      waits: this.waits ? this.waits.subarray(0, this.waitCount) : undefined,
      totalArrivals: this.trace.count,
    };
  }
}
