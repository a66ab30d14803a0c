/**
 * The days soak's figures (bench/days.bench.ts): each series' slope per hour after the warm-up
 * (least squares), its extremes, and a plot a person can look at (an SVG: the daemon's and tmux's
 * memory, the daemon's handles and descriptors, over time, the warm-up shaded).
 */
import type { Sample } from './days-sample.js';

/** Least-squares slope of y over t (seconds), per hour; NaN with fewer than two points. */
export function slopePerHour(points: readonly { t: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  let st = 0;
  let sy = 0;
  for (const p of points) {
    st += p.t;
    sy += p.y;
  }
  const mt = st / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.y - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? Number.NaN : (num / den) * 3600;
}

/** One series of the report: how it is read from a sample, its unit, and how it is printed. */
export interface Series {
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  readonly of: (s: Sample) => number;
}

export const SERIES: readonly Series[] = [
  { key: 'rss', label: 'daemon RSS', unit: 'MB', of: (s) => s.daemon.rssMb },
  { key: 'anon', label: 'daemon anonymous RSS', unit: 'MB', of: (s) => s.daemon.anonMb },
  { key: 'brk', label: 'daemon glibc main arena ([heap]) resident', unit: 'MB', of: (s) => s.daemon.anon.brkMb },
  { key: 'arenas', label: 'daemon glibc thread arenas resident', unit: 'MB', of: (s) => s.daemon.anon.arenasMb },
  { key: 'otherAnon', label: 'daemon other anonymous (V8, wasm, stacks)', unit: 'MB', of: (s) => s.daemon.anon.otherMb },
  { key: 'heap', label: 'daemon heap used after a full GC', unit: 'MB', of: (s) => s.daemon.heapUsedMb },
  { key: 'heapTotal', label: 'daemon heap committed (heapTotal)', unit: 'MB', of: (s) => s.daemon.heapTotalMb },
  { key: 'v8Physical', label: 'daemon V8 spaces resident', unit: 'MB', of: (s) => s.daemon.v8PhysicalMb },
  { key: 'v8New', label: 'of them new_space', unit: 'MB', of: (s) => s.daemon.v8SpacesMb?.['new_space'] ?? Number.NaN },
  { key: 'v8Old', label: 'of them old_space', unit: 'MB', of: (s) => s.daemon.v8SpacesMb?.['old_space'] ?? Number.NaN },
  { key: 'v8Code', label: 'of them code_space', unit: 'MB', of: (s) => s.daemon.v8SpacesMb?.['code_space'] ?? Number.NaN },
  { key: 'v8Large', label: 'of them large_object_space', unit: 'MB', of: (s) => s.daemon.v8SpacesMb?.['large_object_space'] ?? Number.NaN },
  { key: 'external', label: 'daemon external memory', unit: 'MB', of: (s) => s.daemon.externalMb },
  { key: 'arrayBuffers', label: 'daemon ArrayBuffers', unit: 'MB', of: (s) => s.daemon.arrayBuffersMb },
  { key: 'warm', label: "of them the warm captures (each a pane's history, for snapshots)", unit: 'MB', of: (s) => s.daemon.warmMb },
  {
    key: 'otherBuffers',
    label: 'daemon ArrayBuffers less the warm captures',
    unit: 'MB',
    of: (s) => s.daemon.arrayBuffersMb - s.daemon.warmMb,
  },
  { key: 'fds', label: 'daemon open file descriptors', unit: '', of: (s) => s.daemon.fds },
  { key: 'handles', label: 'daemon active handles', unit: '', of: (s) => s.daemon.handles },
  { key: 'loopP99', label: 'daemon event-loop delay p99 (per sample window)', unit: 'ms', of: (s) => s.daemon.loopP99 },
  {
    key: 'floorP99',
    label: 'a bare node process beside it, event-loop delay p99 (the host floor)',
    unit: 'ms',
    of: (s) => s.host.floorP99,
  },
  { key: 'hostBusy', label: 'the machine busy, % of all cores', unit: '%', of: (s) => s.host.busyPct },
  { key: 'benchCpu', label: "the bench's own process, % of a core", unit: '%', of: (s) => s.host.benchPct },
  { key: 'tmuxRss', label: 'tmux server RSS', unit: 'MB', of: (s) => s.tmux.rssMb },
  { key: 'tmuxPss', label: 'tmux server PSS', unit: 'MB', of: (s) => s.tmux.pssMb },
  { key: 'controlsRss', label: 'tmux -C clients RSS (sum)', unit: 'MB', of: (s) => s.controls.rssMb },
  { key: 'controlsPss', label: 'tmux -C clients PSS (sum)', unit: 'MB', of: (s) => s.controls.pssMb },
  { key: 'buffers', label: 'disk buffers', unit: 'MB', of: (s) => s.disk.buffersMb },
  { key: 'logs', label: 'log files', unit: 'MB', of: (s) => s.disk.logsMb },
  { key: 'answers', label: 'answer log', unit: 'KB', of: (s) => s.disk.answersKb },
  { key: 'uploads', label: 'uploads', unit: 'MB', of: (s) => s.disk.uploadsMb },
];

export interface SeriesFigures {
  readonly series: Series;
  /** Per hour, over the samples after the warm-up. */
  readonly slope: number;
  readonly min: number;
  readonly max: number;
  readonly atWarm: number;
  readonly atEnd: number;
}

/** Each series' figures over `samples`, the slope taken from `warmT` (seconds) on. */
export function figuresOf(samples: readonly Sample[], warmT: number): SeriesFigures[] {
  const after = samples.filter((s) => s.t >= warmT);
  return SERIES.map((series) => {
    const ys = samples.map(series.of);
    const pts = after.map((s) => ({ t: s.t, y: series.of(s) }));
    return {
      series,
      slope: slopePerHour(pts),
      min: Math.min(...ys),
      max: Math.max(...ys),
      atWarm: pts[0]?.y ?? Number.NaN,
      atEnd: pts.at(-1)?.y ?? Number.NaN,
    };
  });
}

const f1 = (v: number): string => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) : '-');
const signed = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${f1(v)}` : '-');

/** A markdown table of every series: after warm-up, at the end, slope per hour, min and max. */
export function figuresMarkdown(runs: readonly { name: string; figures: readonly SeriesFigures[] }[]): string {
  const head = `| figure | ${runs.map((r) => `${r.name}: after warm-up -> end, slope/h, min-max`).join(' | ')} |`;
  const rule = `| --- | ${runs.map(() => '---').join(' | ')} |`;
  const rows = SERIES.map((s, i) => {
    const cells = runs.map((r) => {
      const f = r.figures[i]!;
      const u = s.unit ? ` ${s.unit}` : '';
      return `${f1(f.atWarm)} -> ${f1(f.atEnd)}${u}, **${signed(f.slope)}${u}/h**, ${f1(f.min)}-${f1(f.max)}`;
    });
    return `| ${s.label} | ${cells.join(' | ')} |`;
  });
  return [head, rule, ...rows].join('\n');
}

/** A line plot of several series on one time axis, each scaled to its own panel. */
export function plotSvg(title: string, runs: readonly { name: string; samples: readonly Sample[]; warmT: number }[]): string {
  const panels: { label: string; unit: string; of: (s: Sample) => number }[] = [
    { label: 'daemon RSS', unit: 'MB', of: (s) => s.daemon.rssMb },
    { label: 'daemon heap after GC / external / glibc arenas+brk', unit: 'MB', of: (s) => s.daemon.heapUsedMb },
    { label: 'tmux server RSS', unit: 'MB', of: (s) => s.tmux.rssMb },
    { label: 'daemon active handles', unit: '', of: (s) => s.daemon.handles },
    { label: 'daemon open fds', unit: '', of: (s) => s.daemon.fds },
  ];
  const extra: Record<string, ((s: Sample) => number)[]> = {
    'daemon heap after GC / external / glibc arenas+brk': [(s) => s.daemon.externalMb, (s) => s.daemon.anon.brkMb + s.daemon.anon.arenasMb],
  };
  const W = 900;
  const PH = 150;
  const L = 70;
  const R = 20;
  const T = 40;
  const GAP = 40;
  const H = T + panels.length * (PH + GAP);
  const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const dash = ['', '6 3'];
  const tMax = Math.max(1, ...runs.flatMap((r) => r.samples.map((s) => s.t)));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="20" font-size="14">${escapeXml(title)}</text>`,
  ];
  const legend = runs.map(
    (r, i) => `<tspan fill="#333" stroke-dasharray="${dash[i % 2]}">${i === 0 ? 'solid' : 'dashed'}: ${escapeXml(r.name)}</tspan>`,
  );
  out.push(`<text x="${W - R}" y="20" text-anchor="end">${legend.join('  ')}</text>`);
  panels.forEach((p, pi) => {
    const y0 = T + pi * (PH + GAP);
    const fns = [p.of, ...(extra[p.label] ?? [])];
    const all = runs.flatMap((r) => r.samples.flatMap((s) => fns.map((fn) => fn(s)))).filter(Number.isFinite);
    let lo = Math.min(...all);
    let hi = Math.max(...all);
    if (!Number.isFinite(lo)) return;
    if (hi - lo < 1e-9) {
      hi += 1;
      lo -= 1;
    }
    const pad = (hi - lo) * 0.05;
    lo -= pad;
    hi += pad;
    const x = (t: number): number => L + ((W - L - R) * t) / tMax;
    const y = (v: number): number => y0 + PH - (PH * (v - lo)) / (hi - lo);
    const warm = runs[0]?.warmT ?? 0;
    out.push(`<rect x="${L}" y="${y0}" width="${x(warm) - L}" height="${PH}" fill="#eee"/>`);
    out.push(`<rect x="${L}" y="${y0}" width="${W - L - R}" height="${PH}" fill="none" stroke="#999"/>`);
    out.push(`<text x="${L}" y="${y0 - 6}">${escapeXml(p.label)}${p.unit ? ` (${p.unit})` : ''}</text>`);
    for (const v of [lo + pad, (lo + hi) / 2, hi - pad]) {
      out.push(`<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${f1(v)}</text>`);
    }
    runs.forEach((r, ri) => {
      fns.forEach((fn, fi) => {
        const d = r.samples
          .filter((s) => Number.isFinite(fn(s)))
          .map((s, i) => `${i === 0 ? 'M' : 'L'}${x(s.t).toFixed(1)},${y(fn(s)).toFixed(1)}`)
          .join(' ');
        out.push(
          `<path d="${d}" fill="none" stroke="${colours[fi % colours.length]}" stroke-width="1.5" stroke-dasharray="${dash[ri % 2]}"/>`,
        );
      });
    });
    if (pi === panels.length - 1) {
      for (let k = 0; k <= 4; k++) {
        const t = (tMax * k) / 4;
        out.push(`<text x="${x(t)}" y="${y0 + PH + 14}" text-anchor="middle">${(t / 60).toFixed(0)} min</text>`);
      }
    }
  });
  out.push(
    `<text x="${L}" y="${H - 6}" fill="#666">grey: warm-up (until every pane's history is full); panel 2: blue heap after GC, red external, green glibc arenas + [heap]</text>`,
  );
  out.push('</svg>');
  return out.join('\n');
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
