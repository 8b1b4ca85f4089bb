import { formatNumber } from '../tools/format-number';
/**
 * The bench's arithmetic: medians, percentiles and how figures are written. Pure, so the unit
 * tests in test/bench/ can pin it down without timing anything.
 */

/** Median (min–max) of a sample, the way every figure in RESULTS.md is reported. */
export type Summary = { median: number; min: number; max: number; n: number };

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty sample');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The p-th percentile (0–100) by the nearest-rank method: the smallest value with at least p % of
 * the sample at or below it. p99 of 300 latencies is the 297th smallest.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of an empty sample');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0–100, got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError('summary of an empty sample');
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return { median: median(values), min, max, n: values.length };
}

/** Element-wise a[i] / b[i]: ratios of measurements taken side by side in the same round. */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new RangeError(`paired samples differ in length: ${a.length} vs ${b.length}`);
  return a.map((value, index) => value / b[index]!);
}

/** Element-wise a[i] - b[i]. */
export function pairedDifferences(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new RangeError(`paired samples differ in length: ${a.length} vs ${b.length}`);
  return a.map((value, index) => value - b[index]!);
}

/** `12.3 (11.9–13.0)`, with an optional unit after the median. */
export function formatSummary(summary: Summary, unit = ''): string {
  const suffix = unit ? ` ${unit}` : '';
  if (summary.n === 1 || summary.min === summary.max) return `${formatNumber(summary.median)}${suffix}`;
  return `${formatNumber(summary.median)}${suffix} (${formatNumber(summary.min)}–${formatNumber(summary.max)})`;
}

/** `0.42×` (or `0.42× (0.40–0.45)` for a summary of ratios). */
export function formatRatio(ratio: number | Summary): string {
  if (typeof ratio === 'number') return `${formatNumber(ratio)}×`;
  if (ratio.n === 1 || ratio.min === ratio.max) return `${formatNumber(ratio.median)}×`;
  return `${formatNumber(ratio.median)}× (${formatNumber(ratio.min)}–${formatNumber(ratio.max)})`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** Rotates `items` left by `by` places: round r of a comparison runs the commands in a new order. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const shift = ((by % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
