import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { ExecuteTaskParams } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import { DeadlineQueue } from '../../src/execution/deadlines';
import type { Executor } from '../../src/execution/executors/executor';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskControl, TaskLog } from '../../src/execution/task-control';
import { paramsHashOf } from '../../src/execution/params-fingerprint';
import { TaskService } from '../../src/execution/task-service';
import type { Log } from '../../src/observability/logger';
import { echoSuccess } from '../support/echo-usage';

/**
 * What the execution runtime's hot path skips must not change what it does: the params hash is the
 * one records already hold, a task that finishes at once arms no timer of its own and makes no
 * AbortController, and a debug line is not built while DEBUG is off.
 */

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

/** paramsHashOf as it was first written: what params_hash in existing task records means. */
function referenceHash(params: ExecuteTaskParams): string {
  const { bot_token: _a, messages: _b, attachments: _c, stream: _d, ...task } = params;
  const canonical = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map((item) => canonical(item ?? null)).join(',')}]`;
    if (typeof value === 'object' && value !== null) {
      const members = Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
      return `{${members.join(',')}}`;
    }
    return JSON.stringify(value);
  };
  return createHash('sha256').update(canonical(task)).digest('hex');
}

describe('paramsHashOf', () => {
  it('is the hash task records already hold, for any params', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('text', 'channel', '__proto__', '10', '9', 'bot_token', 'stream', 'a b', 'é'));
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }), fc.string(), (rest, text) => {
        const params = json({ ...rest, text }) as ExecuteTaskParams;
        expect(paramsHashOf(params)).toBe(referenceHash(params));
      }),
      { numRuns: 3000 },
    );
  });

  it('is the same for the usual params, in any key order', () => {
    const params = { text: 'hello — “quoted”\n', channel: 'C1', thread_ts: '1.2', correlation_id: 'c', team_id: 'T', user_id: 'U', stream: true, n: 1, x: null, ok: false };
    expect(paramsHashOf(params)).toBe(referenceHash(params));
    expect(paramsHashOf(json({ ok: false, x: null, n: 1, user_id: 'U', team_id: 'T', correlation_id: 'c', thread_ts: '1.2', channel: 'C1', text: params.text }) as ExecuteTaskParams)).toBe(paramsHashOf(params));
  });
});

describe('DeadlineQueue', () => {
  it('fires what is due in order, skips what was cancelled, and uses one timer at a time', async () => {
    const queue = new DeadlineQueue(30);
    const fired: string[] = [];
    const a = queue.add(() => fired.push('a'));
    queue.add(() => fired.push('b'));
    queue.cancel(a);
    await new Promise((resolve) => setTimeout(resolve, 10));
    queue.add(() => fired.push('c'));
    expect(fired).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fired).toEqual(['b', 'c']);
    expect(queue.size).toBe(0);
    // Empty, it arms again for the next deadline.
    queue.add(() => fired.push('d'));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(fired).toEqual(['b', 'c', 'd']);
  });
});

describe('TaskControl', () => {
  it('makes its AbortController only when the signal is read, aborted already if the task was', () => {
    const control = new TaskControl();
    const reasons: unknown[] = [];
    control.onAbort = (reason) => reasons.push(reason);
    control.abort('first');
    control.abort('second');
    expect(reasons).toEqual(['first']);
    expect(control.aborted).toBe(true);
    expect(control.signal.aborted).toBe(true);
    expect(control.signal.reason).toBe('first');

    const live = new TaskControl();
    const signal = live.signal;
    expect(signal.aborted).toBe(false);
    live.abort('now');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('now');
  });
});

describe('a task that finishes within its request', () => {
  const fakeLog = (level?: number) => {
    const lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
    const at = (name: string) => (message: string, ...extra: unknown[]) => void lines.push({ level: name, message, extra });
    const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), ...(level === undefined ? {} : { level }) } as Log;
    return { log, lines };
  };

  it('arms no timer per task, never builds an AbortController, and is still found by its request id', async () => {
    let signalsRead = 0;
    const echo = new EchoExecutor();
    const executor: Executor = {
      name: 'echo',
      execute: (params, context) => {
        const spy = new Proxy(context, { get: (target, key) => (key === 'signal' && (signalsRead += 1), Reflect.get(target, key, target)) });
        return echo.execute(params, spy);
      },
    };
    const timers = jest.spyOn(global, 'setTimeout');
    const controllers = jest.spyOn(global, 'AbortController');
    try {
      const runtime = createExecutionRuntime({ config: loadExecutionConfig({}), executor, log: fakeLog(12).log });
      const before = timers.mock.calls.length;
      const answers: Array<string | undefined> = [];
      // 50 at a time, as many connections would send them (MAX_CONCURRENT_TASKS is 100).
      for (let first = 0; first < 200; first += 50) {
        answers.push(
          ...(await Promise.all(
            Array.from({ length: 50 }, (_, n) => runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: `t${first + n}` }, id: `r${first + n}` }))),
          )),
        );
      }
      for (const [i, answer] of answers.entries()) expect(JSON.parse(answer!)).toEqual({ jsonrpc: '2.0', result: echoSuccess(`t${i}`), id: `r${i}` });
      // One timer for the budget queue and one for the timeout queue, not two per task.
      expect(timers.mock.calls.length - before).toBeLessThanOrEqual(2);
      expect(controllers).not.toHaveBeenCalled();
      expect(signalsRead).toBe(0);
      const repeat = await runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 't7' }, id: 'r7' }));
      expect(JSON.parse(repeat!).result).toEqual(echoSuccess('t7'));
      const conflict = await runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'other' }, id: 'r7' }));
      expect(JSON.parse(conflict!).error.code).toBe(-32005);
    } finally {
      timers.mockRestore();
      controllers.mockRestore();
    }
  });

  it('writes its debug line only where the log writes debug lines, with the task keys', async () => {
    for (const [level, expected] of [
      [12, 0],
      [8, 1],
      [undefined, 1],
    ] as const) {
      const { log, lines } = fakeLog(level);
      const service = new TaskService({ store: new MemoryTaskStore(), executor: new EchoExecutor(), log, syncBudgetMs: 1000, taskTimeoutMs: 1000, ttlSeconds: 60 });
      await service.executeTask({ text: 'hi', correlation_id: 'c-1' }, 7);
      const debug = lines.filter((line) => line.level === 'debug');
      expect(debug).toHaveLength(expected);
      if (expected) expect(debug[0]!.extra[0]).toEqual({ correlation_id: 'c-1', request_id: '7', task_id: expect.stringMatching(/^task-[0-9a-f]{32}$/) });
    }
  });

  it('stamps task lines as taskLogger does', () => {
    const { log, lines } = fakeLog();
    new TaskLog(log, undefined, null, 'task-1').warn('w', { a: 1 });
    new TaskLog(log, 'c', 'r', undefined).info('i');
    expect(lines).toEqual([
      { level: 'warn', message: 'w', extra: [{ task_id: 'task-1' }, { a: 1 }] },
      { level: 'info', message: 'i', extra: [{ correlation_id: 'c', request_id: 'r' }] },
    ]);
  });
});
