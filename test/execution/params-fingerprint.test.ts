import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import { DeadlineQueue } from '../../src/execution/deadlines';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { ParamsFingerprint, paramsHashOf } from '../../src/execution/params-fingerprint';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskService } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { manualClock } from '../support/manual-clock';

/**
 * The memory store files a task's params by fingerprint and works out their hash only when the
 * task's request id comes back: a task that is never repeated is never hashed, and a repeated id
 * is still told apart by its params exactly as before (-32005 for other params, the task for the
 * same ones in any key order), whether its params were kept or hashed at once.
 */

const log = createLogger('test');

function service(store: MemoryTaskStore, options: { maxConcurrentTasks?: number; syncBudgetMs?: number } = {}) {
  return new TaskService({ store, executor: new EchoExecutor(), log, syncBudgetMs: options.syncBudgetMs ?? 1000, taskTimeoutMs: 5000, ttlSeconds: 600, maxConcurrentTasks: options.maxConcurrentTasks });
}

const kept: ExecuteTaskParams = { text: 'hello', channel: 'C1', thread_ts: '1.2', user_id: 'U1', stream: false };
// Not kept as they are: a credential, context, or a member that is not a plain value.
const hashedAtOnce: Array<[string, ExecuteTaskParams]> = [
  ['a bot token', { ...kept, bot_token: 'xoxb-1' }],
  ['thread messages', { ...kept, messages: [{ role: 'user', text: 'earlier', ts: '1.1' }] }],
  ['a nested member', { ...kept, extra: { a: 1 } } as ExecuteTaskParams],
  ['a long text', { ...kept, text: 'x'.repeat(20_000) }],
];

describe('ParamsFingerprint', () => {
  it.each([['small plain params', kept], ...hashedAtOnce])('with %s, hashes as paramsHashOf does', (_label, params) => {
    expect(new ParamsFingerprint(params).hash).toBe(paramsHashOf(params));
  });

  it('keeps small plain params unhashed, and hashes the rest at once', () => {
    // Hashed at once: what the params become afterwards does not change the fingerprint.
    for (const [, original] of hashedAtOnce) {
      const params = { ...original };
      const fingerprint = new ParamsFingerprint(params);
      params.text = 'changed';
      expect(fingerprint.hash).toBe(paramsHashOf(original));
    }
    // Kept: the hash is the params' when first asked for.
    const params = { ...kept };
    const fingerprint = new ParamsFingerprint(params);
    params.text = 'changed';
    expect(fingerprint.hash).toBe(paramsHashOf({ ...kept, text: 'changed' }));
  });
});

describe('MemoryTaskStore with params fingerprints', () => {
  it('hashes a task’s params only when its request id comes back', async () => {
    const store = new MemoryTaskStore();
    const tasks = service(store, { syncBudgetMs: 20 });
    const params = { ...kept, text: 'slow #sleep=100' };
    const { task_id } = (await tasks.executeTask(params, 'once')) as { task_id: string };
    // Nothing on the task's way asked for the hash: the record read by task id has none.
    expect((await store.get(task_id))?.params_hash).toBeUndefined();
    // Read by its request key, as a repeated id reads it, the record carries the hash, worked out then.
    expect((await store.getByRequest(store.requestKeyOf('once')))?.params_hash).toBe(paramsHashOf(params));
  });

  it.each([['kept', kept], ...hashedAtOnce])('refuses a repeated id with other params (%s), and answers one with the same params in any order', async (_label, params) => {
    const store = new MemoryTaskStore();
    const tasks = service(store);
    const first = await tasks.executeTask({ ...params }, 'id-1');
    expect(first).toEqual({ status: 'success', response_text: expect.stringMatching(/^echo: /) });
    const reordered = Object.fromEntries(Object.entries(params).reverse()) as ExecuteTaskParams;
    expect(await tasks.executeTask(reordered, 'id-1')).toEqual(first);
    await expect(tasks.executeTask({ ...params, text: 'something else' }, 'id-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
    await expect(tasks.executeTask({ ...params, channel: 'C2' }, 'id-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
  });

  it('refuses a repeated id with other params at capacity too (the task found by its request key)', async () => {
    const store = new MemoryTaskStore();
    const tasks = service(store, { maxConcurrentTasks: 1, syncBudgetMs: 20 });
    const accepted = await tasks.executeTask({ ...kept, text: 'slow #sleep=300' }, 'busy-1');
    expect(accepted).toEqual({ status: 'accepted', task_id: expect.any(String) });
    // The one slot is taken: a repeat is answered from the store, a new task is refused.
    expect(await tasks.executeTask({ ...kept, text: 'slow #sleep=300' }, 'busy-1')).toEqual(accepted);
    await expect(tasks.executeTask({ ...kept, text: 'other #sleep=300' }, 'busy-1')).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
    await expect(tasks.executeTask({ ...kept }, 'busy-2')).rejects.toMatchObject({ code: ErrorCode.OverCapacity });
  });

  it('forgets a request key with its record: the id then starts a new task', async () => {
    const clock = manualClock();
    const store = new MemoryTaskStore({ clock });
    const tasks = new TaskService({ store, executor: new EchoExecutor(), log, syncBudgetMs: 1000, taskTimeoutMs: 5000, ttlSeconds: 60, clock });
    await tasks.executeTask({ ...kept }, 'old');
    clock.advance(61_000);
    expect(await store.getByRequest(store.requestKeyOf('old'))).toBeUndefined();
    expect(await tasks.executeTask({ ...kept, text: 'a new task' }, 'old')).toEqual({ status: 'success', response_text: 'echo: a new task' });
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
