import { QUICK_CALL } from '../../src/aws/bounded-client';
import { replaySlackEvent, SqsReplay, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 11, fault 4: SQS delivers a task to agent-invoker more than once — at least once by
 * design, again after a failed record, two copies at the same time. Every copy carries the same
 * request id, which the execution zone treats as the same task; the replies it leads to are
 * posted once, whatever their number.
 */
let pipeline: FaultPipeline;
beforeAll(async () => {
  // A short sync budget, so a task that sleeps is `accepted` and polled, as a long model call is
  // (no held stream: test/integration/held-streams.test.ts holds them).
  pipeline = await startFaultPipeline({ syncBudgetMs: 200, env: { STREAM_HOLD_S: '0' } });
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());

/** Slack delivers the mention once; slack-events queues its one task. */
async function queuedTask(text: string): Promise<{ queue: SqsReplay; taskBody: string }> {
  pipeline.clock.begin();
  const { body } = pipeline.mention(text);
  const deliveries = await replaySlackEvent(pipeline, body);
  expect(deliveries.map(statusOf)).toEqual([200]);
  expect(pipeline.tasks()).toHaveLength(1);
  return { queue: new SqsReplay(pipeline), taskBody: pipeline.sqs.messages('tasks')[0]!.body };
}

describe('agent-invoker given the same task again', () => {
  it('delivered again after it was answered: the task runs once and the user gets one reply', async () => {
    const { queue, taskBody } = await queuedTask('twice in a row');
    await queue.drain();
    queue.put('tasks', taskBody);
    await queue.drain();

    expect(pipeline.replies().map((reply) => reply.text)).toEqual(['echo: twice in a row', 'echo: twice in a row']);
    expect(pipeline.executions).toBe(1);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['echo: twice in a row']);
  });

  it('two copies delivered at once: one run, one reply', async () => {
    const { queue, taskBody } = await queuedTask('two at once');
    queue.put('tasks', taskBody);
    await queue.drain();

    expect(new Set(pipeline.replies().map((reply) => reply.request_id)).size).toBe(1);
    expect(pipeline.executions).toBe(1);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['echo: two at once']);
    expect(queue.deadLetters).toEqual([]);
  });

  it('redelivered because its reply could not be queued: one run, one reply', async () => {
    const { queue } = await queuedTask('reply queue down');
    // Every attempt of the first delivery to queue the reply fails; the record goes back to SQS.
    pipeline.sqs.failNext({ queue: 'replies', status: 500, times: QUICK_CALL.maxAttempts });
    await queue.drain();

    expect(queue.deliveries.filter((d) => d.queue === 'tasks').map((d) => [d.receiveCount, d.failed])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(pipeline.executions).toBe(1);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['echo: reply queue down']);
    expect(queue.deadLetters).toEqual([]);
  });

  it('a long task delivered twice is polled twice and still answered once', async () => {
    const { queue, taskBody } = await queuedTask('slow one #sleep=400');
    queue.put('tasks', taskBody);
    await queue.drain();

    // Each copy was accepted and started its own polling — of the same task in the execution zone.
    const firstPolls = pipeline.sqs.messages('polls').map((message) => JSON.parse(message.body) as { attempt: number; handle: { taskId: string } }).filter((poll) => poll.attempt === 0);
    expect(firstPolls).toHaveLength(2);
    expect(firstPolls[1]!.handle.taskId).toBe(firstPolls[0]!.handle.taskId);
    expect(pipeline.executions).toBe(1);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['echo: slow one #sleep=400']);
  });
});
