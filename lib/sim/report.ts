import { type Estimate } from './stats';
import { type ChartSeries, type PolicySummary, type ScenarioSummary } from './suite';
import { downsample, lineChart, modeTimeline } from './svg';

/** Formatting of the comparison, for the terminal, Markdown and HTML. */

function num(v: number, digits: number): string {
  if (v === Infinity) return 'never';
  if (!Number.isFinite(v)) return '-';
  return v.toFixed(digits);
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

export function terminalTable(s: ScenarioSummary): string {
  const rows = [COLUMNS.map((c) => c.head), ...s.policies.map((p) => COLUMNS.map((c) => c.cell(p)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [`${s.scenarioId} ${s.title} (${s.seeds.length} seeds, ${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run)`,
    ...rows.map(line)].join('\n');
}

export function markdownTable(s: ScenarioSummary): string {
  const rows = s.policies.map((p) => `| ${COLUMNS.map((c) => c.cell(p)).join(' | ')} |`);
  return [`| ${COLUMNS.map((c) => c.head).join(' | ')} |`, `|${COLUMNS.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows].join('\n');
}

/** One target of the library's policy (ISSUE 8): met or missed, and by how much. */
export interface TargetCheck {
  readonly scenarioId: string;
  readonly target: string;
  readonly value: string;
  readonly met: boolean;
  readonly miss: string;
}

export function checkTargets(s: ScenarioSummary): TargetCheck[] {
  const lib = s.policies.find((p) => p.policy === 'library');
  const oracle = s.policies.find((p) => p.policy === 'oracle');
  if (!lib) return [];
  const out: TargetCheck[] = [];
  const id = s.scenarioId;
  if (id === 'S0') {
    const m = lib.metrics.modeChanges.mean;
    out.push({ scenarioId: id, target: 'zero mode changes', value: `${m.toFixed(1)} per run`, met: m === 0, miss: m === 0 ? '' : `${m.toFixed(1)} changes` });
    return out;
  }
  if (!/^S[1-9]$/.test(id)) return out;
  if (oracle) {
    const gap = (lib.metrics.sloAttainment.mean - oracle.metrics.sloAttainment.mean) * 100;
    out.push({ scenarioId: id, target: 'SLO attainment >= oracle - 1 pt', value: `${gap >= 0 ? '+' : ''}${gap.toFixed(2)} pt`, met: gap >= -1,
      miss: gap >= -1 ? '' : `${(-1 - gap).toFixed(2)} pt short` });
    const regret = lib.regret.mean * 100;
    out.push({ scenarioId: id, target: 'cost per 1M SLO tokens <= oracle + 10%', value: `${regret >= 0 ? '+' : ''}${regret.toFixed(1)}%`, met: regret <= 10,
      miss: regret <= 10 ? '' : `${(regret - 10).toFixed(1)} pt over` });
  }
  if (id === 'S6') {
    const m = lib.metrics.modeChangesPerEvent.mean;
    out.push({ scenarioId: id, target: '<= 2 mode changes per capacity event', value: m.toFixed(1), met: m <= 2, miss: m <= 2 ? '' : `${(m - 2).toFixed(1)} over` });
  }
  const ttf = lib.metrics.timeToFallbackSeconds;
  const floor = lib.metrics.physicalFloorSeconds.mean;
  if (Number.isFinite(floor) && (ttf.n > 0 || ttf.infinite > 0)) {
    const ok = ttf.infinite === 0 && ttf.mean <= floor + 120;
    out.push({ scenarioId: id, target: 'time to fallback <= floor + 2 control periods', value: `${num(ttf.mean, 0)} s (floor ${floor.toFixed(0)} s)`, met: ok,
      miss: ok ? '' : ttf.infinite > 0 ? `${ttf.infinite} seeds never` : `${(ttf.mean - floor - 120).toFixed(0)} s over` });
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
    title: `${s.scenarioId} latency of completed requests (seed ${s.chartSeed})`, yLabel: 'seconds', minutesPerPoint: lat[0].factor, events,
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
}

function targetsMarkdown(r: SuiteReport): string {
  const checks = r.scenarios.flatMap(checkTargets);
  if (checks.length === 0) return '';
  return ['| scenario | target | library | met | miss |', '|---|---|---:|:---:|---|',
    ...checks.map((c) => `| ${c.scenarioId} | ${c.target} | ${c.value} | ${c.met ? 'yes' : 'no'} | ${c.miss} |`)].join('\n');
}

export function markdownReport(r: SuiteReport): string {
  const head = [
    `Command: \`${r.command}\``,
    `Seeds: ${r.seeds.join(', ')} (paired: every policy runs on the same trace and scenario draw per seed).`,
    `Wall time: ${r.wallSeconds.toFixed(0)} s on ${r.workers} worker threads; CPU time ${r.cpuSeconds.toFixed(0)} s ` +
      `(load average ${r.loadAverage.toFixed(1)} when it started).`,
    'Intervals are 95% (Student t over seeds). "never": seeds where the fallback never carried 90% of the deficit or cost never came back within 5%.',
    '',
    '## Targets of the library\'s policy',
    '',
    targetsMarkdown(r),
  ];
  const body = r.scenarios.map((s) => [`## ${s.scenarioId} ${s.title}`, '', r.descriptions[s.scenarioId] ?? '', '',
    `${s.seeds.length} seeds, ${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run.`, '', markdownTable(s)].join('\n'));
  return [...head, '', ...body].join('\n') + '\n';
}

export function htmlReport(r: SuiteReport): string {
  const sections = r.scenarios.map((s) => {
    const charts = scenarioCharts(s);
    const table = `<table><tr>${COLUMNS.map((c) => `<th>${escape(c.head)}</th>`).join('')}</tr>${s.policies.map((p) =>
      `<tr${p.policy === 'library' ? ' class="lib"' : ''}>${COLUMNS.map((c) => `<td>${escape(c.cell(p))}</td>`).join('')}</tr>`).join('')}</table>`;
    return `<section><h2>${escape(s.scenarioId)} ${escape(s.title)}</h2><p>${escape(r.descriptions[s.scenarioId] ?? '')}</p>` +
      `<p>${s.seeds.length} seeds, ${Math.round(s.arrivalsPerRun).toLocaleString('en-US')} arrivals per run; charts from seed ${s.chartSeed ?? '-'}; ` +
      'shaded: capacity event.</p>' + `${table}<div class="charts">${Object.values(charts).join('\n')}</div></section>`;
  });
  const checks = r.scenarios.flatMap(checkTargets);
  const targets = checks.length === 0 ? '' : `<h2>Targets of the library's policy</h2><table><tr><th>scenario</th><th>target</th><th>library</th><th>met</th><th>miss</th></tr>${
    checks.map((c) => `<tr class="${c.met ? 'ok' : 'miss'}"><td>${c.scenarioId}</td><td>${escape(c.target)}</td><td>${escape(c.value)}</td><td>${c.met ? 'yes' : 'no'}</td><td>${escape(c.miss)}</td></tr>`).join('')}</table>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>cdk-capacity-aware-inference benchmark</title><style>
body{font-family:sans-serif;margin:24px;max-width:1500px}table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.lib{background:#eef5ff;font-weight:bold}tr.miss{background:#fdecea}tr.ok{background:#eefbea}.charts svg{margin:4px;border:1px solid #eee}
</style></head><body><h1>Capacity-aware routing: benchmark report</h1><p>Command: <code>${escape(r.command)}</code>. Seeds: ${r.seeds.join(', ')} (paired).
Wall time ${r.wallSeconds.toFixed(0)} s on ${r.workers} worker threads, CPU time ${r.cpuSeconds.toFixed(0)} s. Intervals: 95% over seeds.</p>${targets}${sections.join('\n')}</body></html>\n`;
}
