import { replaySlackEvent, SqsReplay, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 25: SQS refuses a message body with a character outside #x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF (InvalidMessageContents, as the fake SQS does), and Slack
 * passes U+FFFE and U+FFFF in a message's text. Such a refusal fails every send the same way:
 * Slack's retries meet it too, and the event would be lost. The queue escapes them in the JSON,
 * so the task goes, and the answer (which repeats them) goes on the replies queue as well.
 */
let pipeline: FaultPipeline;
beforeAll(async () => {
  pipeline = await startFaultPipeline();
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());

it.each([
  ['U+FFFE', 'a question \uFFFE with a non-character'],
  ['U+FFFF', 'ends in \uFFFF'],
])('an event whose text holds %s is queued on the first delivery and answered once', async (_label, text) => {
  pipeline.clock.begin();
  const { body, eventId } = pipeline.mention(text);

  const deliveries = await replaySlackEvent(pipeline, body);

  expect(deliveries.map((d) => [d.retryNum, statusOf(d)])).toEqual([[0, 200]]);
  expect(pipeline.tasks()).toEqual([expect.objectContaining({ event_id: eventId, text })]);
  // What SQS holds is plain JSON escapes, which read back as the text the user wrote.
  expect(pipeline.sqs.messages('tasks')[0]!.body).toMatch(/\\uff(fe|ff)/);
  await new SqsReplay(pipeline).drain();
  expect(pipeline.slack.posts.map((post) => post.text)).toEqual([`echo: ${text}`]);
});
