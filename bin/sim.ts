#!/usr/bin/env node
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { erlangCMeanWait, erlangCWaitQuantile } from '../lib/sim/erlang';
import { runJobs } from '../lib/sim/parallel';
import { degradationReport, formatDegradationReport } from '../lib/sim/planning';
import { type PlatformKind, type PlatformOverrides, PLATFORMS, platformOverrideProblems, SAGEMAKER_ONLY_OVERRIDES } from '../lib/sim/platform';
import {
  htmlReport, markdownReport, PLATFORM_LABELS, reportChecks, scenarioCharts, type SuiteReport, terminalTable, verdict,
} from '../lib/sim/report';
import { HELD_OUT, SCENARIOS, type ScenarioDefinition, type ScenarioParams } from '../lib/sim/scenarios';
import { llamaChatService, sd21Service, type ServiceDefinition } from '../lib/sim/services';
import { computeMetrics } from '../lib/sim/metrics';
import { runSimulation } from '../lib/sim/simulator';
import {
  describeScenario, type Job, loadScenario, policyFactory, POLICY_NAMES, type ScenarioSummary, summarise,
} from '../lib/sim/suite';
import { traceHeadline, traceLines } from '../lib/sim/trace';
import { generateTrace } from '../lib/sim/workload';
import { simulateMmc } from '../lib/sim/validation';
import { type PolicyConfig } from '../lib/core/policy/types';
import { POLICY_OPTION_OF } from '../lib/core/policy/defaults';
import { type ServiceContract, serviceContractProblems } from '../lib/core/service/contract';
import { type OptionSpec, parseCommandLine, UsageError } from './args';
import { CONSOLE_IO, type Io, runAsProcess } from './command';

const USAGE = `cdk-capacity-sim: simulate capacity shortages and compare routing policies (seeded, offline)

Usage:
  cdk-capacity-sim list                              scenarios, their parameters, and the policies
  cdk-capacity-sim run <scenario> [options]          one scenario (S0..S9, P1, H1..H9), every policy, N seeds
  cdk-capacity-sim bench [options]                   the whole suite (S0..S9, P1 and the held-out traces H1..H9)
  cdk-capacity-sim trace <scenario> [--seed <n>] [--platforms eks|sagemaker] [--policies a,b] [--from <min>] [--to <min>]
                                                     one run minute by minute: weights, replicas, shedding, the
                                                     policy's reasons (also --param, --scenario-file, --library-config,
                                                     --platform-param)
  cdk-capacity-sim plan [--service llama3-chat|sd21] [--file <module>] [--peak <req/s>]
                                                     capacity plan, cost and how the service degrades
  cdk-capacity-sim validate [--arrivals <n>] [--seed <n>] [--json]
                                                     queueing core against Erlang C (default 10,000,000 arrivals)

Options:
  --seeds <n|a-b|a,b,c>    seeds (default 10: seeds 1-10); comparisons are paired by seed
  --policies <a,b,...>     policies (default all: ${POLICY_NAMES.join(', ')})
  --scenarios <a,b,...>    bench only: a subset of scenarios
  --platforms <a,b>        eks, sagemaker or both (default both): what each construct deploys by default
  --param <key=value>      override a scenario parameter (repeatable): one every scenario run has (see 'list')
  --scenario-file <module> run a user-defined scenario (a module exporting a ScenarioDefinition)
  --workers <n>            worker threads, at least 1 (default: number of CPUs)
  --out <dir>              where the HTML report, SVG charts, Markdown and JSON go (default reports)
  --chart-seed <n>         seed whose runs are charted, one of --seeds (default: the first)
  --library-config <k=v>   override a numeric PolicyConfig field of the library's policy (repeatable), e.g. headroom=0.1
  --platform-param <k=v>   change an assumed timing (repeatable, whole seconds): reconcilerPhaseSeconds (0-59, any
                           platform: the Reconciler's scheduled runs at this second of the minute; default: drawn from
                           the seed); SageMaker runs only:
                           alarmPhaseSeconds (0-59: every variant's one-minute alarms evaluated at this second of
                           the minute, its 10 s alarms at this second modulo 10 of every 10 s; default: each
                           variant's drawn from the seed), rollbackSeconds (0-25: the mean time
                           RollingBack lasts after a provisioning timeout, each drawn uniform on (0, 2 x mean);
                           default 10), writableRunSeconds (0-60: the Reconciler's run on the endpoint's IN_SERVICE
                           event; default 5), weightsSeconds (0-120: how long a weight update keeps the endpoint
                           Updating, the written weights taking effect at its end; default 30), scaleInSeconds
                           (0-600: how long a scale-in keeps the endpoint Updating; default 60)
  -h, --help               this text
`;

interface Args {
  readonly positional: string[];
  readonly flags: Map<string, string[]>;
}

const RUN_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  seeds: { type: 'string' },
  policies: { type: 'string' },
  param: { type: 'string', multiple: true },
  'scenario-file': { type: 'string' },
  workers: { type: 'string' },
  out: { type: 'string' },
  'chart-seed': { type: 'string' },
  'library-config': { type: 'string', multiple: true },
  'platform-param': { type: 'string', multiple: true },
  platforms: { type: 'string' },
};
/** The options each command takes, and how many positional arguments after the command. */
const COMMANDS: Readonly<Record<string, { readonly options: Readonly<Record<string, OptionSpec>>; readonly positionals: number }>> = {
  list: { options: {}, positionals: 0 },
  run: { options: RUN_OPTIONS, positionals: 1 },
  bench: { options: { ...RUN_OPTIONS, scenarios: { type: 'string' } }, positionals: 0 },
  trace: {
    options: {
      seed: { type: 'string' }, platforms: { type: 'string' }, policies: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
      param: { type: 'string', multiple: true }, 'scenario-file': { type: 'string' }, 'library-config': { type: 'string', multiple: true },
      'platform-param': { type: 'string', multiple: true },
    },
    positionals: 1,
  },
  plan: { options: { service: { type: 'string' }, file: { type: 'string' }, peak: { type: 'string' } }, positionals: 0 },
  validate: { options: { arrivals: { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' } }, positionals: 0 },
};

/** Strict: an option the command does not take (a typo, or another command's option) fails with a UsageError. */
function parseArgs(argv: readonly string[]): Args {
  const [command, ...rest] = argv;
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (!spec) return { positional: command === undefined ? [] : [command], flags: new Map() };
  const { values, positionals, repeated } = parseCommandLine(command, rest, spec.options, spec.positionals);
  if (repeated.length > 0) throw new UsageError(`${command}: ${repeated.join(', ')} given more than once`);
  const flags = new Map<string, string[]>();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) flags.set(key, Array.isArray(value) ? value.map(String) : [String(value)]);
  }
  return { positional: [command, ...positionals], flags };
}

const flag = (args: Args, key: string): string | undefined => args.flags.get(key)?.at(-1);

/** `--seeds`: a count (10: seeds 1-10), a range (1-10) or a list (1,2,3); at least one seed, each a whole number. */
function parseSeeds(spec: string | undefined): number[] {
  if (spec === undefined) return Array.from({ length: 10 }, (_, i) => i + 1);
  const bad = (why: string) => new Error(`--seeds '${spec}': ${why}; use a count of at least 1 (10: seeds 1-10), a range from low to high (1-10) `
    + 'or a list of whole numbers (1,2,3)');
  if (/^\d+$/.test(spec)) {
    if (Number(spec) < 1) throw bad('no seed to run');
    return Array.from({ length: Number(spec) }, (_, i) => i + 1);
  }
  const range = /^(\d+)-(\d+)$/.exec(spec);
  if (range) {
    if (Number(range[2]) < Number(range[1])) throw bad('the range runs backwards');
    return Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i);
  }
  const list = spec.split(',').map((item) => wholeNumberValue(item.trim()));
  if (list.some((seed) => seed === undefined)) throw bad('not a seed');
  return list as number[];
}

/** A seed or a minute as every flag takes one: a whole number written as digits (`Number('')` is 0, `Number('1e3')` 1000). */
function wholeNumberValue(value: string): number | undefined {
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

/** A count of at least 1 (`--workers`), or the fallback when the flag is absent. */
function parseCount(args: Args, key: string, fallback: number, what: string): number {
  const value = flag(args, key);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new Error(`--${key} '${value}': not a count of ${what}; allowed: a whole number from 1`);
  return Number(value);
}

/** A minute of `trace` (`--from`, `--to`): digits only, as seeds (`Number('')` is 0, `Number('1e1')` 10), or the fallback. */
function minuteOf(args: Args, key: string, fallback: number): number {
  const value = flag(args, key);
  if (value === undefined) return fallback;
  const minute = wholeNumberValue(value);
  if (minute === undefined) throw new Error(`trace: --${key} '${value}': must be a whole number of minutes (digits only)`);
  return minute;
}

/**
 * `--seed` of one run: a whole number written as digits, as `--seeds` takes them (`Number('abc')` is NaN and
 * `Number('')` is 0, either of which a run would take for a seed). @default 1
 */
function seedOf(args: Args, command: string): number {
  const value = flag(args, 'seed');
  if (value === undefined) return 1;
  const seed = wholeNumberValue(value);
  if (seed === undefined) throw new Error(`${command}: --seed '${value}': must be a whole number (digits only)`);
  return seed;
}

/**
 * `--peak`: a decimal number the contract's own rule for peakRequestsPerSecond admits (serviceContractProblems, the
 * rule a construct applies at synth), so `plan` never reports on a peak of NaN or of -1 requests/s.
 */
function withPeak(args: Args, contract: ServiceContract): ServiceContract {
  const value = flag(args, 'peak');
  if (value === undefined) return contract;
  // As --param: '' would read as 0, '0x10' or '1e3' as numbers nobody meant to write.
  const withIt = { ...contract, peakRequestsPerSecond: /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN };
  const problem = serviceContractProblems(withIt).find((p) => p.field === 'contract.peakRequestsPerSecond');
  if (problem) throw new Error(`--peak '${value}': not a peak rate; ${problem.message.slice(problem.message.indexOf('allowed:'))}`);
  return withIt;
}

function parseParams(args: Args, key = 'param'): ScenarioParams {
  const out: Record<string, number> = {};
  for (const p of args.flags.get(key) ?? []) {
    const at = p.indexOf('=');
    const [k, v] = at < 0 ? [p, ''] : [p.slice(0, at), p.slice(at + 1).trim()];
    // A name, and a decimal number: '' would read as 0, '0x10' or '1e3' as numbers nobody meant to write.
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(k) || !/^-?\d+(\.\d+)?$/.test(v)) throw new Error(`--${key} '${p}': use key=number`);
    out[k] = Number(v);
  }
  return out;
}

/**
 * `--param`: each key a parameter of every scenario the command runs (its `defaults`, which `list` prints): a scenario
 * merges the parameters over its defaults, so a key none of them has would run the defaults without a word.
 */
function scenarioParams(args: Args, defs: readonly ScenarioDefinition[]): ScenarioParams {
  const params = parseParams(args);
  const common = Object.keys(defs[0]?.defaults ?? {}).filter((k) => defs.every((d) => k in d.defaults));
  for (const key of Object.keys(params)) {
    const lacking = defs.filter((d) => !(key in d.defaults)).map((d) => d.id || 'the scenario file');
    if (lacking.length > 0) {
      throw new Error(`--param ${key}: not a parameter of ${lacking.join(', ')}; allowed: ${common.join(', ') || 'none'}`
        + `${defs.length > 1 ? ' (the parameters every scenario run has; --scenarios runs fewer)' : ''}; see 'list'`);
    }
  }
  return params;
}

/** `--library-config`: each key a numeric field of PolicyConfig (a key it does not have would change nothing). */
function libraryConfigOf(args: Args): Partial<PolicyConfig> {
  const overrides = parseParams(args, 'library-config');
  const fields = Object.keys(POLICY_OPTION_OF);
  const unknown = Object.keys(overrides).filter((k) => !fields.includes(k));
  if (unknown.length > 0) throw new Error(`--library-config ${unknown.join(', ')}: not a field of PolicyConfig; allowed: ${fields.join(', ')}`);
  return overrides;
}

/**
 * `--platform-param`: assumed timings, checked before any job runs. SageMaker's update timings apply to SageMaker runs
 * only: asked for with none, they would be silently ignored.
 */
function platformOverridesFor(args: Args, platforms: readonly PlatformKind[]): PlatformOverrides | undefined {
  const overrides = parseParams(args, 'platform-param');
  const problems = platformOverrideProblems(overrides);
  if (problems.length > 0) throw new Error(`--platform-param: ${problems.join('; ')}`);
  if (Object.keys(overrides).length === 0) return undefined;
  const sagemakerOnly = Object.keys(overrides).filter((k) => SAGEMAKER_ONLY_OVERRIDES.includes(k));
  if (sagemakerOnly.length > 0 && !platforms.includes('sagemaker')) {
    throw new Error(`--platform-param ${sagemakerOnly.join(', ')} applies to SageMaker runs only; this one runs ${platforms.join(', ')} (add --platforms sagemaker)`);
  }
  return overrides;
}

/** A suite scenario's id as written in the suite, whatever its case (an unknown name is passed on for the lookup to reject). */
function suiteScenarioId(name: string): string {
  return [...SCENARIOS, ...HELD_OUT].find((s) => s.id.toLowerCase() === name.toLowerCase())?.id ?? name;
}

/** `--policies`, each checked against the known policies. */
function parsePolicies(spec: string | undefined, fallback: readonly string[]): string[] {
  const policies = spec?.split(',') ?? [...fallback];
  for (const p of policies) if (!POLICY_NAMES.includes(p)) throw new Error(`Unknown policy '${p}'. Known: ${POLICY_NAMES.join(', ')}`);
  return policies;
}

function parsePlatforms(spec: string | undefined): PlatformKind[] {
  if (!spec) return [...PLATFORMS];
  const list = spec.split(',').map((p) => p.trim().toLowerCase());
  const unknown = list.filter((p) => !(PLATFORMS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`--platforms '${spec}': known platforms are ${PLATFORMS.join(', ')}`);
  return list as PlatformKind[];
}

/**
 * Relative CPU of a job, for the ETA: arrivals (duration x mean rate) x policies. P1 runs a day and a half, so jobs
 * differ twentyfold and a count of jobs would mislead.
 */
function jobWeight(job: Job): number {
  const scenario = loadScenario(job).build(job.seed, job.params);
  return (scenario.durationSeconds * scenario.workload.meanRatePerSecond + 1) * job.policies.length;
}

function fmtDuration(seconds: number): string {
  return seconds >= 90 ? `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s` : `${seconds.toFixed(0)}s`;
}

async function compare(io: Io, argv: readonly string[], args: Args, scenarioIds: readonly string[], scenarioFile?: string): Promise<void> {
  const platforms = parsePlatforms(flag(args, 'platforms'));
  const seeds = parseSeeds(flag(args, 'seeds'));
  const policies = parsePolicies(flag(args, 'policies'), POLICY_NAMES);
  const params = scenarioParams(args, scenarioIds.map((scenarioId) => loadScenario({ scenarioId, scenarioFile })));
  const libraryConfig = libraryConfigOf(args);
  const platformOverrides = platformOverridesFor(args, platforms);
  const workers = parseCount(args, 'workers', cpus().length, 'worker threads');
  const out = resolve(flag(args, 'out') ?? 'reports');
  const chartFlag = flag(args, 'chart-seed');
  const chartSeed = chartFlag === undefined ? seeds[0] : wholeNumberValue(chartFlag);
  if (chartSeed === undefined || !seeds.includes(chartSeed)) throw new Error(`--chart-seed '${flag(args, 'chart-seed')}': not a seed of this run; allowed: ${seeds.join(', ')}`);
  const jobs: Job[] = scenarioIds.flatMap((scenarioId) => platforms.flatMap((platform) => seeds.map((seed) => ({
    scenarioId, scenarioFile, params, seed, policies, charts: seed === chartSeed, libraryConfig, platform,
    ...(platformOverrides ? { platformOverrides } : {}),
  }))));
  const weights = jobs.map(jobWeight);
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  // Longest jobs first (P1 runs a day and a half) so the pool ends together.
  const order = jobs.map((_, i) => i).sort((a, b) => weights[b] - weights[a] || a - b);
  const started = Date.now();
  const cpuStart = process.cpuUsage();
  const load = loadavg()[0];
  io.err(`Running ${scenarioIds.length} scenario(s) x ${platforms.length} platform(s) x ${seeds.length} seeds x ${policies.length} policies ` +
    `on ${workers} worker thread(s)...`);
  let doneWeight = 0;
  const ordered = await runJobs(order.map((i) => jobs[i]), {
    concurrency: workers,
    onProgress: (done, total, last, index) => {
      const elapsed = (Date.now() - started) / 1000;
      // Weighted by job size: the work done so far predicts the work left, not the count of jobs.
      doneWeight += weights[order[index]];
      const eta = (elapsed / doneWeight) * (totalWeight - doneWeight);
      io.err(`[${String(done).padStart(String(total).length)}/${total}] ${last.scenarioId} ${PLATFORM_LABELS[last.platform]} seed ${last.seed}: ` +
        `${last.arrivals.toLocaleString('en-US')} arrivals x ${policies.length} policies in ${last.wallSeconds.toFixed(1)} s ` +
        `(elapsed ${fmtDuration(elapsed)}, eta ${fmtDuration(eta)})`);
    },
  });
  const wallSeconds = (Date.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const results = order.map((_, k) => ordered[order.indexOf(k)]);
  const summaries: ScenarioSummary[] = scenarioIds.flatMap((id) => platforms.map((platform) =>
    summarise(results.filter((_, i) => jobs[i].scenarioId === id && jobs[i].platform === platform), policies)));
  const descriptions = Object.fromEntries(scenarioIds.map((id) => [id, loadScenario({ scenarioId: id, scenarioFile }).description]));
  const command = `cdk-capacity-sim ${argv.join(' ')}`;
  // A user's scenario file is reported, not graded against the library's own targets.
  const report: SuiteReport = {
    command, seeds, wallSeconds, cpuSeconds, loadAverage: load, workers, scenarios: summaries, descriptions,
    libraryTargets: scenarioFile === undefined,
  };

  for (const s of summaries) io.out(`\n${terminalTable(s)}`);
  const checks = reportChecks(report);
  if (checks.length > 0) {
    io.out('\nTargets of the library\'s policy:');
    for (const c of checks) {
      io.out(`  ${c.met ? 'met   ' : 'MISSED'} ${c.scenarioId} ${PLATFORM_LABELS[c.platform]} ${c.target}: ${c.value}${c.miss ? ` (${c.miss})` : ''}`);
    }
  }
  io.out(`\n${verdict(report)}`);
  mkdirSync(out, { recursive: true });
  for (const s of summaries) {
    for (const [name, svg] of Object.entries(scenarioCharts(s))) writeFileSync(join(out, `${s.scenarioId}-${s.platform}-${name}.svg`), svg);
  }
  writeFileSync(join(out, 'index.html'), htmlReport(report));
  writeFileSync(join(out, 'results.md'), markdownReport(report));
  writeFileSync(join(out, 'results.json'), JSON.stringify({ ...report, scenarios: summaries.map((s) => ({ ...s, charts: undefined })) }, null, 1));
  io.out(`\nWall time ${fmtDuration(wallSeconds)} (${wallSeconds.toFixed(1)} s) on ${workers} worker thread(s), ` +
    `CPU time ${cpuSeconds.toFixed(0)} s, load average ${load.toFixed(1)} at start on ${cpus().length} CPUs. ` +
    `Report: ${join(out, 'index.html')}, tables: ${join(out, 'results.md')}`);
}

/** One scenario, one seed, one platform: each policy's headline, then its run minute by minute (`traceLines`). */
function trace(io: Io, args: Args, target: string | undefined): void {
  const file = flag(args, 'scenario-file');
  if (!file && !target) throw new Error('trace: which scenario? (S0..S9, P1, H1..H9; see list)');
  const def = loadScenario(file ? { scenarioId: '', scenarioFile: resolve(file) } : { scenarioId: suiteScenarioId(target!) });
  const platforms = parsePlatforms(flag(args, 'platforms') ?? 'eks');
  if (platforms.length !== 1) throw new Error(`trace: --platforms '${flag(args, 'platforms')}': trace runs one platform (eks or sagemaker)`);
  const seed = seedOf(args, 'trace');
  const policies = parsePolicies(flag(args, 'policies'), ['library']);
  const platformOverrides = platformOverridesFor(args, platforms);
  const libraryConfig = libraryConfigOf(args);
  const scenario = { ...def.build(seed, scenarioParams(args, [def])), platform: platforms[0], ...(platformOverrides ? { platformOverrides } : {}) };
  const from = minuteOf(args, 'from', 0);
  const to = minuteOf(args, 'to', Math.ceil(scenario.durationSeconds / 60));
  if (to <= from) throw new Error(`trace: --from ${from} --to ${to}: minutes, from before to`);
  const arrivals = generateTrace(scenario.workload, scenario.durationSeconds, seed);
  io.out(`${scenario.id} ${PLATFORM_LABELS[platforms[0]]} seed ${seed}: ${scenario.title}; capacity events ${JSON.stringify(scenario.capacityEvents ?? [])}`);
  for (const policy of policies) {
    const run = runSimulation(scenario, policyFactory(policy, libraryConfig), { seed, trace: arrivals });
    io.out(`\n${traceHeadline(policy, computeMetrics(run, scenario))}`);
    for (const line of traceLines(run, from, to)) io.out(line);
  }
}

function plan(io: Io, args: Args): void {
  const file = flag(args, 'file');
  let service: Pick<ServiceDefinition, 'contract' | 'classes'>;
  if (file) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(resolve(file)) as { default?: ServiceDefinition; service?: ServiceDefinition };
    const def = mod.service ?? mod.default;
    if (!def?.contract || !def.classes) throw new Error(`${file} must export { contract, classes } (a ServiceDefinition) as 'service' or default`);
    service = def;
  } else {
    const name = flag(args, 'service') ?? 'llama3-chat';
    const services: Record<string, () => ServiceDefinition> = { 'llama3-chat': llamaChatService, 'sd21': sd21Service };
    if (!services[name]) throw new Error(`--service '${name}': known services are ${Object.keys(services).join(', ')}; or pass --file`);
    service = services[name]();
  }
  const contract = withPeak(args, service.contract);
  io.out(formatDegradationReport(contract, service.classes, degradationReport(contract, service.classes)));
}

function validate(io: Io, args: Args): number {
  const arrivals = parseCount(args, 'arrivals', 10_000_000, 'arrivals');
  const seed = seedOf(args, 'validate');
  const json = flag(args, 'json') === 'true';
  if (!json) io.out(`M/M/c through the simulator core, ${arrivals.toLocaleString('en-US')} arrivals per row, seed ${seed} (mu = 1):`);
  let ok = true;
  const rows = [];
  for (const [c, rho] of [[1, 0.8], [4, 0.8], [8, 0.8], [32, 0.9]]) {
    const t = Date.now();
    const r = simulateMmc(c, rho, arrivals, seed);
    rows.push({ c, rho, ...r, referenceMeanWait: erlangCMeanWait(c, rho), referenceP99Wait: erlangCWaitQuantile(c, rho, 0.99) });
    if (json) continue;
    const mean = erlangCMeanWait(c, rho);
    const p99 = erlangCWaitQuantile(c, rho, 0.99);
    const dMean = r.meanWait / mean - 1;
    const dP99 = r.p99Wait / p99 - 1;
    const pass = Math.abs(dMean) <= 0.02 && Math.abs(dP99) <= 0.03;
    ok &&= pass;
    io.out(`  c=${String(c).padStart(2)} rho=${rho}: E[Wq] ${r.meanWait.toFixed(4)} vs ${mean.toFixed(4)} (${(dMean * 100).toFixed(2)}%, ` +
      `se ${(r.meanWaitStdError / mean * 100).toFixed(2)}%), p99 ${r.p99Wait.toFixed(3)} vs ${p99.toFixed(3)} (${(dP99 * 100).toFixed(2)}%) ` +
      `${pass ? 'within 2%/3%' : 'OUTSIDE 2%/3%'} [${((Date.now() - t) / 1000).toFixed(1)} s]`);
  }
  if (json) io.out(JSON.stringify(rows));
  return json || ok ? 0 : 1;
}

/**
 * The command line: its exit code (0 ok or help, 1 a failure or a bad value, 2 an unknown command). Runs in-process
 * for tests; the process runs it when this file is the entry point.
 */
export async function main(argv: readonly string[], io: Io = CONSOLE_IO): Promise<number> {
  try {
    return await command(argv, io);
  } catch (e) {
    io.err(e instanceof Error ? e.message : String(e));
    return 1;
  }
}

async function command(argv: readonly string[], io: Io): Promise<number> {
  // Help is an answer, not an error: exit 0 wherever it is asked for.
  if (argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help') {
    io.out(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
  const [name, target] = args.positional;
  switch (name) {
    case 'list':
      for (const s of [...SCENARIOS, ...HELD_OUT]) io.out(describeScenario(s));
      io.out(`\nPolicies: ${POLICY_NAMES.join(', ')}`);
      return 0;
    case 'run': {
      const file = flag(args, 'scenario-file');
      if (file) {
        const abs = resolve(file);
        await compare(io, argv, args, [loadScenario({ scenarioId: '', scenarioFile: abs }).id], abs);
        return 0;
      }
      if (!target) throw new Error('run: which scenario? (S0..S9, P1, H1..H9; see list)');
      await compare(io, argv, args, [suiteScenarioId(target)]);
      return 0;
    }
    case 'bench': {
      const only = flag(args, 'scenarios')?.split(',').map((s) => s.toUpperCase());
      // The suite and the held-out traces (run with it, never tuned on).
      const ids = [...SCENARIOS, ...HELD_OUT].map((s) => s.id);
      await compare(io, argv, args, ids.filter((id) => !only || only.includes(id)));
      return 0;
    }
    case 'trace':
      trace(io, args, target);
      return 0;
    case 'plan':
      plan(io, args);
      return 0;
    case 'validate':
      return validate(io, args);
    default:
      io.out(USAGE);
      return name ? 2 : 0;
  }
}

if (require.main === module) runAsProcess(main);
