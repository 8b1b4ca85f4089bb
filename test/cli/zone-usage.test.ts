import { DynamoDbUsageStore } from '../../src/verification/stores/dynamodb-usage-store';
import { utcDay } from '../../src/verification/stores/usage-store';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { echoUsage } from '../support/echo-usage';
import { runZone, spawnZone } from '../support/spawn';

/** The table of one scope in `zone usage`'s output: its rows as [id, tokens, input, output, cache, tasks, refused]. */
function section(output: string, title: string, heading: string): string[][] {
  const part = output.slice(output.indexOf(title));
  const lines = part.split('\n');
  const start = lines.findIndex((line) => line.trim().startsWith(heading));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ') || line.trim() === '' || line.trim().startsWith('by ')) break;
    rows.push(line.trim().split(/\s{2,}/));
  }
  return rows;
}

describe('zone usage (real processes)', () => {
  it('prints today\'s and the last days\' totals by user, channel and agent from the running local stack', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, playground] = await stack.waitFor(/playground\s+(http:\/\/\S+)/);
      const local = { VERIFICATION_PORT: new URL(playground!).port };

      const none = await runZone(['usage'], local);
      expect(none.code).toBe(0);
      expect(none.output).toMatch(/^today \(\d{4}-\d\d-\d\d, UTC\): no usage recorded\n\nlast 7 days \(\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\): no usage recorded\n$/);

      for (const text of ['one two three', 'four five']) expect((await runZone(['say', text, '--wait', '10'], local)).code).toBe(0);
      const tokens = [echoUsage('one two three'), echoUsage('four five')].reduce((sum, usage) => sum + usage.input_tokens + usage.output_tokens, 0);

      const shown = await runZone(['usage', '--days', '3'], local);
      expect(shown.code).toBe(0);
      for (const title of ['today (', 'last 3 days (']) {
        const [user] = section(shown.output, title, 'by user');
        expect(user).toEqual([expect.stringMatching(/^T\w+\/ULOCALUSER$/), String(tokens), '5', String(tokens - 5), '0', '2', '0']);
        expect(section(shown.output, title, 'by channel')[0]).toEqual([expect.stringMatching(/^T\w+\/CLOCAL$/), String(tokens), '5', String(tokens - 5), '0', '2', '0']);
        expect(section(shown.output, title, 'by agent')[0]).toEqual(['default', String(tokens), '5', String(tokens - 5), '0', '2', '0']);
      }

      const json = await runZone(['usage', '--json', '--days', '2'], local);
      const days = JSON.parse(json.output) as Array<{ day: string; rows: Array<{ scope: string; tokens: number }> }>;
      expect(days.map((day) => day.day)).toEqual([utcDay(Date.now()), utcDay(Date.now() - 86_400_000)]);
      expect(days[0]!.rows.find((row) => row.scope === 'user')?.tokens).toBe(tokens);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 120_000);

  it('reads a deployment\'s state table with --table (here dynalite, with the operator\'s credentials from the environment)', async () => {
    let db: LocalDynamoDb | undefined;
    try {
      db = await startLocalDynamoDb();
      await createTable(db.client, 'VerificationZone-StateTable', 'pk', 'expires_at');
      const store = new DynamoDbUsageStore({ dynamodb: db.dynamodb, tableName: 'VerificationZone-StateTable' });
      const today = utcDay(Date.now());
      const usage = { input_tokens: 1200, output_tokens: 300 };
      await store.charge(today, 'r1', [{ scope: 'user', id: 'T1/U1', delta: { usage, tasks: 1 } }, { scope: 'agent', id: 'bedrock', delta: { usage, tasks: 1 } }], 3600);
      await store.charge(utcDay(Date.now() - 86_400_000), 'r2', [{ scope: 'user', id: 'T1/U1', delta: { usage, tasks: 1 } }], 3600);

      const result = await runZone(['usage', '--table', 'VerificationZone-StateTable', '--region', 'us-east-1', '--days', '2'], {
        AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_PROFILE: '',
      });
      expect(result.code).toBe(0);
      expect(section(result.output, 'today (', 'by user')).toEqual([['T1/U1', '1,500', '1,200', '300', '0', '1', '0']]);
      expect(section(result.output, 'last 2 days (', 'by user')).toEqual([['T1/U1', '3,000', '2,400', '600', '0', '2', '0']]);
      expect(section(result.output, 'last 2 days (', 'by agent')).toEqual([['bedrock', '1,500', '1,200', '300', '0', '1', '0']]);
    } finally {
      await db?.close();
    }
  }, 60_000);

  it('explains what is missing when no local stack listens', async () => {
    const result = await runZone(['usage', '--verification-port', '9']);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/could not read the usage from http:\/\/127\.0\.0\.1:9\/api\/usage\?days=7 \(is `npx zone start` running\?\)/);
  });
});
