import { type HpaAutoscaler, type TargetTracking } from './autoscaler';
import { type SimClass } from './model';

/**
 * Seconds from a request's admission check to the moment vLLM counts it (tokenization and chat template): an
 * assumption, not a measured value. vLLM 0.29.0 checks its caps before rendering and counts after (issue #58192), so
 * requests arriving within this time of each other pass the check together.
 */
export const RENDER_SECONDS = 0.02;

/** Replica lifecycle: launched (paying, not serving), serving, finishing its requests before removal, removed. */
export const PENDING = 0;
export const READY = 1;
export const DRAINING = 2;
export const GONE = 3;

export interface Replica {
  readonly id: number;
  readonly cls: number;
  /** Index of its instance pool in the class's `pools`. */
  readonly pool: number;
  state: number;
  busy: number;
  /** When its start-up ends (pending) or ended. */
  readyAt: number;
  /** Under an interruption notice: lost at the interruption, no longer counted toward the desired count unless `held`. */
  doomed: boolean;
  /**
   * Under a notice, still counted toward the desired count until it goes. SageMaker: always (no notice reaches the
   * endpoint; it is lost at the reclaim). EKS: its eviction refused by the PodDisruptionBudget until Karpenter deletes it
   * (`interruptionHoldSeconds`). Not yet deleted, it is still one of its ReplicaSet's active pods, so no replacement is
   * made for it: the controller counts the pods without a deletionTimestamp (`FilterActivePods`/`IsPodActive`,
   * kubernetes/kubernetes pkg/controller/controller_utils.go, read at commit 00bdb3fa, an older release than the
   * cluster's 1.33: not confirmed at it, and harsher than the old model if it differs), and a refused eviction deletes
   * nothing (Karpenter requeues it on 429, kubernetes-sigs/karpenter@v1.14.1
   * pkg/controllers/node/termination/terminator/eviction.go:171-207). Review R257: before, its replacement was made at
   * the notice, up to the hold (45 s by default) before the ReplicaSet would.
   */
  held: boolean;
  /**
   * The engine's token counter as the CloudWatch agent scrapes it each minute: tokens generated since the last scrape,
   * and whether the series has had its first sample. The agent "calculates a delta from the previous scrape ... So the
   * CloudWatch agent will start to produce one log event from the second scrape" (ContainerInsights-Prometheus-metrics-
   * conversion.html): what a pod generates before its first scrape, and after its last, is never published.
   */
  unscrapedTokens: number;
  sampled: boolean;
  /** Request in each slot, -1 when free; `free` is a stack of free slot indices. */
  readonly slots: Int32Array;
  readonly free: Int32Array;
  freeTop: number;
}

/**
 * EKS: an empty node (`PlatformModel.nodes`): when it is consolidated, and the earliest a pod it takes can be ready,
 * the time its last pod was or would have been ready. A pod removed while pending leaves a node that is still booting
 * (Karpenter keeps launching a NodeClaim whose pod went away, and consolidates it only once empty for
 * `consolidateAfter`); a later pod binds to it once it is Ready, then pulls its image and loads the model, as the
 * removed pod would have: so no sooner than that pod's start-up end. Assumed: the model does not split the node's
 * boot from the image pull, so a later pod that arrives after the node is Ready, on a node whose pod never pulled its
 * image, starts warm here though it would still pull (kinder by at most the pull). Review R257: before, such a node
 * was warm at once (40% of the start-up).
 */
export interface IdleNode {
  readonly until: number;
  readonly podReadyFrom: number;
}

/** Whether a replica counts toward its class's desired count (`ClassState.counted`), and so may be scaled down. */
export function counts(r: Replica): boolean {
  return (r.state === PENDING || r.state === READY) && (!r.doomed || r.held);
}

/** A replica's slots: the whole requests of its safe concurrency (a checked class declares a whole number, at least 1). */
export function slotsPerReplica(safeConcurrency: number): number {
  return Math.floor(safeConcurrency);
}

/**
 * One instance pool of a routed class: a SageMaker variant's instances of one type (an EKS class, or a variant with one
 * pool, has one). Its instances serve at its own speed and admit what its own server admits; it pays its own price.
 */
export class Pool {
  /** Slots of each of its replicas (`slotsPerReplica`). */
  readonly slots: number;
  /** Queued requests one ready replica admits beyond its busy slots (its server's in-flight bound minus its slots). */
  readonly queueSlotsPerReplica: number;
  /** Prompt tokens of queued (not yet prefilling) requests one ready replica admits (vLLM's budget; else Infinity). */
  readonly queuedPromptTokensPerReplica: number;
  readyCount = 0;
  /** When its last ready instance left (-Infinity: never): a pool reports its per-type metrics while it has one. */
  emptiedAt = -Infinity;
  // Cost bookkeeping: instances alive (pending, ready or draining) integrated over time.
  alive = 0;
  aliveSince = 0;
  replicaSeconds = 0;
  /** EKS: the empty nodes, oldest first (billed in `alive` until consolidated; `PlatformModel.nodes`). */
  readonly idleNodes: IdleNode[] = [];
  /** EKS: no new node of the pool before this time (Karpenter's unavailable offering after a notice; `KARPENTER_UNAVAILABLE_OFFERING_SECONDS`). */
  offeringUnavailableUntil = -Infinity;

  /**
   * @param droppedAfterSeconds seconds after its arrival at which a request still queued is dropped unserved when one of
   * the pool's replicas would take it (`queuedRequestDroppedAfterSeconds`); undefined: served however late.
   */
  constructor(readonly spec: SimClass, readonly slotRate: number, readonly speed: number, readonly droppedAfterSeconds?: number) {
    this.slots = slotsPerReplica(spec.safeConcurrency);
    const maxInFlight = spec.admission?.maxInFlight;
    this.queueSlotsPerReplica = maxInFlight === undefined ? Infinity : Math.max(0, maxInFlight - this.slots);
    this.queuedPromptTokensPerReplica = spec.admission?.maxQueuedPromptTokens ?? Infinity;
  }

  /** One ready instance leaves service (removed, lost or draining). */
  leaveReady(now: number): void {
    this.readyCount--;
    if (this.readyCount === 0) this.emptiedAt = now;
  }

  /** Whether any of its instances was in service at some time since `since`. */
  servedSince(since: number): boolean {
    return this.readyCount > 0 || this.emptiedAt > since;
  }

  /**
   * Takes an empty node for a pod (still billed; no longer consolidated): the one that lets it start soonest, of those
   * alike the one emptied last. Returns the node's `podReadyFrom`; undefined when there is none.
   */
  takeIdleNode(now: number): number | undefined {
    this.expireIdle(now);
    let best = -1;
    for (let i = this.idleNodes.length - 1; i >= 0; i--) {
      const from = Math.max(now, this.idleNodes[i].podReadyFrom);
      if (best < 0 || from < Math.max(now, this.idleNodes[best].podReadyFrom)) best = i;
    }
    return best < 0 ? undefined : this.idleNodes.splice(best, 1)[0].podReadyFrom;
  }

  /** Every empty node is gone at `now` (reclaimed with the pool's instances). */
  dropIdleNodes(now: number): void {
    this.expireIdle(now);
    for (; this.idleNodes.length > 0; this.idleNodes.pop()) this.changeAliveNow(now, -1);
  }

  /** Consolidates the empty nodes due by `now`, each billed to its own time. */
  expireIdle(now: number): void {
    while (this.idleNodes.length > 0 && this.idleNodes[0].until <= now) this.changeAliveNow(this.idleNodes.shift()!.until, -1);
  }

  changeAlive(now: number, delta: number): void {
    this.expireIdle(now);
    this.changeAliveNow(now, delta);
  }

  private changeAliveNow(now: number, delta: number): void {
    this.replicaSeconds += this.alive * (now - this.aliveSince);
    this.aliveSince = now;
    this.alive += delta;
  }
}

/** A class's replicas, its FIFO queue, its autoscaler's memory and the bookkeeping of Little's law (its pools', of cost). */
export class ClassState {
  readonly replicas: Replica[] = [];
  queue: Int32Array = new Int32Array(1024);
  qHead = 0;
  qLen = 0;
  /** Replicas the platform wants (the Deployment's replicas, the variant's desired instance count). */
  desired: number;
  /** No launch is retried before this time after a capacity error. */
  retryAt = 0;
  /** SageMaker: when a scale-out short of capacity gives up and rolls back (its provisioning timeout; none under way: Infinity). */
  rollbackAt = Infinity;
  /** SageMaker: how long the rollback at `rollbackAt` keeps the endpoint Updating (drawn when the wait begins). */
  rollbackSeconds = 0;
  /** EKS: the class's HPA; SageMaker: its variant's target tracking. */
  hpa?: HpaAutoscaler;
  tracking?: TargetTracking;
  /** EKS: the replica floors the Reconciler published, oldest first (`at`: the run; lost in a metric outage). */
  readonly floorPoints: Array<{ readonly at: number; readonly value: number }> = [];
  /** Little's-law area at the start of the current minute (the minute's mean in-flight requests is the difference). */
  areaAtMinuteStart = 0;
  // Little's law bookkeeping.
  inSystem = 0;
  lastChange = 0;
  area = 0;
  sumTimeInSystem = 0;
  admittedTotal = 0;

  /** Prompt tokens of the queued requests. */
  queuedPromptTokens = 0;
  /**
   * Requests queued within the last `RENDER_SECONDS`, oldest first (time, prompt tokens): a server whose bound does
   * not hold under bursts has not counted them yet when the next request is checked.
   */
  private readonly uncounted: Array<{ readonly at: number; readonly prompt: number }> = [];
  /**
   * The server bounds its queue, but the bound does not hold under bursts (vLLM). A variant's pools share one queue in
   * the model: its priority-1 pool's engine says.
   */
  private readonly softBound: boolean;

  /** `pools`: the routed class's instance pools in priority order (one for a class that is its own only pool). */
  constructor(readonly spec: SimClass, readonly pools: readonly Pool[]) {
    this.desired = spec.initialReplicas;
    const first = pools[0].spec.admission;
    this.softBound = first?.maxInFlight !== undefined && first.holdsUnderBursts === false;
  }

  /**
   * Whether the server admits a request of `prompt` tokens into the queue (no free slot): its in-flight bound and its
   * prompt-token budget, per ready replica, against what it has counted. vLLM checks before it renders a request and
   * counts it after (`holdsUnderBursts: false`), so requests queued within the render time are not counted yet.
   */
  admitsQueued(now: number, prompt: number): boolean {
    let uncountedRequests = 0;
    let uncountedPrompt = 0;
    if (this.softBound) {
      while (this.uncounted.length > 0 && this.uncounted[0].at <= now - RENDER_SECONDS) this.uncounted.shift();
      uncountedRequests = Math.min(this.qLen, this.uncounted.length);
      for (const u of this.uncounted) uncountedPrompt += u.prompt;
      uncountedPrompt = Math.min(this.queuedPromptTokens, uncountedPrompt);
    }
    // What the ready replicas of every pool admit; a pool with none admits nothing (0 x an unbounded queue is not NaN).
    let requests = 0;
    let tokens = 0;
    for (const pool of this.pools) {
      if (pool.readyCount === 0) continue;
      requests += pool.readyCount * pool.queueSlotsPerReplica;
      tokens += pool.readyCount * pool.queuedPromptTokensPerReplica;
    }
    return this.qLen - uncountedRequests < requests && this.queuedPromptTokens - uncountedPrompt + prompt <= tokens;
  }

  enqueue(req: number, now: number, prompt: number): void {
    this.queuedPromptTokens += prompt;
    if (this.softBound) this.uncounted.push({ at: now, prompt });
    this.enqueueIndex(req);
  }

  /** Takes the oldest queued request; its prompt tokens leave the queue's budget. */
  dequeue(prompt: (req: number) => number): number {
    const req = this.dequeueIndex();
    this.queuedPromptTokens -= prompt(req);
    return req;
  }

  private enqueueIndex(req: number): void {
    if (this.qLen === this.queue.length) {
      const grown = new Int32Array(this.queue.length * 2);
      for (let i = 0; i < this.qLen; i++) grown[i] = this.queue[(this.qHead + i) % this.queue.length];
      this.queue = grown;
      this.qHead = 0;
    }
    this.queue[(this.qHead + this.qLen) % this.queue.length] = req;
    this.qLen++;
  }

  private dequeueIndex(): number {
    const req = this.queue[this.qHead];
    this.qHead = (this.qHead + 1) % this.queue.length;
    this.qLen--;
    return req;
  }

  changeInSystem(now: number, delta: number): void {
    this.area = this.areaAt(now);
    this.lastChange = now;
    this.inSystem += delta;
  }

  /** The area (requests in the system x seconds) up to `now`, without closing it: the high-resolution periods read it. */
  areaAt(now: number): number {
    return this.area + this.inSystem * (now - this.lastChange);
  }

  /** The fewest ready replicas since the current minute began (`RunSeries.minReadyReplicas`). */
  minReadyInMinute = 0;

  /** One ready replica of pool `pi` leaves service (removed, lost or draining). */
  leaveReady(pi: number, now: number): void {
    this.pools[pi].leaveReady(now);
    this.minReadyInMinute = Math.min(this.minReadyInMinute, this.readyCount);
  }

  /** Ready replicas of every pool (each pool keeps its own count, and its cost). */
  get readyCount(): number {
    let n = 0;
    for (const pool of this.pools) n += pool.readyCount;
    return n;
  }

  /**
   * Output tokens/s the ready replicas of every pool sustain at their envelopes, as the policy plans them; `atSpeed`:
   * times each pool's actual speed (a scenario's speed factor), what they really carry.
   */
  readyCapacity(atSpeed = false): number {
    let c = 0;
    for (const pool of this.pools) c += pool.readyCount * pool.spec.tokensPerSecondPerReplica * (atSpeed ? pool.speed : 1);
    return c;
  }

  /** Replicas counted toward the desired count: pending and ready, except those under interruption notice not `held`. */
  counted(): number {
    let c = 0;
    for (const r of this.replicas) if (counts(r)) c++;
    return c;
  }

  pending(): number {
    let c = 0;
    for (const r of this.replicas) if (r.state === PENDING) c++;
    return c;
  }
}
