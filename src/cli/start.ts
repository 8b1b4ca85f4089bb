import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalStack } from '../local/local-stack';
import { stopOnSignals } from '../local/server-lifecycle';
import type { Command } from './command';

/** Where `zone start` leaves a generated signing secret for `zone say` (0600, removed on stop). */
export function localSecretFile(port: number | string): string {
  return join(tmpdir(), `slack-zone-bridge-${port}.secret`);
}

export const startCommand: Command = {
  name: 'start',
  summary: 'run both zones locally: Slack ingress + playground on :3000, execution runtime on :8080',
  usage: `zone start [--verification-port 3000] [--execution-port 8080]

Runs the verification zone (Slack ingress at /slack/events, playground at /) and the execution
runtime on loopback in one process, with in-memory queues and stores. Environment:
  TRANSPORT            https (default, to the local runtime) | in-process | agentcore (local emulator)
  EXECUTION_PROTOCOL   execute-task (default) | a2a | simple-a2a
  EXECUTION_URL        use another execution agent instead of the local runtime
  SLACK_SIGNING_SECRET generated and printed when unset
  SLACK_BOT_TOKEN      post replies to the Slack Web API (SLACK_API_URL); unset: print them here
  EXECUTOR, ECHO_DELAY_MS, SYNC_BUDGET_MS, POLL_*, ALLOWED_*, RATE_LIMIT_PER_MINUTE, …`,
  async run(args) {
    const { values } = parseArgs({ args, options: { 'verification-port': { type: 'string' }, 'execution-port': { type: 'string' } } });
    process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
    const stack = await startLocalStack({
      ...(values['verification-port'] ? { verificationPort: Number(values['verification-port']) } : {}),
      ...(values['execution-port'] ? { executionPort: Number(values['execution-port']) } : {}),
    });
    const port = new URL(stack.ingressUrl).port;
    const secretFile = localSecretFile(port);
    if (stack.signingSecretGenerated) writeFileSync(secretFile, stack.signingSecret, { mode: 0o600 });

    const lines = [
      '',
      'slack-zone-bridge is running locally',
      '',
      `  playground          ${stack.playgroundUrl}`,
      `  Slack ingress       POST ${stack.ingressUrl}`,
      stack.executionUrl ? `  execution runtime   POST ${stack.executionUrl}  (${stack.runtime?.card.executor} executor)` : `  execution agent     ${process.env.EXECUTION_URL ?? 'from EXECUTION_AGENTS'}`,
      stack.agentCoreEndpoint ? `  AgentCore emulator  ${stack.agentCoreEndpoint}` : undefined,
      `  transport           ${stack.agent.transport} · protocol ${stack.agent.protocol}`,
      `  replies             ${stack.consoleReplies ? 'printed here (set SLACK_BOT_TOKEN to post to Slack)' : `Slack Web API at ${process.env.SLACK_API_URL ?? 'https://slack.com/api/'}`}`,
      stack.signingSecretGenerated
        ? `  signing secret      ${stack.signingSecret}  (generated; set SLACK_SIGNING_SECRET to choose one)`
        : '  signing secret      from SLACK_SIGNING_SECRET',
      '',
      'Try it:',
      `  open ${stack.playgroundUrl}`,
      `  npx zone say "hello"${port === '3000' ? '' : ` --url ${stack.ingressUrl}`}`,
      `  curl -s ${stack.executionUrl ?? 'http://127.0.0.1:8080/invocations'} -d '{"jsonrpc":"2.0","id":"1","method":"execute_task","params":{"text":"hi"}}'`,
      '',
      'Ctrl-C stops it.',
      '',
    ];
    process.stdout.write(lines.filter((line) => line !== undefined).join('\n'));
    stack.traces.subscribe((event) => process.stdout.write(`  · ${event.requestId.slice(0, 8)} ${event.hop}${event.detail ? ` ${compact(event.detail)}` : ''}\n`));

    await stopOnSignals([], async () => {
      rmSync(secretFile, { force: true });
      await stack.stop();
    });
    return 0;
  },
};

function compact(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
}
