/**
 * Types of the routing policy. Everything here is plain JSON-serializable data: the reconciler Lambda rebuilds the
 * state on every run, the simulator keeps it between simulated minutes, and the audit log prints it verbatim.
 */

/** `cost`: fill demand with the cheapest ready tokens. `capacity`: spread demand over all ready token capacity. */
export type RoutingMode = 'cost' | 'capacity';

/**
 * The minimal view of one routed class (one weight) the policy needs. Derived from `RoutedClassFacts`
 * (see `policyClassesFromFacts`); never a construct type.
 */
export interface PolicyClass {
  /** Unique name; the key of the class in weights and signals. */
  readonly name: string;
  /** 0 is the most preferred class. The lowest rank among placement-allowed classes is "the preferred class". */
  readonly preferenceRank: number;
  /** Envelope: sustainable output tokens per second of one ready replica at the SLO. Must be > 0. */
  readonly tokensPerSecondPerReplica: number;
  /** Price of one replica-hour in USD. Must be >= 0. */
  readonly usdPerReplicaHour: number;
  /** False when the placement policy forbids routing this service's traffic to the class (it then never gets weight). */
  readonly placementAllowed: boolean;
  /** Most replicas the class may run (its quota or plan bound): replica floors never ask for more. Absent: unbounded. */
  readonly maxReplicas?: number;
  /**
   * Seconds this class may show fewer ready replicas than desired, without progress, before it counts as unable to grow
   * (`replicas-not-ready`); > 0 when given. The Reconciler passes the grace the class's declared replica-ready time calls
   * for, so a fallback that starts slower than the preferred class does not read as stuck in the middle of a routine
   * scale-out (and lose its replica floor). Absent, and always for the preferred class: the policy's
   * `provisioningGraceSeconds`, on which the mode's entry and return are timed.
   */
  readonly provisioningGraceSeconds?: number;
}

/**
 * A window of datapoints, one per policy period, oldest first; the last element is the newest complete period.
 * `null` (or a shorter array) means the datapoint is missing.
 */
export type SignalWindow = ReadonlyArray<number | null>;

/** What CloudWatch (and the target's describe call) said about one class over the window. */
export interface ClassSignals {
  /** Replicas that are Ready (model loaded, serving). */
  readonly readyReplicas: SignalWindow;
  /**
   * Ready replicas counted at this run, newer than the window's newest datapoint (ALB: the target group's healthy
   * targets from DescribeTargetHealth). What the plan routes on when known: the load balancer routes on target health
   * now, and the published count is minutes old. The evidence and envelope rules read the window. Absent where the
   * window already ends with the count the target reports now (SageMaker DescribeEndpoint).
   */
  readonly readyNow?: number;
  /** Replicas the autoscaler wants. */
  readonly desiredReplicas: SignalWindow;
  /** Capacity errors (insufficient capacity at launch) reported in each period. Missing counts as none. */
  readonly capacityErrors?: SignalWindow;
  /**
   * Where the platform rolls a refused scale-out back (SageMaker), the count it asked for, in the period the rollback
   * was seen (null elsewhere): the desired count is back at the current one by then, so this is the only record of
   * what the class was refused. A return to cost mode waits until the class has had it.
   */
  readonly refusedAsks?: SignalWindow;
  /** p95 latency in milliseconds (the one the SLO is stated on). Missing counts as no breach (no traffic, no datapoint). */
  readonly latencyP95Ms?: SignalWindow;
  /** Tokens (or requests x tokens per request) served per second; informational, echoed in the audit line. */
  readonly servedTokensPerSecond?: SignalWindow;
  /** Tokens (or requests x tokens per request) rejected per second; informational, echoed in the audit line. */
  readonly rejectedTokensPerSecond?: SignalWindow;
  /**
   * True when `servedTokensPerSecond` already counts the rejected requests (ALB RequestCount and SageMaker Invocations
   * count every request a target or model answered, 4XX/5XX included): what the class delivered is then served minus
   * rejected.
   */
  readonly servedIncludesRejected?: boolean;
}

/** Tunables of the policy. Every field has a documented default in `DEFAULT_POLICY_CONFIG`. */
export interface PolicyConfig {
  /** Length of one datapoint and of one decision tick, in seconds. */
  readonly periodSeconds: number;
  /** Cost mode plans for demand x (1 + headroom). */
  readonly headroom: number;
  /**
   * Demand is planned on a high quantile of this many trailing periods, not on one minute: a noisy minute must not
   * move traffic or the mode.
   */
  readonly demandWindowPeriods: number;
  /** The quantile (0..1) of the trailing demand datapoints the plan is made for. */
  readonly demandQuantile: number;
  /** Share of the weight total every compatible ready class keeps in cost mode (warm floor). */
  readonly warmFloorShare: number;
  /** Integer weights sum to this total. */
  readonly weightTotal: number;
  /** A capacity error of the preferred class in this many trailing seconds triggers capacity mode. */
  readonly capacityErrorLookbackSeconds: number;
  /** Desired > ready on the preferred class in every period of a trailing span this long triggers capacity mode. */
  readonly provisioningGraceSeconds: number;
  /** p95 latency SLO in milliseconds; when undefined the latency trigger is off. */
  readonly latencySloP95Ms?: number;
  /** Consecutive periods above the latency SLO that trigger capacity mode. */
  readonly latencyBreachPeriods: number;
  /** The preferred class must be healthy this long (and capacity mode must have lasted this long) before returning to cost mode. */
  readonly stabilizationWindowSeconds: number;
  /**
   * A capacity event ends when cost mode has lasted this many seconds since the last return and the preferred class
   * has shown no capacity loss for as long: until then each re-entry belongs to the same event and doubles the return
   * hold (the first entry holds for the stabilization window), and the preferred class's evidence re-enters only when
   * the ready classes are short of the demand itself.
   * After it, the entries are forgotten and the hold is back to the stabilization window. Also the span over which a
   * class's newest capacity loss holds capacity mode until it is seen to get back what it was refused.
   */
  readonly reentryMemorySeconds: number;
  /** Upper bound of the growing return hold, seconds. */
  readonly maxReturnHoldSeconds: number;
  /** On the way back to cost mode, no weight moves by more than this share of the total per wall-clock period. */
  readonly rampStepShare: number;
  /** In steady cost mode, weights are rewritten only when some weight moves by at least this share of the total. */
  readonly minWeightChangeShare: number;
  /**
   * Whether the platform applies the decision's replica floors (a Reconciler sets it from its serving construct).
   * True: in capacity mode the floors grow the receiving fallback, which is routed only its headroom above its envelope
   * where floors are capacity writes, and no more than its proportional share of the deficit where they are published
   * (`floorsTakenBy`).
   * False: it is routed up to its ready capacity again above its envelope, so its autoscaler sees the load.
   * A Reconciler construct sets it from its serving; a hand-written configuration must set false unless the class's
   * autoscaler reads the floors (EKS: the ScaledObject's floor trigger), since published floors route the receiver no
   * load to grow by.
   */
  readonly replicaFloorsApplied: boolean;
}

/** The policy's memory between ticks. All fields are serializable; the Lambda reconstructs them every run. */
export interface PolicyState {
  readonly mode: RoutingMode;
  /** Weights currently applied at the target, by class name. Need not sum to the total (they are normalized). */
  readonly weights: Readonly<Record<string, number>>;
  /** Epoch seconds when `mode` was entered. */
  readonly modeSince: number;
  /** True while weights ramp from capacity-mode weights toward the cost plan. */
  readonly ramping: boolean;
  /**
   * Epoch seconds of the capacity-mode entries of the capacity event under way (oldest first; an event ends after
   * `reentryMemorySeconds` of cost mode): the return hold grows with them. Absent: none known.
   */
  readonly entries?: readonly number[];
  /**
   * Start (epoch seconds) of the period in which the last ramp step was written. A second run in the same period
   * (an alarm run beside the scheduled one) holds the weights: the ramp bound is per period, not per invocation.
   */
  readonly lastStepAt?: number;
}

/** Everything `decide()` reads in one tick. */
export interface PolicyInput {
  /** Epoch seconds at the end of the newest period in the windows. */
  readonly now: number;
  readonly classes: readonly PolicyClass[];
  /** Signal windows by class name. A class without an entry counts as missing data. */
  readonly signals: Readonly<Record<string, ClassSignals>>;
  /** Total demand in output tokens per second (served + rejected), one datapoint per period. */
  readonly demandTokensPerSecond: SignalWindow;
  /** Overrides of `DEFAULT_POLICY_CONFIG`. */
  readonly config?: Partial<PolicyConfig>;
  /**
   * How the platform takes replica floors (the routing target's `floors`): `published` when the class's own autoscaler
   * reads them from a metric (EKS: a KEDA trigger), `capacity-writes` when the reconciler writes desired instance
   * counts (SageMaker). Decides whether and when the preferred class keeps asking for the replicas it is short of in
   * capacity mode, and which demand every floor is sized on: the sustained demand when published, the typical demand
   * for capacity writes, which the platform's own autoscaler can take back (`floorDemand` in decide.ts); and what the
   * fallback that receives the deficit is routed above its envelope (`routingPlan`). Unset: no standing ask, floors on
   * the sustained demand, the receiver routed its headroom (the reconciler's step always sets it).
   */
  readonly floorsTakenBy?: 'published' | 'capacity-writes';
  /**
   * Whether the capacity-error windows include the scale-outs the platform rolled back (`rolledBackScaleOuts`,
   * SageMaker), so that the audit line names what an operator will find: a rollback, not only a reported error.
   */
  readonly capacityErrorsIncludeRollbacks?: boolean;
}

/** Machine-readable reasons. Triggers name why capacity mode was entered or is kept. */
export type TriggerCode = 'sustained-deficit' | 'capacity-errors' | 'replicas-not-ready' | 'latency-breach';

export type ReasonCode =
  | 'cost-plan'
  | 'enter-capacity'
  | 'hold-capacity'
  | 'stabilizing'
  | 'return-to-cost'
  | 'ramping'
  | 'missing-data'
  | 'nothing-ready';

export interface DecisionReason {
  readonly code: ReasonCode;
  /** The triggers that are active this tick (empty when none). */
  readonly triggers: readonly TriggerCode[];
  /** One human sentence, for the audit log. */
  readonly message: string;
}

/** What `decide()` returns besides the next state. */
export interface PolicyDecision {
  readonly mode: RoutingMode;
  /** Non-negative integers summing to `weightTotal`, by class name (every class present). */
  readonly weights: Readonly<Record<string, number>>;
  /** True when `weights` differ from the (normalized) previous weights: the target must be written. */
  readonly weightsChanged: boolean;
  readonly modeChanged: boolean;
  readonly reason: DecisionReason;
  /** Share of the weight not on the preferred class, 0..1. */
  readonly fallbackShare: number;
  /** The planned demand (the `demandQuantile` of the trailing `demandWindowPeriods`), tokens/s; null when demand is missing. */
  readonly requiredTokensPerSecond: number | null;
  /** Planned demand beyond the summed ready capacity of the eligible classes, tokens/s: what the growable classes are given to grow. */
  readonly deficitTokensPerSecond: number;
  /** Ready token capacity over eligible classes (ready replicas x envelope), tokens/s. */
  readonly readyTokensPerSecond: number;
  /** The name of the preferred class (lowest rank among placement-allowed classes). */
  readonly preferredClass: string;
  /**
   * Replica floors by class name (every class present), for the platform's autoscaler: in capacity mode, the replicas
   * each growable fallback needs to carry its part of the deficit at its scaling target; 0 is no floor (the
   * autoscaler's own minimum). `null` when the tick holds everything as it is (missing data, nothing ready): keep the
   * floors in force.
   */
  readonly replicaFloors: Readonly<Record<string, number>> | null;
  /**
   * In capacity mode, the replicas each class needs (every class present) to carry, at the peak demand of the
   * stabilization window, the largest of the share the routing plan would give it at that peak, its share in force and
   * its decided share, at its scaling target (delivered envelope / (1 + headroom)): how far a fallback the capacity
   * event grew may be lowered once the ready classes carry the demand (SageMaker, `capacityToLower`). `null` in cost
   * mode, where a fallback's count is its own autoscaler's, and when the tick holds.
   */
  readonly replicaNeeds: Readonly<Record<string, number>> | null;
}

export interface PolicyStep {
  readonly decision: PolicyDecision;
  readonly state: PolicyState;
}
