// The soak benchmarks' report (soak-ingest.ts, soak-serve.ts): the table of
// samples and the plateau verdict on a series of them.
//
// What "plateau" is judged by. A soak samples a process every interval; the
// first third of the samples is warm-up (heaps growing to their working
// size, JIT, caches, the first merges or the first pages of the shards a
// query touches) and is left out. The middle third is the reference and the
// last third is compared with it, twice:
//   peak:  max(last third)    - max(middle third)
//   level: median(last third) - median(middle third)
// against an allowance of max(floor, share x max(middle third)). Both within
// it: FLAT. Both beyond it: RISING, the shape of a leak (memory that grows
// with time under a steady load raises the typical sample, not only one
// outlier). One beyond, the other not: a SPIKE (a collection that came late,
// a merge caught mid-way), reported but not a leak. A leak slower than the
// allowance per third escapes this; the least-squares slope over the middle
// and last thirds, printed beside it, is there for that judgement.
// Each benchmark says which series decide its exit status, and why.

import { fmt } from './common.js';

export interface Column<S> {
  head: string;
  cell: (s: S) => string;
}

/** The samples as a fixed-width table, one line per sample under a header. */
export function sampleTable<S>(samples: readonly S[], columns: readonly Column<S>[]): string[] {
  const cells = samples.map((s) => columns.map((c) => c.cell(s)));
  const widths = columns.map((c, i) => Math.max(c.head.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) => row.map((v, i) => v.padStart(widths[i]!)).join('  ');
  return [line(columns.map((c) => c.head)), ...cells.map(line)];
}

export type PlateauVerdict = 'flat' | 'rising' | 'spike' | 'too few samples';

export interface Plateau {
  verdict: PlateauVerdict;
  /** One line: the figures and the verdict. */
  text: string;
}

export interface PlateauRule {
  /** What the series is, for the text ("RssAnon"). */
  label: string;
  /** Unit of the printed figures, and the divisor from the series' unit to it (2**20 for bytes in MiB). */
  unit: string;
  scale: number;
  /** Growth always allowed, in the series' unit. */
  floor: number;
  /** Growth allowed as a share of the middle third's peak. */
  share: number;
}

const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Least-squares slope of `values` over `minutes`, per hour. */
function slopePerHour(minutes: readonly number[], values: readonly number[]): number {
  const n = values.length;
  const mx = minutes.reduce((a, b) => a + b, 0) / n;
  const my = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (minutes[i]! - mx) * (values[i]! - my);
    den += (minutes[i]! - mx) ** 2;
  }
  return den > 0 ? (num / den) * 60 : NaN;
}

/** The verdict on one series sampled at `minutes` (see the top of this file). */
export function judgePlateau(minutes: readonly number[], values: readonly number[], rule: PlateauRule): Plateau {
  const n = values.length;
  if (n < 3 || values.some((v) => !Number.isFinite(v))) {
    return { verdict: 'too few samples', text: `${rule.label}: ${n} samples${n >= 3 ? ', some missing' : ''}: not judged` };
  }
  const a = Math.floor(n / 3);
  const b = Math.floor((2 * n) / 3);
  const middle = values.slice(a, b);
  const last = values.slice(b);
  const peak = Math.max(...last) - Math.max(...middle);
  const level = median(last) - median(middle);
  const allowance = Math.max(rule.floor, rule.share * Math.max(...middle));
  const verdict: PlateauVerdict = peak <= allowance && level <= allowance ? 'flat'
    : peak > allowance && level > allowance ? 'rising' : 'spike';
  const f = (v: number) => `${fmt(v / rule.scale, rule.scale === 1 ? 0 : 1)}`;
  const sign = (v: number) => (v >= 0 ? `+${f(v)}` : f(v));
  const slope = slopePerHour(minutes.slice(a), values.slice(a));
  return {
    verdict,
    text: `${rule.label}: middle third (samples ${a + 1}-${b}) peak ${f(Math.max(...middle))} median ${f(median(middle))} ${rule.unit}; ` +
      `last third (${b + 1}-${n}) peak ${f(Math.max(...last))} (${sign(peak)}) median ${f(median(last))} (${sign(level)}); ` +
      `allowance ${f(allowance)} ${rule.unit} (the larger of ${f(rule.floor)} and ${Math.round(rule.share * 100)}% of the middle peak); ` +
      `slope over both ${sign(slope)} ${rule.unit}/h: ${verdict.toUpperCase()}`,
  };
}

/** The paragraph every soak prints above its verdicts. */
export const PLATEAU_RULE_TEXT = 'plateau: the first third of the samples is warm-up; the last third is compared with the middle third, ' +
  'its peak and its median, each against an allowance; FLAT when both are within it, RISING (a leak\'s shape) when both ' +
  'exceed it, SPIKE when only one does (bench/soak-report.ts)';
