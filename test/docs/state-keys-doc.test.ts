import * as fs from 'node:fs';
import * as path from 'node:path';
import type { VerificationFunction } from '../../src/verification/pipeline-settings';
import { STATE_KEYS } from '../../src/verification/stores/state-keys';

/**
 * docs/deploy.md, "Who may touch which keys": its table lists each state-table key prefix and the
 * functions granted it, as src/verification/stores/state-keys.ts (which CDK grants from) does.
 */
const FUNCTION_NAMES: Record<VerificationFunction, string> = {
  slackEvents: 'slack-events',
  agentInvoker: 'agent-invoker',
  asyncResult: 'async-result',
  slackPoster: 'slack-poster',
};

function prefixTable(): Array<{ prefix: string; functions: string }> {
  const text = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'deploy.md'), 'utf8');
  const lines = text.split('\n');
  const header = lines.findIndex((line) => /^\| prefix \| functions \|/.test(line));
  expect(header).toBeGreaterThan(0);
  const rows: Array<{ prefix: string; functions: string }> = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [prefix, functions] = line.split('|').slice(1, 3).map((cell) => cell.trim());
    rows.push({ prefix: prefix!.replace(/^`|`$/g, ''), functions: functions! });
  }
  return rows;
}

describe('docs/deploy.md, who may touch which keys', () => {
  it('lists every prefix of the key list, in its order, with the functions granted it', () => {
    const documented = prefixTable();
    const listed = Object.values(STATE_KEYS).map((key) => ({ prefix: key.prefix, functions: key.usedBy.map((fn) => FUNCTION_NAMES[fn]).join(', ') }));
    expect(documented).toEqual(listed);
  });
});
