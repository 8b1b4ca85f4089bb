import { randomUUID } from 'node:crypto';
import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import type { Executor, ExecutorContext, ExecutorOutput } from '../../src/execution/executors/executor';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskStoreFullError } from '../../src/execution/stores/task-store';
import { eventually, post } from '../support/http';
import { startExecutionRuntime } from '../support/execution-runtime';
import { manualClock } from '../support/manual-clock';
import { recordsOn } from './task-records';

/**
 * The memory task store is bounded in bytes, not only in records (issue 25, item 7): a process
 * that answers many large tasks keeps what it remembers of them under TASK_STORE_MAX_BYTES by
 * forgetting the oldest finished tasks first, never a running one; when the running tasks alone
 * hold the bound, a new task is refused with -32004.
 */

const clock = manualClock();
const record = recordsOn(clock, 600);
const success = (text: string) => ({ status: 'success' as const, response_text: text });

describe('MemoryTaskStore: a bound in bytes', () => {
  it('keeps what it accounts under maxBytes while ten times that finishes: the oldest finished tasks go, the running ones stay', async () => {
    // Prepare: two running tasks, one of them streaming 100,000 characters so far
    const MAX = 1_000_000;
    const store = new MemoryTaskStore({ maxBytes: MAX, clock });
    await store.create(record('running-1'), 'key-running-1');
    await store.create(record('running-2'));
    await store.take('running-2', { owner: 'me', until: clock.now() + 60_000 }, true);
    await store.transition('running-2', ['working'], { status: 'working', partial: { text: 'p'.repeat(100_000), length: 100_000 }, owner: 'me' });
    // Act: 200 tasks of 25,000-character answers (50,000 bytes at 2 a character) finish one after another
    const peaks: number[] = [];
    for (let i = 0; i < 200; i++) {
      await store.create(record(`done-${i}`), `key-done-${i}`);
      await store.transition(`done-${i}`, ['accepted'], { status: 'success', result: success(String(i % 10).repeat(25_000)) });
      peaks.push(store.bytes);
    }
    // Assess
    expect(Math.max(...peaks)).toBeLessThanOrEqual(MAX);
    expect(store.bytes).toBeGreaterThan(MAX - 60_000);
    expect(await store.get('done-0')).toBeUndefined();
    expect(await store.getByRequest('key-done-0')).toBeUndefined();
    expect(await store.get('done-150')).toBeUndefined();
    expect((await store.get('done-199'))?.result).toEqual(success('9'.repeat(25_000)));
    expect(store.size).toBeLessThan(25);
    expect((await store.getByRequest('key-running-1'))?.status).toBe('accepted');
    expect((await store.get('running-2'))?.partial?.length).toBe(100_000);
  });

  it('counts streamed text, answers, errors and kept params, and gives them back when a task ends or goes', async () => {
    const store = new MemoryTaskStore({ clock });
    const empty = store.bytes;
    await store.create(record('t'));
    const one = store.bytes - empty;
    await store.take('t', { owner: 'me', until: clock.now() + 60_000 }, true);
    await store.transition('t', ['working'], { status: 'working', partial: { text: 'a'.repeat(10_000), length: 10_000 }, owner: 'me' });
    const streaming = store.bytes;
    await store.putParams('t', `{"text":"${'b'.repeat(50_000)}"}`, Math.floor(clock.now() / 1000) + 600);
    const withParams = store.bytes;
    await store.deleteParams('t');
    const afterParams = store.bytes;
    await store.transition('t', ['working'], { status: 'failed', error: { code: -32000, message: 'm'.repeat(1_000) }, partial: null, owner: 'me' });
    const failed = store.bytes;

    expect(one).toBeGreaterThan(0);
    expect(streaming - empty - one).toBeGreaterThanOrEqual(20_000);
    expect(withParams - streaming).toBeGreaterThanOrEqual(100_000);
    expect(afterParams).toBe(streaming);
    expect(failed - empty - one).toBeGreaterThanOrEqual(2_000);
    expect(failed - empty - one).toBeLessThan(20_000);
  });

  it('refuses a new task when the running tasks alone hold the bound, and takes it once one has finished', async () => {
    const store = new MemoryTaskStore({ maxBytes: 100_000, clock });
    for (const taskId of ['a', 'b']) {
      await store.create(record(taskId));
      await store.take(taskId, { owner: 'me', until: clock.now() + 60_000 }, true);
      await store.transition(taskId, ['working'], { status: 'working', partial: { text: 'x'.repeat(30_000), length: 30_000 }, owner: 'me' });
    }

    const refused = await store.create(record('c'), 'key-c').catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(TaskStoreFullError);
    expect(refused).toMatchObject({ limit: 'bytes', max: 100_000 });
    expect(await store.getByRequest('key-c')).toBeUndefined();
    expect([(await store.get('a'))?.status, (await store.get('b'))?.status]).toEqual(['working', 'working']);
    await store.transition('a', ['working'], { status: 'success', result: success('done'), partial: null, owner: 'me' });
    expect((await store.create(record('c'), 'key-c')).created).toBe(true);
  });
});

describe('TASK_STORE_MAX_BYTES', () => {
  it('defaults to 64 MiB and reaches the memory store the runtime builds', () => {
    expect(loadExecutionConfig({}).TASK_STORE_MAX_BYTES).toBe(64 * 1024 * 1024);
    const store = runtimeFromEnv({ TASK_STORE_MAX_BYTES: '2000000' }).store as MemoryTaskStore;
    expect(store.maxBytes).toBe(2_000_000);
    expect((createExecutionRuntime({ config: loadExecutionConfig({}) }).store as MemoryTaskStore).maxBytes).toBe(64 * 1024 * 1024);
  });

  it('a runtime that answers 400 tasks of 100,000 characters keeps under its bound, and the latest answers can still be polled', async () => {
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ TASK_STORE_MAX_BYTES: String(8 * 1024 * 1024) }) });
    const store = runtime.store as MemoryTaskStore;
    const body = (i: number) => JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: `${i} ${'z'.repeat(100_000)}` }, id: `big-${i}` });
    let peak = 0;
    for (let i = 0; i < 400; i++) {
      const answer = JSON.parse((await runtime.dispatch(body(i)))!);
      expect(answer.result.status).toBe('success');
      peak = Math.max(peak, store.bytes);
    }
    expect(peak).toBeLessThanOrEqual(8 * 1024 * 1024);
    // The newest task is still known by its request id.
    const again = JSON.parse((await runtime.dispatch(body(399)))!);
    expect(again.result.response_text).toBe(`echo: 399 ${'z'.repeat(100_000)}`);
    expect(store.size).toBeLessThan(60);
  });

  it('over HTTP: while streaming tasks hold the store, a new task gets -32004 (limit task_store_bytes); once they finish it runs', async () => {
    // Prepare: an executor that streams 100,000 characters at once, then waits for the test
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const executor: Executor = {
      name: 'streams-a-lot',
      async execute(params: ExecuteTaskParams, { onText }: ExecutorContext): Promise<ExecutorOutput> {
        if (params.text === 'small') return { response_text: 'small answer' };
        const text = 's'.repeat(100_000);
        onText?.(text);
        await gate;
        return { response_text: text };
      },
    };
    const MAX = 300_000;
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '50', STREAM_FIRST_TEXT_MS: '10', TASK_STORE_MAX_BYTES: String(MAX) }, { executor });
    const rpc = async (method: string, params: unknown, id: string = randomUUID()) => JSON.parse((await post(target.invocationsUrl, JSON.stringify({ jsonrpc: '2.0', method, params, id }))).text);
    try {
      const first = await rpc('execute_task', { text: 'long 1', stream: true });
      const second = await rpc('execute_task', { text: 'long 2', stream: true });
      expect([first.result.status, second.result.status]).toEqual(['accepted', 'accepted']);
      expect(first.result.text).toHaveLength(100_000);
      // Act
      const refused = await rpc('execute_task', { text: 'small' }, 'small-1');
      open();
      // Assess
      expect(refused).toEqual({
        jsonrpc: '2.0',
        error: {
          code: ErrorCode.OverCapacity,
          message: expect.stringMatching(/running tasks hold the 300000 bytes the task store keeps/),
          data: { retryable: true, limit: 'task_store_bytes', max: MAX },
        },
        id: 'small-1',
      });
      await eventually(async () => ((await rpc('get_task_result', { task_id: second.result.task_id })).result?.status === 'success' ? true : undefined));
      expect((await rpc('execute_task', { text: 'small' }, 'small-1')).result).toEqual({ status: 'success', response_text: 'small answer' });
    } finally {
      open();
      await target.close();
    }
  });
});
