import { cpus, loadavg } from 'node:os';

/**
 * The rehearsal's section of bench/RESULTS.md: each function's init duration under the Lambda
 * runtime client on Node 22, from the last green `npm run rehearse`. It sits between two markers
 * so a new rehearsal replaces it, and `npm run bench`, which writes the rest of the file, keeps it
 * (bench/run.ts).
 */
const START = '<!-- rehearsal:start (written by npm run rehearse) -->';
const END = '<!-- rehearsal:end -->';

/** What the section shows of a rehearsal (tools/rehearse/rehearsal.ts's report). */
export type RehearsedInits = { node: string; ric: string; initDurations: ReadonlyArray<{ name: string; ms: number }> };

export function rehearsalSection(report: RehearsedInits, at: Date): string {
  const rows = report.initDurations.map(({ name, ms }) => `| ${name} | ${ms} ms |`).join('\n');
  const load = loadavg().map((n) => n.toFixed(2)).join(' / ');
  return [
    START,
    '## Rehearsal: init duration of every Lambda bundle under the Runtime Interface Client',
    '',
    `From \`npm run rehearse\` on ${at.toISOString()} (docs/deploy.md, "Rehearse before you deploy"): each bundle from \`cdk.out\` started by aws-lambda-ric ${report.ric} on Node ${report.node}, as nodejs22.x starts it, one function at a time; the figure is Lambda's Init Duration as the rehearsal measures it, from spawning the runtime to its first \`/runtime/invocation/next\` (Node's own start included). One sample per function per run, on this ${cpus().length}-core machine (load average ${load} at the end), x86-64 where Lambda runs the functions on arm64: a figure to compare runs with, not Lambda's.`,
    '',
    '| function | init duration |',
    '|---|---|',
    rows,
    END,
  ].join('\n');
}

/** The markdown with its rehearsal section replaced by `section`, or `section` appended. */
export function withRehearsalSection(markdown: string, section: string): string {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start >= 0 && end > start) return `${markdown.slice(0, start)}${section}${markdown.slice(end + END.length)}`;
  return `${markdown.trimEnd()}\n\n${section}\n`;
}

/** The rehearsal section of a RESULTS.md, if it has one (for the bench to carry over). */
export function existingRehearsalSection(markdown: string): string | undefined {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  return start >= 0 && end > start ? markdown.slice(start, end + END.length) : undefined;
}
