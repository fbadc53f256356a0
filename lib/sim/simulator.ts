import { autoscale } from './autoscaler';
import { ClassState, DRAINING, GONE, PENDING, READY, type Replica } from './class-state';
import { EventHeap } from './heap';
import { LATENCY_BUCKETS, latencyBucket } from './histogram';
import { MetricHistory } from './metric-history';
import { availabilityAt, type ScenarioInstance, type SimClass } from './model';
import { type Decision, type PolicyFactory, type RoutingPolicy, normalise } from './policy';
import { Rng } from './rng';
import { createRunSeries, type RunSeries } from './run-series';
import { type Trace, generateTrace, rateMultiplierAt, tokenDistributionMean } from './workload';

export { type RunSeries } from './run-series';

/**
 * Discrete-event simulation of one service under one routing policy: arrivals from a seeded trace, a weighted
 * router, one FIFO queue per class with deadline admission, replicas with `safeConcurrency` slots each, per-class
 * autoscalers, provisioning delays and cloud availability, a 60 s metrics pipeline with publication delay, and a
 * reconciler that calls the policy every 60 s. Events are requests' completions, replica readiness and minute
 * ticks, kept in one typed-array heap; no per-token events.
 */

const EV_COMPLETE = 0;
const EV_READY = 1;
const EV_TICK = 2;

/** Karpenter does not retry a capacity-unavailable offering for 3 minutes. */
const CAPACITY_RETRY_SECONDS = 180;

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
  return new Simulation(scenario, policyFactory, options).run();
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
  private weights: number[];
  private readonly cumulative: Float64Array;

  constructor(private readonly scenario: ScenarioInstance, policyFactory: PolicyFactory, private readonly options: RunOptions) {
    const seed = options.seed;
    this.trace = options.trace ?? generateTrace(scenario.workload, scenario.durationSeconds, seed);
    this.classes = scenario.classes;
    this.k = this.classes.length;
    this.minutes = Math.ceil(scenario.durationSeconds / 60);
    const service = scenario.service;
    const envelopeUtilization = service.envelopeUtilization ?? 0.85;
    const meanOut = tokenDistributionMean(scenario.workload.outputTokens);
    const meanPrompt = tokenDistributionMean(scenario.workload.promptTokens);
    // Work units: output tokens plus prefill, scaled so a request's mean work equals the mean output length.
    this.workNorm = meanOut / (meanOut + service.prefillWeight * meanPrompt);
    this.routeRng = Rng.derive(seed, 'route');
    this.provisionRng = Rng.derive(seed, 'provision');
    this.states = this.classes.map((spec) => {
      const slotRate = spec.tokensPerSecondPerReplica / (envelopeUtilization * spec.safeConcurrency);
      return new ClassState(spec, slotRate, scenario.speedFactors?.[spec.name] ?? 1);
    });
    const n = this.trace.count;
    this.reqClass = new Int32Array(n);
    this.reqReplica = new Int32Array(n).fill(-1);
    this.reqSlot = new Int32Array(n);
    this.reqWork = new Float64Array(n);
    this.reqDeadline = new Float64Array(n);
    this.waits = options.recordWaits ? new Float64Array(n) : undefined;
    this.s = createRunSeries(this.minutes, this.k);

    // Initial state: steady operation at time 0.
    this.states.forEach((cs, ci) => {
      const count = Math.min(cs.spec.initialReplicas, availabilityAt(scenario.availability?.[cs.spec.name], 0));
      for (let i = 0; i < count; i++) this.launch(ci, 0, true);
      cs.desired = count;
    });
    const initialDemandTokens = scenario.workload.meanRatePerSecond * rateMultiplierAt(scenario.workload.rateProfile, 0) * meanOut * 60;
    this.history = new MetricHistory(this.s, scenario.metricDelaySeconds ?? 60, scenario.metricOutages ?? [], this.states,
      initialDemandTokens, meanOut);
    this.policy = policyFactory({ scenario, trace: this.trace });
    this.cumulative = new Float64Array(this.k);
    this.weights = normalise(this.states.map(() => 1));
  }

  run(): RunResult {
    this.control(0);
    this.heap.push(60, EV_TICK, 1);
    const heap = this.heap;
    const times = this.trace.time;
    const n = this.trace.count;
    let next = 0;
    for (;;) {
      const tArrival = next < n ? times[next] : Infinity;
      const tEvent = heap.peekTime();
      if (tArrival === Infinity && tEvent === Infinity) break;
      if (tArrival < tEvent) {
        this.arrive(next++, tArrival);
        continue;
      }
      const kind = heap.topKind();
      const payload = heap.topPayload();
      heap.pop();
      if (kind === EV_COMPLETE) this.complete(payload, tEvent);
      else if (kind === EV_READY) this.makeReady(this.replicas[payload], tEvent);
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
      s.rejected[cell]++;
      s.rejectedTokens[cell] += out;
      return;
    }
    // Least outstanding requests among ready replicas with a free slot.
    let best: Replica | undefined;
    const slots = cs.spec.safeConcurrency;
    const reps = cs.replicas;
    for (let i = 0; i < reps.length; i++) {
      const r = reps[i];
      if (r.state === READY && r.busy < slots && (!best || r.busy < best.busy)) best = r;
    }
    // Admission as deployed: every ready replica holds at most maxConcurrentRequests (its slots plus its queue
    // slots); past that the engine sheds at once (429/503) rather than queue past the deadline.
    if (!best && cs.qLen >= cs.readyCount * cs.queueSlotsPerReplica) {
      s.rejected[cell]++;
      s.rejectedTokens[cell] += out;
      return;
    }
    s.admitted[cell]++;
    cs.admittedTotal++;
    cs.changeInSystem(now, 1);
    if (best) this.start(req, best, now);
    else cs.enqueue(req);
  }

  private start(req: number, r: Replica, now: number): void {
    const cs = this.states[r.cls];
    r.busy++;
    const slot = r.free[--r.freeTop];
    r.slots[slot] = req;
    this.reqSlot[req] = slot;
    this.reqReplica[req] = r.id;
    if (this.waits) this.waits[this.waitCount++] = now - this.trace.time[req];
    this.heap.push(now + this.reqWork[req] / (cs.slotRate * cs.speed), EV_COMPLETE, req);
  }

  private complete(req: number, now: number): void {
    const rid = this.reqReplica[req];
    if (rid < 0) return; // lost with its replica
    const r = this.replicas[rid];
    r.busy--;
    const slot = this.reqSlot[req];
    r.slots[slot] = -1;
    r.free[r.freeTop++] = slot;
    this.recordEnd(req, now, true);
    if (r.state === READY) this.pull(r, now);
    else if (r.state === DRAINING && r.busy === 0) this.removeReplica(r, now);
  }

  /** Pulls queued requests onto a replica's free slots, dropping those that can no longer meet their deadline. */
  private pull(r: Replica, now: number): void {
    const cs = this.states[r.cls];
    const slots = cs.spec.safeConcurrency;
    while (r.busy < slots && cs.qLen > 0) {
      const req = cs.dequeue();
      if (now + this.reqWork[req] / cs.slotRate > this.trace.time[req] + this.reqDeadline[req]) {
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
    if (latency <= this.reqDeadline[req]) {
      s.sloMetRequests[cell]++;
      s.sloMetTokens[cell] += tokens;
    }
    s.latency[cell * LATENCY_BUCKETS + latencyBucket(latency)]++;
  }

  // ---- Replicas ---------------------------------------------------------------------------------------------

  private launch(ci: number, now: number, instant: boolean): void {
    const cs = this.states[ci];
    const c = cs.spec.safeConcurrency;
    const r: Replica = {
      id: this.replicas.length, cls: ci, state: PENDING, busy: 0, doomed: false,
      slots: new Int32Array(c).fill(-1), free: Int32Array.from({ length: c }, (_, i) => c - 1 - i), freeTop: c,
    };
    this.replicas.push(r);
    cs.replicas.push(r);
    cs.changeAlive(now, 1);
    if (instant) this.makeReady(r, now);
    else this.heap.push(now + this.drawProvisioning(cs.spec), EV_READY, r.id);
  }

  private drawProvisioning(spec: SimClass): number {
    const p = spec.provisioningSeconds;
    return typeof p === 'number' ? p : this.provisionRng.uniform(p[0], p[1]);
  }

  private makeReady(r: Replica, now: number): void {
    if (r.state !== PENDING) return;
    r.state = READY;
    this.states[r.cls].readyCount++;
    this.pull(r, now);
  }

  private removeReplica(r: Replica, now: number): void {
    const cs = this.states[r.cls];
    if (r.state === READY) cs.readyCount--;
    r.state = GONE;
    cs.changeAlive(now, -1);
    const i = cs.replicas.indexOf(r);
    if (i >= 0) cs.replicas.splice(i, 1);
  }

  /** Loses a replica at once: its requests in service end unserved. */
  private kill(r: Replica, now: number): void {
    for (let i = 0; i < r.slots.length; i++) {
      const req = r.slots[i];
      if (req < 0) continue;
      this.reqReplica[req] = -2;
      this.recordEnd(req, now, false);
      r.slots[i] = -1;
    }
    r.busy = 0;
    this.removeReplica(r, now);
  }

  /** Removes pending replicas first, then drains the least busy ready ones. */
  private scaleDown(cs: ClassState, count: number, now: number): void {
    for (let c = 0; c < count; c++) {
      let victim: Replica | undefined;
      for (const r of cs.replicas) if (r.state === PENDING) { victim = r; break; }
      if (!victim) {
        for (const r of cs.replicas) {
          if (r.state === READY && !r.doomed && (!victim || r.busy < victim.busy)) victim = r;
        }
      }
      if (!victim) return;
      if (victim.state === PENDING || victim.busy === 0) this.removeReplica(victim, now);
      else {
        victim.state = DRAINING;
        cs.readyCount--;
      }
    }
  }

  // ---- Control loop -----------------------------------------------------------------------------------------

  private tick(tick: number, now: number): void {
    this.closeMinute(tick - 1, now);
    if (tick < this.minutes) {
      this.control(now);
      this.heap.push((tick + 1) * 60, EV_TICK, tick + 1);
    }
  }

  private control(now: number): void {
    this.history.publish(now);
    const decision = this.policy.decide({
      now, classes: this.classes, windows: this.history.classes, demand: this.history.demand, weights: this.weights,
    });
    this.applyWeights(decision.weights);
    const m = this.minuteOf(now);
    this.s.modes[m] = decision.mode;
    this.s.reasons[m] = decision.reason;
    this.forwardFloors(decision, now);
    this.interrupt(now, m);
    this.states.forEach((cs, ci) => this.provision(cs, ci, decision, now, m));
  }

  private applyWeights(w: readonly number[]): void {
    const k = this.k;
    let next = normalise(w.map((x, i) => (Number.isFinite(x) && x > 0 && i < k ? x : 0)));
    // A router never drops everything: all-zero weights route to the preferred class.
    if (next.every((x) => x === 0)) next = this.states.map((_, i) => (i === 0 ? 1 : 0));
    this.weights = next;
    let c = 0;
    for (let i = 0; i < k; i++) {
      c += next[i];
      this.cumulative[i] = c;
    }
  }

  /**
   * A floor reaches the autoscaler about two periods after the decision, on both platforms: on EKS as a CloudWatch
   * metric the reconciler publishes (one publication delay) that KEDA polls; on SageMaker as a desired instance
   * count, written on the run after the weights (one capacity write per run, the endpoint Updating in between).
   */
  private forwardFloors(decision: Decision, now: number): void {
    const lag = (this.scenario.metricDelaySeconds ?? 60) + 60;
    this.states.forEach((cs, ci) => {
      cs.floorsInFlight.push({ at: now + lag, value: decision.minReplicas?.[ci] ?? 0 });
      while (cs.floorsInFlight.length > 0 && cs.floorsInFlight[0].at <= now) cs.policyFloor = cs.floorsInFlight.shift()!.value;
    });
  }

  /** Interruptions: notice, then loss. */
  private interrupt(now: number, m: number): void {
    for (const it of this.scenario.interruptions ?? []) {
      const ci = this.classes.findIndex((c) => c.name === it.className);
      if (ci < 0) continue;
      const cs = this.states[ci];
      if (it.at - it.noticeSeconds <= now && it.at - it.noticeSeconds > now - 60) {
        let marked = 0;
        for (const r of cs.replicas) {
          if (marked >= it.replicas) break;
          if (r.state === READY && !r.doomed) {
            r.doomed = true;
            marked++;
          }
        }
        this.s.interruptionNotices[m * this.k + ci] += marked;
      }
      if (it.at <= now && it.at > now - 60) {
        for (const r of [...cs.replicas]) if (r.doomed) this.kill(r, now);
      }
    }
  }

  /** The class's autoscaler (or the oracle's instant replicas), then launches within availability or scales down. */
  private provision(cs: ClassState, ci: number, decision: Decision, now: number, m: number): void {
    const spec = cs.spec;
    if (decision.replicas) {
      cs.desired = Math.max(0, Math.min(spec.maxReplicas, Math.round(decision.replicas[ci])));
    } else {
      const floor = Math.min(spec.maxReplicas, Math.max(spec.minReplicas, cs.policyFloor));
      cs.desired = autoscale(cs, this.history.newest(ci), floor, now);
    }
    const have = cs.counted();
    if (cs.desired > have) {
      if (decision.replicas || now >= cs.retryAt) {
        const room = Math.max(0, availabilityAt(this.scenario.availability?.[spec.name], now) - cs.alive);
        const count = Math.min(cs.desired - have, room);
        for (let i = 0; i < count; i++) this.launch(ci, now, decision.replicas !== undefined);
        if (count < cs.desired - have) {
          this.s.capacityErrors[m * this.k + ci]++;
          cs.retryAt = now + CAPACITY_RETRY_SECONDS;
        }
      }
    } else if (cs.desired < have) {
      this.scaleDown(cs, have - cs.desired, now);
    }
  }

  private closeMinute(m: number, now: number): void {
    const s = this.s;
    this.states.forEach((cs, ci) => {
      const cell = m * this.k + ci;
      cs.changeAlive(now, 0);
      s.replicaSeconds[cell] = cs.replicaSeconds;
      cs.replicaSeconds = 0;
      s.readyReplicas[cell] = cs.readyCount;
      s.pendingReplicas[cell] = cs.pending();
      s.desiredReplicas[cell] = cs.desired;
      s.weights[cell] = this.weights[ci];
    });
    if (m + 1 < this.minutes) s.modes[m + 1] = s.modes[m];
  }

  private minuteOf(t: number): number {
    return Math.min(this.minutes - 1, Math.floor(t / 60));
  }

  // ---- Result -----------------------------------------------------------------------------------------------

  private result(): RunResult {
    // Requests still queued when nothing can serve them any more end at the last event.
    const end = Math.max(this.scenario.durationSeconds, ...this.states.map((cs) => cs.lastChange));
    for (const cs of this.states) while (cs.qLen > 0) this.recordEnd(cs.dequeue(), end, false);
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
