import { replicasAtTarget } from '../core/service/sizing';
import { serviceModelFromContract, simClassesFromPlan } from './classes';
import {
  type AvailabilityStep, type CapacityEvent, type Interruption, type ScenarioInstance,
} from './model';
import { type PlatformKind } from './platform';
import { Rng } from './rng';
import { LLAMA_MEAN_RATE, llamaChatService, SD21_PEAK_RATE, sd21Service, type ServiceDefinition } from './services';
import {
  type ArrivalPattern, AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, diurnalProfile, type RateProfile, rateMultiplierAt,
  tokenDistributionMean, type TokenDistribution,
} from './workload';

/** Scenario parameters: plain numbers, so the CLI can override them (`--param shortageMinutes=45`). */
export type ScenarioParams = Readonly<Record<string, number>>;

/** A named, parameterised scenario; `build` makes it concrete for one seed. */
export interface ScenarioDefinition {
  readonly id: string;
  readonly title: string;
  /** What happens and what a good policy does. */
  readonly description: string;
  /** Every parameter with its default; NaN means "drawn per seed" (see the description). */
  readonly defaults: ScenarioParams;
  build(seed: number, params?: ScenarioParams): ScenarioInstance;
}

/** Everything a scenario says about a service under stress; the shape users fill to define their own. */
export interface ScenarioOptions {
  readonly id: string;
  readonly title: string;
  readonly service: ServiceDefinition;
  readonly durationSeconds: number;
  readonly workload: {
    readonly pattern: ArrivalPattern;
    readonly meanRatePerSecond: number;
    readonly rateProfile?: RateProfile;
    readonly promptTokens: TokenDistribution;
    readonly outputTokens: TokenDistribution;
  };
  /** The lengths the classes' envelopes were measured on (`ScenarioInstance.envelopeWorkload`). @default the workload's */
  readonly envelopeWorkload?: ScenarioInstance['envelopeWorkload'];
  /**
   * Ready replicas per class at time 0. Default: the preferred class enough for the demand at time 0 at its scaling
   * target (up to its maximum), the others their standby (`minReplicas`). Time 0 follows an hour of steady operation at
   * that demand (MetricHistory): a preferred class sized below it (on the mean rate of a profile that starts above it,
   * as H5's diurnal peak once was) starts with a deficit its own history calls sustained, and every run opens with a
   * capacity event the scenario does not declare.
   */
  readonly initialReplicas?: Readonly<Record<string, number>>;
  readonly availability?: Readonly<Record<string, readonly AvailabilityStep[]>>;
  readonly interruptions?: readonly Interruption[];
  readonly speedFactors?: Readonly<Record<string, number>>;
  /** Replace the provisioning delay of some classes. */
  readonly provisioningSeconds?: Readonly<Record<string, number | readonly [number, number]>>;
  readonly metricOutages?: ReadonlyArray<{ readonly from: number; readonly to: number }>;
  readonly metricDelaySeconds?: number;
  readonly capacityEvents?: readonly CapacityEvent[];
  /** The construct the service runs on (its autoscaler, signals and writes). @default 'eks' */
  readonly platform?: PlatformKind;
  /** SageMaker: classes grouped into production variants as instance pools (`ScenarioInstance.variants`). @default one variant per class */
  readonly variants?: ScenarioInstance['variants'];
  /** SageMaker: variants whose scalable target is pinned for a while (`ScenarioInstance.scalingPins`). @default none */
  readonly scalingPins?: ScenarioInstance['scalingPins'];
}

/** Builds a concrete scenario from a service declared with the library's capacity classes and plan. */
export function buildScenario(o: ScenarioOptions): ScenarioInstance {
  const svc = o.service;
  const w = o.workload;
  const tokensAtZero = w.meanRatePerSecond * rateMultiplierAt(w.rateProfile, 0) * tokenDistributionMean(w.outputTokens);
  const behavior = Object.fromEntries(svc.classes.map((c) => {
    const b = svc.behavior[c.name];
    return [c.name, {
      ...b,
      provisioningSeconds: o.provisioningSeconds?.[c.name] ?? b?.provisioningSeconds ?? 300,
      initialReplicas: o.initialReplicas?.[c.name] ?? b?.initialReplicas,
    }];
  }));
  return {
    id: o.id,
    title: o.title,
    durationSeconds: o.durationSeconds,
    classes: simClassesFromPlan(svc.classes, svc.plan, behavior, svc.contract, tokensAtZero),
    workload: o.workload,
    envelopeWorkload: o.envelopeWorkload ?? { promptTokens: o.workload.promptTokens, outputTokens: o.workload.outputTokens },
    service: serviceModelFromContract(svc.contract, svc.prefillWeight),
    availability: o.availability,
    interruptions: o.interruptions,
    speedFactors: o.speedFactors,
    metricOutages: o.metricOutages,
    metricDelaySeconds: o.metricDelaySeconds,
    capacityEvents: o.capacityEvents,
    platform: o.platform,
    variants: o.variants,
    ...(o.scalingPins ? { scalingPins: o.scalingPins } : {}),
    tokensPerRequest: svc.contract.requestShape.meanOutputTokens,
    headroom: svc.plan.headroom,
  };
}

const MIN = 60;

/** Availability limited to `instances` between `from` and `to` (unlimited outside). */
export function capBetween(from: number, to: number, instances: number): AvailabilityStep[] {
  return [{ at: 0, instances: Infinity }, { at: from, instances }, { at: to, instances: Infinity }];
}

/** Piecewise-linear demand: 1 until `at`, ramping to `to` over `rampMinutes`. */
function ramp(at: number, to: number, rampMinutes = 10): RateProfile {
  return [{ at: 0, multiplier: 1 }, { at, multiplier: 1 }, { at: at + rampMinutes * MIN, multiplier: to }];
}

interface LlmOptions {
  readonly id: string;
  readonly title: string;
  readonly p: ScenarioParams;
  readonly profile?: RateProfile;
  readonly availability?: Readonly<Record<string, readonly AvailabilityStep[]>>;
  readonly events?: readonly CapacityEvent[];
  readonly interruptions?: readonly Interruption[];
  readonly speedFactors?: Readonly<Record<string, number>>;
  readonly provisioningSeconds?: Readonly<Record<string, number | readonly [number, number]>>;
  readonly metricOutages?: ReadonlyArray<{ readonly from: number; readonly to: number }>;
  readonly variants?: ScenarioInstance['variants'];
}

function llm(o: LlmOptions): ScenarioInstance {
  const service = llamaChatService();
  const rate = o.p.meanRate ?? LLAMA_MEAN_RATE;
  return buildScenario({
    id: o.id,
    title: o.title,
    service,
    durationSeconds: (o.p.durationMinutes ?? 180) * MIN,
    workload: { pattern: 'near-poisson', meanRatePerSecond: rate, rateProfile: o.profile, promptTokens: AZURE_CONVERSATION_PROMPT, outputTokens: AZURE_CONVERSATION_OUTPUT },
    availability: o.availability,
    interruptions: o.interruptions,
    speedFactors: o.speedFactors,
    provisioningSeconds: o.provisioningSeconds,
    metricOutages: o.metricOutages,
    capacityEvents: o.events,
    variants: o.variants,
  });
}

/** A value drawn per seed when the parameter is NaN (the default), else the parameter. */
function drawn(p: ScenarioParams, key: string, draw: () => number): number {
  const v = p[key];
  return v === undefined || Number.isNaN(v) ? draw() : v;
}

/** The preferred class of the LLM service cannot grow past its fleet at onset (5 replicas) for a while. */
function preferredShortage(p: ScenarioParams, rng: Rng) {
  const onset = (p.onsetMinute ?? 60) * MIN;
  const minutes = drawn(p, 'shortageMinutes', () => rng.int(30, 90));
  const restoration = onset + minutes * MIN;
  const held = p.preferredInstancesDuringShortage ?? 5;
  return {
    onset,
    restoration,
    availability: { l40s: capBetween(onset, restoration, held) },
    events: [{ className: 'l40s', onset, restoration }],
  };
}

const COMMON = { durationMinutes: 180, onsetMinute: 60, meanRate: LLAMA_MEAN_RATE };

/** Builds a concrete scenario for a seed from the merged parameters and a random stream of its own. */
export type ScenarioBuilder = (seed: number, params: ScenarioParams, rng: Rng) => ScenarioInstance;

/**
 * Defines a named, parameterised scenario (how the built-in ones are made): `build` receives the defaults merged with
 * the caller's overrides, and an RNG derived from the seed and the id for per-seed draws.
 */
export function defineScenario(id: string, title: string, description: string, defaults: ScenarioParams, build: ScenarioBuilder): ScenarioDefinition {
  return {
    id, title, description, defaults,
    build: (seed, params) => build(seed, { ...defaults, ...params }, Rng.derive(seed, `scenario-${id}`)),
  };
}

export const S0 = defineScenario('S0', 'Steady state', 'Constant demand, all capacity available. Expect zero mode changes.', COMMON,
  (_seed, p) => llm({ id: 'S0', title: 'Steady state', p }));

const SHORTAGE = { ...COMMON, shortageMinutes: NaN, surge: 1.8, preferredInstancesDuringShortage: 5 };

export const S1 = defineScenario('S1', 'Preferred shortage',
  'Demand rises 80% at onset while the preferred class (L40S) cannot scale out for 30-90 min (drawn per seed); its existing replicas stay.',
  SHORTAGE, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    return llm({ id: 'S1', title: 'Preferred shortage', p, profile: ramp(s.onset, p.surge), availability: s.availability, events: s.events });
  });

export const S2 = defineScenario('S2', 'Partial fallback',
  'Demand doubles during a preferred shortage and the fallbacks are capped (inf2 2, a10g 1 instances): some shedding is unavoidable, no more should happen.',
  { ...SHORTAGE, surge: 2, inf2Cap: 2, a10gCap: 1 }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const cap = (n: number) => capBetween(s.onset, s.restoration, n);
    return llm({
      id: 'S2', title: 'Partial fallback', p, profile: ramp(s.onset, p.surge), events: s.events,
      availability: { ...s.availability, inf2: cap(p.inf2Cap), a10g: cap(p.a10gCap) },
    });
  });

export const S3 = defineScenario('S3', 'Slow fallback download',
  'A preferred shortage while fallback replicas take 2 to 20 minutes to become ready (model download).',
  SHORTAGE, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    return llm({
      id: 'S3', title: 'Slow fallback download', p, profile: ramp(s.onset, p.surge), availability: s.availability, events: s.events,
      provisioningSeconds: { inf2: [120, 1200], a10g: [120, 1200] },
    });
  });

export const S4 = defineScenario('S4', 'Slow fallback',
  'A preferred shortage while the fallbacks run 20-40% slower than their measured envelopes (drawn per seed).',
  { ...SHORTAGE, slowdown: NaN }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const slowdown = drawn(p, 'slowdown', () => rng.uniform(1.2, 1.4));
    return llm({
      id: 'S4', title: 'Slow fallback', p, profile: ramp(s.onset, p.surge), availability: s.availability, events: s.events,
      speedFactors: { inf2: 1 / slowdown, a10g: 1 / slowdown },
    });
  });

export const S5 = defineScenario('S5', 'Preferred returns under load',
  'Demand doubles and overloads the capped fallbacks (queues full); then the preferred class returns after 30-60 min. Measures the return.',
  { ...SHORTAGE, surge: 2, inf2Cap: 2, a10gCap: 2 }, (_seed, p, rng) => {
    const onset = p.onsetMinute * MIN;
    const restoration = onset + drawn(p, 'shortageMinutes', () => rng.int(30, 60)) * MIN;
    const cap = (n: number) => [{ at: 0, instances: Infinity }, { at: onset, instances: n }];
    return llm({
      id: 'S5', title: 'Preferred returns under load', p, profile: ramp(onset, p.surge),
      availability: {
        l40s: capBetween(onset, restoration, p.preferredInstancesDuringShortage),
        inf2: cap(p.inf2Cap), a10g: cap(p.a10gCap),
      },
      events: [{ className: 'l40s', onset, restoration }],
    });
  });

const FLAP_PERIODS = [1, 2, 5, 10];

export const S6 = defineScenario('S6', 'Flapping availability',
  'For 90 minutes the preferred class alternates between no capacity and capacity, with a period of 1, 2, 5 or 10 minutes (by seed), while demand is 80% up.',
  { ...SHORTAGE, flapPeriodMinutes: NaN, flapMinutes: 90 }, (seed, p) => {
    const onset = p.onsetMinute * MIN;
    const period = drawn(p, 'flapPeriodMinutes', () => FLAP_PERIODS[seed % FLAP_PERIODS.length]) * MIN;
    const end = onset + p.flapMinutes * MIN;
    const steps: AvailabilityStep[] = [{ at: 0, instances: Infinity }];
    for (let t = onset, on = false; t < end; t += period / 2, on = !on) {
      steps.push({ at: t, instances: on ? Infinity : p.preferredInstancesDuringShortage });
    }
    steps.push({ at: end, instances: Infinity });
    return llm({ id: 'S6', title: 'Flapping availability', p, profile: ramp(onset, p.surge), availability: { l40s: steps }, events: [{ className: 'l40s', onset, restoration: end }] });
  });

export const S7 = defineScenario('S7', 'Metric outage',
  'A preferred shortage during which no metric datapoints are published for 1-10 periods (drawn per seed), starting 5 minutes after onset.',
  { ...SHORTAGE, outagePeriods: NaN }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const periods = drawn(p, 'outagePeriods', () => rng.int(1, 10));
    const from = s.onset + 5 * MIN;
    return llm({
      id: 'S7', title: 'Metric outage', p, profile: ramp(s.onset, p.surge), availability: s.availability, events: s.events,
      metricOutages: [{ from, to: from + periods * MIN }],
    });
  });

export const S8 = defineScenario('S8', 'Demand spike during shortage',
  'A preferred shortage with a 4x demand spike for one minute 20 minutes after onset (diurnal=1: the diurnal peak instead).',
  { ...SHORTAGE, spike: 4, diurnal: 0 }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const spikeAt = s.onset + 20 * MIN;
    const profile: RateProfile = p.diurnal === 1
      // 20x night/day swing; the run starts at the morning ramp and peaks 90 minutes in (mid-shortage), 1.8x the mean.
      ? diurnalProfile({ fromSeconds: 0, toSeconds: p.durationMinutes * MIN, peakAtSeconds: s.onset + 30 * MIN, swing: 20 })
        .map((x) => ({ at: x.at, multiplier: x.multiplier * 1.8 }))
      : [...ramp(s.onset, p.surge), { at: spikeAt - 1, multiplier: p.surge }, { at: spikeAt, multiplier: p.surge * p.spike },
        { at: spikeAt + MIN, multiplier: p.surge * p.spike }, { at: spikeAt + MIN + 1, multiplier: p.surge }];
    return llm({ id: 'S8', title: 'Demand spike during shortage', p, profile, availability: s.availability, events: s.events });
  });

export const S9 = defineScenario('S9', 'Spot-like interruption',
  'At onset 3 of the 5 preferred replicas are lost after a 2-minute notice, and the preferred class has no capacity for 30-90 minutes (drawn per seed).',
  { ...COMMON, shortageMinutes: NaN, lostReplicas: 3 }, (_seed, p, rng) => {
    const onset = p.onsetMinute * MIN;
    const notice = 120;
    const restoration = onset + drawn(p, 'shortageMinutes', () => rng.int(30, 90)) * MIN;
    return llm({
      id: 'S9', title: 'Spot-like interruption', p,
      availability: { l40s: capBetween(onset - notice, restoration, 5 - p.lostReplicas) },
      interruptions: [{ className: 'l40s', at: onset, replicas: p.lostReplicas, noticeSeconds: notice }],
      events: [{ className: 'l40s', onset: onset - notice, restoration }],
    });
  });

export const P1 = defineScenario('P1', 'Reference experiment (SD2.1, five classes)',
  'Stable Diffusion 2.1 on the five deployment units of arXiv 2503.20074 with their breaking points and prices; cosine load over a day ' +
    '(peak 16 images/s, trough 20% of it); inf2 capped at 3 instances for 24 hours from hour 3, then recovery.',
  { durationHours: 30, shortageStartHour: 3, shortageHours: 24, inf2DuringShortage: 3, peakRate: SD21_PEAK_RATE, troughShare: 0.2 },
  (_seed, p) => {
    const service = sd21Service();
    const onset = p.shortageStartHour * 3600;
    const restoration = onset + p.shortageHours * 3600;
    const duration = p.durationHours * 3600;
    const profile = diurnalProfile({ fromSeconds: 0, toSeconds: duration, peakAtSeconds: 15 * 3600, swing: 1 / p.troughShare });
    const atStart = profile[0].multiplier * p.peakRate;
    const inf2 = service.classes[0];
    return buildScenario({
      id: 'P1', title: 'Reference experiment (SD2.1, five classes)', service, durationSeconds: duration,
      workload: { pattern: 'near-poisson', meanRatePerSecond: p.peakRate, rateProfile: profile, promptTokens: { fixed: 0 }, outputTokens: { fixed: 1 } },
      initialReplicas: { [inf2.name]: replicasAtTarget(atStart, inf2.envelope.tokensPerSecondPerReplica, service.plan.headroom) },
      availability: { inf2: capBetween(onset, restoration, p.inf2DuringShortage) },
      capacityEvents: [{ className: 'inf2', onset, restoration }],
    });
  });

/** Every built-in scenario, in suite order. */
export const SCENARIOS: readonly ScenarioDefinition[] = [S0, S1, S2, S3, S4, S5, S6, S7, S8, S9, P1];

export const H1 = defineScenario('H1', 'Held out: bursty steady state',
  'Two hours without any shortage under the Azure code trace\'s burstiness (12 of 57 minutes empty, peak minute 4x the mean). Expect zero mode changes.',
  { durationMinutes: 120, meanRate: LLAMA_MEAN_RATE }, (_seed, p) => {
    const s = llm({ id: 'H1', title: 'Held out: bursty steady state', p });
    return { ...s, workload: { ...s.workload, pattern: 'bursty' } };
  });

export const H2 = defineScenario('H2', 'Held out: flapping at other periods',
  'For two hours the preferred class toggles between no capacity and capacity every 3, 4 or 7 minutes (by seed), at steady demand 30% up.',
  { ...COMMON, durationMinutes: 180, flapMinutes: 120, surge: 1.3, preferredInstancesDuringShortage: 5, flapPeriodMinutes: NaN }, (seed, p) => {
    const onset = p.onsetMinute * MIN;
    const period = drawn(p, 'flapPeriodMinutes', () => [6, 8, 14][seed % 3]) * MIN;
    const end = onset + p.flapMinutes * MIN;
    const steps: AvailabilityStep[] = [{ at: 0, instances: Infinity }];
    for (let t = onset, on = false; t < end; t += period / 2, on = !on) {
      steps.push({ at: t, instances: on ? Infinity : p.preferredInstancesDuringShortage });
    }
    steps.push({ at: end, instances: Infinity });
    return llm({ id: 'H2', title: 'Held out: flapping at other periods', p, profile: ramp(onset - 10 * MIN, p.surge), availability: { l40s: steps },
      events: [{ className: 'l40s', onset, restoration: end }] });
  });

/** Long answers: p99 about 10x the mean, and the mean 1.26x the contract's declared mean (demand measured in requests under-counts). */
export const LONG_OUTPUT: TokenDistribution = { quantiles: [7, 16, 41, 54, 77, 91, 103, 129, 177, 260, 330, 420, 520, 2900, 3800, 4000] };

/** Availability of a class: `held` instances inside each window, unlimited outside. */
function capWindows(windows: ReadonlyArray<readonly [number, number]>, held: number): AvailabilityStep[] {
  const steps: AvailabilityStep[] = [{ at: 0, instances: Infinity }];
  for (const [from, to] of windows) steps.push({ at: from, instances: held }, { at: to, instances: Infinity });
  return steps;
}

export const H3 = defineScenario('H3', 'Held out: spot-like reclaims, slower fallbacks',
  'From minute 40, every 25-35 minutes (drawn per seed) 2 of the preferred replicas are reclaimed after a 2-minute notice and the preferred ' +
    'class has no spare capacity for 10-20 minutes; the fallbacks run at 0.7x their envelopes; demand 30% up from minute 30.',
  { ...COMMON, surge: 1.3, lostReplicas: 2, fallbackSpeed: 0.7 }, (_seed, p, rng) => {
    const reclaims: number[] = [];
    for (let t = 40 * MIN; t < (p.durationMinutes - 30) * MIN; t += rng.int(25, 35) * MIN) reclaims.push(t);
    const notice = 120;
    const windows = reclaims.map((at) => [at - notice, at + rng.int(10, 20) * MIN] as const);
    return llm({
      id: 'H3', title: 'Held out: spot-like reclaims, slower fallbacks', p, profile: ramp(30 * MIN, p.surge),
      // The reclaimed capacity is gone: the class keeps what it had minus the reclaimed replicas until the window ends.
      availability: { l40s: capWindows(windows, 6 - p.lostReplicas) },
      interruptions: reclaims.map((at) => ({ className: 'l40s', at, replicas: p.lostReplicas, noticeSeconds: notice })),
      speedFactors: { inf2: p.fallbackSpeed, a10g: p.fallbackSpeed },
      events: windows.map(([onset, restoration]) => ({ className: 'l40s', onset, restoration })),
    });
  });

export const H4 = defineScenario('H4', 'Held out: flapping at 1-10 minute half-periods',
  'For two hours the preferred class alternates between no spare capacity and capacity, each state lasting 1 to 10 minutes (drawn per seed), at demand 50% up.',
  { ...COMMON, durationMinutes: 200, flapMinutes: 120, surge: 1.5, preferredInstancesDuringShortage: 5, halfPeriodMinutes: NaN }, (_seed, p, rng) => {
    const onset = p.onsetMinute * MIN;
    const half = drawn(p, 'halfPeriodMinutes', () => rng.int(1, 10)) * MIN;
    const end = onset + p.flapMinutes * MIN;
    const steps: AvailabilityStep[] = [{ at: 0, instances: Infinity }];
    for (let t = onset, on = false; t < end; t += half, on = !on) {
      steps.push({ at: t, instances: on ? Infinity : p.preferredInstancesDuringShortage });
    }
    steps.push({ at: end, instances: Infinity });
    return llm({ id: 'H4', title: 'Held out: flapping at 1-10 minute half-periods', p, profile: ramp(onset - 10 * MIN, p.surge),
      availability: { l40s: steps }, events: [{ className: 'l40s', onset, restoration: end }] });
  });

export const H5 = defineScenario('H5', 'Held out: shortage at the diurnal peak, bursty traffic',
  'The Azure code trace\'s burstiness (inter-arrival CV about 13) on a 20x diurnal swing peaking 30 minutes into a 60-minute preferred shortage.',
  { ...COMMON, shortageMinutes: 60, preferredInstancesDuringShortage: 5 }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const profile = diurnalProfile({ fromSeconds: 0, toSeconds: p.durationMinutes * MIN, peakAtSeconds: s.onset + 30 * MIN, swing: 20 })
      .map((x) => ({ at: x.at, multiplier: x.multiplier * 1.8 }));
    const built = llm({ id: 'H5', title: 'Held out: shortage at the diurnal peak, bursty traffic', p, profile, availability: s.availability, events: s.events });
    return { ...built, workload: { ...built.workload, pattern: 'bursty' } };
  });

export const H6 = defineScenario('H6', 'Held out: partial recovery',
  'Demand 80% up during a 30-60 minute preferred shortage (5 instances); the preferred class then returns with half its quota (6 instances), short of what the demand needs.',
  { ...SHORTAGE, recoveredInstances: 6 }, (_seed, p, rng) => {
    const onset = p.onsetMinute * MIN;
    const restoration = onset + drawn(p, 'shortageMinutes', () => rng.int(30, 60)) * MIN;
    return llm({
      id: 'H6', title: 'Held out: partial recovery', p, profile: ramp(onset, p.surge),
      availability: {
        l40s: [
          { at: 0, instances: Infinity },
          { at: onset, instances: p.preferredInstancesDuringShortage },
          { at: restoration, instances: p.recoveredInstances },
        ],
      },
      events: [{ className: 'l40s', onset, restoration: p.durationMinutes * MIN }],
    });
  });

export const H7 = defineScenario('H7', 'Held out: two shortages 15 minutes apart',
  'Demand 80% up; the preferred class is short for 30 minutes, recovers for 15, and is short again for 30.',
  { ...SHORTAGE, shortageMinutes: 30, gapMinutes: 15 }, (_seed, p) => {
    const first = p.onsetMinute * MIN;
    const second = first + (p.shortageMinutes + p.gapMinutes) * MIN;
    const windows = [[first, first + p.shortageMinutes * MIN], [second, second + p.shortageMinutes * MIN]] as const;
    return llm({
      id: 'H7', title: 'Held out: two shortages 15 minutes apart', p, profile: ramp(first, p.surge),
      availability: { l40s: capWindows(windows, p.preferredInstancesDuringShortage) },
      events: windows.map(([onset, restoration]) => ({ className: 'l40s', onset, restoration })),
    });
  });

export const H8 = defineScenario('H8', 'Held out: long outputs',
  'A preferred shortage (30-90 minutes) under answers with p99 10x the mean, 1.26x longer on average than the contract declares.',
  SHORTAGE, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const built = llm({ id: 'H8', title: 'Held out: long outputs', p, profile: ramp(s.onset, p.surge), availability: s.availability, events: s.events });
    return { ...built, workload: { ...built.workload, outputTokens: LONG_OUTPUT } };
  });

/** The SageMaker example's endpoint (examples/sagemaker-llm/stack.ts): L40S and A10G pools of one variant, Inferentia2 alone. */
const EXAMPLE_VARIANTS = [{ name: 'preferred', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'] }];

export const H9 = defineScenario('H9', 'Held out: instance pools (the example endpoint)',
  'The SageMaker example\'s layout: L40S and A10G are instance pools of one variant, Inferentia2 a variant of its own. At onset '
  + '8 L40S instances get a 2-minute reclaim notice and no L40S is to be had for 30-90 minutes while demand rises 80%: the '
  + 'variant\'s scale-outs get A10G instances inside it. EKS has no pools: there every class is its own target group. '
  + 'preferredTarget sets the preferred variant\'s target concurrency per instance (NaN: the construct\'s default, the smallest of its pools; '
  + 'the construct refuses one above the smallest safe concurrency of its pool types, A10G\'s 8: a larger one is a what-if). '
  + 'perPoolTargets=1 scales each pool to its own target instead (the construct\'s scaling.perPoolTargets; with preferredTarget NaN).',
  { ...SHORTAGE, reclaimedReplicas: 8, preferredTarget: NaN, perPoolTargets: 0 }, (_seed, p, rng) => {
    const s = preferredShortage(p, rng);
    const target = Number.isNaN(p.preferredTarget) ? {} : { targetConcurrencyPerInstance: p.preferredTarget };
    if (p.perPoolTargets !== 0 && p.perPoolTargets !== 1) throw new Error(`H9: perPoolTargets is ${p.perPoolTargets}; allowed: 0 or 1`);
    const perPool = p.perPoolTargets === 1 ? { perPoolTargets: true } : {};
    return llm({
      id: 'H9', title: 'Held out: instance pools (the example endpoint)', p, profile: ramp(s.onset, p.surge), availability: s.availability,
      events: s.events, variants: [{ ...EXAMPLE_VARIANTS[0], ...target, ...perPool }, EXAMPLE_VARIANTS[1]],
      // The notice comes at onset, when the capacity is already gone: their replacements find none.
      interruptions: [{ className: 'l40s', at: s.onset + 120, replicas: p.reclaimedReplicas, noticeSeconds: 120 }],
    });
  });

/**
 * Traces in the style of the ones the policy is measured on outside the repository: run with the suite (`bench`), but
 * not tuned on; H1 and H2 came first, H3-H8 cover issue 22's list, H9 the SageMaker example's instance pools.
 */
export const HELD_OUT: readonly ScenarioDefinition[] = [H1, H2, H3, H4, H5, H6, H7, H8, H9];

export function findScenario(id: string): ScenarioDefinition {
  const s = [...SCENARIOS, ...HELD_OUT].find((x) => x.id.toLowerCase() === id.toLowerCase());
  if (!s) throw new Error(`Unknown scenario '${id}'. Known: ${[...SCENARIOS, ...HELD_OUT].map((x) => x.id).join(', ')}`);
  return s;
}
