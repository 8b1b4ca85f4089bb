import type { CaseResult, CaseStatus, ConformanceReport } from './runner';

/**
 * The conformance report as text: a table (case, expectation, result, ms) whose rows can be
 * printed as each case finishes, then what went wrong and why it matters, then a verdict.
 */
const LABEL: Record<CaseStatus, string> = { pass: 'pass', fail: 'FAIL', warn: 'warn', skip: 'skip' };

export type TableLayout = { header(): string; row(result: CaseResult): string };

/** Column widths come from the case list, so rows can be printed before all cases have run. */
export function tableLayout(cases: ReadonlyArray<{ id: string; expectation: string }>): TableLayout {
  const idWidth = Math.max('case'.length, ...cases.map((c) => c.id.length));
  const expectationWidth = Math.max('expectation'.length, ...cases.map((c) => c.expectation.length));
  const line = (id: string, expectation: string, result: string, ms: string) =>
    `${id.padEnd(idWidth)}  ${expectation.padEnd(expectationWidth)}  ${result.padEnd(6)}${ms.padStart(7)}`;
  return {
    header: () => `${line('case', 'expectation', 'result', 'ms')}\n${'-'.repeat(idWidth + expectationWidth + 19)}`,
    row: (result) => line(result.id, result.expectation, LABEL[result.status], String(result.ms)),
  };
}

/** One paragraph per case that did not simply pass: what happened and why it matters. */
export function formatDetails(results: readonly CaseResult[]): string {
  const order: CaseStatus[] = ['fail', 'warn', 'skip'];
  const lines: string[] = [];
  for (const status of order) {
    for (const result of results.filter((r) => r.status === status)) {
      lines.push(`${LABEL[status]} ${result.id}: ${result.detail ?? ''}`.trimEnd());
      if (result.why) lines.push(`     why it matters: ${result.why}`);
    }
  }
  return lines.join('\n');
}

export function countByStatus(results: readonly CaseResult[]): Record<CaseStatus, number> {
  const counts: Record<CaseStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const result of results) counts[result.status]++;
  return counts;
}

export function formatSummary(report: ConformanceReport): string {
  const counts = countByStatus(report.results);
  const parts = [`${counts.pass} passed`, `${counts.fail} failed`, `${counts.warn} warned`, `${counts.skip} skipped`];
  const verdict = report.conforms ? 'the agent conforms to the zone contract' : 'the agent does NOT conform to the zone contract';
  const cases = report.results.length === 1 ? '1 case' : `${report.results.length} cases`;
  const stopped = report.stopped ? `stopped early: ${report.stopped}\n` : '';
  return `${stopped}${cases}: ${parts.join(', ')} — ${verdict}`;
}

export function formatHeading(report: Pick<ConformanceReport, 'target' | 'transport'>): string {
  return `zone conformance: ${report.target} over ${report.transport}`;
}

/** The whole report at once (the CLI streams the same pieces as it goes). */
export function formatReport(report: ConformanceReport): string {
  const layout = tableLayout(report.results);
  const details = formatDetails(report.results);
  return [formatHeading(report), '', layout.header(), ...report.results.map(layout.row), '', ...(details ? [details, ''] : []), formatSummary(report)].join('\n');
}
