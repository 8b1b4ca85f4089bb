import type { Executor } from '../../src/execution/executors/executor';
import type { Log, LogExtra } from '../../src/observability/logger';
import type { PipelineMetrics } from '../../src/observability/metrics';
import { InProcessTransport } from '../../src/transport/in-process';
import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { createAsyncResult } from '../../src/verification/poll/async-result';
import type { Settled, SettledTask } from '../../src/verification/settle/settled';
import { echoUsage } from '../support/echo-usage';
import { delivery, followUpParts, taskMessage, THREAD } from '../support/follow-up';
import { eventually } from '../support/http';

/**
 * Usage across the zones (docs/contract.md, "Usage"): what the executor reports reaches the
 * verification zone's settlement — its `onSettled` seam, the `task answered` log line and the
 * InputTokens/OutputTokens metrics — whichever way the answer came: at once, through accepted →
 * task store → get_task_result, or as a held stream. Real parts: the execution runtime in this
 * process behind the in-process transport and the execute-task protocol (test/support/follow-up.ts).
 */

type Line = { level: string; message: string; fields: Record<string, unknown> };

/** Log lines with their fields merged (a task log adds its keys as a first extra). */
function recordingLog(lines: Line[]): Log {
  const at = (level: string) => (message: string, ...extra: LogExtra[]) => lines.push({ level, message, fields: Object.assign({}, ...extra.filter((item) => typeof item === 'object' && item !== null)) });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Every metric call, by method name: the settlement's are what is looked at. */
function recordingMetrics(calls: Array<[string, ...unknown[]]>): PipelineMetrics {
  return new Proxy({}, { get: (_target, name) => (...args: unknown[]) => calls.push([String(name), ...args]) }) as PipelineMetrics;
}

function observed(parts: ReturnType<typeof followUpParts>) {
  const lines: Line[] = [];
  const metrics: Array<[string, ...unknown[]]> = [];
  const settled: Array<{ task: SettledTask; settled: Settled }> = [];
  const options = { ...parts.options, log: recordingLog(lines), metrics: recordingMetrics(metrics), onSettled: (task: SettledTask, done: Settled) => void settled.push({ task, settled: done }) };
  return { options, lines, settled, tokens: () => metrics.filter(([name]) => name === 'tokens') };
}

describe('usage reaches the settlement', () => {
  it('of an answer given at once (echo: a token a word)', async () => {
    // Prepare
    const parts = followUpParts();
    const seen = observed(parts);
    const task = taskMessage('how many tokens is this');

    // Act
    await createAgentInvoker(seen.options)(delivery(task), {});

    // Assess
    const usage = echoUsage('how many tokens is this');
    expect(usage).toEqual({ input_tokens: 5, output_tokens: 6, model: 'echo' });
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ ...THREAD, kind: 'answer', text: 'echo: how many tokens is this' })]);
    expect(seen.settled).toEqual([{ task: expect.objectContaining({ request_id: task.request_id }), settled: { ended: 'answered', agent: 'default', usage } }]);
    expect(seen.lines.find((line) => line.message === 'task answered')?.fields).toMatchObject({ request_id: task.request_id, usage });
    expect(seen.tokens()).toEqual([['tokens', 'default', usage]]);
  });

  it('of an answer that was accepted, kept in the task store and polled', async () => {
    // Prepare: past the runtime's 100 ms budget, the task is `accepted` and its answer is kept for the poll.
    const parts = followUpParts();
    const seen = observed(parts);
    const text = 'a slower answer #sleep=150';
    await createAgentInvoker(seen.options)(delivery(taskMessage(text)), {});
    const [poll] = parts.sentPolls();
    expect(seen.settled).toEqual([]);
    await eventually(async () => ((await parts.agent.poll(poll!.message.handle, { requestId: 'look' })).kind === 'pending' ? undefined : true));

    // Act
    await createAsyncResult(seen.options)(delivery(poll!.message), {});

    // Assess
    const usage = echoUsage(text);
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'answer', text: `echo: ${text}` })]);
    expect(seen.settled).toEqual([{ task: expect.objectContaining({ request_id: poll!.message.request_id }), settled: { ended: 'answered', agent: 'default', usage } }]);
    expect(seen.lines.find((line) => line.message === 'task answered')?.fields).toMatchObject({ task_id: poll!.message.handle.taskId, polls: 1, usage });
    expect(seen.tokens()).toEqual([['tokens', 'default', usage]]);
  });

  it('of an answer read as a held stream, its usage on the last event', async () => {
    // Prepare: streamed reads on; the echo hands its answer over a word at a time.
    const parts = followUpParts({ live: true, streamHoldMs: 30_000, transport: (runtime) => new InProcessTransport(runtime.dispatch, runtime.dispatchStream) });
    const seen = observed(parts);
    const text = 'stream these words please #stream=80';

    // Act
    await createAgentInvoker(seen.options)(delivery(taskMessage(text)), { deadline: parts.clock.now() + 60_000 });

    // Assess
    expect(parts.hops.filter((hop) => hop.hop === 'streamed').length).toBeGreaterThan(0);
    expect(parts.sentPolls()).toEqual([]);
    expect(seen.settled).toEqual([{ task: expect.anything(), settled: { ended: 'answered', agent: 'default', usage: echoUsage(text) } }]);
  });

  it('drops a malformed usage with a log line, and the answer stands', async () => {
    // Prepare: an agent that miscounts
    const miscounting: Executor = { name: 'miscounting', execute: async () => ({ response_text: 'a good answer', usage: { input_tokens: -3, output_tokens: 2.5 } }) };
    const parts = followUpParts({ executor: miscounting });
    const seen = observed(parts);

    // Act
    await createAgentInvoker(seen.options)(delivery(taskMessage('count badly')), {});

    // Assess
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'answer', text: 'a good answer' })]);
    // Never free: charged the estimate from characters (11 in, 13 out, a token per 4).
    const estimate = { input_tokens: 3, output_tokens: 4, model: 'estimate' };
    expect(seen.settled).toEqual([{ task: expect.anything(), settled: { ended: 'answered', agent: 'default', usage: estimate, estimated: true } }]);
    const dropped = seen.lines.find((line) => line.level === 'warn' && line.message.includes('usage'));
    expect(dropped?.fields.usage_problem).toMatch(/input_tokens: input_tokens must not be negative; output_tokens: output_tokens must be an integer/);
    expect(seen.lines.find((line) => line.message === 'task answered')?.fields).toMatchObject({ usage: estimate, usage_estimated: true });
    expect(seen.tokens()).toEqual([]);
  });

  it('is estimated from characters, never zero, for an agent that reports none; a failure is charged too', async () => {
    // Prepare
    const silent: Executor = { name: 'silent', execute: async (params) => (params.text.includes('#fail') ? Promise.reject(new Error('no')) : { response_text: 'uncounted' }) };
    const parts = followUpParts({ executor: silent });
    const seen = observed(parts);

    // Act
    await createAgentInvoker(seen.options)(delivery(taskMessage('quiet')), {});
    await createAgentInvoker(seen.options)(delivery(taskMessage('please #fail')), {});

    // Assess
    // "quiet" → "uncounted": 5 and 9 characters; "please #fail" → nothing: 12 and 0 (a token per 4, rounded up).
    expect(seen.settled.map(({ settled }) => settled)).toEqual([
      { ended: 'answered', agent: 'default', usage: { input_tokens: 2, output_tokens: 3, model: 'estimate' }, estimated: true },
      { ended: 'failed', agent: 'default', usage: { input_tokens: 3, output_tokens: 0, model: 'estimate' }, estimated: true },
    ]);
    expect(seen.tokens()).toEqual([]);
  });

  it('charges a failed task the usage its agent reported with the failure (echo: the input it read)', async () => {
    const parts = followUpParts();
    const seen = observed(parts);
    await createAgentInvoker(seen.options)(delivery(taskMessage('three words #fail')), {});
    expect(seen.settled.map(({ settled }) => settled)).toEqual([{ ended: 'failed', agent: 'default', usage: { input_tokens: 3, output_tokens: 0, model: 'echo' } }]);
  });

  it('never charges more than MAX_TASK_TOKENS, whatever the agent reports, and logs what it reported', async () => {
    const greedy: Executor = { name: 'greedy', execute: async () => ({ response_text: 'cheap answer', usage: { input_tokens: 9_000_000_000, output_tokens: 1_000_000_000, model: 'greedy' } }) };
    const parts = followUpParts({ executor: greedy });
    const seen = observed(parts);
    await createAgentInvoker({ ...seen.options, maxTaskTokens: 1_000 })(delivery(taskMessage('lock them out')), {});
    expect(seen.settled.map(({ settled }) => settled)).toEqual([{ ended: 'answered', agent: 'default', usage: { input_tokens: 900, output_tokens: 100, model: 'greedy' } }]);
    expect(seen.lines.find((line) => line.level === 'warn' && line.message.includes('more tokens than one task'))?.fields).toMatchObject({ reported_tokens: 10_000_000_000, max_task_tokens: 1_000 });
  });
});
