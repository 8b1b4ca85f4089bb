import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { QUICK_CALL } from '../../src/aws/bounded-client';
import { FUNCTION_TIMEOUT_SECONDS } from '../../src/verification/pipeline-settings';
import { isHeld, replaySlackEvent, SLACK_DELIVERIES_AT_MS, SqsReplay, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 11, fault 1: SQS accepts slack-events' connection and never answers SendMessage. The
 * function must not hang (its SDK client has a request timeout and bounded attempts), must give
 * its event claim back — or leave a lease that runs out before Slack's next retry — and one of
 * Slack's retries must queue the task, exactly once.
 */
let pipeline: FaultPipeline;
beforeAll(async () => {
  pipeline = await startFaultPipeline();
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());

/** The rest of the pipeline runs on what was queued; the user must get exactly one answer. */
async function expectOneReply(text: string): Promise<void> {
  await new SqsReplay(pipeline).drain();
  expect(pipeline.slack.posts.map((post) => post.text)).toEqual([`echo: ${text}`]);
}

describe('slack-events with an SQS that stalls', () => {
  it('gives up within its bound and answers 500; the claim is free before Slack\'s next retry, which queues the task once', async () => {
    const origin = pipeline.clock.begin();
    // Every attempt the SDK makes in the first delivery stalls; then SQS works again.
    pipeline.sqs.failNext({ stall: true, queue: 'tasks', times: QUICK_CALL.maxAttempts });
    const { body, eventId } = pipeline.mention('stalled queue');

    // What the first delivery left behind once it ended, looked at before Slack's next retry.
    const claimBeforeRetry: Record<number, Record<string, AttributeValue> | undefined> = {};
    const deliveries = await replaySlackEvent(pipeline, body, { beforeRetry: async (retryNum) => void (claimBeforeRetry[retryNum] = await pipeline.claim(`event#${eventId}`)) });

    // Given back, or at least not held any more when that retry arrives.
    expect(isHeld(claimBeforeRetry[2], origin + SLACK_DELIVERIES_AT_MS[2])).toBe(false);
    expect(pipeline.sqs.stalls).toBe(QUICK_CALL.maxAttempts);
    // The first delivery answered by itself (not stopped at its 10 s Lambda timeout): its SDK
    // client gave up and it asked Slack to retry. Slack had stopped waiting after 3 s, retried at
    // once and met the live claim (503, come back later); a minute later the claim was free.
    expect(deliveries.map((d) => [d.retryNum, statusOf(d)])).toEqual([
      [0, 500],
      [1, 503],
      [2, 200],
    ]);
    expect(deliveries[0]!.answeredInTime).toBe(false);
    expect(await pipeline.claim(`event#${eventId}`)).toMatchObject({ claim_state: { S: 'done' } });
    expect(pipeline.tasks()).toEqual([expect.objectContaining({ event_id: eventId, text: 'stalled queue' })]);
    await expectOneReply('stalled queue');
  });

  it('SQS took the message but its answer never came: Slack\'s retry must queue the same request id, so the user gets one reply', async () => {
    pipeline.clock.begin();
    // The first send is taken by SQS, its answer stalls; the SDK's other attempts get 500s. The
    // function cannot tell this from a send that never arrived.
    pipeline.sqs.failNext({ stall: true, taken: true, queue: 'tasks' });
    pipeline.sqs.failNext({ status: 500, queue: 'tasks', times: QUICK_CALL.maxAttempts - 1 });
    const { body, eventId } = pipeline.mention('taken but unanswered');

    const deliveries = await replaySlackEvent(pipeline, body);

    // The first delivery asked for a retry; a retry was acknowledged (at once if the claim was
    // given back, after the lease if it was kept).
    expect(statusOf(deliveries[0]!)).toBe(500);
    expect(statusOf(deliveries.at(-1)!)).toBe(200);
    expect(pipeline.tasks().map((task) => task.event_id)).toEqual([eventId, eventId]);
    // Queued twice — but it must be the same task (one request id), which the pipeline dedupes.
    expect(new Set(pipeline.tasks().map((task) => task.request_id)).size).toBe(1);
    await expectOneReply('taken but unanswered');
  });

  it('killed at its deadline while SQS stalls: the retry after the lease takes the claim over and queues the same request id', async () => {
    pipeline.clock.begin();
    // Only the first SendMessage stalls: the killed delivery's own SDK retry (its Lambda would be
    // gone; here it lives on, a worse case) lands later, after the takeover.
    pipeline.sqs.failNext({ stall: true, queue: 'tasks' });
    const { body, eventId } = pipeline.mention('killed while stalled');
    const killedAtMs = 1_000;

    const deliveries = await replaySlackEvent(pipeline, body, { timeoutMsOf: (retryNum) => (retryNum === 0 ? killedAtMs : FUNCTION_TIMEOUT_SECONDS.slackEvents * 1000) });

    // Killed mid-call (middy's Lambda timeout); the immediate retry finds its lease running (503);
    // the retry a minute later finds it over (EVENT_CLAIM_LEASE_SECONDS), takes the claim over and
    // queues the task.
    expect(deliveries.map((d) => [d.retryNum, statusOf(d)])).toEqual([
      [0, 'TimeoutError'],
      [1, 503],
      [2, 200],
    ]);
    // The killed delivery's SDK retry of its stalled send lands too: the same request id twice —
    // one task, which the rest of the pipeline runs and answers once.
    await pipeline.sqs.waitForMessages('tasks', 2);
    expect(pipeline.tasks().map((task) => task.event_id)).toEqual([eventId, eventId]);
    expect(new Set(pipeline.tasks().map((task) => task.request_id)).size).toBe(1);

    await expectOneReply('killed while stalled');
    expect(pipeline.executions).toBe(1);
  });
});
