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

  it('a question on a handoff host: resumed, the front attempt has the answer too, and the worker finishes the same task with it', async () => {
    const store = new MemoryTaskStore();
    const handed: Array<Parameters<TaskHandoff>[0]> = [];
    const base = { store, log: createLogger('test'), syncBudgetMs: 30, taskTimeoutMs: 5000, ttlSeconds: 600, executor: new EchoExecutor() };
    const front = new TaskService({ ...base, handoff: async (task) => void handed.push(task) });
    const worker = new TaskService(base);

    const asked = await front.executeTask({ text: 'ship #ask=Ship it?' }, 'h-ask');
    expect(asked).toMatchObject({ status: 'input_required', question: { id: 'echo-ask' } });
    const taskId = (asked as { task_id: string }).task_id;
    // Answered at once by the front's own attempt (within the budget): the answer reached it.
    expect(await front.resumeTask({ task_id: taskId, answer: { question_id: 'echo-ask', value: 'approve' } })).toMatchObject({ status: 'success', response_text: 'echo: ship #ask=Ship it?\nanswer: Approve' });

    // A slow one goes to the worker, which reads the answers from the task it takes.
    const slow = await front.executeTask({ text: 'ship slowly #ask=Ship it? #sleep=100' }, 'h-ask-slow');
    const slowId = (slow as { task_id: string }).task_id;
    // The worker runs it to its question (the echo sleeps first, past the front's budget).
    await worker.runHandedOff(slowId, handed.at(-1)!.params);
    expect(await front.getTaskResult(slowId)).toMatchObject({ status: 'input_required', task_id: slowId });
    expect(await front.resumeTask({ task_id: slowId, answer: { question_id: 'echo-ask', value: 'reject' } })).toEqual({ status: 'accepted', task_id: slowId });
    await worker.runHandedOff(slowId, handed.at(-1)!.params);
    expect(await front.getTaskResult(slowId)).toMatchObject({ status: 'success', response_text: 'echo: ship slowly #ask=Ship it? #sleep=100\nanswer: Reject' });
  });
});
