import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import type { Executor, ExecutorContext, ExecutorOutput } from '../../src/execution/executors/executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { paramsHashOf } from '../../src/execution/params-fingerprint';
import { echoSuccess } from '../support/echo-usage';
import { eventually } from '../support/http';

/**
 * Streaming through the runtime with the memory store (docs/contract.md, "Streaming"): an
 * `execute_task` with `stream: true` is answered early with the first text and a cursor, polls
 * with the cursor get only what came after it, and the final answer is whole.
 */
type Answer = { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };

let n = 0;
async function rpc(runtime: ExecutionRuntime, method: string, params: unknown, id: string | number = `r-${(n += 1)}`): Promise<Answer> {
  return JSON.parse((await runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method, params, id })))!);
}

/** Polls with the cursor of each answer until success; the texts it got, in order. */
async function pollWithCursor(runtime: ExecutionRuntime, taskId: string, cursor: string | undefined, intervalMs = 15) {
  const pieces: string[] = [];
  const answers: Array<Record<string, any>> = [];
  for (let polls = 0; polls < 500; polls++) {
    const { result, error } = await rpc(runtime, 'get_task_result', { task_id: taskId, ...(cursor === undefined ? {} : { cursor }) });
    if (error) throw new Error(`get_task_result failed: ${JSON.stringify(error)}`);
    answers.push(result!);
    if (result!.status === 'success') return { pieces, answers, final: result!.response_text as string, cursor };
    if (result!.text !== undefined) pieces.push(result!.text);
    expect(result!.cursor).toBe(String(Number(cursor ?? 0) + (result!.text?.length ?? 0)));
    cursor = result!.cursor;
    await sleep(intervalMs);
  }
  throw new Error('the task never finished');
}

const runtimeWith = (env: Record<string, string>, executor?: Executor) => createExecutionRuntime({ config: loadExecutionConfig(env), ...(executor ? { executor } : {}) });

describe('execute_task with stream: true (memory store)', () => {
  it('answers accepted with the first words and a cursor soon after they come, then polls with the cursor get the rest, piece by piece', async () => {
    // Prepare
    const runtime = runtimeWith({ ECHO_STREAM_MS: '40', STREAM_FIRST_TEXT_MS: '100', SYNC_BUDGET_MS: '5000' });
    const text = 'one two three four five six seven eight nine ten';
    // Act
    const { result } = await rpc(runtime, 'execute_task', { text, stream: true });
    const polled = await pollWithCursor(runtime, result!.task_id, result!.cursor);
    // Assess
    expect(result).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/), text: expect.stringMatching(/^echo: /), cursor: String(result!.text.length) });
    // Answered before the task ended (it streams on after): at its first words, not at the 5 s budget.
    expect(polled.final).toBe(`echo: ${text}`);
    const streamed = result!.text + polled.pieces.join('');
    expect(polled.final.startsWith(streamed)).toBe(true);
    expect(polled.pieces.length).toBeGreaterThanOrEqual(2);
    expect(streamed.length).toBeGreaterThan(result!.text.length);
  });

  it('keeps the text so far in the task record while it runs, and drops it when the task settles', async () => {
    // Prepare
    const runtime = runtimeWith({ ECHO_STREAM_MS: '30', STREAM_FIRST_TEXT_MS: '10' });
    // Act
    const { result } = await rpc(runtime, 'execute_task', { text: 'a b c d e f', stream: true });
    const during = await runtime.store.get(result!.task_id);
    await pollWithCursor(runtime, result!.task_id, result!.cursor);
    const after = await runtime.store.get(result!.task_id);
    // Assess
    expect(during?.partial?.text).toMatch(/^echo: /);
    expect(during?.partial?.length).toBe(during?.partial?.text.length);
    expect(after?.status).toBe('success');
    expect(after?.partial).toBeUndefined();
  });

  it('a task that finishes within STREAM_FIRST_TEXT_MS is answered with success, as without stream', async () => {
    // Prepare
    const runtime = runtimeWith({ STREAM_FIRST_TEXT_MS: '300' });
    // Act
    const { result } = await rpc(runtime, 'execute_task', { text: 'quick', stream: true });
    // Assess
    expect(result).toEqual(echoSuccess('quick'));
  });

  it('a task with no text yet at the sync budget is accepted with a cursor and no text; polls without new text give the cursor alone', async () => {
    // Prepare
    const runtime = runtimeWith({ SYNC_BUDGET_MS: '50', ECHO_STREAM_MS: '20' });
    // Act
    const { result } = await rpc(runtime, 'execute_task', { text: '#sleep=300 later', stream: true });
    const early = await rpc(runtime, 'get_task_result', { task_id: result!.task_id, cursor: '0' });
    const fresh = await rpc(runtime, 'get_task_result', { task_id: result!.task_id });
    const polled = await pollWithCursor(runtime, result!.task_id, result!.cursor);
    // Assess
    expect(result).toEqual({ status: 'accepted', task_id: expect.any(String), cursor: '0' });
    expect(early.result).toEqual({ status: 'working', task_id: result!.task_id, cursor: '0' });
    expect(fresh.result).toEqual({ status: 'working', task_id: result!.task_id, cursor: '0' });
    expect(polled.final).toBe('echo: #sleep=300 later');
    expect(polled.final.startsWith(polled.pieces.join(''))).toBe(true);
  });

  it('without stream nothing changes, even with ECHO_STREAM_MS set: no text, no cursor, the answer at once', async () => {
    // Prepare
    const runtime = runtimeWith({ SYNC_BUDGET_MS: '50', ECHO_STREAM_MS: '200' });
    // Act
    const quick = await rpc(runtime, 'execute_task', { text: 'many words here' });
    const { result } = await rpc(runtime, 'execute_task', { text: '#sleep=150 slow' });
    const pending = await rpc(runtime, 'get_task_result', { task_id: result!.task_id });
    // Assess
    expect(quick.result).toEqual(echoSuccess('many words here'));
    expect(result).toEqual({ status: 'accepted', task_id: expect.any(String) });
    expect(pending.result).toEqual({ status: 'working', task_id: result!.task_id });
  });

  it('on success a poll gets the whole answer, whatever cursor it sends', async () => {
    // Prepare
    const runtime = runtimeWith({ ECHO_STREAM_MS: '10', STREAM_FIRST_TEXT_MS: '0' });
    const { result } = await rpc(runtime, 'execute_task', { text: 'x y z', stream: true });
    await pollWithCursor(runtime, result!.task_id, result!.cursor);
    // Act
    const answer = await rpc(runtime, 'get_task_result', { task_id: result!.task_id, cursor: '7' });
    // Assess
    expect(answer.result).toEqual(echoSuccess('x y z'));
  });

  it.each([
    ['not a number', 'abc'],
    ['negative', '-1'],
    ['a fraction', '1.5'],
    ['empty', ''],
    ['with spaces', ' 3'],
    ['past what the task produced', '999'],
  ])('refuses a cursor that is %s with -32602, data path "cursor"', async (_what, cursor) => {
    // Prepare
    const runtime = runtimeWith({ SYNC_BUDGET_MS: '20' });
    const { result } = await rpc(runtime, 'execute_task', { text: '#sleep=300 #stream=10 wait', stream: true });
    // Act
    const answer = await rpc(runtime, 'get_task_result', { task_id: result!.task_id, cursor });
    // Assess
    expect(answer.error).toEqual({ code: ErrorCode.InvalidParams, message: 'Invalid params', data: [{ path: 'cursor', message: expect.any(String) }] });
  });

  it('a cursor that is not a string is -32602 too; a well-formed cursor for an unknown task is -32002', async () => {
    // Prepare
    const runtime = runtimeWith({});
    // Act
    const numeric = await rpc(runtime, 'get_task_result', { task_id: 'task-nope', cursor: 3 });
    const unknown = await rpc(runtime, 'get_task_result', { task_id: 'task-nope', cursor: '3' });
    // Assess
    expect(numeric.error).toMatchObject({ code: ErrorCode.InvalidParams, data: [{ path: 'cursor' }] });
    expect(unknown.error).toMatchObject({ code: ErrorCode.TaskNotFound });
  });

  it('a repeated id is the same task whether or not it asks to stream; a repeat that streams gets the text from the start', async () => {
    // Prepare
    const runtime = runtimeWith({ ECHO_STREAM_MS: '40', STREAM_FIRST_TEXT_MS: '30', SYNC_BUDGET_MS: '5000' });
    const params = { text: 'alpha beta gamma delta epsilon zeta', channel: 'C1' };
    const first = await rpc(runtime, 'execute_task', { ...params, stream: true }, 'same-id');
    await sleep(100);
    // Act
    const plain = await rpc(runtime, 'execute_task', params, 'same-id');
    const streaming = await rpc(runtime, 'execute_task', { ...params, stream: true }, 'same-id');
    const otherText = await rpc(runtime, 'execute_task', { ...params, text: 'other', stream: true }, 'same-id');
    // Assess
    expect(first.result).toMatchObject({ status: 'accepted', task_id: expect.any(String) });
    expect(plain.result).toEqual({ status: 'accepted', task_id: first.result!.task_id });
    expect(streaming.result).toEqual({ status: 'accepted', task_id: first.result!.task_id, text: expect.stringMatching(/^echo: alpha /), cursor: String(streaming.result!.text.length) });
    expect(streaming.result!.text.length).toBeGreaterThan(first.result!.text.length);
    expect(streaming.result!.text.startsWith(first.result!.text)).toBe(true);
    expect(otherText.error).toMatchObject({ code: ErrorCode.RequestIdConflict });
  });

  it('stream is left out of the params hash, like messages and attachments: it is how the caller shows the answer', () => {
    expect(paramsHashOf({ text: 'hi', channel: 'C1', stream: true })).toBe(paramsHashOf({ text: 'hi', channel: 'C1' }));
    expect(paramsHashOf({ text: 'hi', channel: 'C1', stream: false })).toBe(paramsHashOf({ text: 'hi', channel: 'C1' }));
    expect(paramsHashOf({ text: 'hi', channel: 'C1', stream: true })).not.toBe(paramsHashOf({ text: 'ho', channel: 'C1', stream: true }));
  });

  it('cancelling a task while it streams stops it: a poll then answers -32003', async () => {
    // Prepare
    const runtime = runtimeWith({ ECHO_STREAM_MS: '50', STREAM_FIRST_TEXT_MS: '10' });
    const { result } = await rpc(runtime, 'execute_task', { text: 'a b c d e f g h', stream: true });
    // Act
    const cancelled = await rpc(runtime, 'cancel_task', { task_id: result!.task_id });
    const poll = await rpc(runtime, 'get_task_result', { task_id: result!.task_id, cursor: result!.cursor });
    // Assess
    expect(cancelled.result).toEqual({ status: 'cancelled', task_id: result!.task_id, usage: expect.objectContaining({ model: 'echo' }) });
    expect(poll.error).toMatchObject({ code: ErrorCode.TaskCancelled });
    expect((await runtime.store.get(result!.task_id))?.partial).toBeUndefined();
  });

  it('a task that fails after it streamed answers its error on the next poll, and its text is dropped', async () => {
    // Prepare
    class HalfWay implements Executor {
      readonly name = 'half-way';
      async execute(_params: ExecuteTaskParams, { onText }: ExecutorContext): Promise<ExecutorOutput> {
        onText?.('the start of ');
        await sleep(150);
        throw new RpcError(ErrorCode.ModelUnavailable, 'The model stopped answering mid-way', { retryable: true });
      }
    }
    const runtime = runtimeWith({ STREAM_FIRST_TEXT_MS: '20' }, new HalfWay());
    // Act
    const { result } = await rpc(runtime, 'execute_task', { text: 'go', stream: true });
    // The next poll once the executor has failed (whenever that is on this machine).
    await eventually(async () => ((await runtime.store.get(result!.task_id))?.status === 'failed' ? true : undefined), 10_000);
    const poll = await rpc(runtime, 'get_task_result', { task_id: result!.task_id, cursor: result!.cursor });
    // Assess
    expect(result).toEqual({ status: 'accepted', task_id: expect.any(String), text: 'the start of ', cursor: '13' });
    expect(poll.error).toMatchObject({ code: ErrorCode.ModelUnavailable, data: { retryable: true } });
    expect((await runtime.store.get(result!.task_id))?.partial).toBeUndefined();
  });

  it('a repeated id of a task that failed transiently runs again and streams afresh, from the start', async () => {
    // Prepare
    let attempt = 0;
    class FlakyThenFine implements Executor {
      readonly name = 'flaky';
      async execute(_params: ExecuteTaskParams, { onText }: ExecutorContext): Promise<ExecutorOutput> {
        attempt += 1;
        if (attempt === 1) {
          onText?.('first try ');
          await sleep(60);
          throw new RpcError(ErrorCode.ModelThrottled, 'The model is busy; try again shortly', { retryable: true });
        }
        onText?.('second ');
        await sleep(60);
        onText?.('try');
        await sleep(60);
        return { response_text: 'second try' };
      }
    }
    const runtime = runtimeWith({ STREAM_FIRST_TEXT_MS: '10' }, new FlakyThenFine());
    const first = await rpc(runtime, 'execute_task', { text: 'go', stream: true }, 'retry-id');
    // The repeat once the first attempt has failed.
    await eventually(async () => ((await runtime.store.get(first.result!.task_id))?.status === 'failed' ? true : undefined), 10_000);
    // Act
    const again = await rpc(runtime, 'execute_task', { text: 'go', stream: true }, 'retry-id');
    const polled = await pollWithCursor(runtime, again.result!.task_id, again.result!.cursor);
    // Assess
    expect(first.result).toMatchObject({ text: 'first try ' });
    expect(again.result).toEqual({ status: 'accepted', task_id: first.result!.task_id, text: 'second ', cursor: '7' });
    expect(polled.final).toBe('second try');
    expect(again.result!.text + polled.pieces.join('')).toBe('second try');
  });
});
