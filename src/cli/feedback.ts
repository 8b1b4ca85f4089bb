import { parseArgs } from 'node:util';
import { localStackBase } from '../local/local-ports';
import type { FeedbackRecord } from '../verification/surface/feedback-records';
import type { Command } from './command';

export const feedbackCommand: Command = {
  name: 'feedback',
  summary: 'list the feedback people gave the local stack\'s answers (👍 / 👎, what went wrong)',
  usage: `zone feedback [--verification-port 3000] [--url http://127.0.0.1:3000] [--json]

Asks the local stack \`zone start\` runs (on VERIFICATION_PORT, default 3000) for the feedback
recorded on its answers, newest first: the answer's request id, the agent that wrote it, the
user, the rating (the last click counts), what went wrong, and when. Served to this machine only.

  --json   the records as JSON, one array`,
  async run(args) {
    const { values } = parseArgs({ args, options: { 'verification-port': { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } } });
    const base = localStackBase(values, process.env);
    const url = new URL('/api/feedback', base);
    let records: FeedbackRecord[];
    try {
      const response = await fetch(url);
      const answer = (await response.json()) as { feedback?: FeedbackRecord[]; error?: string };
      if (!response.ok || !answer.feedback) throw new Error(answer.error ?? `HTTP ${response.status}`);
      records = answer.feedback;
    } catch (error) {
      throw new Error(`could not read the feedback from ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
      return 0;
    }
    if (records.length === 0) {
      process.stdout.write('no feedback yet\n');
      return 0;
    }
    const rows = records.map((record) => [
      new Date(record.updated_at).toISOString().replace('T', ' ').slice(0, 19),
      record.value === 'positive' ? '👍 positive' : record.value === 'negative' ? '👎 negative' : '—',
      record.agent ?? '—',
      record.user,
      record.request_id,
      record.comment?.replace(/\s+/g, ' ') ?? '—',
    ]);
    const header = ['when (UTC)', 'value', 'agent', 'user', 'answer (request id)', 'comment'];
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
    const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ');
    process.stdout.write(`${records.length} feedback record${records.length === 1 ? '' : 's'}, newest first:\n\n${[header, ...rows].map(line).join('\n')}\n`);
    return 0;
  },
};
