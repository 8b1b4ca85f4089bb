import { parseArgs } from 'node:util';
import { localStackBase } from '../local/local-ports';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { systemClock } from '../clock';
import { DynamoDb } from '../aws/dynamodb';
import { DynamoDbUsageStore } from '../verification/stores/dynamodb-usage-store';
import { emptyTotals, lastDays, type UsageRow, type UsageScope, type UsageTotals } from '../verification/stores/usage-store';
import type { Command } from './command';

/** A day's counters, as the local stack serves them (`GET /api/usage`) and a table holds them. */
export type UsageDay = { day: string; rows: UsageRow[] };

const SHOWN: ReadonlyArray<[UsageScope, string]> = [
  ['user', 'by user'],
  ['channel', 'by channel'],
  ['agent', 'by agent'],
  ['team', 'by team'],
];

/** One table per scope of the days' counters summed, biggest first. */
export function usageReport(title: string, days: readonly UsageDay[]): string {
  const totals = new Map<string, UsageRow>();
  for (const { rows } of days) {
    for (const row of rows) {
      const key = `${row.scope}#${row.id}`;
      const sum = totals.get(key) ?? { ...row, ...emptyTotals() };
      for (const field of Object.keys(emptyTotals()) as Array<keyof UsageTotals>) sum[field] += row[field];
      totals.set(key, sum);
    }
  }
  if (totals.size === 0) return `${title}: no usage recorded\n`;
  const header = ['', 'tokens', 'input', 'output', 'cache', 'tasks', 'refused'];
  const lines: string[] = [`${title}:`];
  for (const [scope, heading] of SHOWN) {
    const rows = [...totals.values()].filter((row) => row.scope === scope).sort((a, b) => b.tokens - a.tokens || a.id.localeCompare(b.id));
    if (!rows.length) continue;
    const cells = rows.map((row) => [row.id, row.tokens, row.input_tokens, row.output_tokens, row.cache_read_tokens + row.cache_write_tokens, row.tasks, row.refused].map((value) => (typeof value === 'number' ? value.toLocaleString('en-US') : value)));
    const table = [[heading, ...header.slice(1)], ...cells];
    const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
    lines.push('', ...table.map((row) => `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')}`));
  }
  return `${lines.join('\n')}\n`;
}

export const usageCommand: Command = {
  name: 'usage',
  summary: "today's and the last days' token usage by user, channel and agent (the local stack, or a deployment's table)",
  usage: `zone usage [--days 7] [--verification-port 3000] [--url http://127.0.0.1:3000] [--table <name> [--region <region>]] [--json]

Prints today's token usage (UTC) and the last --days days' totals, by user, channel, agent and
team: tokens (input + output + cache), tasks settled, tasks refused by a budget.

By default from the local stack \`zone start\` runs (on VERIFICATION_PORT, default 3000), served
to this machine only. With --table, from a deployment's state table (the VerificationZone's
StateTable), read with your AWS credentials (the SDK's usual chain: environment, profile, SSO;
dynamodb:GetItem on the table).

  --days N   how many days the second table sums, today included (default 7, at most 400)
  --json     the days' counters as JSON`,
  async run(args) {
    const { values } = parseArgs({ args, options: { days: { type: 'string' }, 'verification-port': { type: 'string' }, url: { type: 'string' }, table: { type: 'string' }, region: { type: 'string' }, json: { type: 'boolean' } } });
    const count = Number(values.days ?? 7);
    if (!Number.isInteger(count) || count < 1 || count > 400) throw new Error(`--days must be a whole number from 1 to 400, not ${JSON.stringify(values.days)}`);
    const days = values.table ? await fromTable(values.table, values.region, count) : await fromLocalStack(localStackBase(values, process.env), count);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(days, null, 2)}\n`);
      return 0;
    }
    const [today] = days;
    process.stdout.write(`${usageReport(`today (${today!.day}, UTC)`, [today!])}\n${usageReport(`last ${count} day${count === 1 ? '' : 's'} (${days.at(-1)!.day} to ${today!.day})`, days)}`);
    return 0;
  },
};

async function fromLocalStack(base: string, count: number): Promise<UsageDay[]> {
  const url = new URL(`/api/usage?days=${count}`, base);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const answer = (await response.json()) as { days?: UsageDay[]; error?: string };
    if (!response.ok || !answer.days) throw new Error(answer.error ?? `HTTP ${response.status}`);
    return answer.days;
  } catch (error) {
    throw new Error(`could not read the usage from ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
  }
}

async function fromTable(tableName: string, region: string | undefined, count: number): Promise<UsageDay[]> {
  // The SDK resolves the operator's credentials (profile, SSO, environment); the project's own client makes the calls.
  const sdk = new DynamoDBClient(region ? { region } : {});
  try {
    const [credentials, resolvedRegion] = await Promise.all([sdk.config.credentials(), sdk.config.region()]);
    const store = new DynamoDbUsageStore({ dynamodb: new DynamoDb({ region: resolvedRegion, credentials }), tableName });
    const days: UsageDay[] = [];
    for (const day of lastDays(systemClock.now(), count)) days.push({ day, rows: await store.day(day) });
    return days;
  } finally {
    sdk.destroy();
  }
}
