import { setTimeout as sleep } from 'node:timers/promises';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { ExecuteTaskProtocol } from '../../src/protocols/execute-task';
import { InProcessTransport } from '../../src/transport/in-process';

/**
 * Every task pays (docs/contract.md, "Usage"): a task that fails or is cancelled reports what it
 * used, as a success does — in the error's `data.usage`, and in `cancel_task`'s result — through
 * the runtime with the echo executor (a token a word).
 */
type Answer = { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };

let n = 0;
async function rpc(runtime: ExecutionRuntime, method: string, params: unknown): Promise<Answer> {
  return JSON.parse((await runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method, params, id: `u-${(n += 1)}` })))!);
}

const runtimeWith = (env: Record<string, string>) => createExecutionRuntime({ config: loadExecutionConfig(env) });

/** Polls until the task has streamed at least `words` words of its answer. */
async function untilStreamed(runtime: ExecutionRuntime, taskId: string, words: number): Promise<void> {
  for (let polls = 0; polls < 1_000; polls++) {
    const { result } = await rpc(runtime, 'get_task_result', { task_id: taskId, cursor: '0' });
    if ((result?.text ?? '').trim().split(/\s+/).length >= words) return;
    await sleep(10);
  }
  throw new Error('the task never streamed that much');
}

describe('usage of tasks that do not succeed', () => {
  it('a failed task answers its error with data.usage: the input it read', async () => {
    const runtime = runtimeWith({});
    const { error } = await rpc(runtime, 'execute_task', { text: 'please #fail now', messages: [{ role: 'user', text: 'two words', ts: '1.0' }] });
    expect(error).toMatchObject({ code: -32000, data: { usage: { input_tokens: 5, output_tokens: 0, model: 'echo' } } });
  });

  it('a task cancelled while it streams: cancel_task and every later get_task_result carry what it used so far', async () => {
    const runtime = runtimeWith({ ECHO_STREAM_MS: '30', SYNC_BUDGET_MS: '50', STREAM_FIRST_TEXT_MS: '50' });
    const text = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const { result } = await rpc(runtime, 'execute_task', { text, stream: true });
    await untilStreamed(runtime, result!.task_id, 4);
    const cancelled = await rpc(runtime, 'cancel_task', { task_id: result!.task_id });
    expect(cancelled.result).toMatchObject({ status: 'cancelled', usage: { input_tokens: 40, model: 'echo' } });
    const output = cancelled.result!.usage.output_tokens as number;
    // Stopped midway: more than nothing, less than the whole answer (41 words with "echo:").
    expect(output).toBeGreaterThanOrEqual(4);
    expect(output).toBeLessThan(41);
    const polled = await rpc(runtime, 'get_task_result', { task_id: result!.task_id });
    expect(polled.error).toMatchObject({ code: -32003, data: { usage: { input_tokens: 40, output_tokens: output } } });
    const again = await rpc(runtime, 'cancel_task', { task_id: result!.task_id });
    expect(again.result).toEqual({ status: 'cancelled', task_id: result!.task_id, usage: cancelled.result!.usage });
  });

  it('a task cancelled before it used anything answers as before, with no usage', async () => {
    const runtime = runtimeWith({ SYNC_BUDGET_MS: '20' });
    const { result } = await rpc(runtime, 'execute_task', { text: 'slow #sleep=5000' });
    const cancelled = await rpc(runtime, 'cancel_task', { task_id: result!.task_id });
    expect(cancelled.result).toEqual({ status: 'cancelled', task_id: result!.task_id });
    const polled = await rpc(runtime, 'get_task_result', { task_id: result!.task_id });
    expect(polled.error).toMatchObject({ code: -32003 });
    expect(polled.error!.data).toBeUndefined();
  });

  it('the execute-task protocol hands a failure its usage, so the verification zone can charge it', async () => {
    const runtime = runtimeWith({});
    const protocol = new ExecuteTaskProtocol();
    const transport = new InProcessTransport(runtime.dispatch);
    const outcome = await protocol.start({ requestId: 'charged-failure', params: { text: 'one two #fail' } }, { transport, sessionKey: 'k' });
    expect(outcome).toMatchObject({ kind: 'failure', code: -32000, usage: { input_tokens: 3, output_tokens: 0, model: 'echo' } });
  });
});
