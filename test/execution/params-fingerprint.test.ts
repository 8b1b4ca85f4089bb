import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import { DeadlineQueue } from '../../src/execution/deadlines';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { paramsHashOf } from '../../src/execution/params-fingerprint';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskService } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { manualClock } from '../support/manual-clock';
import { echoSuccess } from '../support/echo-usage';

/**
 * The memory store keeps each task's params hash (worked out once, when `execute_task` arrives)
 * with its record: a repeated id is told apart by its params (-32005 for other params, the task
 * for the same ones in any key order), whatever the params hold.
 */

const log = createLogger('test');

function service(store: MemoryTaskStore, options: { maxConcurrentTasks?: number; syncBudgetMs?: number } = {}) {
  return new TaskService({ store, executor: new EchoExecutor(), log, syncBudgetMs: options.syncBudgetMs ?? 1000, taskTimeoutMs: 5000, ttlSeconds: 600, maxConcurrentTasks: options.maxConcurrentTasks });
}

const plain: ExecuteTaskParams = { text: 'hello', channel: 'C1', thread_ts: '1.2', user_id: 'U1', stream: false };
// A credential, context, a member that is not a plain value, a long text.
const others: Array<[string, ExecuteTaskParams]> = [
  ['a bot token', { ...plain, bot_token: 'xoxb-1' }],
  ['thread messages', { ...plain, messages: [{ role: 'user', text: 'earlier', ts: '1.1' }] }],
  ['a nested member', { ...plain, extra: { a: 1 } } as ExecuteTaskParams],
  ['a long text', { ...plain, text: 'x'.repeat(20_000) }],
];

describe('MemoryTaskStore with params hashes', () => {
  it('keeps a task’s params hash with its record, read by task id or by request key', async () => {
    const store = new MemoryTaskStore();
    const tasks = service(store, { syncBudgetMs: 20 });
    const original = { ...plain, text: 'slow #sleep=100' };
    const params = { ...original };
    const { task_id } = (await tasks.executeTask(params, 'once')) as { task_id: string };
    // Hashed when the task started: what the caller's params object becomes afterwards changes nothing.
    params.text = 'changed';
    expect((await store.get(task_id))?.params_hash).toBe(paramsHashOf(original));
    expect((await store.getByRequest(store.requestKeyOf('once')))?.params_hash).toBe(paramsHashOf(original));
  });

  it.each([['plain params', plain], ...others])('refuses a repeated id with other params (%s), and answers one with the same params in any order', async (_label, params) => {
    const store = new MemoryTaskStore();
    const tasks = service(store);
    const first = await tasks.executeTask({ ...params }, 'id-1');
    expect(first).toEqual({ status: 'success', response_text: expect.stringMatching(/^echo: /), usage: expect.objectContaining({ model: 'echo' }) });
    const reordered = Object.fromEntries(Object.entries(params).reverse()) as ExecuteTaskParams;
    expect(await tasks.executeTask(reordered, 'id-1')).toEqual(first);
    await expect(tasks.executeTask({ ...params, text: 'something else' }, 'id-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
    await expect(tasks.executeTask({ ...params, channel: 'C2' }, 'id-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
  });

  it('refuses a repeated id with other params at capacity too (the task found by its request key)', async () => {
    const store = new MemoryTaskStore();
    const tasks = service(store, { maxConcurrentTasks: 1, syncBudgetMs: 20 });
    const accepted = await tasks.executeTask({ ...plain, text: 'slow #sleep=300' }, 'busy-1');
    expect(accepted).toEqual({ status: 'accepted', task_id: expect.any(String) });
    // The one slot is taken: a repeat is answered from the store, a new task is refused.
    expect(await tasks.executeTask({ ...plain, text: 'slow #sleep=300' }, 'busy-1')).toEqual(accepted);
    await expect(tasks.executeTask({ ...plain, text: 'other #sleep=300' }, 'busy-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
    await expect(tasks.executeTask({ ...plain }, 'busy-2')).rejects.toMatchObject({ code: ErrorCode.OverCapacity });
  });

  it('forgets a request key with its record: the id then starts a new task', async () => {
    const clock = manualClock();
    const store = new MemoryTaskStore({ clock });
    const tasks = new TaskService({ store, executor: new EchoExecutor(), log, syncBudgetMs: 1000, taskTimeoutMs: 5000, ttlSeconds: 60, clock });
    await tasks.executeTask({ ...plain }, 'old');
    clock.advance(61_000);
    expect(await store.getByRequest(store.requestKeyOf('old'))).toBeUndefined();
    expect(await tasks.executeTask({ ...plain, text: 'a new task' }, 'old')).toEqual(echoSuccess('a new task'));
  });
});

describe('DeadlineQueue as a list', () => {
  it('counts what is pending, and cancelling twice or after the deadline fired changes nothing', async () => {
    const queue = new DeadlineQueue(10);
    const fired: string[] = [];
    const a = queue.add(() => fired.push('a'));
    const b = queue.add(() => fired.push('b'));
    queue.add(() => fired.push('c'));
    queue.cancel(b);
    queue.cancel(b);
    expect(queue.size).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toEqual(['a', 'c']);
    queue.cancel(a);
    expect(queue.size).toBe(0);
    // A deadline added by a firing one waits its own delay.
    queue.add(() => queue.add(() => fired.push('e')));
    await new Promise((resolve) => setTimeout(resolve, 15));
    expect(fired).toEqual(['a', 'c']);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(fired).toEqual(['a', 'c', 'e']);
    expect(queue.size).toBe(0);
  });
});
