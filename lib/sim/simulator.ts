import { EventHeap } from './heap';
import { LATENCY_BUCKETS, histogramPercentile, latencyBucket } from './histogram';
import {
  availabilityAt, type ClassDatapoint, type DemandDatapoint, type ScenarioInstance, type SimClass,
} from './model';
import { type PolicyFactory, normalise } from './policy';
import { Rng } from './rng';
import { type Trace, generateTrace, rateMultiplierAt, tokenDistributionMean } from './workload';

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

const PENDING = 0;
const READY = 1;
const DRAINING = 2;
const GONE = 3;

/**
 * Minutes of published history each observation carries: the library's longest lookback (its re-entry memory, within
 * which it recognizes a flapping class; `policyWindowPeriods` of the defaults). Baselines read the newest datapoint.
 */
const WINDOW_MINUTES = 60;
/** Karpenter does not retry a capacity-unavailable offering for 3 minutes. */
const CAPACITY_RETRY_SECONDS = 180;

interface Replica {
  readonly id: number;
  readonly cls: number;
  state: number;
  busy: number;
  doomed: boolean;
  /** Request in each slot, -1 when free; `free` is a stack of free slot indices. */
  readonly slots: Int32Array;
  readonly free: Int32Array;
  freeTop: number;
}

class ClassState {
  readonly replicas: Replica[] = [];
  queue: Int32Array = new Int32Array(1024);
  qHead = 0;
  qLen = 0;
  desired: number;
  retryAt = 0;
  lastScaleOut = -Infinity;
  lastScaleIn = -Infinity;
  readonly recommendations: Array<{ at: number; value: number }> = [];
  capacityErrors = 0;
  policyFloor = 0;
  /** Floors the policy wrote, in the order they reach the autoscaler (see where they are pushed). */
  readonly floorsInFlight: Array<{ at: number; value: number }> = [];
  // Little's law bookkeeping.
  inSystem = 0;
  lastChange = 0;
  area = 0;
  sumTimeInSystem = 0;
  admittedTotal = 0;
  // Cost bookkeeping: instances alive (pending, ready or draining) integrated over time.
  alive = 0;
  aliveSince = 0;
  replicaSeconds = 0;
  readyCount = 0;

  /** Queued requests one ready replica admits beyond its busy slots (admission limit minus slots). */
  readonly queueSlotsPerReplica: number;

  constructor(readonly spec: SimClass, readonly slotRate: number, readonly speed: number) {
    this.desired = spec.initialReplicas;
    this.queueSlotsPerReplica = spec.maxConcurrentRequests === undefined ? Infinity
      : Math.max(0, spec.maxConcurrentRequests - Math.floor(spec.safeConcurrency));
  }

  enqueue(req: number): void {
    if (this.qLen === this.queue.length) {
      const grown = new Int32Array(this.queue.length * 2);
      for (let i = 0; i < this.qLen; i++) grown[i] = this.queue[(this.qHead + i) % this.queue.length];
      this.queue = grown;
      this.qHead = 0;
    }
    this.queue[(this.qHead + this.qLen) % this.queue.length] = req;
    this.qLen++;
  }

  dequeue(): number {
    const req = this.queue[this.qHead];
    this.qHead = (this.qHead + 1) % this.queue.length;
    this.qLen--;
    return req;
  }

  changeInSystem(now: number, delta: number): void {
    this.area += this.inSystem * (now - this.lastChange);
    this.lastChange = now;
    this.inSystem += delta;
  }

  changeAlive(now: number, delta: number): void {
    this.replicaSeconds += this.alive * (now - this.aliveSince);
    this.aliveSince = now;
    this.alive += delta;
  }
}

/** Per-minute, per-class series of one run (index = minute * classes + class). */
export interface RunSeries {
  readonly minutes: number;
  readonly classCount: number;
  readonly routedRequests: Float64Array;
  readonly routedTokens: Float64Array;
  readonly admitted: Float64Array;
  readonly rejected: Float64Array;
  /** Output tokens of the rejected requests (admission, queue timeout or lost with a replica). */
  readonly rejectedTokens: Float64Array;
  readonly completed: Float64Array;
  readonly servedTokens: Float64Array;
  readonly sloMetRequests: Float64Array;
  readonly sloMetTokens: Float64Array;
  readonly readyReplicas: Float64Array;
  readonly pendingReplicas: Float64Array;
  readonly desiredReplicas: Float64Array;
  readonly capacityErrors: Float64Array;
  readonly interruptionNotices: Float64Array;
  /** Replica-seconds paid in the minute (pending, ready and draining instances). */
  readonly replicaSeconds: Float64Array;
  /** Latency histograms of completed requests (index = (minute * classes + class) * LATENCY_BUCKETS + bucket). */
  readonly latency: Uint32Array;
  /** Per minute: requests and output tokens arriving at the service. */
  readonly demandRequests: Float64Array;
  readonly demandTokens: Float64Array;
  /** Per minute, per class: weights in force at the end of the minute. */
  readonly weights: Float64Array;
  /** Per minute: the policy's mode label. */
  readonly modes: string[];
  readonly reasons: string[];
}

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
  const seed = options.seed;
  const trace = options.trace ?? generateTrace(scenario.workload, scenario.durationSeconds, seed);
  const classes = scenario.classes;
  const k = classes.length;
  const duration = scenario.durationSeconds;
  const minutes = Math.ceil(duration / 60);
  const service = scenario.service;
  const envelopeUtilization = service.envelopeUtilization ?? 0.85;
  const meanOut = tokenDistributionMean(scenario.workload.outputTokens);
  const meanPrompt = tokenDistributionMean(scenario.workload.promptTokens);
  // Work units: output tokens plus prefill, scaled so a request's mean work equals the mean output length.
  const workNorm = meanOut / (meanOut + service.prefillWeight * meanPrompt);
  const metricDelay = scenario.metricDelaySeconds ?? 60;
  const routeRng = Rng.derive(seed, 'route');
  const provisionRng = Rng.derive(seed, 'provision');

  const states = classes.map((spec) => {
    const slotRate = spec.tokensPerSecondPerReplica / (envelopeUtilization * spec.safeConcurrency);
    const speed = scenario.speedFactors?.[spec.name] ?? 1;
    return new ClassState(spec, slotRate, speed);
  });

  const n = trace.count;
  const reqClass = new Int32Array(n);
  const reqReplica = new Int32Array(n).fill(-1);
  const reqSlot = new Int32Array(n);
  const reqWork = new Float64Array(n);
  const reqDeadline = new Float64Array(n);
  const waits = options.recordWaits ? new Float64Array(n) : undefined;
  let waitCount = 0;

  const cells = minutes * k;
  const s: RunSeries = {
    minutes,
    classCount: k,
    routedRequests: new Float64Array(cells),
    routedTokens: new Float64Array(cells),
    admitted: new Float64Array(cells),
    rejected: new Float64Array(cells),
    rejectedTokens: new Float64Array(cells),
    completed: new Float64Array(cells),
    servedTokens: new Float64Array(cells),
    sloMetRequests: new Float64Array(cells),
    sloMetTokens: new Float64Array(cells),
    readyReplicas: new Float64Array(cells),
    pendingReplicas: new Float64Array(cells),
    desiredReplicas: new Float64Array(cells),
    capacityErrors: new Float64Array(cells),
    interruptionNotices: new Float64Array(cells),
    replicaSeconds: new Float64Array(cells),
    latency: new Uint32Array(cells * LATENCY_BUCKETS),
    demandRequests: new Float64Array(minutes),
    demandTokens: new Float64Array(minutes),
    weights: new Float64Array(cells),
    modes: new Array<string>(minutes).fill(''),
    reasons: new Array<string>(minutes).fill(''),
  };
  const minuteOf = (t: number): number => Math.min(minutes - 1, Math.floor(t / 60));

  const replicas: Replica[] = [];
  const heap = new EventHeap(4096);

  const drawProvisioning = (spec: SimClass): number => {
    const p = spec.provisioningSeconds;
    return typeof p === 'number' ? p : provisionRng.uniform(p[0], p[1]);
  };
  const inUse = (cs: ClassState): number => cs.alive;
  const launch = (ci: number, now: number, instant: boolean): void => {
    const cs = states[ci];
    const c = cs.spec.safeConcurrency;
    const r: Replica = {
      id: replicas.length, cls: ci, state: PENDING, busy: 0, doomed: false,
      slots: new Int32Array(c).fill(-1), free: Int32Array.from({ length: c }, (_, i) => c - 1 - i), freeTop: c,
    };
    replicas.push(r);
    cs.replicas.push(r);
    cs.changeAlive(now, 1);
    if (instant) makeReady(r, now);
    else heap.push(now + drawProvisioning(cs.spec), EV_READY, r.id);
  };
  const removeReplica = (r: Replica, now: number): void => {
    const cs = states[r.cls];
    if (r.state === READY) cs.readyCount--;
    r.state = GONE;
    cs.changeAlive(now, -1);
    const i = cs.replicas.indexOf(r);
    if (i >= 0) cs.replicas.splice(i, 1);
  };

  const recordEnd = (req: number, now: number, served: boolean): void => {
    const ci = reqClass[req];
    const cs = states[ci];
    const latency = now - trace.time[req];
    cs.changeInSystem(now, -1);
    cs.sumTimeInSystem += latency;
    const cell = minuteOf(now) * k + ci;
    if (!served) {
      s.rejected[cell]++;
      s.rejectedTokens[cell] += trace.output[req];
      return;
    }
    s.completed[cell]++;
    const tokens = trace.output[req];
    s.servedTokens[cell] += tokens;
    if (latency <= reqDeadline[req]) {
      s.sloMetRequests[cell]++;
      s.sloMetTokens[cell] += tokens;
    }
    s.latency[cell * LATENCY_BUCKETS + latencyBucket(latency)]++;
  };

  const start = (req: number, r: Replica, now: number): void => {
    const cs = states[r.cls];
    r.busy++;
    const slot = r.free[--r.freeTop];
    r.slots[slot] = req;
    reqSlot[req] = slot;
    reqReplica[req] = r.id;
    if (waits) waits[waitCount++] = now - trace.time[req];
    heap.push(now + reqWork[req] / (cs.slotRate * cs.speed), EV_COMPLETE, req);
  };

  /** Pulls queued requests onto a replica's free slots, dropping those that can no longer meet their deadline. */
  const pull = (r: Replica, now: number): void => {
    const cs = states[r.cls];
    const slots = cs.spec.safeConcurrency;
    while (r.busy < slots && cs.qLen > 0) {
      const req = cs.dequeue();
      if (now + reqWork[req] / cs.slotRate > trace.time[req] + reqDeadline[req]) {
        recordEnd(req, now, false);
        continue;
      }
      start(req, r, now);
    }
  };

  const makeReady = (r: Replica, now: number): void => {
    if (r.state !== PENDING) return;
    r.state = READY;
    states[r.cls].readyCount++;
    pull(r, now);
  };

  const kill = (r: Replica, now: number): void => {
    for (let i = 0; i < r.slots.length; i++) {
      const req = r.slots[i];
      if (req < 0) continue;
      reqReplica[req] = -2;
      recordEnd(req, now, false);
      r.slots[i] = -1;
    }
    r.busy = 0;
    removeReplica(r, now);
  };

  const scaleDown = (cs: ClassState, count: number, now: number): void => {
    for (let c = 0; c < count; c++) {
      let victim: Replica | undefined;
      for (const r of cs.replicas) if (r.state === PENDING) { victim = r; break; }
      if (!victim) {
        for (const r of cs.replicas) {
          if (r.state === READY && !r.doomed && (!victim || r.busy < victim.busy)) victim = r;
        }
      }
      if (!victim) return;
      if (victim.state === PENDING || victim.busy === 0) removeReplica(victim, now);
      else {
        victim.state = DRAINING;
        cs.readyCount--;
      }
    }
  };

  // Replicas counted toward the desired count: pending and ready, except those under interruption notice.
  const counted = (cs: ClassState): number => {
    let c = 0;
    for (const r of cs.replicas) if ((r.state === PENDING || r.state === READY) && !r.doomed) c++;
    return c;
  };

  // Initial state: steady operation at time 0.
  states.forEach((cs, ci) => {
    const avail = availabilityAt(scenario.availability?.[cs.spec.name], 0);
    const count = Math.min(cs.spec.initialReplicas, avail);
    for (let i = 0; i < count; i++) launch(ci, 0, true);
    cs.desired = count;
  });

  // Synthetic published history before time 0, so policies and autoscalers start from steady state.
  const initialDemandTokens = scenario.workload.meanRatePerSecond * rateMultiplierAt(scenario.workload.rateProfile, 0) * meanOut * 60;
  const capacityShares = normalise(states.map((cs) => cs.readyCount * cs.spec.tokensPerSecondPerReplica));
  const history: Array<Array<ClassDatapoint | undefined>> = states.map((cs, ci) => {
    const out: Array<ClassDatapoint | undefined> = [];
    for (let m = -WINDOW_MINUTES; m < 0; m++) {
      const tokens = initialDemandTokens * capacityShares[ci];
      const requests = tokens / meanOut;
      out.push({
        minute: m, routedRequests: requests, routedTokens: tokens, admitted: requests, rejected: 0, rejectedTokens: 0, completed: requests,
        servedTokens: tokens, sloMetRequests: requests, latencyP95Seconds: 0, readyReplicas: cs.readyCount,
        desiredReplicas: cs.desired, pendingReplicas: 0, capacityErrors: 0, interruptionNotices: 0,
      });
    }
    return out;
  });
  const demandHistory: Array<DemandDatapoint | undefined> = [];
  for (let m = -WINDOW_MINUTES; m < 0; m++) demandHistory.push({ minute: m, requests: initialDemandTokens / meanOut, tokens: initialDemandTokens });

  const context = { scenario, trace };
  const policy = policyFactory(context);
  let weights = normalise(states.map(() => 1));
  const cumulative = new Float64Array(k);
  const applyWeights = (w: readonly number[]): void => {
    let next = normalise(w.map((x, i) => (Number.isFinite(x) && x > 0 && i < k ? x : 0)));
    // A router never drops everything: all-zero weights route to the preferred class.
    if (next.every((x) => x === 0)) next = states.map((_, i) => (i === 0 ? 1 : 0));
    weights = next;
    let c = 0;
    for (let i = 0; i < k; i++) {
      c += weights[i];
      cumulative[i] = c;
    }
  };

  const interruptions = scenario.interruptions ?? [];
  const outages = scenario.metricOutages ?? [];
  const published = (m: number): boolean => {
    const at = (m + 1) * 60 + metricDelay;
    return !outages.some((o) => at >= o.from && at < o.to);
  };
  let publishedUpTo = -1;

  const control = (now: number): void => {
    // Publish the datapoints whose delay has elapsed.
    const visibleUpTo = Math.floor((now - metricDelay) / 60) - 1;
    for (let m = publishedUpTo + 1; m <= Math.min(visibleUpTo, minutes - 1); m++) {
      const ok = published(m);
      states.forEach((_, ci) => {
        const cell = m * k + ci;
        history[ci].push(ok ? {
          minute: m,
          routedRequests: s.routedRequests[cell], routedTokens: s.routedTokens[cell], admitted: s.admitted[cell],
          rejected: s.rejected[cell], rejectedTokens: s.rejectedTokens[cell], completed: s.completed[cell], servedTokens: s.servedTokens[cell],
          sloMetRequests: s.sloMetRequests[cell], latencyP95Seconds: histogramPercentile(s.latency.subarray(cell * LATENCY_BUCKETS), 0, 0.95),
          readyReplicas: s.readyReplicas[cell], desiredReplicas: s.desiredReplicas[cell], pendingReplicas: s.pendingReplicas[cell],
          capacityErrors: s.capacityErrors[cell], interruptionNotices: s.interruptionNotices[cell],
        } : undefined);
        if (history[ci].length > WINDOW_MINUTES) history[ci].shift();
      });
      demandHistory.push(ok ? { minute: m, requests: s.demandRequests[m], tokens: s.demandTokens[m] } : undefined);
      if (demandHistory.length > WINDOW_MINUTES) demandHistory.shift();
      publishedUpTo = m;
    }

    // Reconciler.
    const decision = policy.decide({ now, classes, windows: history, demand: demandHistory, weights });
    applyWeights(decision.weights);
    const m = minuteOf(now);
    s.modes[m] = decision.mode;
    s.reasons[m] = decision.reason;
    // A floor reaches the autoscaler about two periods after the decision, on both platforms: on EKS as a CloudWatch
    // metric the reconciler publishes (one publication delay) that KEDA polls; on SageMaker as a desired instance
    // count, written on the run after the weights (one capacity write per run, the endpoint Updating in between).
    states.forEach((cs, ci) => {
      const lag = metricDelay + 60;
      cs.floorsInFlight.push({ at: now + lag, value: decision.minReplicas?.[ci] ?? 0 });
      while (cs.floorsInFlight.length > 0 && cs.floorsInFlight[0].at <= now) cs.policyFloor = cs.floorsInFlight.shift()!.value;
    });

    // Interruptions: notice, then loss.
    for (const it of interruptions) {
      const ci = classes.findIndex((c) => c.name === it.className);
      if (ci < 0) continue;
      const cs = states[ci];
      if (it.at - it.noticeSeconds <= now && it.at - it.noticeSeconds > now - 60) {
        let marked = 0;
        for (const r of cs.replicas) {
          if (marked >= it.replicas) break;
          if (r.state === READY && !r.doomed) {
            r.doomed = true;
            marked++;
          }
        }
        s.interruptionNotices[m * k + ci] += marked;
      }
      if (it.at <= now && it.at > now - 60) {
        for (const r of [...cs.replicas]) if (r.doomed) kill(r, now);
      }
    }

    // Autoscalers and provisioning.
    states.forEach((cs, ci) => {
      const spec = cs.spec;
      const floor = Math.min(spec.maxReplicas, Math.max(spec.minReplicas, cs.policyFloor));
      if (decision.replicas) {
        cs.desired = Math.max(0, Math.min(spec.maxReplicas, Math.round(decision.replicas[ci])));
      } else {
        const dp = history[ci][history[ci].length - 1];
        if (dp) {
          const rec = Math.min(spec.maxReplicas, Math.max(floor, Math.ceil(dp.routedTokens / 60 / spec.targetTokensPerSecondPerReplica - 1e-9)));
          if (spec.autoscaler.kind === 'keda') {
            const window = spec.autoscaler.scaleDownStabilizationSeconds ?? 300;
            cs.recommendations.push({ at: now, value: rec });
            while (cs.recommendations.length > 0 && cs.recommendations[0].at <= now - window) cs.recommendations.shift();
            cs.desired = Math.max(...cs.recommendations.map((x) => x.value));
          } else {
            const out = spec.autoscaler.scaleOutCooldownSeconds ?? 60;
            const inCd = spec.autoscaler.scaleInCooldownSeconds ?? 300;
            if (rec > cs.desired && now - cs.lastScaleOut >= out) {
              cs.desired = rec;
              cs.lastScaleOut = now;
            } else if (rec < cs.desired && now - cs.lastScaleIn >= inCd && now - cs.lastScaleOut >= inCd) {
              cs.desired = rec;
              cs.lastScaleIn = now;
            }
          }
        }
        cs.desired = Math.min(spec.maxReplicas, Math.max(floor, cs.desired));
      }
      const have = counted(cs);
      if (cs.desired > have) {
        if (decision.replicas || now >= cs.retryAt) {
          const room = Math.max(0, availabilityAt(scenario.availability?.[spec.name], now) - inUse(cs));
          const count = Math.min(cs.desired - have, room);
          for (let i = 0; i < count; i++) launch(ci, now, decision.replicas !== undefined);
          if (count < cs.desired - have) {
            s.capacityErrors[m * k + ci]++;
            cs.retryAt = now + CAPACITY_RETRY_SECONDS;
          }
        }
      } else if (cs.desired < have) {
        scaleDown(cs, have - cs.desired, now);
      }
    });
  };

  const closeMinute = (m: number, now: number): void => {
    states.forEach((cs, ci) => {
      const cell = m * k + ci;
      cs.changeAlive(now, 0);
      s.replicaSeconds[cell] = cs.replicaSeconds;
      cs.replicaSeconds = 0;
      s.readyReplicas[cell] = cs.readyCount;
      let pending = 0;
      for (const r of cs.replicas) if (r.state === PENDING) pending++;
      s.pendingReplicas[cell] = pending;
      s.desiredReplicas[cell] = cs.desired;
      s.weights[cell] = weights[ci];
    });
    if (m + 1 < minutes) s.modes[m + 1] = s.modes[m];
  };

  // Main loop.
  control(0);
  heap.push(60, EV_TICK, 1);
  let next = 0;
  const times = trace.time;
  for (;;) {
    const tArrival = next < n ? times[next] : Infinity;
    const tEvent = heap.peekTime();
    if (tArrival === Infinity && tEvent === Infinity) break;
    if (tArrival < tEvent) {
      const req = next++;
      const now = tArrival;
      const m = minuteOf(now);
      const out = trace.output[req];
      s.demandRequests[m]++;
      s.demandTokens[m] += out;
      const u = routeRng.next();
      let ci = 0;
      while (ci < k - 1 && u >= cumulative[ci]) ci++;
      const cs = states[ci];
      const cell = m * k + ci;
      s.routedRequests[cell]++;
      s.routedTokens[cell] += out;
      reqClass[req] = ci;
      reqWork[req] = (out + service.prefillWeight * trace.prompt[req]) * workNorm;
      const deadline = service.itlSeconds > 0
        ? Math.min(service.deadlineSeconds, service.ttftSeconds + out * service.itlSeconds)
        : service.deadlineSeconds;
      reqDeadline[req] = deadline;
      if (cs.readyCount === 0) {
        s.rejected[cell]++;
        s.rejectedTokens[cell] += out;
        continue;
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
        continue;
      }
      s.admitted[cell]++;
      cs.admittedTotal++;
      cs.changeInSystem(now, 1);
      if (best) start(req, best, now);
      else cs.enqueue(req);
      continue;
    }
    const now = tEvent;
    const kind = heap.topKind();
    const payload = heap.topPayload();
    heap.pop();
    if (kind === EV_COMPLETE) {
      const rid = reqReplica[payload];
      if (rid < 0) continue; // lost with its replica
      const r = replicas[rid];
      r.busy--;
      const slot = reqSlot[payload];
      r.slots[slot] = -1;
      r.free[r.freeTop++] = slot;
      recordEnd(payload, now, true);
      if (r.state === READY) pull(r, now);
      else if (r.state === DRAINING && r.busy === 0) removeReplica(r, now);
    } else if (kind === EV_READY) {
      makeReady(replicas[payload], now);
    } else {
      const tick = payload;
      closeMinute(tick - 1, now);
      if (tick < minutes) {
        control(now);
        heap.push((tick + 1) * 60, EV_TICK, tick + 1);
      }
    }
  }
  // Requests still queued when nothing can serve them any more end at the last event.
  const end = Math.max(duration, ...states.map((cs) => cs.lastChange));
  for (const cs of states) while (cs.qLen > 0) recordEnd(cs.dequeue(), end, false);

  const little = states.map((cs) => {
    cs.changeInSystem(end, 0);
    return {
      className: cs.spec.name,
      inSystem: cs.area / end,
      arrivalRate: cs.admittedTotal / end,
      meanTimeInSystem: cs.admittedTotal > 0 ? cs.sumTimeInSystem / cs.admittedTotal : 0,
    };
  });

  return {
    scenarioId: scenario.id,
    policyName: policy.name,
    seed,
    durationSeconds: duration,
    classNames: classes.map((c) => c.name),
    series: s,
    little,
    waits: waits ? waits.subarray(0, waitCount) : undefined,
    totalArrivals: n,
  };
}
