import { type PolicyConfig } from '../core/policy/types';
import { BASELINES } from './baselines';
import { LATENCY_BUCKETS, histogramPercentile } from './histogram';
import { libraryPolicy } from './library-policy';
import { computeMetrics, type RunMetrics } from './metrics';
import { type ScenarioInstance } from './model';
import { type PlatformKind, type PlatformOverrides } from './platform';
import { type PolicyFactory } from './policy';
import { findScenario, type ScenarioDefinition, type ScenarioParams } from './scenarios';
import { requireScenarioModule } from './scenario-file';
import { runSimulation, type RunResult } from './simulator';
import { estimate, type Estimate, pairedDifference } from './stats';
import { generateTrace } from './workload';
import { type ChartSeries } from '../core/report/chart-series';

/** The policies of the comparison, by name: the library's own first, the oracle last. */
export const POLICY_NAMES: readonly string[] = ['library', ...BASELINES.map((b) => b.name)];

export function policyFactory(name: string, libraryConfig: Partial<PolicyConfig> = {}): PolicyFactory {
  if (name === 'library') return libraryPolicy(libraryConfig);
  const b = BASELINES.find((x) => x.name === name);
  if (!b) throw new Error(`Unknown policy '${name}'. Known: ${POLICY_NAMES.join(', ')}`);
  return b.factory;
}

/** One unit of work: a scenario at one seed, every policy on the same trace (paired). */
export interface Job {
  readonly scenarioId: string;
  /** A module exporting a ScenarioDefinition (default export or `scenario`), for user-defined scenarios. */
  readonly scenarioFile?: string;
  readonly params?: ScenarioParams;
  readonly seed: number;
  readonly policies: readonly string[];
  /** Keep per-minute chart data of this seed's runs. */
  readonly charts: boolean;
  /** Overrides of the library policy's configuration (sensitivity runs). */
  readonly libraryConfig?: Partial<PolicyConfig>;
  /** The platform to run on. @default the scenario's own ('eks' unless it says otherwise) */
  readonly platform?: PlatformKind;
  /** Changed timing assumptions of the platform model (`--platform-param`). */
  readonly platformOverrides?: PlatformOverrides;
}

export interface JobResult {
  readonly scenarioId: string;
  readonly platform: PlatformKind;
  readonly title: string;
  readonly seed: number;
  readonly metrics: Record<string, RunMetrics>;
  readonly charts?: Record<string, ChartSeries>;
  readonly capacityEvents: ScenarioInstance['capacityEvents'];
  readonly arrivals: number;
  readonly wallSeconds: number;
  /** The service's end-to-end deadline, seconds (the SLO line on latency charts). */
  readonly deadlineSeconds: number;
}

export function loadScenario(job: Pick<Job, 'scenarioId' | 'scenarioFile'>): ScenarioDefinition {
  if (!job.scenarioFile) return findScenario(job.scenarioId);
  const mod = requireScenarioModule(job.scenarioFile) as { default?: ScenarioDefinition; scenario?: ScenarioDefinition };
  const def = mod.scenario ?? mod.default;
  if (!def || typeof def.build !== 'function') {
    throw new Error(`${job.scenarioFile} must export a ScenarioDefinition as 'scenario' or default (see defineScenario())`);
  }
  return def;
}

export function chartSeries(run: RunResult): ChartSeries {
  const s = run.series;
  const k = s.classCount;
  const share: number[][] = [];
  const ready: number[][] = [];
  const latency: Array<[number, number, number]> = [];
  const demand: number[] = [];
  const rejected: number[] = [];
  const merged = new Float64Array(LATENCY_BUCKETS);
  for (let m = 0; m < s.minutes; m++) {
    let total = 0;
    for (let c = 0; c < k; c++) total += s.routedTokens[m * k + c];
    share.push(Array.from({ length: k }, (_, c) => (total > 0 ? s.routedTokens[m * k + c] / total : 0)));
    ready.push(Array.from({ length: k }, (_, c) => s.readyReplicas[m * k + c]));
    merged.fill(0);
    let rej = 0;
    for (let c = 0; c < k; c++) {
      const off = (m * k + c) * LATENCY_BUCKETS;
      for (let b = 0; b < LATENCY_BUCKETS; b++) merged[b] += s.latency[off + b];
      rej += s.rejected[m * k + c];
    }
    latency.push([histogramPercentile(merged, 0, 0.5), histogramPercentile(merged, 0, 0.95), histogramPercentile(merged, 0, 0.99)]);
    demand.push(s.demandTokens[m] / 60);
    rejected.push(s.demandRequests[m] > 0 ? rej / s.demandRequests[m] : 0);
  }
  return { classNames: run.classNames, share, readyReplicas: ready, latency, modes: s.modes, demandTokensPerSecond: demand, rejectedShare: rejected };
}

/** Runs one job in this thread. */
export function runJob(job: Job): JobResult {
  const started = Date.now();
  const def = loadScenario(job);
  const built = def.build(job.seed, job.params);
  const scenario: ScenarioInstance = {
    ...built, ...(job.platform ? { platform: job.platform } : {}), ...(job.platformOverrides ? { platformOverrides: job.platformOverrides } : {}),
  };
  const trace = generateTrace(scenario.workload, scenario.durationSeconds, job.seed);
  const metrics: Record<string, RunMetrics> = {};
  const charts: Record<string, ChartSeries> = {};
  for (const name of job.policies) {
    const run = runSimulation(scenario, policyFactory(name, job.libraryConfig), { seed: job.seed, trace });
    metrics[name] = computeMetrics(run, scenario);
    if (job.charts) charts[name] = chartSeries(run);
  }
  return {
    scenarioId: scenario.id,
    platform: scenario.platform ?? 'eks',
    title: scenario.title,
    seed: job.seed,
    metrics,
    charts: job.charts ? charts : undefined,
    capacityEvents: scenario.capacityEvents,
    arrivals: trace.count,
    wallSeconds: (Date.now() - started) / 1000,
    deadlineSeconds: scenario.service.deadlineSeconds,
  };
}

export type MetricKey = keyof RunMetrics;

export interface PolicySummary {
  readonly policy: string;
  readonly metrics: Record<MetricKey, Estimate>;
  /** Per-seed values, in seed order (for pairing). */
  readonly values: Record<MetricKey, number[]>;
  /** (cost per 1M SLO-meeting tokens - oracle's) / oracle's, paired by seed. */
  readonly regret: Estimate;
  /** The same against the fleet-structure oracle (same standby and headroom as the plan): the policy's own regret. */
  readonly fleetRegret: Estimate;
  /** Seeds where SLO attainment was at least the oracle's (regret is a pure cost gap there). */
  readonly seedsAtOrAboveOracleSlo: number;
  /** Paired differences to the library's policy (this - library). */
  readonly vsLibrary?: { readonly sloAttainment: Estimate; readonly usdPerMillionSloTokens: Estimate };
}

export interface ScenarioSummary {
  readonly scenarioId: string;
  readonly platform: PlatformKind;
  readonly title: string;
  readonly seeds: readonly number[];
  readonly arrivalsPerRun: number;
  readonly policies: readonly PolicySummary[];
  readonly charts?: Record<string, ChartSeries>;
  readonly chartSeed?: number;
  readonly capacityEvents: ScenarioInstance['capacityEvents'];
  readonly deadlineSeconds: number;
}

/** Aggregates the jobs of one scenario over seeds. */
export function summarise(results: readonly JobResult[], policies: readonly string[]): ScenarioSummary {
  const sorted = [...results].sort((a, b) => a.seed - b.seed);
  const keys = Object.keys(sorted[0].metrics[policies[0]]) as MetricKey[];
  const valuesOf = (policy: string, key: MetricKey) => sorted.map((r) => r.metrics[policy][key]);
  const hasOracle = policies.includes('oracle');
  const summaries = policies.map((policy): PolicySummary => {
    const values = Object.fromEntries(keys.map((k) => [k, valuesOf(policy, k)])) as Record<MetricKey, number[]>;
    const metrics = Object.fromEntries(keys.map((k) => [k, estimate(values[k])])) as Record<MetricKey, Estimate>;
    const oracleCost = hasOracle ? valuesOf('oracle', 'usdPerMillionSloTokens') : [];
    const oracleSlo = hasOracle ? valuesOf('oracle', 'sloAttainment') : [];
    const regret = hasOracle ? estimate(values.usdPerMillionSloTokens.map((c, i) => c / oracleCost[i] - 1)) : estimate([]);
    const fleetCost = policies.includes('fleet-oracle') ? valuesOf('fleet-oracle', 'usdPerMillionSloTokens') : [];
    const fleetRegret = fleetCost.length > 0 ? estimate(values.usdPerMillionSloTokens.map((c, i) => c / fleetCost[i] - 1)) : estimate([]);
    return {
      policy,
      metrics,
      values,
      regret,
      fleetRegret,
      seedsAtOrAboveOracleSlo: hasOracle ? values.sloAttainment.filter((v, i) => v >= oracleSlo[i]).length : 0,
      vsLibrary: policies.includes('library') && policy !== 'library' ? {
        sloAttainment: pairedDifference(values.sloAttainment, valuesOf('library', 'sloAttainment')),
        usdPerMillionSloTokens: pairedDifference(values.usdPerMillionSloTokens, valuesOf('library', 'usdPerMillionSloTokens')),
      } : undefined,
    };
  });
  const withCharts = sorted.find((r) => r.charts);
  return {
    scenarioId: sorted[0].scenarioId,
    platform: sorted[0].platform,
    title: sorted[0].title,
    seeds: sorted.map((r) => r.seed),
    arrivalsPerRun: sorted.reduce((a, r) => a + r.arrivals, 0) / sorted.length,
    policies: summaries,
    charts: withCharts?.charts,
    chartSeed: withCharts?.seed,
    capacityEvents: sorted[0].capacityEvents,
    deadlineSeconds: sorted[0].deadlineSeconds,
  };
}

/** A scenario's definition, to list them. */
export function describeScenario(def: ScenarioDefinition): string {
  const params = Object.entries(def.defaults).map(([k, v]) => `${k}=${Number.isNaN(v) ? 'per-seed' : v}`).join(' ');
  return `${def.id.padEnd(4)} ${def.title}: ${def.description}${params ? `\n     params: ${params}` : ''}`;
}
