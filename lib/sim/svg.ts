/** Minimal self-contained SVG charts for the benchmark report (no dependencies, no scripts). */

export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

export interface ChartLine {
  readonly name: string;
  readonly values: readonly number[];
  readonly color?: string;
  readonly dashed?: boolean;
}

export interface ChartOptions {
  readonly title: string;
  readonly yLabel: string;
  /** Minutes per value. */
  readonly minutesPerPoint: number;
  readonly lines: readonly ChartLine[];
  /** Stack the lines as areas (shares). */
  readonly stacked?: boolean;
  readonly yMax?: number;
  /** Shaded intervals, minutes (capacity shortages). */
  readonly events?: ReadonlyArray<{ readonly from: number; readonly to: number }>;
  /** Horizontal reference lines (e.g. the SLO), drawn dashed and named in the legend. */
  readonly references?: ReadonlyArray<{ readonly name: string; readonly value: number; readonly color?: string }>;
  /** Title of the x axis. @default 'time since start of run' */
  readonly xLabel?: string;
  readonly width?: number;
  readonly height?: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(v: number): string {
  if (Math.abs(v) >= 10 || v === Math.round(v)) return v.toFixed(0);
  return String(Number(v.toFixed(Math.abs(v) >= 1 ? 1 : 2)));
}

/** Averages consecutive values into at most `points` bins (NaN ignored). */
export function downsample(values: readonly number[], points: number): { values: number[]; factor: number } {
  const factor = Math.max(1, Math.ceil(values.length / points));
  const out: number[] = [];
  for (let i = 0; i < values.length; i += factor) {
    const bin = values.slice(i, i + factor).filter((v) => Number.isFinite(v));
    out.push(bin.length > 0 ? bin.reduce((a, b) => a + b, 0) / bin.length : NaN);
  }
  return { values: out, factor };
}

export function lineChart(o: ChartOptions): string {
  const width = o.width ?? 720;
  const height = o.height ?? 240;
  const left = 56;
  const right = 150;
  const top = 28;
  const bottom = 44;
  const w = width - left - right;
  const h = height - top - bottom;
  const n = Math.max(1, ...o.lines.map((l) => l.values.length));
  const refs = o.references ?? [];
  const totalMinutes = n * o.minutesPerPoint;
  const stackedTop: number[] = new Array(n).fill(0);
  let maxV = 0;
  if (o.stacked) {
    for (const l of o.lines) l.values.forEach((v, i) => (stackedTop[i] += Number.isFinite(v) ? v : 0));
    maxV = Math.max(...stackedTop);
  } else {
    for (const l of o.lines) for (const v of l.values) if (Number.isFinite(v)) maxV = Math.max(maxV, v);
  }
  for (const r of refs) maxV = Math.max(maxV, r.value * 1.1);
  const yMax = o.yMax ?? niceMax(maxV);
  const x = (i: number) => left + (w * (i * o.minutesPerPoint)) / totalMinutes;
  const y = (v: number) => top + h - (h * Math.min(v, yMax)) / yMax;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  parts.push(`<text x="${left}" y="16" font-size="13" font-weight="bold">${esc(o.title)}</text>`);
  for (const e of o.events ?? []) {
    const x0 = left + (w * Math.max(0, e.from)) / totalMinutes;
    const x1 = left + (w * Math.min(totalMinutes, e.to)) / totalMinutes;
    parts.push(`<rect x="${x0.toFixed(1)}" y="${top}" width="${Math.max(0, x1 - x0).toFixed(1)}" height="${h}" fill="#f4b6b6" fill-opacity="0.45"/>`);
  }
  for (let t = 0; t <= 4; t++) {
    const v = (yMax * t) / 4;
    parts.push(`<line x1="${left}" x2="${left + w}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 4}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`);
  }
  const hours = totalMinutes > 360;
  const step = hours ? (totalMinutes > 1440 ? 360 : 120) : totalMinutes > 120 ? 30 : 10;
  for (let t = 0; t <= totalMinutes; t += step) {
    const xx = left + (w * t) / totalMinutes;
    parts.push(`<line x1="${xx.toFixed(1)}" x2="${xx.toFixed(1)}" y1="${top + h}" y2="${top + h + 4}" stroke="#333"/>`);
    parts.push(`<text x="${xx.toFixed(1)}" y="${top + h + 16}" text-anchor="middle">${hours ? `${t / 60}h` : `${t}m`}</text>`);
  }
  parts.push(`<text x="14" y="${top + h / 2}" transform="rotate(-90 14 ${top + h / 2})" text-anchor="middle">${esc(o.yLabel)}</text>`);
  parts.push(`<text x="${left + w / 2}" y="${top + h + 32}" text-anchor="middle">${esc(o.xLabel ?? 'time since start of run')}</text>`);
  const base: number[] = new Array(n).fill(0);
  let legendRow = 0;
  /** A legend entry: a swatch for areas, a line sample (dashed when the series is) for lines. */
  const legend = (name: string, color: string, kind: 'area' | 'line' | 'dashed' | 'shade') => {
    const ly = top + legendRow++ * 16;
    if (kind === 'area') parts.push(`<rect x="${left + w + 10}" y="${ly}" width="14" height="10" fill="${color}"/>`);
    else if (kind === 'shade') parts.push(`<rect x="${left + w + 10}" y="${ly}" width="14" height="10" fill="${color}" fill-opacity="0.45"/>`);
    else parts.push(`<line x1="${left + w + 8}" x2="${left + w + 26}" y1="${ly + 5}" y2="${ly + 5}" stroke="${color}" stroke-width="2"${kind === 'dashed' ? ' stroke-dasharray="4 3"' : ''}/>`);
    parts.push(`<text x="${left + w + 30}" y="${ly + 9}">${esc(name)}</text>`);
  };
  o.lines.forEach((l, li) => {
    const color = l.color ?? PALETTE[li % PALETTE.length];
    if (o.stacked) {
      const upper = l.values.map((v, i) => base[i] + (Number.isFinite(v) ? v : 0));
      const pts = upper.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
      const back = base.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).reverse();
      parts.push(`<polygon points="${[...pts, ...back].join(' ')}" fill="${color}" fill-opacity="0.75" stroke="none"/>`);
      upper.forEach((v, i) => (base[i] = v));
    } else {
      let d = '';
      let pen = false;
      l.values.forEach((v, i) => {
        if (!Number.isFinite(v)) {
          pen = false;
          return;
        }
        d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
        pen = true;
      });
      parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.5"${l.dashed ? ' stroke-dasharray="4 3"' : ''}/>`);
    }
    legend(l.name, color, o.stacked ? 'area' : l.dashed ? 'dashed' : 'line');
  });
  for (const r of refs) {
    const color = r.color ?? '#000';
    parts.push(`<line x1="${left}" x2="${left + w}" y1="${y(r.value).toFixed(1)}" y2="${y(r.value).toFixed(1)}" stroke="${color}" stroke-width="1.5" stroke-dasharray="8 4"/>`);
    legend(r.name, color, 'dashed');
  }
  if ((o.events ?? []).length > 0) legend('capacity shortage', '#f4b6b6', 'shade');
  parts.push(`<rect x="${left}" y="${top}" width="${w}" height="${h}" fill="none" stroke="#333"/>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** One row per policy, coloured by mode over time. */
export function modeTimeline(title: string, rows: ReadonlyArray<{ readonly name: string; readonly modes: readonly string[] }>,
  events: ReadonlyArray<{ readonly from: number; readonly to: number }> = [], width = 720): string {
  const left = 130;
  const right = 150;
  const top = 28;
  const rowH = 18;
  const w = width - left - right;
  const height = top + rows.length * (rowH + 6) + 30;
  const n = Math.max(1, ...rows.map((r) => r.modes.length));
  const modeNames = [...new Set(rows.flatMap((r) => r.modes).filter((m) => m !== ''))];
  const color = (m: string) => PALETTE[modeNames.indexOf(m) % PALETTE.length];
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  parts.push(`<text x="${left}" y="16" font-size="13" font-weight="bold">${esc(title)}</text>`);
  for (const e of events) {
    const x0 = left + (w * Math.max(0, e.from)) / n;
    const x1 = left + (w * Math.min(n, e.to)) / n;
    parts.push(`<rect x="${x0.toFixed(1)}" y="${top - 4}" width="${Math.max(0, x1 - x0).toFixed(1)}" height="${rows.length * (rowH + 6) + 4}" fill="#f4b6b6" fill-opacity="0.45"/>`);
  }
  rows.forEach((r, ri) => {
    const yy = top + ri * (rowH + 6);
    parts.push(`<text x="${left - 6}" y="${yy + 13}" text-anchor="end">${esc(r.name)}</text>`);
    let start = 0;
    for (let i = 1; i <= r.modes.length; i++) {
      if (i === r.modes.length || r.modes[i] !== r.modes[start]) {
        const x0 = left + (w * start) / n;
        const x1 = left + (w * i) / n;
        parts.push(`<rect x="${x0.toFixed(1)}" y="${yy}" width="${Math.max(0.5, x1 - x0).toFixed(1)}" height="${rowH}" fill="${color(r.modes[start])}"/>`);
        start = i;
      }
    }
  });
  modeNames.forEach((m, i) => {
    parts.push(`<rect x="${left + w + 10}" y="${top + i * 16}" width="10" height="10" fill="${color(m)}"/>`);
    parts.push(`<text x="${left + w + 24}" y="${top + i * 16 + 9}">${esc(m)}</text>`);
  });
  if (events.length > 0) {
    const ly = top + modeNames.length * 16;
    parts.push(`<rect x="${left + w + 10}" y="${ly}" width="10" height="10" fill="#f4b6b6" fill-opacity="0.45"/><text x="${left + w + 24}" y="${ly + 9}">capacity shortage</text>`);
  }
  const hours = n > 360;
  parts.push(`<text x="${left}" y="${height - 8}">0</text><text x="${left + w / 2}" y="${height - 8}" text-anchor="middle">time since start of run</text>` +
    `<text x="${left + w}" y="${height - 8}" text-anchor="end">${hours ? `${(n / 60).toFixed(0)}h` : `${n}m`}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}
