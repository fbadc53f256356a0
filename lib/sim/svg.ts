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
  /** Shaded intervals, minutes. */
  readonly events?: ReadonlyArray<{ readonly from: number; readonly to: number }>;
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
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(0) : v.toFixed(v === Math.round(v) ? 0 : 1);
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
  const bottom = 36;
  const w = width - left - right;
  const h = height - top - bottom;
  const n = Math.max(1, ...o.lines.map((l) => l.values.length));
  const totalMinutes = n * o.minutesPerPoint;
  const stackedTop: number[] = new Array(n).fill(0);
  let maxV = 0;
  if (o.stacked) {
    for (const l of o.lines) l.values.forEach((v, i) => (stackedTop[i] += Number.isFinite(v) ? v : 0));
    maxV = Math.max(...stackedTop);
  } else {
    for (const l of o.lines) for (const v of l.values) if (Number.isFinite(v)) maxV = Math.max(maxV, v);
  }
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
    parts.push(`<rect x="${x0.toFixed(1)}" y="${top}" width="${Math.max(0, x1 - x0).toFixed(1)}" height="${h}" fill="#f3e0e0"/>`);
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
  const base: number[] = new Array(n).fill(0);
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
    parts.push(`<rect x="${left + w + 10}" y="${top + li * 16}" width="10" height="10" fill="${color}"/>`);
    parts.push(`<text x="${left + w + 24}" y="${top + li * 16 + 9}">${esc(l.name)}</text>`);
  });
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
    parts.push(`<rect x="${x0.toFixed(1)}" y="${top - 4}" width="${Math.max(0, x1 - x0).toFixed(1)}" height="${rows.length * (rowH + 6) + 4}" fill="#f3e0e0"/>`);
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
  const hours = n > 360;
  parts.push(`<text x="${left}" y="${height - 8}">0</text><text x="${left + w}" y="${height - 8}" text-anchor="end">${hours ? `${(n / 60).toFixed(0)}h` : `${n}m`}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}
