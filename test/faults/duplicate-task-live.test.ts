import { replaySlackEvent, SqsReplay, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 25, item 2: SQS took slack-events' SendMessage of a task, and its answer was lost (a 500);
 * the client sent it again, so the tasks queue holds two copies of one task (one request id).
 * Both copies are picked up at once and reach the sign of life, then the previews. Downstream
 * deduplicates the task and the reply; the live message must be started once too — no second
 * stream left at "working…" — and end with exactly the answer.
 */
let pipeline: FaultPipeline;
beforeAll(async () => {
  // A short sync budget, so a streamed answer is `accepted` and polled by each copy.
  pipeline = await startFaultPipeline({ syncBudgetMs: 200 });
});
afterAll(() => pipeline.close());
beforeEach(() => {
  pipeline.reset();
  // An app where Slack shows neither an agent session nor a thread status: the sign of life is the stream.
  pipeline.slack.failWhen('agents.sessions.setStatus', () => true, { error: 'not_allowed_token_type', times: Infinity });
  pipeline.slack.failWhen('assistant.threads.setStatus', () => true, { error: 'not_allowed_token_type', times: Infinity });
});

/** Slack delivers the mention once; slack-events' SendMessage is taken twice. */
async function taskQueuedTwice(text: string): Promise<{ ts: string }> {
  pipeline.clock.begin();
  pipeline.sqs.failNext({ status: 500, taken: true, queue: 'tasks' });
  const { body, ts } = pipeline.mention(text);
  const deliveries = await replaySlackEvent(pipeline, body);
  expect(deliveries.map(statusOf)).toEqual([200]);
  // The fault happened: two copies of one task.
  expect(pipeline.tasks()).toHaveLength(2);
  expect(new Set(pipeline.tasks().map((task) => task.request_id)).size).toBe(1);
  return { ts };
}

describe('a task queued twice (SendMessage sent again after a lost answer), with live answers', () => {
  it('starts one live message, and it ends with the answer: no stream left at "working…"', async () => {
    await taskQueuedTwice('sent twice');
    await new SqsReplay(pipeline).drain();

    expect(pipeline.slack.streams.map((stream) => stream.state)).toEqual(['stopped']);
    expect(pipeline.slack.messageText(pipeline.slack.streams[0]!.ts)).toBe('echo: sent twice');
    expect(pipeline.slack.posts).toEqual([]);
  });

  it('a streamed answer polled by both copies shows each piece once and ends as the answer', async () => {
    const text = 'both copies stream this answer word by word #stream=60';
    await taskQueuedTwice(text);
    await new SqsReplay(pipeline).drain();

    expect(pipeline.slack.streams.map((stream) => stream.state)).toEqual(['stopped']);
    const [stream] = pipeline.slack.streams;
    // What the previews showed is a prefix of the answer (never a piece twice), and the message ends as the answer.
    expect(`echo: ${text}`.startsWith(stream!.appends.reduce((shown, piece) => shown + piece, ''))).toBe(true);
    expect(pipeline.slack.messageText(stream!.ts)).toBe(`echo: ${text}`);
    expect(pipeline.slack.posts).toEqual([]);
  });
});
