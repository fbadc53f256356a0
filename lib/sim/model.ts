import { type RoutedClassFacts } from '../core/reconciler/routing-facts';
import { variantScalingDefaults } from '../core/platform/control-loop';
import { type ServerAdmission } from '../core/runtime/admission';
import { type PlatformKind, type PlatformOverrides } from './platform';
import { tokenDistributionMean, type WorkloadSpec } from './workload';
import { describeRule, ruleProblem } from '../core/validation/checker';
import { SAGEMAKER_SCALING_TARGET_RULES } from '../core/validation/sagemaker-scaling-rules';

/** One capacity class as the simulator runs it: the routing facts plus how it provisions and scales. */
export interface SimClass extends RoutedClassFacts {
  /** Seconds from launch to ready (instance boot + image pull + weight load + warm-up); a range draws per replica. */
  readonly provisioningSeconds: number | readonly [number, number];
  /** Replicas kept even without traffic (warm standby). */
  readonly minReplicas: number;
  /** Ready replicas at time 0. */
  readonly initialReplicas: number;
  /** Output tokens/s per replica at the class's scaling target (the capacity plan's; what the fleet oracle sizes with). */
  readonly targetTokensPerSecondPerReplica: number;
  /** Requests/s per replica the EKS ScaledObject targets (ALB RequestCount per period / period), from the plan. */
  readonly targetRequestsPerSecondPerReplica: number;
  /** In-flight requests per instance SageMaker target tracking aims for (ConcurrentRequestsPerModel), from the plan. */
  readonly targetConcurrencyPerReplica: number;
  /**
   * A SageMaker variant with several pools and no explicit target: each pool's own target (priority order), for the
   * second, per-pool policy the construct renders (`variantScalingDefaults`).
   */
  readonly poolTargets?: readonly number[];
  /**
   * What one ready replica's server really admits (`serverAdmission()`, the function the constructs' runtime binding
   * follows): its in-flight bound (unset: nothing bounds the queue), vLLM's prompt-token budget, whether the bound
   * holds under bursts. Unset: an unbounded queue.
   */
  readonly admission?: ServerAdmission;
  /**
   * The class's engine counts the tokens it generates in a counter the CloudWatch agent keeps
   * (`engineCountsGeneratedTokens`: vLLM's generation_tokens_total). Where the platform scrapes it
   * (`PlatformModel.engineTokenCounters`), the Reconciler reads served demand in tokens, not requests x the declared mean.
   */
  readonly countsGeneratedTokens?: boolean;
  /**
   * EKS: the class's NodePool allows a single offering (spot only, one instance type, one zone), so Karpenter's
   * 3-minute unavailable mark on the offering a spot notice names leaves it nothing to launch
   * (`PlatformModel.interruptionDrain.offeringUnavailableSeconds`). Unset: the library's default NodePool, which spans
   * every node-subnet zone (lib/eks/class-unit.ts), where Karpenter launches in another zone, or errs for capacity, at
   * once (review R241).
   */
  readonly singleOffering?: boolean;
  /** The class's engine (`runtime.engine`): how long its server serves what it holds after SIGTERM (`servesAfterSigtermSeconds`). */
  readonly engine?: string;
  /**
   * Requests one replica holds in flight at its envelope's tokens/s (`inFlightAtEnvelope`, the planned figure the
   * SageMaker concurrency target comes from): its replicas are calibrated to hold it there (`calibratedSlotRate`).
   * @default safeConcurrency
   */
  readonly envelopeInFlight?: number;
}

/** What a request is promised and how a replica turns tokens into time. */
export interface ServiceModel {
  /** Time-to-first-token budget, seconds: part of every request's deadline. */
  readonly ttftSeconds: number;
  /** Inter-token latency budget, seconds per output token (0 for models that do not stream tokens). */
  readonly itlSeconds: number;
  /**
   * End-to-end deadline, seconds. A request's own deadline is min(deadline, ttft + output tokens x itl) when
   * itlSeconds > 0, else the deadline: a long answer may take longer than a short one, never longer than this.
   */
  readonly deadlineSeconds: number;
  /** Cost of one prompt token relative to one output token (prefill is much cheaper per token than decode). */
  readonly prefillWeight: number;
  /**
   * A what-if: every replica's saturation throughput is envelope / envelopeUtilization, instead of the slot rate at which
   * it reproduces its class's envelope (`calibratedSlotRate`). @default - calibrated per class
   */
  readonly envelopeUtilization?: number;
}

/** How many instances of a class the cloud will hand out in total, from `at` on (Infinity = no limit). */
export interface AvailabilityStep {
  readonly at: number;
  readonly instances: number;
  /**
   * A limit of the account's own, not a shortage of the cloud's (EKS: a NodePool's `spec.limits`, the game day's cap):
   * a launch it refuses is refused before any cloud is asked, so no insufficient-capacity error is reported (Karpenter's
   * capacity-error metric filter does not fire: lib/core/game-day/injection.ts). @default false
   */
  readonly limit?: boolean;
}

/**
 * SageMaker: a variant's scalable target pinned (the game day's injection: MinCapacity = MaxCapacity = its instances in
 * service, RegisterScalableTarget): from `from` to `to` (seconds) neither its target tracking nor the Reconciler's
 * capacity writes move its desired count, and the Reconciler reads the pinned bounds (DescribeScalableTargets).
 */
export interface ScalingPin {
  /** The routed column (the variant). */
  readonly routedClass: string;
  readonly from: number;
  readonly to: number;
  /** The instances it is pinned at (a game day's observed count). @default its instances in service at `from` */
  readonly instances?: number;
}

/** Loss of replicas with notice (spot-like interruption). */
export interface Interruption {
  readonly className: string;
  /** When the replicas are lost, seconds. */
  readonly at: number;
  readonly replicas: number;
  readonly noticeSeconds: number;
}

/** A capacity event the metrics measure reaction to: onset and restoration of a class's shortage. */
export interface CapacityEvent {
  readonly className: string;
  readonly onset: number;
  readonly restoration: number;
}

/** A scenario made concrete for one seed: everything a run needs. */
export interface ScenarioInstance {
  readonly id: string;
  readonly title: string;
  readonly durationSeconds: number;
  /** In preference order (preferenceRank 0 first). */
  readonly classes: readonly SimClass[];
  readonly workload: WorkloadSpec;
  /**
   * The prompt and output lengths the classes' envelopes were measured on (H8 serves longer answers than that).
   * @default the workload's
   */
  readonly envelopeWorkload?: Pick<WorkloadSpec, 'promptTokens' | 'outputTokens'>;
  readonly service: ServiceModel;
  readonly availability?: Readonly<Record<string, readonly AvailabilityStep[]>>;
  readonly interruptions?: readonly Interruption[];
  /** SageMaker: variants whose scalable target is pinned for a while (`ScalingPin`). @default none */
  readonly scalingPins?: readonly ScalingPin[];
  /** Actual speed / envelope speed per class (S4: a fallback slower than its measured envelope). */
  readonly speedFactors?: Readonly<Record<string, number>>;
  /** Intervals during which no metric datapoints are published. */
  readonly metricOutages?: ReadonlyArray<{ readonly from: number; readonly to: number }>;
  /**
   * CloudWatch's actual publication delay of a 60 s datapoint, seconds. The Reconciler reads no period newer than its
   * own `metricDelay` (the platform model's), whichever is later. @default 60
   */
  readonly metricDelaySeconds?: number;
  /** The construct the service runs on: its autoscaler, signals and write sequencing (`platformModel`). @default 'eks' */
  readonly platform?: PlatformKind;
  /** Changed timing assumptions of the platform model (`--platform-param`; SageMaker only). @default none */
  readonly platformOverrides?: PlatformOverrides;
  /**
   * Output tokens per request the service declares (its contract's mean): where the engine does not count tokens, the
   * Reconciler measures demand as requests x this. @default the workload's mean output length
   */
  readonly tokensPerRequest?: number;
  /**
   * The headroom of the capacity plan the classes' scaling targets come from (the contract's): the simulated Reconciler's
   * policy takes it, as the Reconciler construct takes the serving's (`ServingDescription.headroom`).
   * @default the policy's default, 0.2
   */
  readonly headroom?: number;
  readonly capacityEvents?: readonly CapacityEvent[];
  /**
   * SageMaker: the production variants, each a list of class names in instance-pool priority order (the construct's
   * `variants`: `EndpointVariantOptions.classes`). A variant with several pools is one routed column: one weight, one
   * target tracking, one queue over the instances of all its pools (`routedScenario`). Ignored on EKS, where every
   * class is its own target group. @default one variant per class
   */
  readonly variants?: ReadonlyArray<{
    readonly name: string;
    readonly classes: readonly string[];
    /** In-flight requests per instance its target tracking aims for (the construct's `scaling.targetConcurrencyPerInstance`). */
    readonly targetConcurrencyPerInstance?: number;
    /** The construct's `scaling.perPoolTargets`: each pool scaled to its own target (two policies). */
    readonly perPoolTargets?: boolean;
    /** Its scaling maximum as deployed (the routing facts' `maxInstances`, a `scaling.maxInstances` included). @default the construct's default */
    readonly maxInstances?: number;
  }>;
  /**
   * The instance pools of each routed column, in priority order (set by `routedScenario`; a column without an entry is
   * its own only pool).
   */
  readonly pools?: Readonly<Record<string, readonly SimClass[]>>;
}

/**
 * The routed column of each of a routed scenario's scaling pins (`ScalingPin`), in order; throws what is wrong with one,
 * naming the scenario, the pin, the value and what is allowed.
 */
export function scalingPinColumns(scenario: ScenarioInstance): number[] {
  const pins = scenario.scalingPins ?? [];
  const platform = scenario.platform ?? 'eks';
  if (pins.length > 0 && platform !== 'sagemaker') {
    throw new Error(`Scenario ${scenario.id}: scaling pins are SageMaker's (a variant's scalable target); this scenario runs on ${platform}`);
  }
  const routed = scenario.classes.map((c) => c.name);
  return pins.map((p) => {
    const problems = [
      ...(routed.includes(p.routedClass) ? [] : [`, which is no routed class; allowed: ${routed.join(', ')}`]),
      ...(Number.isFinite(p.from) && Number.isFinite(p.to) && p.from >= 0 && p.from < p.to ? []
        : [`: from ${p.from} s to ${p.to} s; allowed: finite seconds, 0 <= from < to`]),
      ...(p.instances === undefined || (Number.isInteger(p.instances) && p.instances >= 1) ? []
        : [`: instances ${p.instances}; allowed: a whole number at least 1`]),
    ];
    if (problems.length > 0) throw new Error(`Scenario ${scenario.id}: scaling pin of '${p.routedClass}'${problems.join('')}`);
    return routed.indexOf(p.routedClass);
  });
}

/** The instance pools of a routed column, in priority order: the column itself unless `routedScenario` grouped it. */
export function poolsOf(scenario: ScenarioInstance, column: SimClass): readonly SimClass[] {
  return scenario.pools?.[column.name] ?? [column];
}

/**
 * The scenario as its platform routes it. On SageMaker with `variants`, each variant becomes one column whose pools are
 * its classes; its scaling range and target are the construct's defaults for a variant (`variantScalingDefaults`, the rule
 * lib/sagemaker/variants.ts renders), its instances at time 0 the largest of its classes', its envelope,
 * price and model those of its priority-1 pool (what the Reconciler's `variantClass` reads before any instance runs).
 * Availability, interruptions and speed factors stay keyed by class (instance type): they act on pools. Idempotent.
 */
export function routedScenario(scenario: ScenarioInstance): ScenarioInstance {
  if ((scenario.platform ?? 'eks') !== 'sagemaker' || !scenario.variants || scenario.pools) return scenario;
  const byName = new Map(scenario.classes.map((c) => [c.name, c]));
  const placed = scenario.variants.flatMap((v) => v.classes);
  // What acts on capacity names a class (an instance type, a pool), never a variant: a variant's name would be ignored.
  const acting = [
    ...Object.keys(scenario.availability ?? {}), ...Object.keys(scenario.speedFactors ?? {}),
    ...(scenario.interruptions ?? []).map((i) => i.className), ...(scenario.capacityEvents ?? []).map((e) => e.className),
  ];
  const unknown = [...new Set([...placed, ...acting])].filter((n) => !byName.has(n));
  const twice = placed.filter((n, i) => placed.indexOf(n) !== i);
  const missing = scenario.classes.filter((c) => !placed.includes(c.name)).map((c) => c.name);
  // The construct's rules for these props, so a scenario cannot run a value the construct refuses. Its cap of the target
  // at the pools' smallest safe concurrency (lib/sagemaker/variants.ts) is no rule, and stays open here: H9's what-if.
  const targetRule = SAGEMAKER_SCALING_TARGET_RULES['variants[].scaling.targetConcurrencyPerInstance'];
  const perPoolRule = SAGEMAKER_SCALING_TARGET_RULES['variants[].scaling.perPoolTargets'];
  for (const v of scenario.variants) {
    const targetProblem = v.targetConcurrencyPerInstance === undefined ? undefined : ruleProblem(targetRule, v.targetConcurrencyPerInstance);
    if (targetProblem) throw new Error(`Scenario ${scenario.id}: variant '${v.name}' targetConcurrencyPerInstance ${targetProblem}`);
    if (v.maxInstances !== undefined && !(Number.isInteger(v.maxInstances) && v.maxInstances >= 1)) {
      throw new Error(`Scenario ${scenario.id}: variant '${v.name}' maxInstances is ${v.maxInstances}; allowed: a whole number at least 1`);
    }
    const problem = perPoolRule.check({ value: v.perPoolTargets, pools: v.classes, targetConcurrencyPerInstance: v.targetConcurrencyPerInstance });
    if (problem) throw new Error(`Scenario ${scenario.id}: variant '${v.name}' perPoolTargets ${problem}; allowed: ${describeRule(perPoolRule)}`);
  }
  if (unknown.length > 0 || twice.length > 0 || missing.length > 0 || scenario.variants.some((v) => v.classes.length === 0)) {
    throw new Error(`Scenario ${scenario.id}: variants must place every class (${scenario.classes.map((c) => c.name).join(', ')}) in exactly one `
      + 'non-empty variant, and availability, speedFactors, interruptions and capacityEvents must name classes, not variants; '
      + `unknown: [${unknown.join(', ')}], placed twice: [${twice.join(', ')}], not placed: [${missing.join(', ')}]`);
  }
  const pools: Record<string, readonly SimClass[]> = {};
  const columns = scenario.variants.map((v): SimClass => {
    const members = v.classes.map((n) => byName.get(n)!);
    if (members.length === 1 && members[0].name === v.name && v.targetConcurrencyPerInstance === undefined) {
      return v.maxInstances === undefined ? members[0] : { ...members[0], maxReplicas: v.maxInstances };
    }
    pools[v.name] = members;
    const first = members[0];
    const scaling = variantScalingDefaults(members, v.perPoolTargets === true);
    const slowest = (c: SimClass) => (typeof c.provisioningSeconds === 'number' ? c.provisioningSeconds : c.provisioningSeconds[1]);
    return {
      ...first,
      name: v.name,
      preferenceRank: Math.min(...members.map((c) => c.preferenceRank)),
      allowSensitive: members.every((c) => c.allowSensitive),
      minReplicas: scaling.minInstances,
      maxReplicas: v.maxInstances ?? scaling.maxInstances,
      // Instances at time 0, provisioned by pool priority as any scale-out (the variant's standby is not a pool's own).
      initialReplicas: Math.max(...members.map((c) => c.initialReplicas)),
      targetConcurrencyPerReplica: v.targetConcurrencyPerInstance ?? scaling.targetConcurrencyPerInstance,
      ...(scaling.poolTargets ? { poolTargets: scaling.poolTargets } : {}),
      // The slowest pool's start, for what reads a column's start-up time (each replica starts with its own pool's; the
      // simulated Reconciler's grace comes from the pools' declared ready times, as in the facts: `libraryConfig`).
      provisioningSeconds: Math.max(...members.map(slowest)),
      // A variant's engine counters reach the Reconciler only when it has one class (`routedProducers`).
      countsGeneratedTokens: members.length === 1 && first.countsGeneratedTokens,
    };
  });
  const classes = [...columns].sort((a, b) => a.preferenceRank - b.preferenceRank);
  return { ...scenario, classes, pools };
}

/**
 * The output tokens per request the service declares (`tokensPerRequest`), or the workload's mean output length when
 * the scenario declares none: what the simulated Reconciler and the baselines both turn request counts into tokens with.
 */
export function declaredTokensPerRequest(scenario: ScenarioInstance): number {
  return scenario.tokensPerRequest ?? tokenDistributionMean(scenario.workload.outputTokens);
}

export function availabilityAt(steps: readonly AvailabilityStep[] | undefined, t: number): number {
  return availabilityStepAt(steps, t)?.instances ?? Infinity;
}

/** The availability step in force at `t` (undefined: none yet, unbounded). */
export function availabilityStepAt(steps: readonly AvailabilityStep[] | undefined, t: number): AvailabilityStep | undefined {
  let found: AvailabilityStep | undefined;
  for (const s of steps ?? []) {
    if (s.at <= t) found = s;
    else break;
  }
  return found;
}

/** One class's 60 s datapoint, as the metrics pipeline publishes it. */
export interface ClassDatapoint {
  readonly minute: number;
  readonly routedRequests: number;
  /** Requests that reached a ready replica (what the load balancer counts: ALB RequestCount, SageMaker Invocations). */
  readonly targetedRequests: number;
  /** Requests a replica's server rejected or dropped (its 5XX count). */
  readonly serverRejected: number;
  /** Output tokens of the requests routed to the class (its demand). */
  readonly routedTokens: number;
  readonly admitted: number;
  readonly rejected: number;
  readonly rejectedTokens: number;
  readonly completed: number;
  readonly servedTokens: number;
  readonly sloMetRequests: number;
  readonly latencyP95Seconds: number;
  readonly readyReplicas: number;
  readonly desiredReplicas: number;
  readonly pendingReplicas: number;
  /** Launch attempts that failed with insufficient capacity in this minute. */
  readonly capacityErrors: number;
  /** Replicas under an interruption notice. */
  readonly interruptionNotices: number;
}

/**
 * The whole service's 60 s demand datapoint as the deployed Reconciler measures it: requests the load balancer
 * counted plus those the servers rejected, over every class, and that times the declared tokens per request.
 */
export interface DemandDatapoint {
  readonly minute: number;
  readonly requests: number;
  readonly tokens: number;
}
