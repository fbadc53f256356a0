/**
 * The simulator's run of the shortage a game day injected, on the deployed configuration: the serving record the
 * construct wrote into the template (contract, classes, plan, platform: lib/core/service/serving-record.ts), the
 * deployed reconciler's configuration (its policy resolved as its function resolves it, its metric delay), the demand
 * CloudWatch observed in the window and the same shortage (the class held at its ready replicas from the injection to
 * the restore). What the deployment does not record is assumed, and each assumption is returned so the report names it.
 */
import { observedOutcome, type PredictedOutcome, type WindowMeasures } from '../lib/core/game-day/observed';
import { interruptionHoldSeconds } from '../lib/core/platform/control-loop';
import { resolvePolicyConfig } from '../lib/core/policy/defaults';
import { type ChartSeries } from '../lib/core/report/chart-series';
import { type ReconcilerConfig } from '../lib/core/reconciler/config';
import { routingTarget } from '../lib/core/reconciler/targets';
import { type ServingRecord } from '../lib/core/service/serving-record';
import { libraryPolicy } from '../lib/sim/library-policy';
import { computeMetrics } from '../lib/sim/metrics';
import { type AvailabilityStep, type Interruption, type ScalingPin, type ScenarioInstance } from '../lib/sim/model';
import { scenarioPlatform } from '../lib/sim/platform';
import { buildScenario } from '../lib/sim/scenarios';
import { runSimulation } from '../lib/sim/simulator';
import { chartSeries } from '../lib/sim/suite';
import { generateTrace, type RateProfile } from '../lib/sim/workload';

/**
 * Seconds from launch to ready the simulator assumes (buildScenario's default) for a class whose envelope declares no
 * measured replica-ready time (`replicaReadyTimeP95Seconds`, in the serving record's classes).
 */
export const ASSUMED_PROVISIONING_SECONDS = 300;
/** Prompt cost relative to an output token in the simulator's service-time model (its LLM scenarios' value). */
export const ASSUMED_PREFILL_WEIGHT = 0.05;
export const PREDICTION_SEEDS: readonly number[] = [1, 2, 3];

export interface ShortageWindow {
  /** The routed class taken away (EKS: the class; SageMaker: the variant). */
  readonly routedClass: string;
  /** Seconds from the window's start. */
  readonly onsetSeconds: number;
  readonly restorationSeconds: number;
  readonly durationSeconds: number;
  readonly periodSeconds: number;
  /** --reclaim: what the plan took away; none: the class held where it was. */
  readonly reclaim?: ReclaimShape;
}

/**
 * A reclaim as the drain runs it (lib/core/game-day/reclaim.ts): the NodeClaims' class pods are evicted through their
 * PodDisruptionBudget, `allowedAtOnce` at the start; an evicted pod's replacement cannot become Ready under the zero
 * cap, so the budget allows no more and Karpenter deletes the rest at the NodeClaim's terminationGracePeriod less the
 * pods' own (`interruptionHoldSeconds`).
 */
export interface ReclaimShape {
  /** NodeClaims deleted (one instance each). */
  readonly instances: number;
  /** Class pods on them. */
  readonly evictedPods: number;
  /** Evictions the class's budget allowed at the injection (Infinity: no budget). */
  readonly allowedAtOnce: number;
  /** The NodeClaims' terminationGracePeriod (undefined: not readable; every pod is then taken at the injection). */
  readonly terminationGracePeriodSeconds?: number;
  /** The class pods' terminationGracePeriodSeconds (undefined: none read; Karpenter then deletes none before the node's grace ends). */
  readonly podTerminationGracePeriodSeconds?: number;
}

export interface Prediction {
  readonly outcome: PredictedOutcome;
  /** The first seed's run, charted like the observed window. */
  readonly chart: ChartSeries;
  /** What the prediction had to assume, each named for the report. */
  readonly assumptions: readonly string[];
}

/**
 * Each routed class's price per replica-hour from the serving record (its capacity classes' usdPerReplicaHour). NaN
 * for a routed class whose pools are priced differently: the window's ready replicas are per variant, not per pool.
 */
export function routedClassPrices(record: ServingRecord, config: ReconcilerConfig): Record<string, number> {
  const prices: Record<string, number> = {};
  for (const route of routingTarget(config.facts).routes(config.facts)) {
    const own = new Set(route.classes.map((c) => record.classes.find((r) => r.name === c.name)?.usdPerReplicaHour ?? NaN));
    prices[route.name] = own.size === 1 ? [...own][0] : NaN;
  }
  return prices;
}

/** The observed window as a scenario of the simulator (exported for the tests). */
export function shortageScenario(record: ServingRecord, config: ReconcilerConfig, observed: ChartSeries, w: ShortageWindow): {
  scenario: ScenarioInstance; assumptions: string[];
} {
  const meanOutput = record.contract.requestShape.meanOutputTokens;
  const rates = observed.demandTokensPerSecond.map((d) => (Number.isFinite(d) ? d / meanOutput : 0));
  const meanRate = rates.reduce((a, b) => a + b, 0) / Math.max(1, rates.length);
  if (!(meanRate > 0)) throw new Error('CloudWatch shows no demand in the window: there is nothing for the simulator to replay');
  const rateProfile: RateProfile = rates.map((r, slot) => ({ at: slot * w.periodSeconds, multiplier: r / meanRate }));
  const assumptions = [
    `demand: the observed demand per ${w.periodSeconds} s (served + rejected tokens / the contract's ${meanOutput} mean output tokens), Poisson arrivals within each period`,
    `request lengths: exponential around the contract's means (${record.contract.requestShape.meanPromptTokens} prompt, ${meanOutput} output tokens); the contract records no distribution`,
    'replica speed: each class\'s replica serves at the speed at which, offered its envelope\'s tokens/s as Poisson arrivals of these '
      + 'lengths, it holds the requests in flight its envelope allows there (inFlightAtEnvelope; calibratedSlotRate, docs/simulator.md)',
    provisioningAssumption(record),
  ];
  const routed = observed.classNames;
  const readyAt = (routedClass: string, slot: number) =>
    observed.readyReplicas[Math.min(slot, observed.readyReplicas.length - 1)]?.[routed.indexOf(routedClass)];
  // SageMaker: each variant as the endpoint runs it, one routed column over its pools (one weight, one target tracking),
  // not each pool a variant of its own that the Reconciler could route to; scaled as the record says it was deployed,
  // or, in a record that holds no variants (written before stop 65), by the construct's default target up to the most
  // instances the Reconciler plans it at (its scaling maximum, at most its pools' quotas together).
  const routes = routingTarget(config.facts).routes(config.facts);
  const variants = record.platform === 'sagemaker' ? routes.map((r) => {
    const deployed = record.variants?.find((v) => v.name === r.name);
    const scaling = deployed === undefined ? {}
      : deployed.poolTargets ? { perPoolTargets: true } : { targetConcurrencyPerInstance: deployed.targetConcurrencyPerInstance };
    return { name: r.name, classes: r.classes.map((c) => c.name), maxInstances: deployed?.maxInstances ?? r.maxReplicas, ...scaling };
  }) : undefined;
  // A routed class's ready count at the start, on its priority-1 class and none on its other pools (a variant starts its
  // instances by pool priority, and the window has no per-pool count).
  const initialReplicas: Record<string, number> = {};
  for (const route of routes) {
    const ready = readyAt(route.name, 0);
    route.classes.forEach((c, pool) => {
      if (pool > 0) initialReplicas[c.name] = 0;
      else if (Number.isFinite(ready)) initialReplicas[c.name] = Math.round(ready);
    });
  }
  const onsetSlot = Math.floor(w.onsetSeconds / w.periodSeconds);
  const heldReplicas = readyAt(w.routedClass, onsetSlot);
  const remembered = rememberedEntries(observed, onsetSlot);
  if (remembered > 0) {
    assumptions.push(`memory: the deployed reconciler still remembered a capacity event at the injection (${remembered} `
      + `entr${remembered === 1 ? 'y' : 'ies'}, CapacityEventEntries): within it, it re-enters only when the ready classes cannot carry the demand, `
      + 'and each re-entry doubles its return hold; the simulated one starts without that memory (a fresh event), so it may fall back and '
      + 'return sooner than observed. A game day has none when cost mode has lasted the deployed re-entry memory (policy.reentryMemory, '
      + `${resolvePolicyConfig(config.policy).reentryMemorySeconds} s) since the last return with no capacity loss of the preferred class`);
  }
  const held = Number.isFinite(heldReplicas) ? 'its ready replicas observed at the injection' : 'no ready count observed at the injection: its starting replicas';
  const availability: Record<string, AvailabilityStep[]> = {};
  const interruptions: Interruption[] = [];
  // The capacity classes behind the routed class taken away.
  const behind = routes.find((r) => r.name === w.routedClass)?.classes.map((c) => c.name) ?? [];
  for (const name of behind) if (!record.classes.some((c) => c.name === name)) throw new Error(`the serving record has no class ${name} (routed class ${w.routedClass})`);
  const scalingPins: ScalingPin[] = [];
  if (variants) {
    // SageMaker: the game day pins the variant's scalable target (MinCapacity = MaxCapacity = its instances in service);
    // the cloud still has capacity, but neither its target tracking nor the Reconciler may move its desired count.
    const instances = Number.isFinite(heldReplicas) ? Math.round(heldReplicas) : undefined;
    scalingPins.push({
      routedClass: w.routedClass, from: w.onsetSeconds, to: w.restorationSeconds, ...(instances === undefined ? {} : { instances }),
    });
    assumptions.push(`shortage: ${w.routedClass}'s scalable target pinned at ${instances ?? 'the simulated'} instance(s) from ${Math.round(w.onsetSeconds)} s `
      + `to ${Math.round(w.restorationSeconds)} s (${Number.isFinite(heldReplicas) ? held : 'no ready count observed at the injection: its instances in service then'}; `
      + 'MinCapacity = MaxCapacity, so neither its target tracking nor the Reconciler moves its desired count, and a scale-out under way is '
      + 'taken to be given up)');
    const scaled = record.variants
      ? 'each scaled as the serving record says it was deployed (its tracking target or per-pool policy, and its maximum; the per-pool targets '
        + 'and the minimum from the recorded plan, as the construct derives them)'
      : 'each scaled by the construct\'s default target tracking (variantScalingDefaults) up to its planned maximum: the serving record, '
        + 'written before stop 65, holds no variants, so a scaling.targetConcurrencyPerInstance or perPoolTargets set on the construct is not known';
    assumptions.push(`variants: ${variants.map((v) => `${v.name} [${v.classes.join(', ')}]`).join(', ')} (pools in priority order, each variant's `
      + `starting instances in its priority-1 pool), ${scaled}`);
  } else {
    for (const name of behind) {
      const cls = record.classes.find((c) => c.name === name)!;
      const replicas = Number.isFinite(heldReplicas) ? heldReplicas : initialReplicas[name] ?? 0;
      const running = Math.ceil(replicas / cls.replicasPerInstance);
      // A reclaim: the deleted instances are gone for the hold (the zero cap), their class pods leave as the drain lets
      // them (the simulator's spot-like interruption, no notice): the budget's allowance at the injection, the rest when
      // Karpenter deletes them, if that comes before the restore (after it, replacements become Ready and the drain goes
      // on one pod at a time: not modelled).
      const r = w.reclaim;
      const lost = Math.min(running, r?.instances ?? 0);
      const instances = running - lost;
      const pods = Math.min(replicas, r?.evictedPods ?? 0);
      const grace = r?.terminationGracePeriodSeconds;
      const first = grace === undefined ? pods : Math.min(pods, r?.allowedAtOnce ?? Infinity);
      const restAt = grace === undefined ? undefined : w.onsetSeconds + interruptionHoldSeconds(r?.podTerminationGracePeriodSeconds ?? 0, grace);
      if (first > 0) interruptions.push({ className: name, at: w.onsetSeconds, replicas: first, noticeSeconds: 0 });
      if (pods > first && restAt !== undefined && restAt < w.restorationSeconds) {
        interruptions.push({ className: name, at: restAt, replicas: pods - first, noticeSeconds: 0 });
      }
      // The NodePool's limit: a launch past it is refused before the cloud is asked, with no capacity error.
      availability[name] = [
        { at: 0, instances: Infinity }, { at: w.onsetSeconds, instances, limit: true }, { at: w.restorationSeconds, instances: Infinity },
      ];
      assumptions.push(`shortage: ${r ? `${reclaimAssumption(name, lost, pods, first, restAt, w.restorationSeconds, r)}, ` : ''}`
        + `${name} held at ${instances} instance(s) from ${Math.round(w.onsetSeconds)} s to ${Math.round(w.restorationSeconds)} s (${held}; `
        + 'a NodePool limit: pods past it stay Pending, with no insufficient-capacity error)');
    }
  }
  // Each class's lower bound as the construct deploys it: the recorded plan's steady replicas. The EKS service's plan
  // runs each class at its own minReplicas; a SageMaker endpoint's plan is the layout's (planAsDeployed,
  // lib/sagemaker/variants.ts): each variant's scaling minimum, scaling.minInstances included, on its priority-1 class
  // and 0 on its other pools. A record written before the latter holds the plan's minReplicas there too.
  const minReplicas = (name: string) => record.plan.classes.find((p) => p.name === name)?.steadyReplicas;
  const behavior = Object.fromEntries(record.classes.map((c) => [
    c.name, { provisioningSeconds: c.envelope.replicaReadyTimeP95Seconds ?? ASSUMED_PROVISIONING_SECONDS, minReplicas: minReplicas(c.name) },
  ]));
  assumptions.push(`replicas: each class's minimum from the recorded plan's steadyReplicas (${record.classes.map((c) => `${c.name} ${minReplicas(c.name)}`)
    .join(', ')}; SageMaker: its variant's scaling minimum, scaling.minInstances included, on the priority-1 pool, 0 on the others); `
    + 'an EKS classOptions.minReplicas set on the construct is not recorded');
  const scenario = buildScenario({
    id: 'game-day', title: `${record.contract.name}: ${w.routedClass} taken away (simulated)`, platform: record.platform,
    service: { contract: record.contract, classes: record.classes, plan: record.plan, behavior, prefillWeight: ASSUMED_PREFILL_WEIGHT },
    durationSeconds: w.durationSeconds,
    workload: {
      pattern: 'poisson', meanRatePerSecond: meanRate, rateProfile,
      promptTokens: { exponentialMean: record.contract.requestShape.meanPromptTokens }, outputTokens: { exponentialMean: meanOutput },
    },
    initialReplicas, availability, interruptions,
    // One event, on the routed class's priority-1 class (the rest of a variant's pools are its fallback inside it).
    capacityEvents: [{ className: behind[0], onset: w.onsetSeconds, restoration: w.restorationSeconds }],
    ...(variants ? { variants, scalingPins } : {}),
  });
  return { scenario, assumptions };
}

/** The capacity-event entries the reconciler published last before the injection's period (0: none, or none published). */
function rememberedEntries(observed: ChartSeries, onsetSlot: number): number {
  for (let m = Math.min(onsetSlot, observed.eventEntries?.length ?? 0) - 1; m >= 0; m--) {
    const entries = observed.eventEntries![m];
    if (Number.isFinite(entries)) return entries;
  }
  return 0;
}

/** Each class's start-up time, in words for the report: the declared p95 replica-ready time, or the assumed one. */
function provisioningAssumption(record: ServingRecord): string {
  const declared = record.classes.filter((c) => c.envelope.replicaReadyTimeP95Seconds !== undefined);
  const assumed = record.classes.filter((c) => c.envelope.replicaReadyTimeP95Seconds === undefined).map((c) => c.name);
  const parts = [
    ...(declared.length > 0 ? [`${declared.map((c) => `${c.name} ${c.envelope.replicaReadyTimeP95Seconds} s`).join(', ')} from launch to ready `
      + '(the p95 replica-ready time its envelope declares, every replica)'] : []),
    ...(assumed.length > 0 ? [`${ASSUMED_PROVISIONING_SECONDS} s from launch to ready for ${declared.length > 0 ? assumed.join(', ') : 'every class'} `
      + '(no replica-ready time declared: envelope.replicaReadyTimeP95Seconds)'] : []),
  ];
  return `provisioning: ${parts.join('; ')}`;
}

/** How a reclaim's drain is predicted, in words for the report. */
function reclaimAssumption(
  name: string, lost: number, pods: number, first: number, restAt: number | undefined, restoration: number, r: ReclaimShape,
): string {
  const head = `${lost} instance(s) of ${name} reclaimed at the injection; ${first} of its ${pods} pod(s) on them evicted then (without notice)`;
  if (pods === first) return restAt === undefined ? `${head} (terminationGracePeriod not read: the whole drain assumed at once)` : head;
  const own = r.podTerminationGracePeriodSeconds;
  const when = `Karpenter deletes them at the NodeClaims' terminationGracePeriod (${r.terminationGracePeriodSeconds} s) less `
    + (own === undefined ? 'their own grace (none read: not before it ends)' : `their own ${own} s`);
  if (restAt !== undefined && restAt < restoration) {
    return `${head}, as the PodDisruptionBudget allows; the other ${pods - first} at ${Math.round(restAt)} s (${when})`;
  }
  return `${head}, as the PodDisruptionBudget allows; the other ${pods - first} stay until the restore (${when}, after it) `
    + 'and then leave one at a time as replacements become Ready (not modelled)';
}

/** Mean over seeds; `never` (Infinity) when any seed never got there. */
function mean(values: readonly number[]): number {
  if (values.some((v) => v === Infinity)) return Infinity;
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? NaN : finite.reduce((a, b) => a + b, 0) / finite.length;
}

/**
 * Runs the deployed control loop on the shortage over PREDICTION_SEEDS: the reconciler's policy as its function
 * resolves it (`resolvePolicyConfig`, the one the Lambda's `observe()` and `decide()` use) and its metric delay, on the
 * simulator's one run a minute. A deployed period the simulator cannot run is refused, not run at 60 s.
 */
export function predictShortage(record: ServingRecord, config: ReconcilerConfig, observed: ChartSeries, w: ShortageWindow): Prediction {
  const { scenario, assumptions } = shortageScenario(record, config, observed, w);
  const deployed = resolvePolicyConfig(config.policy);
  const simulatedPeriod = scenarioPlatform(scenario).reconciler.periodSeconds;
  if (deployed.periodSeconds !== simulatedPeriod) {
    throw new Error(`the deployed reconciler runs every ${deployed.periodSeconds} s (policy.period); the simulator runs it every ${simulatedPeriod} s `
      + 'only, so its run would not be the deployed control loop');
  }
  // Each routed class's price, to price the run's ready replicas as the observed window is priced (observedCost): the
  // simulated columns are the deployed routes (a SageMaker variant with its pools), so both are read per route.
  const prices = routedClassPrices(record, config);
  const sensitive = config.placement?.sensitive === true;
  const graces = config.fallbackGraceSeconds ?? {};
  const policy = libraryPolicy(deployed, { metricDelaySeconds: config.metricDelaySeconds, fallbackGraceSeconds: graces, sensitive });
  // The run read as the observed window is (observedOutcome): the same periods (the deployed one is the simulator's
  // minute), the injection and the restore in the same slots.
  const slot = (seconds: number) => Math.floor(seconds / simulatedPeriod);
  const runs = PREDICTION_SEEDS.map((seed) => {
    const trace = generateTrace(scenario.workload, scenario.durationSeconds, seed);
    const run = runSimulation(scenario, policy, { seed, trace });
    const chart = chartSeries(run);
    const read = observedOutcome(chart, slot(w.onsetSeconds), slot(w.restorationSeconds), simulatedPeriod, prices);
    return { metrics: computeMetrics(run, scenario), read, chart };
  });
  // The same concept as the observed cost: ready replica-time per routed class, mean over seeds (NaN for a variant
  // whose pools are priced differently, as observed). The simulator's billed cost (pending, ready, draining) stays costUsd.
  const readyCostUsdByClass = Object.fromEntries(routingTarget(config.facts).routes(config.facts).map((route) =>
    [route.name, mean(runs.map((r) => r.read.costUsdByClass[route.name] ?? NaN))]));
  const m = (k: 'timeToFallbackSeconds' | 'timeToReturnSeconds' | 'rejectedShare' | 'latencyP95Seconds' | 'modeChangesPerEvent' | 'costUsd') => mean(runs.map((r) => r.metrics[k]));
  // observedOutcome's NaN time is a seed that never got there within the window: never, over the seeds.
  const never = (v: number) => (Number.isNaN(v) ? Infinity : v);
  const asObserved: WindowMeasures = {
    secondsToCapacityMode: mean(runs.map((r) => never(r.read.secondsToCapacityMode))),
    secondsToCostMode: mean(runs.map((r) => never(r.read.secondsToCostMode))),
    rejectedShare: mean(runs.map((r) => r.read.rejectedShare)),
    peakLatencyP95Seconds: mean(runs.map((r) => r.read.peakLatencyP95Seconds)),
    modeChanges: mean(runs.map((r) => r.read.modeChanges)),
  };
  return {
    outcome: {
      timeToFallbackSeconds: m('timeToFallbackSeconds'), timeToReturnSeconds: m('timeToReturnSeconds'), rejectedShare: m('rejectedShare'),
      latencyP95Seconds: m('latencyP95Seconds'), modeChangesPerEvent: m('modeChangesPerEvent'), costUsd: m('costUsd'),
      asObserved, readyCostUsdByClass, readyCostUsd: Object.values(readyCostUsdByClass).reduce((a, b) => a + b, 0),
    },
    chart: runs[0].chart,
    assumptions: [
      ...assumptions,
      `policy: the deployed reconciler's configuration, resolved as its Lambda resolves it (resolvePolicyConfig) ${JSON.stringify(deployed)}; `
        + `fallback graces ${JSON.stringify(config.fallbackGraceSeconds ?? {})}; placement ${sensitive ? 'sensitive' : 'not sensitive'}; `
        + `metric delay ${config.metricDelaySeconds} s; ${PREDICTION_SEEDS.length} seeds, means`,
    ],
  };
}
