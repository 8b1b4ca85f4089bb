import { LEVEL_SUMMARY, type DeclaredBy, type Level, type LevelPlan } from './levels';
import { countByStatus, type CaseResult, type CaseStatus, type ConformanceReport, type LevelResult } from './runner';

/**
 * The conformance report as text: which levels are checked and why, a table (case, expectation,
 * result, ms) per level whose rows can be printed as each case finishes, then what went wrong and
 * why it matters, then each level's verdict and the agent's.
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

const WHY_CHECKED: Record<DeclaredBy, string> = { always: 'every execution agent', 'agent card': 'declared by the agent card', '--level': 'asked for with --level' };

/** Which levels are checked and why, which are skipped, and what the agent card said. */
export function formatPlan(plan: LevelPlan): string {
  const by = (declaredBy: DeclaredBy | undefined) => plan.levels.filter((entry) => entry.declaredBy === declaredBy).map((entry) => entry.level);
  const checked = (['always', 'agent card', '--level'] as const).filter((reason) => by(reason).length).map((reason) => `${by(reason).join(', ')} (${WHY_CHECKED[reason]})`);
  const skipped = by(undefined);
  return [`levels checked: ${checked.join('; ')}`, ...(skipped.length ? [`not declared, skipped: ${skipped.join(', ')}`] : []), `agent card: ${plan.card}`].join('\n');
}

/** The line above a level's table. */
export function formatLevelHeading(level: Level, declaredBy: DeclaredBy | undefined): string {
  return `${level} — ${declaredBy ? WHY_CHECKED[declaredBy] : 'not declared'}: ${LEVEL_SUMMARY[level]}`;
}

function countsText(counts: Record<CaseStatus, number>): string {
  const parts = [`${counts.pass} passed`, ...(['fail', 'warn', 'skip'] as const).filter((s) => counts[s]).map((s) => `${counts[s]} ${s === 'fail' ? 'failed' : s === 'warn' ? 'warned' : 'skipped'}`)];
  return parts.join(', ');
}

const LEVEL_LABEL: Record<LevelResult['status'], string> = { pass: 'PASS', fail: 'FAIL', skipped: 'not declared (skipped)', 'not run': 'not run (no case selected)' };

/** One line per level: PASS or FAIL with its counts, or why it did not run. */
export function formatLevels(levels: readonly LevelResult[]): string {
  const width = Math.max(...levels.map((l) => l.level.length));
  const lines = levels.map((l) => `  ${l.level.padEnd(width)}  ${LEVEL_LABEL[l.status]}${l.status === 'pass' || l.status === 'fail' ? `  ${countsText(l.counts)}` : ''}`);
  return ['levels:', ...lines].join('\n');
}

export function formatSummary(report: ConformanceReport): string {
  const counts = countByStatus(report.results);
  const parts = [`${counts.pass} passed`, `${counts.fail} failed`, `${counts.warn} warned`, `${counts.skip} skipped`];
  const failing = report.levels.filter((l) => l.status === 'fail').map((l) => l.level);
  const passing = report.levels.filter((l) => l.status === 'pass').map((l) => l.level);
  const verdict = report.conforms
    ? `the agent conforms to the zone contract (${passing.length ? `levels: ${passing.join(', ')}` : 'no case ran'})`
    : `the agent does NOT conform to the zone contract${failing.length ? ` (failing: ${failing.join(', ')})` : ''}`;
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
  const tables = report.levels
    .filter((l) => report.results.some((r) => r.level === l.level))
    .flatMap((l) => [formatLevelHeading(l.level, l.declaredBy), layout.header(), ...report.results.filter((r) => r.level === l.level).map(layout.row), '']);
  const plan = { levels: report.levels, card: report.card };
  return [formatHeading(report), formatPlan(plan), '', ...tables, ...(details ? [details, ''] : []), formatLevels(report.levels), formatSummary(report)].join('\n');
}
