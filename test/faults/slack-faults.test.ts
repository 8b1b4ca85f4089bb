import { REPLY_CHUNK_LEASE_SECONDS, visibilityTimeoutSeconds } from '../../src/verification/pipeline-settings';
import { lambdaContext } from '../support/lambda-context';
import { isHeld, SqsReplay, sqsEvent, startFaultPipeline, type FaultPipeline } from './pipeline';

/**
 * Issue 11, fault 3: Slack is slow to post. A 429 whose Retry-After is longer than the poster has
 * ends its delivery at once, as retryable, and SQS's redelivery posts. A poster stopped mid-post
 * keeps the chunk's claim for its lease: no second post while the lease holds; after it, the
 * chunk is taken over and posted — again, if the stalled post did land. That is the trade-off
 * chosen (src/verification/post/slack-poster.ts): a repost, never a loss.
 */
let pipeline: FaultPipeline;
beforeAll(async () => {
  pipeline = await startFaultPipeline();
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());

const replyOf = (text: string) => ({ request_id: globalThis.crypto.randomUUID(), team_id: 'T1', channel: 'C1', ts: '1700000000.000100', kind: 'answer', text });
const postCalls = () => pipeline.slack.requests.filter((request) => request.method === 'chat.postMessage').length;

describe('slack-poster and a rate-limited Slack', () => {
  it('a 429 with a Retry-After past its deadline ends the delivery at once, retryable; the redelivery posts once', async () => {
    pipeline.clock.begin();
    const reply = replyOf('after the rate limit');
    pipeline.slack.failNext('chat.postMessage', { retryAfterSeconds: 3_600 });
    const replies = new SqsReplay(pipeline);
    replies.put('replies', JSON.stringify(reply));

    // 15 minutes of Lambda time. Slack asks for an hour, more than the poster has: it gives up at
    // once. A wait would last until its deadline, 15 minutes, far past this test's own bound.
    expect(await replies.deliverVisible({ timeoutMs: 15 * 60_000 })).toBe(1);

    expect(postCalls()).toBe(1);
    expect(pipeline.slack.posts).toEqual([]);
    // The record failed, so SQS brings it back (after its visibility timeout, past the
    // Retry-After); Slack refused the post, so the chunk's claim was given back at once.
    expect(replies.deliveries).toEqual([{ queue: 'replies', id: 'put-1', receiveCount: 1, failed: true }]);
    expect(isHeld(await pipeline.claim(`reply#${reply.request_id}#0`), pipeline.clock.now())).toBe(false);
    await replies.drain();
    expect(replies.deadLetters).toEqual([]);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['after the rate limit']);
  });
});

describe('slack-poster stopped mid-post', () => {
  /** One delivery of the reply with `timeoutMs` of Lambda time; resolves with the failed record ids. */
  async function deliver(reply: object, receiveCount: number, timeoutMs = 60_000): Promise<string[]> {
    const result = await pipeline.handlers.slackPoster(sqsEvent([{ id: 'reply-1', body: JSON.stringify(reply), receiveCount }]), lambdaContext(timeoutMs, 'slack-poster'));
    return result.batchItemFailures.map((failure) => failure.itemIdentifier);
  }

  it('keeps the claim for its lease: no second post while it holds; after it the chunk is taken over, found in the thread, and not posted again', async () => {
    pipeline.clock.begin();
    const reply = replyOf('posted while the poster was stopped');
    const key = `reply#${reply.request_id}#0`;
    // Slack holds the post 2 s, then takes it; the poster has 1 s (4 s of Lambda time less the 3 s it keeps to report).
    pipeline.slack.failNext('chat.postMessage', { stallMs: 2_000 });

    expect(await deliver(reply, 1, 4_000)).toEqual(['reply-1']);
    // The outcome is unknown (Slack may have posted it): the claim is kept, not released.
    expect(await pipeline.claim(key)).toMatchObject({ claim_state: { S: 'pending' } });

    // Another delivery within the lease (a duplicate, a redelivery) finds the chunk in progress.
    pipeline.clock.at(30_000);
    expect(await deliver(reply, 2)).toEqual(['reply-1']);
    // The stalled post lands: Slack has the chunk, but no poster ever learnt its ts.
    await pipeline.slack.waitForPosts(1);
    // The last moment of the lease (or before SQS's own redelivery, whichever comes first).
    pipeline.clock.at(Math.min(REPLY_CHUNK_LEASE_SECONDS, visibilityTimeoutSeconds('replies')) * 1000 - 1_000);
    expect(await deliver(reply, 3)).toEqual(['reply-1']);
    expect(pipeline.slack.posts).toHaveLength(1);
    expect(postCalls()).toBe(1);

    // SQS's redelivery after its visibility timeout is past the lease: the chunk is taken over, and
    // the thread read back (conversations.replies, by the chunk's metadata) shows it landed: the
    // claim is completed with that message's ts and nothing is posted again.
    pipeline.clock.at(visibilityTimeoutSeconds('replies') * 1000);
    expect(await deliver(reply, 4)).toEqual([]);
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual(['posted while the poster was stopped']);
    expect(postCalls()).toBe(1);
    expect(await pipeline.claim(key)).toMatchObject({ claim_state: { S: 'done' }, claim_value: { S: pipeline.slack.posts[0]!.ts } });

    // Done now: any later delivery skips it.
    pipeline.clock.advance(60_000);
    expect(await deliver(reply, 5)).toEqual([]);
    expect(pipeline.slack.posts).toHaveLength(1);
  });
});
