/**
 * Table cells of the tools' and the bench's reports (npm run model, npm run bench): one way to
 * round a figure, here so the bench (which prices with tools/prices.ts) and the tools share it
 * without importing each other.
 */
/** A number with a sensible number of significant digits for a table cell. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  if (magnitude === 0) return '0';
  return value.toPrecision(2);
}
