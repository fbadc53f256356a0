import { type PlatformKind } from './platform';
import { type Estimate } from './stats';
import { type ChartSeries } from '../core/report/chart-series';
import { type PolicySummary, type ScenarioSummary } from './suite';
import { downsample, lineChart, modeTimeline } from './svg';

/** Formatting of the comparison, for the terminal, Markdown and HTML. */

function num(v: number, digits: number): string {
  if (v === Infinity) return 'never';
  if (!Number.isFinite(v)) return '-';
  return v.toFixed(digits);
}

/** A duration in seconds; "never" or "-" without a unit. */
function seconds(v: number): string {
  return Number.isFinite(v) ? `${num(v, 0)} s` : num(v, 0);
}

function withCi(e: Estimate, scale: number, digits: number): string {
  if (!Number.isFinite(e.mean)) return num(e.mean, digits);
  const ci = Number.isFinite(e.ci95) ? ` ±${(e.ci95 * scale).toFixed(digits)}` : '';
  const never = e.infinite > 0 ? ` (${e.infinite} never)` : '';
  return `${(e.mean * scale).toFixed(digits)}${ci}${never}`;
}

export const COLUMNS: ReadonlyArray<{ readonly head: string; readonly cell: (p: PolicySummary) => string }> = [
  { head: 'policy', cell: (p) => p.policy },
  { head: 'SLO % (all)', cell: (p) => withCi(p.metrics.sloAttainment, 100, 2) },
  { head: 'SLO % (admitted)', cell: (p) => withCi(p.metrics.sloAttainmentAdmitted, 100, 2) },
  { head: 'goodput tok/s', cell: (p) => num(p.metrics.goodputTokensPerSecond.mean, 0) },
  { head: '$/1M tok', cell: (p) => num(p.metrics.usdPerMillionTokensServed.mean, 3) },
  { head: '$/1M SLO tok', cell: (p) => withCi(p.metrics.usdPerMillionSloTokens, 1, 3) },
  { head: 'regret %', cell: (p) => (p.policy === 'oracle' ? '0' : withCi(p.regret, 100, 1)) },
  { head: 'fleet regret %', cell: (p) => (p.policy === 'fleet-oracle' ? '0' : withCi(p.fleetRegret, 100, 1)) },
  { head: 'rejected %', cell: (p) => withCi(p.metrics.rejectedShare, 100, 2) },
  { head: 'excess rej %', cell: (p) => withCi(p.metrics.excessRejectedShare, 100, 2) },
  { head: 'to fallback s', cell: (p) => withCi(p.metrics.timeToFallbackSeconds, 1, 0) },
  { head: 'floor s', cell: (p) => num(p.metrics.physicalFloorSeconds.mean, 0) },
  { head: 'to return s', cell: (p) => withCi(p.metrics.timeToReturnSeconds, 1, 0) },
  { head: 'modes/event', cell: (p) => withCi(p.metrics.modeChangesPerEvent, 1, 1) },
  { head: 'weight var', cell: (p) => num(p.metrics.totalWeightVariation.mean, 2) },
  { head: 'p95 s', cell: (p) => num(p.metrics.latencyP95Seconds.mean, 2) },
];

export const PLATFORM_LABELS: Readonly<Record<PlatformKind, string>> = { eks: 'EKS', sagemaker: 'SageMaker' };

/** The columns shown side by side for each platform. */
const PLATFORM_COLUMNS: ReadonlyArray<{ readonly head: string; readonly cell: (p: PolicySummary) => string }> = [
  { head: 'SLO %', cell: (p) => withCi(p.metrics.sloAttainment, 100, 2) },
  { head: '$/1M SLO tok', cell: (p) => withCi(p.metrics.usdPerMillionSloTokens, 1, 3) },
  { head: 'fleet regret %', cell: (p) => (p.policy === 'fleet-oracle' ? '0' : withCi(p.fleetRegret, 100, 1)) },
  { head: 'to fallback s', cell: (p) => withCi(p.metrics.timeToFallbackSeconds, 1, 0) },
  { head: 'modes/event', cell: (p) => withCi(p.metrics.modeChangesPerEvent, 1, 1) },
];

export function terminalTable(s: ScenarioSummary): string {
  const rows = [COLUMNS.map((c) => c.head), ...s.policies.map((p) => COLUMNS.map((c) => c.cell(p)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [`${s.scenarioId} ${s.title} on ${PLATFORM_LABELS[s.platform]} (${s.seeds.length} seeds, ` +
    `${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run)`, ...rows.map(line)].join('\n');
}

/** One scenario's key columns with one column per platform each (the summaries of one scenario, one per platform). */
export function platformTable(group: readonly ScenarioSummary[]): string {
  const heads = PLATFORM_COLUMNS.flatMap((c) => group.map((s) => `${c.head} ${PLATFORM_LABELS[s.platform]}`));
  const rows = group[0].policies.map((p0) => {
    const cells = PLATFORM_COLUMNS.flatMap((c) => group.map((s) => {
      const p = s.policies.find((x) => x.policy === p0.policy);
      return p ? c.cell(p) : '-';
    }));
    return `| ${p0.policy} | ${cells.join(' | ')} |`;
  });
  return [`| policy | ${heads.join(' | ')} |`, `|---|${heads.map(() => '---:').join('|')}|`, ...rows].join('\n');
}

/** Summaries grouped by scenario, in first-seen order (one per platform each). */
export function byScenario(summaries: readonly ScenarioSummary[]): ScenarioSummary[][] {
  const groups = new Map<string, ScenarioSummary[]>();
  for (const s of summaries) groups.set(s.scenarioId, [...(groups.get(s.scenarioId) ?? []), s]);
  return [...groups.values()];
}

export function markdownTable(s: ScenarioSummary): string {
  const rows = s.policies.map((p) => `| ${COLUMNS.map((c) => c.cell(p)).join(' | ')} |`);
  return [`| ${COLUMNS.map((c) => c.head).join(' | ')} |`, `|${COLUMNS.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows].join('\n');
}

/** One target of the library's policy (BENCHMARKS.md, "Targets of the library's policy"): met or missed, and by how much. */
export interface TargetCheck {
  readonly scenarioId: string;
  readonly platform: PlatformKind;
  readonly target: string;
  readonly value: string;
  readonly met: boolean;
  readonly miss: string;
}

/** Policies that know the future: references, not competitors. */
export const REFERENCE_POLICIES: readonly string[] = ['oracle', 'fleet-oracle'];

/** Scenarios (built-in and held-out) where nothing is short: any mode change there is a false alarm. */
const NO_SHORTAGE = /^(S0|H1)$/;
/** Scenarios whose capacity event is flapping availability. */
const FLAPPING = /^(S6|H2|H4)$/;

/** Baselines better than the library on both SLO attainment and cost per 1M SLO tokens (paired means). */
export function dominating(s: ScenarioSummary): PolicySummary[] {
  const lib = s.policies.find((p) => p.policy === 'library');
  if (!lib) return [];
  return s.policies.filter((p) => p.policy !== 'library' && !REFERENCE_POLICIES.includes(p.policy) &&
    p.metrics.sloAttainment.mean > lib.metrics.sloAttainment.mean && p.metrics.usdPerMillionSloTokens.mean < lib.metrics.usdPerMillionSloTokens.mean);
}

/**
 * How strong a "better on both" is: the library minus the baseline, paired by seed, with 95% intervals, and whether
 * each excludes zero. The target is judged on the means; this says whether more seeds could overturn it.
 */
function pairedEvidence(p: PolicySummary): string {
  const v = p.vsLibrary;
  if (!v) return '';
  // vsLibrary is baseline - library; the report states every paired difference as library - baseline.
  const slo = v.sloAttainment;
  const usd = v.usdPerMillionSloTokens;
  const pairs = Math.min(slo.n, usd.n);
  if (pairs < 2) return ` (paired: ${pairs} seed${pairs === 1 ? '' : 's'} with both values, no interval)`;
  const significant = (e: typeof slo) => Math.abs(e.mean) > e.ci95;
  // Negated (library - baseline); a value that rounds to zero prints +0.00, never -0.00.
  const signed = (x: number, digits: number) => {
    const rounded = Number((-x).toFixed(digits)) || 0;
    return `${rounded >= 0 ? '+' : ''}${rounded.toFixed(digits)}`;
  };
  return ` (library - ${p.policy}, paired over ${pairs} seeds: SLO ${signed(slo.mean * 100, 2)} ±${(slo.ci95 * 100).toFixed(2)} pt, ` +
    `cost ${signed(usd.mean, 3)} ±${usd.ci95.toFixed(3)}; ${[significant(slo) ? 'SLO' : '', significant(usd) ? 'cost' : ''].filter(Boolean).join(' and ') || 'neither'} significant)`;
}

function bestReal(s: ScenarioSummary): PolicySummary | undefined {
  return s.policies.filter((p) => p.policy !== 'library' && !REFERENCE_POLICIES.includes(p.policy))
    .reduce<PolicySummary | undefined>((best, p) => (!best || p.metrics.sloAttainment.mean > best.metrics.sloAttainment.mean ? p : best), undefined);
}

export function checkTargets(s: ScenarioSummary): TargetCheck[] {
  const lib = s.policies.find((p) => p.policy === 'library');
  if (!lib) return [];
  const out: TargetCheck[] = [];
  const id = s.scenarioId;
  const add = (target: string, value: string, met: boolean, miss: string) =>
    out.push({ scenarioId: id, platform: s.platform, target, value, met, miss: met ? '' : miss });
  if (NO_SHORTAGE.test(id)) {
    const m = lib.metrics.modeChanges.mean;
    add('zero mode changes', `${m.toFixed(1)} per run`, m === 0, `${m.toFixed(1)} changes`);
  }
  if (FLAPPING.test(id)) {
    const m = lib.metrics.modeChangesPerEvent.mean;
    add('<= 2 mode changes per capacity event', m.toFixed(1), m <= 2, `${(m - 2).toFixed(1)} over`);
  }
  if (s.policies.length > 1) {
    const dom = dominating(s);
    add('no baseline better on both SLO and cost', dom.length === 0 ? 'none' : dom.map((p) => p.policy).join(', '), dom.length === 0,
      dom.map((p) => `${p.policy} ${(p.metrics.sloAttainment.mean * 100).toFixed(2)}% at ${p.metrics.usdPerMillionSloTokens.mean.toFixed(3)}${pairedEvidence(p)}`).join('; '));
    const best = bestReal(s);
    if (best) {
      const gap = (lib.metrics.sloAttainment.mean - best.metrics.sloAttainment.mean) * 100;
      add('SLO within 0.2 pt of the best real baseline', `${gap >= 0 ? '+' : ''}${gap.toFixed(2)} pt vs ${best.policy}`, gap >= -0.2,
        `${(-0.2 - gap).toFixed(2)} pt short of ${best.policy}`);
    }
  }
  const costOnly = s.policies.find((p) => p.policy === 'cost-only');
  if (NO_SHORTAGE.test(id) && costOnly) {
    const d = (lib.metrics.usdPerMillionSloTokens.mean / costOnly.metrics.usdPerMillionSloTokens.mean - 1) * 100;
    add('cost within 3% of cost-only', `${d >= 0 ? '+' : ''}${d.toFixed(1)}%`, d <= 3, `${(d - 3).toFixed(1)} pt over`);
  }
  if (lib.fleetRegret.n > 0) {
    const r = lib.fleetRegret.mean * 100;
    add('regret vs fleet-structure oracle <= 5%', `${r >= 0 ? '+' : ''}${r.toFixed(1)}%`, r <= 5, `${(r - 5).toFixed(1)} pt over`);
  }
  const ttf = lib.metrics.timeToFallbackSeconds;
  const floor = lib.metrics.physicalFloorSeconds.mean;
  if (Number.isFinite(floor) && (ttf.n > 0 || ttf.infinite > 0)) {
    const ok = ttf.infinite === 0 && ttf.mean <= floor + 120;
    add('time to fallback <= floor + 2 control periods', `${seconds(ttf.mean)} (floor ${floor.toFixed(0)} s)`, ok,
      ttf.infinite > 0 ? `${ttf.infinite} ${ttf.infinite === 1 ? 'seed' : 'seeds'} never` : `${(ttf.mean - floor - 120).toFixed(0)} s over`);
  }
  return out;
}

const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

/**
 * The written takeaway of one scenario, generated from its results: what happened to the library's policy, who won
 * on SLO and on cost, and why (where the misses came from, what the cost is made of).
 */
export function takeaway(s: ScenarioSummary): string[] {
  const lib = s.policies.find((p) => p.policy === 'library');
  if (!lib) return [];
  const m = lib.metrics;
  const real = s.policies.filter((p) => !REFERENCE_POLICIES.includes(p.policy));
  const bySlo = [...real].sort((a, b) => b.metrics.sloAttainment.mean - a.metrics.sloAttainment.mean);
  const byCost = [...real].sort((a, b) => a.metrics.usdPerMillionSloTokens.mean - b.metrics.usdPerMillionSloTokens.mean);
  const events = (s.capacityEvents ?? []).length;
  const lines: string[] = [];
  const ttf = m.timeToFallbackSeconds;
  lines.push(`What happened: ${events === 0 ? 'no capacity event' : `${events} capacity event${events > 1 ? 's' : ''}`}; the library's policy changed mode ` +
    `${m.modeChanges.mean.toFixed(1)} times per run (${m.modeChangesPerEvent.mean.toFixed(1)} per event)` +
    (ttf.n > 0 || ttf.infinite > 0 ? `, its fallbacks carried 90% of the deficit after ${seconds(ttf.mean)} (physical floor ${seconds(m.physicalFloorSeconds.mean)})` : '') +
    `; ${pct(m.sloAttainment.mean)} of requests met the SLO at $${m.usdPerMillionSloTokens.mean.toFixed(3)} per 1M SLO-meeting tokens.`);
  const dom = dominating(s);
  const rank = (list: PolicySummary[]) => list.findIndex((p) => p.policy === 'library') + 1;
  lines.push(`Who won: best SLO ${bySlo[0].policy} (${pct(bySlo[0].metrics.sloAttainment.mean)}), cheapest ${byCost[0].policy} ` +
    `($${byCost[0].metrics.usdPerMillionSloTokens.mean.toFixed(3)}); the library ranks ${rank(bySlo)} of ${real.length} on SLO and ${rank(byCost)} on cost. ` +
    (dom.length === 0 ? 'No baseline beats it on both.' : `Better on both: ${dom.map((p) => p.policy).join(', ')}.`));
  const why: string[] = [];
  why.push(`rejections ${pct(m.rejectedShare.mean)} of arrivals, of which ${pct(m.excessRejectedShare.mean)} above the unavoidable share`);
  why.push(`late answers ${pct(Math.max(0, 1 - m.sloAttainmentAdmitted.mean))} of admitted requests`);
  if (m.costUsd.mean > 0) why.push(`fallback classes ${(100 * m.fallbackCostUsd.mean / m.costUsd.mean).toFixed(0)}% of the cost (warm standby included)`);
  if (lib.fleetRegret.n > 0) why.push(`${(lib.fleetRegret.mean * 100).toFixed(1)}% dearer than the fleet-structure oracle (same standby and headroom, perfect foresight)`);
  lines.push(`Why: ${why.join('; ')}.`);
  return lines;
}

/** What each column means, printed beside the tables. */
export const METRIC_DEFINITIONS: ReadonlyArray<readonly [string, string]> = [
  ['SLO % (all)', 'requests answered within their deadline over all arrivals; a rejection counts as a miss'],
  ['SLO % (admitted)', 'the same over admitted requests only'],
  ['goodput tok/s', 'output tokens of SLO-meeting answers per second'],
  ['$/1M tok, $/1M SLO tok', 'replica-hours paid (pending, ready and draining, warm standby included) per million tokens served / per million SLO-meeting tokens'],
  ['regret %', 'cost per 1M SLO tokens above the clairvoyant oracle (zero delay, no standby, sized at the envelope): a lower bound'],
  ['fleet regret %', 'the same against the fleet-structure oracle, which also knows the future but pays the plan\'s warm standby and scaling headroom: the policy\'s own regret'],
  ['rejected %, excess rej %', 'rejected arrivals; excess = above the unavoidable share max(0, 1 - capacity / demand) per 5-minute window'],
  ['to fallback s', 'from the first minute with a deficit (demand minus the preferred class\'s ready envelope, or, when the short class is a variant\'s priority-1 pool, that pool\'s, the variant\'s lower pools counting as fallbacks; event onset at the earliest) until the fallbacks serve 90% of it, or of what they could serve where that is less (every instance the cloud hands out up to their maximum, or what they have ready if more, at their envelope times their actual speed), on trailing 3-minute means; no value where the fallbacks could take none of it'],
  ['floor s', 'metric period + metric delay + control period + fallback provisioning: nothing reacts faster'],
  ['to return s', 'restoration until the rolling 5-minute cost per token is within 5% of the 30 minutes before onset'],
  ['modes/event', 'changes of the policy\'s mode label per capacity event (per run when there is none)'],
  ['weight var', 'sum over ticks of half the L1 distance between consecutive weight vectors'],
  ['p95 s', 'p95 end-to-end latency of completed requests'],
  ['±', '95% interval over seeds (Student t), paired: every policy runs on the same trace per seed'],
];

/** Warnings for intervals that rest on fewer than 5 seeds (too few for a trustworthy interval). */
export function fewSeedWarnings(s: ScenarioSummary): string[] {
  const out: string[] = [];
  for (const p of s.policies) {
    for (const [key, e] of Object.entries(p.metrics) as Array<[string, Estimate]>) {
      if ((e.n > 0 || e.infinite > 0) && e.n < 5 && ['sloAttainment', 'usdPerMillionSloTokens', 'timeToFallbackSeconds', 'timeToReturnSeconds', 'modeChangesPerEvent'].includes(key)) {
        out.push(`${p.policy} ${key}: interval rests on ${e.n} seed${e.n === 1 ? '' : 's'}`);
      }
    }
  }
  return out;
}

function eventsInMinutes(s: ScenarioSummary) {
  return (s.capacityEvents ?? []).map((e) => ({ from: e.onset / 60, to: e.restoration / 60 }));
}

/** The charts of one scenario, as standalone SVG documents by name. */
export function scenarioCharts(s: ScenarioSummary): Record<string, string> {
  if (!s.charts) return {};
  const charts = s.charts;
  const events = eventsInMinutes(s);
  const POINTS = 360;
  const lib = charts.library ?? Object.values(charts)[0];
  const libName = charts.library ? 'library' : Object.keys(charts)[0];
  const out: Record<string, string> = {};
  const shareChart = (name: string, c: ChartSeries) => {
    const lines = c.classNames.map((_, ci) => downsample(c.share.map((r) => r[ci]), POINTS));
    return lineChart({
      title: `${s.scenarioId} traffic share per class: ${name} (seed ${s.chartSeed})`, yLabel: 'share of tokens', stacked: true, yMax: 1,
      minutesPerPoint: lines[0].factor, events, lines: c.classNames.map((cls, ci) => ({ name: cls, values: lines[ci].values })),
    });
  };
  out['traffic-share'] = shareChart(libName, lib);
  if (charts['two-state-switch']) out['traffic-share-two-state-switch'] = shareChart('two-state-switch', charts['two-state-switch']);
  const lat = [0, 1, 2].map((q) => downsample(lib.latency.map((r) => r[q]), POINTS));
  const others = ['retry-on-preferred', 'oracle'].filter((p) => charts[p]);
  out.latency = lineChart({
    title: `${s.scenarioId} latency of completed requests (seed ${s.chartSeed})`, yLabel: 'end-to-end latency, seconds', minutesPerPoint: lat[0].factor, events,
    references: [{ name: `SLO deadline ${s.deadlineSeconds} s`, value: s.deadlineSeconds, color: '#000' }],
    lines: [
      { name: `${libName} p50`, values: lat[0].values, color: '#2ca02c' },
      { name: `${libName} p95`, values: lat[1].values, color: '#1f77b4' },
      { name: `${libName} p99`, values: lat[2].values, color: '#d62728' },
      ...others.map((p, i) => ({ name: `${p} p95`, values: downsample(charts[p].latency.map((r) => r[1]), POINTS).values, color: ['#7f7f7f', '#9467bd'][i], dashed: true })),
    ],
  });
  const reps = lib.classNames.map((_, ci) => downsample(lib.readyReplicas.map((r) => r[ci]), POINTS));
  out.replicas = lineChart({
    title: `${s.scenarioId} ready replicas per class: ${libName} (seed ${s.chartSeed})`, yLabel: 'replicas', minutesPerPoint: reps[0].factor, events,
    lines: [
      ...lib.classNames.map((cls, ci) => ({ name: cls, values: reps[ci].values })),
      ...(charts.oracle ? [{ name: 'oracle total', values: downsample(charts.oracle.readyReplicas.map((r) => r.reduce((a, b) => a + b, 0)), POINTS).values,
        color: '#7f7f7f', dashed: true }] : []),
    ],
  });
  const rej = Object.entries(charts).filter(([p]) => ['library', 'retry-on-preferred', 'two-state-switch', 'capacity-only', 'oracle'].includes(p));
  out.rejected = lineChart({
    title: `${s.scenarioId} rejected share of arrivals (seed ${s.chartSeed})`, yLabel: '% rejected', minutesPerPoint: downsample(lib.rejectedShare, POINTS).factor, events,
    lines: rej.map(([p, c]) => ({ name: p, values: downsample(c.rejectedShare.map((v) => v * 100), POINTS).values, dashed: p !== 'library' })),
  });
  out.modes = modeTimeline(`${s.scenarioId} policy mode over time (seed ${s.chartSeed})`,
    Object.entries(charts).map(([p, c]) => ({ name: p, modes: c.modes })), events);
  return out;
}

const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface SuiteReport {
  readonly command: string;
  readonly seeds: readonly number[];
  readonly wallSeconds: number;
  /** CPU time of the process, all worker threads included: comparable across machine load. */
  readonly cpuSeconds: number;
  /** 1-minute load average when the run started. */
  readonly loadAverage: number;
  readonly workers: number;
  readonly scenarios: readonly ScenarioSummary[];
  readonly descriptions: Readonly<Record<string, string>>;
  /**
   * Whether the scenarios are the library's own (the suite and its held-out traces): only then are they checked
   * against the library's targets. A user's `--scenario-file` is reported, not graded.
   */
  readonly libraryTargets: boolean;
}

/** The checks of the library's targets, or none for a user's scenarios. */
export function reportChecks(r: SuiteReport): TargetCheck[] {
  return r.libraryTargets ? r.scenarios.flatMap(checkTargets) : [];
}

/** The report's first line: how many targets held per platform, and which did not; for a user's scenario, who won. */
export function verdict(r: SuiteReport): string {
  if (!r.libraryTargets) {
    const parts = r.scenarios.map((s) => {
      const lib = s.policies.find((p) => p.policy === 'library');
      const dom = dominating(s);
      return lib ? `${s.scenarioId} on ${PLATFORM_LABELS[s.platform]}: library ${pct(lib.metrics.sloAttainment.mean)} SLO at ` +
        `$${lib.metrics.usdPerMillionSloTokens.mean.toFixed(3)} per 1M SLO tokens, ${dom.length === 0 ? 'no baseline better on both' : `better on both: ${dom.map((p) => p.policy).join(', ')}`}`
        : `${s.scenarioId} on ${PLATFORM_LABELS[s.platform]}: library not run`;
    });
    return `Verdict: ${parts.join('; ')}.`;
  }
  const checks = reportChecks(r);
  const platforms = [...new Set(checks.map((c) => c.platform))];
  const counts = platforms.map((p) => {
    const mine = checks.filter((c) => c.platform === p);
    return `${mine.filter((c) => c.met).length} of ${mine.length} checks on ${PLATFORM_LABELS[p]}`;
  });
  // One clause per target, not per miss: the line stays one line however many scenarios miss (they are in the table).
  const missed = targetSummary(checks).filter((t) => t.missed > 0).sort((a, b) => b.missed - a.missed)
    .map((t) => `${t.target} (${t.missed} of ${t.checked})`);
  return `Verdict: the library's policy meets its targets in ${counts.join(' and ')}` +
    (missed.length === 0 ? '; none missed.' : `; missed, in scenario-platform pairs: ${missed.join(', ')}; each miss is in the targets table.`);
}

/** One target of the library's policy across the report: how often it was checked and missed, and where, per platform. */
export interface TargetSummary {
  readonly target: string;
  readonly checked: number;
  readonly missed: number;
  readonly byPlatform: ReadonlyArray<{ readonly platform: PlatformKind; readonly checked: number; readonly missedIn: readonly string[] }>;
}

/** The checks grouped by target, in the order the targets are first checked. */
export function targetSummary(checks: readonly TargetCheck[]): TargetSummary[] {
  const targets = [...new Set(checks.map((c) => c.target))];
  const platforms = [...new Set(checks.map((c) => c.platform))];
  return targets.map((target) => {
    const mine = checks.filter((c) => c.target === target);
    return {
      target,
      checked: mine.length,
      missed: mine.filter((c) => !c.met).length,
      byPlatform: platforms.map((platform) => {
        const here = mine.filter((c) => c.platform === platform);
        return { platform, checked: here.length, missedIn: here.filter((c) => !c.met).map((c) => c.scenarioId) };
      }),
    };
  });
}

/** GitHub's anchor of a Markdown heading. */
export function anchor(heading: string): string {
  return heading.toLowerCase().replace(/[^a-z0-9 -]/g, '').trim().replace(/ /g, '-');
}


/** One platform's cell of the target summary: met of checked, and the scenarios that missed ('-': not checked there). */
function summaryCell(p: TargetSummary['byPlatform'][number]): string {
  if (p.checked === 0) return '-';
  return `${p.checked - p.missedIn.length} of ${p.checked}${p.missedIn.length > 0 ? `; missed: ${p.missedIn.join(', ')}` : ''}`;
}

/** Per target and platform: met of checked, and the scenarios that missed. */
function targetSummaryMarkdown(checks: readonly TargetCheck[]): string {
  const summary = targetSummary(checks);
  const platforms = summary[0]?.byPlatform.map((p) => PLATFORM_LABELS[p.platform]) ?? [];
  return [`| target | ${platforms.join(' | ')} |`, `|---|${platforms.map(() => '---|').join('')}`,
    ...summary.map((t) => `| ${t.target} | ${t.byPlatform.map(summaryCell).join(' | ')} |`)].join('\n');
}

function targetsMarkdown(r: SuiteReport): string {
  const checks = reportChecks(r);
  if (checks.length === 0) return '';
  return [targetSummaryMarkdown(checks), '', 'Every check:', '',
    '| scenario | platform | target | library | met | miss |', '|---|---|---|---:|:---:|---|',
    ...checks.map((c) => `| ${c.scenarioId} | ${PLATFORM_LABELS[c.platform]} | ${c.target} | ${c.value} | ${c.met ? 'yes' : 'no'} | ${c.miss} |`)].join('\n');
}

const TARGETS_HEADING = 'Targets of the library\'s policy';
const COLUMNS_HEADING = 'What the columns mean';

export function markdownReport(r: SuiteReport): string {
  const groups = byScenario(r.scenarios);
  const sectionHeading = (g: readonly ScenarioSummary[]) => `${g[0].scenarioId} ${g[0].title}`;
  const toc = [
    ...(r.libraryTargets ? [TARGETS_HEADING] : []), COLUMNS_HEADING, ...groups.map(sectionHeading),
  ].map((h) => `- [${h}](#${anchor(h)})`);
  const head = [
    `**${verdict(r)}**`,
    '',
    ...toc,
    '',
    `Command: \`${r.command}\``,
    `Seeds: ${r.seeds.join(', ')} (paired: every policy runs on the same trace and scenario draw per seed).`,
    `Wall time: ${r.wallSeconds.toFixed(0)} s on ${r.workers} worker threads; CPU time ${r.cpuSeconds.toFixed(0)} s ` +
      `(load average ${r.loadAverage.toFixed(1)} when it started).`,
    'Intervals are 95% (Student t over seeds). "never": seeds where the fallback never carried 90% of the deficit or cost never came back within 5%.',
    '',
    ...(r.libraryTargets ? [`## ${TARGETS_HEADING}`, '', targetsMarkdown(r), ''] : []),
    `## ${COLUMNS_HEADING}`,
    '',
    ...METRIC_DEFINITIONS.map(([k, v]) => `- **${k}**: ${v}`),
  ];
  const body = groups.map((g) => {
    const s = g[0];
    const warnings = g.flatMap((x) => fewSeedWarnings(x).map((w) => `${PLATFORM_LABELS[x.platform]}: ${w}`));
    return [`## ${sectionHeading(g)}`, '', r.descriptions[s.scenarioId] ?? '', '',
      ...g.flatMap((x) => takeaway(x).map((t) => `- ${g.length > 1 ? `${PLATFORM_LABELS[x.platform]}. ` : ''}${t}`)), '',
      `${s.seeds.length} seeds, ${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run.`, '',
      ...(warnings.length > 0 ? [`> Warning: ${warnings.join('; ')}.`, ''] : []),
      ...(g.length > 1 ? [platformTable(g), ''] : []),
      ...g.flatMap((x) => (g.length > 1
        ? [`<details><summary>${PLATFORM_LABELS[x.platform]}: every column</summary>`, '', markdownTable(x), '', '</details>', '']
        : [markdownTable(x), '']))].join('\n');
  });
  return [...head, '', ...body].join('\n') + '\n';
}

export function htmlReport(r: SuiteReport): string {
  const definitions = `<details open><summary>What the columns mean</summary><dl>${METRIC_DEFINITIONS.map(([k, v]) =>
    `<dt>${escape(k)}</dt><dd>${escape(v)}</dd>`).join('')}</dl></details>`;
  const sections = r.scenarios.map((s) => {
    const charts = scenarioCharts(s);
    const heading = `${s.scenarioId} ${s.title} on ${PLATFORM_LABELS[s.platform]}`;
    const table = `<table><tr>${COLUMNS.map((c) => `<th>${escape(c.head)}</th>`).join('')}</tr>${s.policies.map((p) =>
      `<tr${p.policy === 'library' ? ' class="lib"' : ''}>${COLUMNS.map((c) => `<td>${escape(c.cell(p))}</td>`).join('')}</tr>`).join('')}</table>`;
    const warnings = fewSeedWarnings(s);
    const warn = warnings.length > 0 ? `<p class="warn">Warning: ${escape(warnings.join('; '))}. Fewer than 5 seeds: read these intervals as indicative only.</p>` : '';
    return `<section id="${anchor(heading)}"><h2>${escape(heading)}</h2><p>${escape(r.descriptions[s.scenarioId] ?? '')}</p>` +
      `<div class="takeaway"><ul>${takeaway(s).map((t) => `<li>${escape(t)}</li>`).join('')}</ul></div>` +
      `<p>${s.seeds.length} seeds, ${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run; charts from seed ${s.chartSeed ?? '-'}; ` +
      'red shading: capacity shortage; dashed lines: baselines and the SLO.</p>' + warn +
      `<div class="tablewrap">${table}${definitions}</div><div class="charts">${Object.values(charts).join('\n')}</div></section>`;
  });
  const checks = reportChecks(r);
  const toc = `<ul>${r.scenarios.map((s) => {
    const heading = `${s.scenarioId} ${s.title} on ${PLATFORM_LABELS[s.platform]}`;
    return `<li><a href="#${anchor(heading)}">${escape(heading)}</a></li>`;
  }).join('')}</ul>`;
  const summary = targetSummary(checks);
  const summaryTable = `<table><tr><th>target</th>${(summary[0]?.byPlatform ?? []).map((p) => `<th>${PLATFORM_LABELS[p.platform]}</th>`).join('')}</tr>${
    summary.map((t) => `<tr class="${t.missed > 0 ? 'miss' : 'ok'}"><td>${escape(t.target)}</td>${t.byPlatform.map((p) => `<td>${escape(summaryCell(p))}</td>`).join('')}</tr>`).join('')}</table>`;
  const targets = checks.length === 0 ? '' : `<h2>Targets of the library's policy</h2>${summaryTable}<p>Every check:</p><table><tr><th>scenario</th><th>platform</th><th>target</th><th>library</th><th>met</th><th>miss</th></tr>${
    checks.map((c) => `<tr class="${c.met ? 'ok' : 'miss'}"><td>${c.scenarioId}</td><td>${PLATFORM_LABELS[c.platform]}</td><td>${escape(c.target)}</td><td>${escape(c.value)}</td><td>${c.met ? 'yes' : 'no'}</td><td>${escape(c.miss)}</td></tr>`).join('')}</table>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>cdk-capacity-aware-inference benchmark</title><style>
body{font-family:sans-serif;margin:24px;max-width:1500px}table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.lib{background:#eef5ff;font-weight:bold}tr.miss{background:#fdecea}tr.ok{background:#eefbea}.charts svg{margin:4px;border:1px solid #eee}
.takeaway{background:#f7f7f2;border-left:4px solid #1f77b4;padding:2px 12px}.warn{color:#a00;font-weight:bold}dl{font-size:12px;columns:2}dt{font-weight:bold}dd{margin:0 0 4px 0}
</style></head><body><h1>Capacity-aware routing: benchmark report</h1><p><b>${escape(verdict(r))}</b></p>${toc}<p>Command: <code>${escape(r.command)}</code>. Seeds: ${r.seeds.join(', ')} (paired).
Wall time ${r.wallSeconds.toFixed(0)} s on ${r.workers} worker threads, CPU time ${r.cpuSeconds.toFixed(0)} s. Intervals: 95% over seeds.</p>${targets}${sections.join('\n')}</body></html>\n`;
}
