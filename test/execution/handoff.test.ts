import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskService, type TaskHandoff } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { echoSuccess } from '../support/echo-usage';

describe('TaskService handoff (Lambda function URL host → worker)', () => {
  it('stops the local attempt at the budget, hands the task off, and the worker finishes it', async () => {
    const store = new MemoryTaskStore();
    const handed: Array<Parameters<TaskHandoff>[0]> = [];
    let localSignal: AbortSignal | undefined;
    const echo = new EchoExecutor();
    const base = { store, log: createLogger('test'), syncBudgetMs: 30, taskTimeoutMs: 5000, ttlSeconds: 600 };
    const front = new TaskService({
      ...base,
      executor: { name: 'spy', execute: (params, context) => ((localSignal = context.signal), echo.execute(params, context)) },
      handoff: async (task) => {
        handed.push(task);
      },
    });
    const worker = new TaskService({ ...base, executor: echo });

    const answer = await front.executeTask({ text: 'later #sleep=100', channel: 'C1' }, 'h-1');
    expect(answer).toEqual({ status: 'accepted', task_id: expect.any(String) });
    expect(localSignal?.aborted).toBe(true);
    const taskId = (answer as { task_id: string }).task_id;
    expect(handed).toEqual([{ taskId, params: { text: 'later #sleep=100', channel: 'C1' }, expiresAt: (await store.get(taskId))!.expires_at }]);

    await worker.runHandedOff(handed[0]!.taskId, handed[0]!.params);
    expect(await front.getTaskResult(handed[0]!.taskId)).toEqual(echoSuccess('later #sleep=100'));

    // A redelivered handoff for a finished task does not run it again.
    let reruns = 0;
    const counting = new TaskService({ ...base, executor: { name: 'count', execute: async () => ((reruns += 1), { response_text: 'again' }) } });
    await counting.runHandedOff(handed[0]!.taskId, handed[0]!.params);
    expect(reruns).toBe(0);
  });
});
