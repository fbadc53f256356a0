/**
 * One interface for every kind of routing target (a SageMaker endpoint's variants, an ALB listener's weighted target
 * groups): everything the reconciler, its construct and its step need to know about a kind lives in that kind's module
 * (targets/sagemaker.ts, targets/alb.ts), reached through `routingTarget(facts)` (targets/index.ts). No other module
 * asks which kind it holds. Pure data and functions: the Lambda's I/O for each kind is lambda/reconciler/targets/.
 */
import { type ServingLoadBalancer } from '../../metrics/load-balancer';
import { type ReplicaWindow } from '../../policy/defaults';
import { type PolicyClass, type PolicyDecision } from '../../policy/types';
import { type ServingPlatform } from '../../runtime/platform';
import { type Checker } from '../../validation/checker';
import { type PermissionProbe } from '../../verify/probe';
import { type ROUTING_FACTS_RULES } from '../../validation/routing-facts-rules';
import { type PlacementOptions, type ReconcilerConfig, type SignalSource } from '../config';
import { type RoutedClassFacts, type RoutingFacts } from '../routing-facts';
import { type ClassSignalProducers, type ServingDescription } from '../serving';

/** CloudWatch sources of one routed class's signals. An absent entry is read from the target API, or is off. */
export interface ClassSignalSources {
  readonly readyReplicas?: SignalSource;
  /**
   * The ready counts the reconciler saw live and published itself (its `HealthyTargets`), read for the periods
   * `readyReplicas` left without a datapoint (ALB: no HealthyHostCount for a target group with no target left).
   */
  readonly readyReplicasSeen?: SignalSource;
  readonly desiredReplicas?: SignalSource;
  /**
   * Where scale-outs roll back (`RoutingTarget.scaleOutsRollBack`): desired minus ready as each run saw them, the
   * history `rolledBackScaleOuts` reads a pending scale-out from.
   */
  readonly pendingScaleOut?: SignalSource;
  readonly capacityErrors?: SignalSource;
  readonly latencyP95Ms?: SignalSource;
  readonly servedTokensPerSecond?: SignalSource;
  /** Several sources (a route whose servers shed with different status classes) are summed per period. */
  readonly rejectedTokensPerSecond?: SignalSource | readonly SignalSource[];
  /**
   * The served source already counts the requests the servers rejected (ALB RequestCount and SageMaker Invocations
   * count the requests answered 4XX/5XX too): demand is then the served signal alone, never served + rejected.
   */
  readonly servedIncludesRejected?: boolean;
}

/** One weight of the target: its routed name and the capacity classes behind it. */
export interface Route {
  /** ALB: the class name; SageMaker: the variant name. The key of the route in weights, signals and records. */
  readonly name: string;
  /** ALB: the one class of the target group; SageMaker: the variant's pools, in pool priority order. */
  readonly classes: readonly RoutedClassFacts[];
  /** Most replicas (instances) the route may run: replica floors and capacity writes never ask for more. */
  readonly maxReplicas: number;
}

/**
 * What the reconciler read from the routing target in one run: plain data, produced by the Lambda's per-kind read
 * (or by a simulator). Everything by routed name.
 */
export interface TargetState {
  /** Weights in force. A route the facts do not name may appear (a stray SageMaker variant). */
  readonly weights: Readonly<Record<string, number>>;
  /**
   * SageMaker: per variant, the current instance count of each pool's instance type; a one-class variant, which has no
   * pools, all its instances on its class's type (`instancesByType`). ALB: empty.
   */
  readonly pools: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** SageMaker: ready (current) and desired instances per variant. ALB: empty (the counts come from metrics). */
  readonly replicas: Readonly<Record<string, { readonly ready: number; readonly desired: number }>>;
  /** Routed names the live target actually holds. */
  readonly present: readonly string[];
  /**
   * ALB: each class's healthy targets now (DescribeTargetHealth), null where that read failed; absent for SageMaker,
   * whose counts are `replicas`. Only an empty target group is acted on (`emptyWhereUnpublished`, observe.ts).
   */
  readonly healthyTargets?: Readonly<Record<string, number | null>>;
  /** ALB: why some target group's health could not be read this run (the audit line carries it). */
  readonly healthUnread?: string;
  /** Why nothing can be written now (SageMaker endpoint not InService, listener without a forward action). */
  readonly notWritable?: string;
  /**
   * Why nothing can be written until someone acts (a SageMaker endpoint `Failed`, `UpdateRollbackFailed`,
   * `OutOfService` or `Deleting`): waiting for a later run would hold the weights without paging, so the run fails.
   */
  readonly unavailable?: string;
  /**
   * Routes a deployment under way brings (SageMaker: the variants of `PendingDeploymentSummary`, "returned when the
   * endpoint is creating or updating with a new endpoint configuration", while `ProductionVariants` are still the
   * running deployment's): a route the facts name that is among them is arriving, not a mismatch (`step`).
   */
  readonly arriving?: readonly string[];
  /**
   * SageMaker: the endpoint configuration the endpoint runs (DescribeEndpoint `EndpointConfigName`), compared with the
   * one the facts describe (`RoutingTarget.otherConfiguration`). Undefined: not read (ALB, the simulator).
   */
  readonly endpointConfigName?: string;
  /**
   * SageMaker: each variant's live scaling bounds, its scalable target's MinCapacity and MaxCapacity as Application
   * Auto Scaling holds them now (a game day's pin, a maximum lowered at runtime), by variant name. A variant the read
   * found no scalable target for is absent. Undefined: the reader did not read bounds (the simulator); the facts'
   * maxima alone then bound capacity writes.
   */
  readonly scalingBounds?: Readonly<Record<string, ScalingBounds>>;
  /**
   * Why no capacity write can be made this run although weights can (SageMaker: the scalable targets could not be
   * read). The audit line carries it, so a lasting failure (a permissions boundary denying the read) is visible.
   */
  readonly capacityUnwritable?: string;
  /**
   * When the bounds could not be read this run (`capacityUnwritable`): those the newest successful read in this
   * execution environment found (`RunMemory.boundsRead`). The policy plans within them, as it would within a good
   * read's, so a failed read neither lifts a game day's pin from the plan nor moves the weights; no capacity write is made
   * on them.
   */
  readonly rememberedBounds?: Readonly<Record<string, ScalingBounds>>;
}

/** An EventBridge rule's event pattern, in the shape aws-cdk-lib's `EventPattern` takes (`detailType` for `detail-type`). */
export interface EventPattern {
  readonly source: readonly string[];
  readonly detailType: readonly string[];
  readonly detail: Readonly<Record<string, readonly string[]>>;
}

/** A scalable target's bounds (Application Auto Scaling `ScalableTarget` MinCapacity, MaxCapacity). */
export interface ScalingBounds {
  readonly min: number;
  readonly max: number;
}

/** The newest ready and desired replica counts of a route's signal windows (null: no datapoint). */
export interface LatestCounts {
  readonly ready: number | null;
  readonly desired: number | null;
}

/** What the reconciler saw of one routed class this run, for the EMF records. */
export interface RouteObservation {
  /**
   * Ready and desired replicas (SageMaker: instances of the variant, from DescribeEndpoint; ALB: the newest ready count
   * of the signal window, HealthyHostCount with its gaps filled, and Container Insights' newest desired count).
   */
  readonly ready: number;
  readonly desired: number;
  /** SageMaker: ready instances per instance pool, by the pool's capacity class name. */
  readonly pools?: Readonly<Record<string, number>>;
}

/**
 * One write to the routing target. A run makes at most one, and at most one per period (targets/index.ts).
 * `weights`: every routed weight, plus 0 for each stray route the target holds beyond the facts.
 * `capacity`: one route's desired instance count raised to its replica floor, or to its live scaling maximum when that
 * is lower, or (`to` below `from`) a fallback lowered to what the routing needs in capacity mode (SageMaker,
 * `capacityToLower`).
 */
export type RoutingWrite =
  | { readonly kind: 'weights'; readonly weights: Readonly<Record<string, number>>; readonly zeroed: readonly string[] }
  | {
    readonly kind: 'capacity'; readonly route: string; readonly from: number; readonly to: number;
    /** The replica floor, when the route's live scaling maximum held the write below it. */
    readonly floor?: number;
  };

/** The signals of the serving platform, per routed name, as the reconciler's configuration carries them. */
export interface RoutedProducers {
  readonly signals: Readonly<Record<string, ClassSignalProducers>>;
  /** EKS: the capacity errors are the Karpenter filter metric of each NodePool, derived rather than spelt out. */
  readonly karpenterCapacityErrors?: boolean;
  /** Routes whose generated tokens are the contract's `GeneratedTokens` metric, derived rather than spelt out. */
  readonly contractTokenCounters?: readonly string[];
}

/** The AWS-published metrics that tell what each class of a target kind serves, for dashboards and alarms. */
export interface ServingMetricNames {
  readonly namespace: string;
  /** Requests that reached the class (Sum). */
  readonly requests: string;
  /** Requests answered with a server error (Sum). */
  readonly serverErrors: string;
  /** Requests answered with a client error, which is how TGI sheds overload (429) (Sum). */
  readonly clientErrors: string;
  /** The latency metric and the factor that turns its unit into milliseconds. */
  readonly latency: string;
  readonly latencyToMs: number;
}

/** One capacity class of a target, with the dimensions its AWS serving metrics carry. */
export interface ObservedClassFacts {
  readonly facts: RoutedClassFacts;
  readonly awsDimensions: Readonly<Record<string, string>>;
}

/**
 * Where one routed class's capacity is held, for the game day to take it away: the class's Karpenter NodePool (EKS),
 * or the production variant whose scalable target is pinned (SageMaker). `routedClass` is the route's name.
 */
export type CapacityHolder =
  | {
    readonly kind: 'nodepool'; readonly routedClass: string; readonly nodePool: string;
    /** The class's Deployment and its most replicas: capping the NodePool takes nothing from a class already there. */
    readonly namespace: string; readonly deploymentName: string; readonly maxReplicas: number;
  }
  | { readonly kind: 'variant'; readonly routedClass: string; readonly endpointName: string; readonly variantName: string };

export interface RoutingTarget<F extends RoutingFacts = RoutingFacts> {
  readonly kind: F['kind'];
  /** The serving platform behind this kind of target (the simulator's and the game day report's platform). */
  readonly platform: ServingPlatform;
  /**
   * How replica floors reach the autoscaler: `capacity-writes` (the reconciler raises desired instance counts itself),
   * or `published` (the `ReplicaFloor` metric, which a KEDA trigger reads).
   */
  readonly floors: 'capacity-writes' | 'published';
  /** The weights of the target and the classes behind each, in the facts' order. */
  routes(facts: F): Route[];
  /** "SageMaker endpoint `llm`": the target, for a dashboard's summary. */
  describeTarget(facts: F): string;
  /**
   * The load balancer in front of the serving, whose own answers (a 5XX for a target group with no registered target)
   * no route's metrics count; undefined where there is none (SageMaker).
   */
  loadBalancer(facts: F): ServingLoadBalancer | undefined;
  /** The AWS-published serving metrics of this kind. */
  readonly servingMetrics: ServingMetricNames;
  /** Every capacity class behind the target with its AWS metric dimensions, in declaration order. */
  observedClasses(facts: F): ObservedClassFacts[];
  /** Whether two routes may not share a name here (SageMaker variant names are unique; ALB routes are class names). */
  readonly uniqueRouteNames: boolean;
  /** "variant(s) of endpoint llm": what a missing route is missing from, for the audit line. */
  describeRoutes(facts: F): string;
  /** The policy's class per route; `target` (what the run read) refines a route made of several pools. */
  policyClasses(facts: F, placement: PlacementOptions, target?: TargetState): PolicyClass[];
  /** CloudWatch sources of each route's signals, by routed name. */
  signalSources(config: ReconcilerConfig & { readonly facts: F }, periodSeconds: number): Record<string, ClassSignalSources>;
  /**
   * The capacity classes behind the target in declaration order. Tolerant of malformed facts (a hand-edited
   * configuration): validation calls it before the facts are known to be well formed.
   */
  classes(facts: F): RoutedClassFacts[];
  /**
   * This kind's rules on the facts (route counts, route names), each checked against its entry of ROUTING_FACTS_RULES
   * (lib/core/validation/routing-facts-rules.ts; docs/validation.md shows every table). Tolerant of malformed facts.
   */
  checkFacts(facts: F, c: Checker<typeof ROUTING_FACTS_RULES>): void;
  /**
   * Where the newest desired replicas of a route come from: Container Insights (the serving description must then name
   * its cluster) or the routing target's own API.
   */
  readonly desiredReplicasFrom: 'container-insights' | 'target-api';
  /**
   * How a route's replica-count window is read (`ReplicaWindow`): all published datapoints (ALB), or the reconciler's own
   * samples with the newest count read live from the target (SageMaker: `observe` appends DescribeEndpoint's counts).
   * The default provisioning grace is sized on it (`defaultProvisioningGraceSeconds`).
   */
  readonly replicaWindow: ReplicaWindow;
  /**
   * Whether the platform gives up a scale-out it cannot fill and rolls the desired count back (SageMaker: the endpoint
   * waits for the provisioning timeout, then is `RollingBack` "to its previous configuration"). A desired count that
   * falls back to the ready count without new replicas is then a refused scale-out (or one that failed its health
   * check: falling back is right either way), which `observe` reads as a capacity error (`rolledBackScaleOuts`): on such
   * a platform desired > ready lasts about the timeout per attempt, and the grace rule, whose window ends a metric delay
   * ago, may see no attempt whole.
   */
  readonly scaleOutsRollBack: boolean;
  /**
   * Whether each run counts every route's healthy targets live and publishes the counts as the route's `HealthyTargets`
   * (ALB: `DescribeTargetHealth`, lambda/reconciler/targets/alb.ts); a dashboard draws that metric only where it exists.
   */
  readonly publishesHealthyTargets: boolean;
  /**
   * The EventBridge event that says the target takes writes again, as a rule's event pattern, so that a run follows
   * at once instead of at the next tick; undefined where writes are never refused (ALB). SageMaker refuses every
   * update while the endpoint is Updating, and Application Auto Scaling takes the endpoint again when its alarm next
   * repeats a refused scaling (once per minute): a run that waits for its tick may find the endpoint Updating again.
   */
  writableAgain(facts: F): EventPattern | undefined;
  /** The serving platform's signal producers by routed name, compacted to fit the Lambda environment. */
  routedProducers(serving: ServingDescription & { readonly routing: F }): RoutedProducers;
  /**
   * The floor to hand the autoscaler so that it runs at least `floor` replicas, given the route's newest desired count
   * (null: unknown). SageMaker: the floor itself (a capacity write). EKS: raised where the HPA's tolerance would ignore it.
   */
  autoscalerFloor(floor: number, desired: number | null): number;
  /** What the run saw of each route (replica counts, per-pool instances), for the EMF records. */
  observations(facts: F, target: TargetState, latest: Readonly<Record<string, LatestCounts>>): Record<string, RouteObservation>;
  /**
   * The write this decision calls for, if any: weights when they changed (or a stray route holds weight), otherwise,
   * where floors are capacity writes, one route's desired count raised to its floor.
   */
  plannedWrite(facts: F, decision: PolicyDecision, target: TargetState, floors: Readonly<Record<string, number>> | null): RoutingWrite | undefined;
  /**
   * verify's IAM probes of the writer (lambda/reconciler/targets/<kind>.ts): each call it makes on the resource it
   * makes it on (allowed), the same call on a neighbouring resource and the destructive calls nearest to it (denied).
   */
  writerProbes(facts: F): PermissionProbe[];
  /**
   * Why the facts describe another deployment of the target than the one the run read (SageMaker: another endpoint
   * configuration), or undefined. The run then writes nothing and is deferred, before any route is checked or zeroed.
   */
  otherConfiguration(facts: F, target: TargetState): string | undefined;
  /**
   * The name of the target's configuration the facts describe (SageMaker `endpointConfigName`), which each deployment
   * that replaces it changes, and the facts without it; undefined where the facts name none (ALB).
   */
  configurationOf(facts: F): { readonly name: string; readonly without: F } | undefined;
  /**
   * The route of the capacity class named (a class name, or a routed name), or of the preferred class (preference
   * rank 0) when none is named, and where its capacity is held. Throws naming the routes when none matches.
   */
  capacityHolder(facts: F, className?: string): CapacityHolder;
}
