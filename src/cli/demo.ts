import { parseArgs } from 'node:util';
import { startLocalStack } from '../local/local-stack';
import type { RequestTrace } from '../local/trace-recorder';
import { transportEnvironment } from '../transport/config';
import { transportFlag, type Command } from './command';

const SCENARIOS = [
  { name: 'quick answer', text: 'hello, zones', expect: 'answer' },
  { name: 'streamed answer (held, text as it comes)', text: 'tell me how the two zones meet, word by word #stream=150', expect: 'answer' },
  { name: 'quiet long task (held, let go, polled)', text: 'write a long report #sleep=3500', expect: 'answer' },
  { name: 'failure in the execution zone', text: 'please #fail', expect: 'error' },
] as const;

/**
 * A held stream is let go after this long without text (STREAM_QUIET_S): 1 s here rather than the
 * default 5, so the quiet task shows the hand-over to polling within the demo's few seconds.
 */
const DEMO_QUIET_S = '1';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run four signed events through the local stack and print every hop (npm run demo)',
  usage: `zone demo [--transport https|in-process|agentcore]

Starts both zones in this process (echo executor), sends a quick task, one whose answer streams
(its stream is held and appended to Slack as it comes), a slow quiet one (held, let go after
STREAM_QUIET_S=1 s without text, then polled), and one that fails in the execution zone; prints
each hop with its time and exits 0 only if each got exactly one reply.`,
  async run(args) {
    const { values } = parseArgs({ args, options: { transport: { type: 'string' } } });
    process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
    // The flag is written as the configuration it stands for; the local stack reads it (default: https to its own runtime).
    const kind = transportFlag(values.transport);
    const env = { ...process.env, ...(kind ? transportEnvironment(kind, {}) : {}), SYNC_BUDGET_MS: '1000', POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '2', STREAM_QUIET_S: DEMO_QUIET_S };
    const stack = await startLocalStack({ env, verificationPort: 0, executionPort: 0, replyWriter: () => undefined });
    try {
      process.stdout.write(`local stack: ingress ${stack.ingressUrl} · transport ${stack.agent.transport} · protocol ${stack.agent.protocol}\n\n`);
      const sent = await Promise.all(SCENARIOS.map(async (scenario) => ({ scenario, ...(await stack.say(scenario.text)) })));
      await stack.pipeline.whenIdle({ timeoutMs: 60_000 });
      let allGood = true;
      for (const { scenario, eventId, status } of sent) {
        const trace = stack.traces.byEventId(eventId);
        const replies = repliesOf(stack, trace);
        const ok = status === 200 && replies.length === 1 && trace?.events.some((e) => e.hop === 'reply-queued' && e.detail?.kind === scenario.expect);
        allGood &&= Boolean(ok);
        process.stdout.write(`${ok ? '✔' : '✘'} ${scenario.name}: "${scenario.text}"  (HTTP ${status}, ${replies.length} reply)\n`);
        process.stdout.write(table(trace));
        for (const reply of replies) process.stdout.write(`    reply: ${reply.text}\n`);
        process.stdout.write('\n');
      }
      process.stdout.write(allGood ? `All ${SCENARIOS.length} got exactly one reply.\n` : 'Some scenario did not get exactly one reply.\n');
      return allGood ? 0 : 1;
    } finally {
      await stack.stop();
    }
  },
};

function repliesOf(stack: Awaited<ReturnType<typeof startLocalStack>>, trace: RequestTrace | undefined) {
  const ts = trace?.events.find((e) => e.hop === 'ingress')?.detail?.ts;
  return stack.consoleReplies?.posted.filter((reply) => reply.threadTs === ts) ?? [];
}

function table(trace: RequestTrace | undefined): string {
  if (!trace) return '    (no trace)\n';
  const start = trace.events[0]?.at ?? 0;
  let previous = start;
  const rows = trace.events.map((event) => {
    const line = `    ${`+${event.at - start}`.padStart(7)} ms ${`(${event.at - previous})`.padStart(8)}  ${event.hop.padEnd(13)} ${detail(event.detail)}`;
    previous = event.at;
    return line;
  });
  return `    ${'elapsed'.padStart(10)} ${'step'.padStart(8)}  hop\n${rows.join('\n')}\n`;
}

function detail(value: Record<string, unknown> | undefined): string {
  if (!value) return '';
  const keep = ['transport', 'protocol', 'task_id', 'hold_ms', 'chars', 'attempt', 'outcome', 'state', 'kind', 'code', 'next_poll_s'];
  return keep.filter((key) => value[key] !== undefined).map((key) => `${key}=${String(value[key])}`).join(' ');
}
