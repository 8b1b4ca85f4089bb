import { createLogger } from '../../src/observability/logger';
import type { Delivery } from '../../src/queue/queue';
import { secretsManagerSecret } from '../../src/secrets/secret-source';
import { SlackApiError, WebApiSlackReplies, createSlackWebClient, slackRepliesFromSecret, type SlackReplies } from '../../src/slack/slack-replies';
import { splitForSlack } from '../../src/slack/split-message';
import { PoisonMessageError } from '../../src/verification/queues/poison-message';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import { ChunkInProgressError } from '../../src/verification/post/post-piece';
import { acknowledgeReceipt } from '../../src/verification/post/reactions';
import { createSlackPoster, type SlackPosterOptions } from '../../src/verification/post/slack-poster';
import { MemoryClaimStore } from '../../src/verification/stores/memory-claim-store';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';
import { createLiveReply } from '../../src/verification/live/live-reply';
import type { SlackAssistant } from '../../src/slack/slack-assistant';
import type { SlackLive } from '../../src/slack/slack-live';
import { startFakeSecretsManager } from '../support/fake-secrets-manager';
import { startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { manualClock, type ManualClock } from '../support/manual-clock';

// Not shaped like a Slack token on purpose: the logger masks xox… tokens, which would hide a leak
// from the assertion below instead of preventing it.
const BOT_TOKEN = 'test-bot-token-7f3a9c21';

const USER_TS = '1700000000.000200';
const THREAD_TS = '1700000000.000100';

function replyMessage(overrides: Partial<ReplyMessage> = {}): ReplyMessage {
  return { team_id: 'T1', channel: 'C1', ts: USER_TS, request_id: 'req-1', kind: 'answer', text: 'The answer is 42.', ...overrides };
}

function delivery(body: unknown, receiveCount = 1): Delivery {
  return { messageId: `m-${receiveCount}`, body: typeof body === 'string' ? body : JSON.stringify(body), receiveCount, attributes: {} };
}

const paragraph = (word: string, count: number) => `${Array.from({ length: count }, () => word).join(' ')}.`;

describe('createSlackPoster', () => {
  let slack: FakeSlackApi;
  let replies: SlackReplies;
  let claims: MemoryClaimStore;

  beforeEach(async () => {
    slack = await startFakeSlackApi({ botToken: BOT_TOKEN });
    // The client as production builds it: no retries of its own (a retried post may be a second post).
    replies = new WebApiSlackReplies(createSlackWebClient({ token: BOT_TOKEN, apiUrl: slack.apiUrl }));
    claims = new MemoryClaimStore();
  });
  afterEach(async () => {
    await slack.close();
  });

  const poster = (overrides: Partial<SlackPosterOptions> = {}) => createSlackPoster({ replies, claims, reactions: false, log: createLogger('test'), ...overrides });
  const postRequests = () => slack.requests.filter((r) => r.method === 'chat.postMessage');
  const reactionRequests = () => slack.requests.filter((r) => r.method.startsWith('reactions.'));

  it('replies in the thread the user wrote in, or starts one under the user’s message', async () => {
    // Prepare
    const post = poster();

    // Act
    await post(delivery(replyMessage({ request_id: 'in-thread', thread_ts: THREAD_TS })));
    await post(delivery(replyMessage({ request_id: 'top-level' })));

    // Assess
    expect(slack.posts).toEqual([
      { channel: 'C1', thread_ts: THREAD_TS, text: 'The answer is 42.', ts: expect.any(String) },
      { channel: 'C1', thread_ts: USER_TS, text: 'The answer is 42.', ts: expect.any(String) },
    ]);
  });

  it('posts an answer shown nowhere live with the agent’s steps folded to one line above it, once; chunks stay within the limit', async () => {
    const post = poster({ chunkLimit: 200 });
    const steps = { steps: [{ id: 's1', title: 'Searched the wiki', status: 'complete' as const }, { id: 's2', title: 'Checked <!channel>', status: 'error' as const }] };
    const message = replyMessage({ text: paragraph('forty-two', 30), steps });
    await post(delivery(message));
    await post(delivery(message, 2));
    const texts = slack.posts.map((p) => p.text);
    // Made safe as the answer is: a title never pings the channel.
    expect(texts[0]!.startsWith('✓ Searched the wiki · ✗ Checked ')).toBe(true);
    expect(texts[0]).toMatch(/^[^\n]+\n\nforty-two/);
    expect(texts[0]).not.toContain('<!channel>');
    expect(texts.slice(1).every((text) => !text.includes('Searched'))).toBe(true);
    expect(texts.every((text) => text.length <= 200)).toBe(true);
    expect(texts.join(' ').replace(/^.*\n\n/, '').split(/\s+/).filter((word) => word.startsWith('forty-two'))).toHaveLength(30);
  });

  it('posts a long answer as ordered chunks under Slack’s limit, all in the same thread', async () => {
    const text = [paragraph('alpha', 500), paragraph('bravo', 500), paragraph('charlie', 400)].join('\n\n');

    await poster()(delivery(replyMessage({ text })));

    expect(slack.posts.map((p) => p.text)).toEqual(splitForSlack(text));
    expect(slack.posts).toHaveLength(3);
    expect(slack.posts.map((p) => p.text.split(' ')[0])).toEqual(['alpha', 'bravo', 'charlie']);
    for (const post of slack.posts) {
      expect(post.text.length).toBeLessThanOrEqual(3900);
      expect(post.thread_ts).toBe(USER_TS);
    }
  });

  it('posts nothing new when SQS delivers the same reply again', async () => {
    const body = replyMessage({ text: [paragraph('one', 900), paragraph('two', 900)].join('\n\n') });
    const post = poster();

    await post(delivery(body, 1));
    const afterFirst = postRequests().length;
    await post(delivery(body, 2));

    expect(afterFirst).toBe(2);
    expect(postRequests()).toHaveLength(afterFirst);
    expect(slack.posts).toHaveLength(2);
    // The documented keys, so an operator can find them in the state table, done with Slack's ts.
    const probe = (k: string) => claims.acquire(k, { token: 'probe', leaseSeconds: 30, ttlSeconds: 60 });
    expect(await probe('reply#req-1#0')).toEqual({ status: 'done', value: slack.posts[0]!.ts });
    expect(await probe('reply#req-1#1')).toEqual({ status: 'done', value: slack.posts[1]!.ts });
  });

  it('waits out a 429 for its Retry-After and then posts exactly once', async () => {
    slack.failNext('chat.postMessage', { retryAfterSeconds: 1 });
    const startedAt = Date.now();

    await poster()(delivery(replyMessage()));

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(990);
    expect(postRequests()).toHaveLength(2);
    expect(slack.posts).toHaveLength(1);
  });

  describe('a chunk whose poster died or stalled', () => {
    let clock: ManualClock;
    beforeEach(() => {
      clock = manualClock(Date.now());
      claims = new MemoryClaimStore({ clock });
    });

    it('waits while the dead poster\'s lease runs, then takes the chunk over and posts it once', async () => {
      // A poster claimed the chunk, then died before Slack answered (no complete, no release).
      await claims.acquire('reply#req-1#0', { token: 'dead-poster', leaseSeconds: 90, ttlSeconds: 3600 });

      const early = await poster()(delivery(replyMessage(), 2)).catch((e: unknown) => e);
      clock.advance(90_000);
      await poster()(delivery(replyMessage(), 3));

      expect(early).toBeInstanceOf(ChunkInProgressError);
      expect(slack.posts.map((p) => p.text)).toEqual(['The answer is 42.']);
    });

    it('keeps the claim of a post whose answer never came (it may be out): the next delivery waits instead of posting again', async () => {
      slack.failNext('chat.postMessage', { stallMs: 1_500 });
      const stopped = await poster()(delivery(replyMessage(), 1), { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
      const meanwhile = await poster()(delivery(replyMessage(), 2)).catch((e: unknown) => e);
      await slack.waitForPosts(1, 5_000); // the stalled post lands after all

      expect(stopped).toMatchObject({ name: 'SlackApiError', outcome: 'unknown' });
      expect(meanwhile).toBeInstanceOf(ChunkInProgressError);
      expect(slack.posts).toHaveLength(1);

      // After the lease the chunk is taken over; the thread shows it landed, so it is not posted again.
      clock.advance(90_000);
      await poster()(delivery(replyMessage(), 3));
      expect(slack.posts).toHaveLength(1);
      expect(await claims.acquire('reply#req-1#0', { token: 'probe', leaseSeconds: 30, ttlSeconds: 60 })).toEqual({ status: 'done', value: slack.posts[0]!.ts });
    });

    it.each([
      ['a 500', { status: 500 }],
      ['internal_error', { error: 'internal_error' }],
    ])('never posts again a chunk that landed although Slack answered %s: the claim is kept, and after the lease it is found by its metadata', async (_, failure) => {
      slack.failNext('chat.postMessage', { ...failure, afterEffect: true });

      const first = await poster()(delivery(replyMessage(), 1)).catch((e: unknown) => e);
      const meanwhile = await poster()(delivery(replyMessage(), 2)).catch((e: unknown) => e);
      clock.advance(90_000);
      await poster()(delivery(replyMessage(), 3));

      expect(slack.posts.map((p) => p.text)).toEqual(['The answer is 42.']);
      expect(first).toMatchObject({ name: 'SlackApiError', retryable: true, outcome: 'unknown' });
      expect(meanwhile).toBeInstanceOf(ChunkInProgressError);
      expect(slack.requests.map((r) => r.method)).toEqual(['chat.postMessage', 'auth.test', 'conversations.replies']);
      expect(await claims.acquire('reply#req-1#0', { token: 'probe', leaseSeconds: 30, ttlSeconds: 60 })).toEqual({ status: 'done', value: slack.posts[0]!.ts });
    });

    it('posts, after the lease, a chunk Slack answered with a 5xx before it landed: looked for, not found, posted once', async () => {
      slack.failNext('chat.postMessage', { status: 503 });

      const first = await poster()(delivery(replyMessage(), 1)).catch((e: unknown) => e);
      clock.advance(90_000);
      await poster()(delivery(replyMessage(), 2));

      expect(first).toMatchObject({ name: 'SlackApiError', code: 'http_503', outcome: 'unknown' });
      expect(slack.requests.map((r) => r.method)).toEqual(['chat.postMessage', 'auth.test', 'conversations.replies', 'chat.postMessage']);
      expect(slack.posts.map((p) => p.text)).toEqual(['The answer is 42.']);
    });

    it('posts a follow-up\'s answer after a 5xx in a thread that already holds an earlier answer\'s chunk 0: the look matches the request id', async () => {
      // Prepare: the thread's first answer is out (chunk 0 of req-0, posted by this bot, with its metadata).
      await poster()(delivery(replyMessage({ request_id: 'req-0', text: 'The first answer.' })));
      slack.failNext('chat.postMessage', { status: 503 });

      // Act: the follow-up's answer meets a 5xx before it landed; after the lease it is looked for.
      const first = await poster()(delivery(replyMessage({ request_id: 'req-1' }), 1)).catch((e: unknown) => e);
      clock.advance(90_000);
      await poster()(delivery(replyMessage({ request_id: 'req-1' }), 2));

      // Assess: the earlier answer's chunk 0 was not taken for it.
      expect(first).toMatchObject({ name: 'SlackApiError', outcome: 'unknown' });
      expect(slack.requests.map((r) => r.method)).toEqual(['chat.postMessage', 'chat.postMessage', 'auth.test', 'conversations.replies', 'chat.postMessage']);
      expect(slack.posts.map((p) => p.text)).toEqual(['The first answer.', 'The answer is 42.']);
    });

    it('posts the second chunk of a two-chunk answer after a 5xx: the look matches the chunk index, not the first chunk already out', async () => {
      // Prepare: chunk 0 goes out; chunk 1 meets a 5xx before it landed.
      const body = replyMessage({ text: [paragraph('first', 500), paragraph('second', 400)].join('\n\n') });
      expect(splitForSlack(body.text)).toHaveLength(2);
      slack.failWhen('chat.postMessage', (posted) => String(posted.text).startsWith('second'), { status: 503 });

      // Act
      const first = await poster()(delivery(body, 1)).catch((e: unknown) => e);
      clock.advance(90_000);
      await poster()(delivery(body, 2));

      // Assess: the whole answer is in the thread, each chunk once.
      expect(first).toMatchObject({ name: 'SlackApiError', outcome: 'unknown' });
      expect(slack.requests.map((r) => r.method)).toEqual(['chat.postMessage', 'chat.postMessage', 'auth.test', 'conversations.replies', 'chat.postMessage']);
      expect(slack.posts.map((p) => p.text.split(' ')[0])).toEqual(['first', 'second']);
    });

    it('posts a taken-over chunk again when the thread cannot be read back (an install without the history scopes)', async () => {
      await claims.acquire('reply#req-1#0', { token: 'dead-poster', leaseSeconds: 90, ttlSeconds: 3600 });
      clock.advance(90_000);
      slack.failNext('conversations.replies', { error: 'missing_scope' });

      await poster()(delivery(replyMessage(), 2));

      expect(slack.requests.map((r) => r.method)).toEqual(['auth.test', 'conversations.replies', 'chat.postMessage']);
      expect(slack.posts).toHaveLength(1);
    });

    it('ends a call whose Retry-After outlasts the time left at once, gives the chunk back, and the redelivery posts it', async () => {
      slack.failNext('chat.postMessage', { retryAfterSeconds: 30 });

      const first = await poster()(delivery(replyMessage(), 1), { deadline: Date.now() + 5_000 }).catch((e: unknown) => e);
      const requestsOfFirst = postRequests().length;
      await poster()(delivery(replyMessage(), 2), { deadline: Date.now() + 5_000 });

      expect(first).toMatchObject({ name: 'SlackApiError', code: 'ratelimited', retryable: true });
      expect(requestsOfFirst).toBe(1); // no wait and no second try inside the first delivery
      expect(slack.posts).toHaveLength(1);
    });
  });

  it('releases the claim of a chunk whose post Slack refused, so the redelivery posts it — and only it', async () => {
    // Slack refuses the second chunk's post (a 429 without Retry-After: nothing was posted): the first is out, the second is not.
    let calls = 0;
    const flaky: SlackReplies = {
      ...replies,
      addReaction: (r) => replies.addReaction(r),
      removeReaction: (r) => replies.removeReaction(r),
      post: async (message) => {
        if ((calls += 1) === 2) slack.failNext('chat.postMessage', { status: 429, error: 'ratelimited' });
        return replies.post(message);
      },
    };
    const body = replyMessage({ text: [paragraph('first', 500), paragraph('second', 400)].join('\n\n') });
    expect(splitForSlack(body.text)).toHaveLength(2);
    const post = poster({ replies: flaky });

    const failure = await post(delivery(body, 1)).catch((e: unknown) => e);
    const postedBeforeRetry = slack.posts.map((p) => p.text.split(' ')[0]);
    await post(delivery(body, 2));

    expect(failure).toBeInstanceOf(SlackApiError);
    expect(failure).toMatchObject({ code: 'ratelimited', retryable: true, outcome: 'refused' });
    expect(postedBeforeRetry).toEqual(['first']);
    expect(slack.posts.map((p) => p.text.split(' ')[0])).toEqual(['first', 'second']);
  });

  describe('the replies queue\'s last receive', () => {
    const FALLBACK = 'Sorry, something went wrong on my side and I could not answer. The team has been notified.';
    type Line = { level: string; message: string; extra: Record<string, unknown> };
    let lines: Line[];
    const capture = (level: string) => (message: string, ...extra: Array<Record<string, unknown>>) => lines.push({ level, message, extra: Object.assign({}, ...extra) });
    const log = () => ({ debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') }) as unknown as SlackPosterOptions['log'];
    const lastReceivePoster = (overrides: Partial<SlackPosterOptions> = {}) => poster({ maxReceiveCount: 3, fallbackText: FALLBACK, log: log(), ...overrides });
    const failures = () => lines.filter((line) => /failed|last receive/.test(line.message));
    beforeEach(() => {
      lines = [];
    });

    it('before the last receive: a WARN, no fallback, SQS delivers the reply again', async () => {
      slack.failNext('chat.postMessage', { error: 'channel_not_found' });

      await expect(lastReceivePoster()(delivery(replyMessage(), 2))).rejects.toBeInstanceOf(SlackApiError);

      expect(slack.posts).toHaveLength(0);
      expect(postRequests()).toHaveLength(1);
      expect(failures().map((line) => line.level)).toEqual(['warn']);
    });

    it('tells the user with the fallback message when Slack refuses the answer, and still sends the reply to the DLQ', async () => {
      // Slack takes no message this long (or this content): the short fallback gets through.
      slack.failNext('chat.postMessage', { error: 'msg_too_long' });

      const error = await lastReceivePoster()(delivery(replyMessage(), 3)).catch((e: unknown) => e);

      expect(error).toMatchObject({ name: 'SlackApiError', code: 'msg_too_long' });
      expect(slack.posts).toEqual([{ channel: 'C1', thread_ts: USER_TS, text: FALLBACK, ts: expect.any(String) }]);
      expect(failures()).toEqual([
        expect.objectContaining({ level: 'error', message: expect.stringMatching(/last receive: the user was sent the fallback message, and the reply goes to the replies DLQ/), extra: expect.objectContaining({ code: 'msg_too_long', user_told: true }) }),
      ]);
      const probe = (k: string) => claims.acquire(k, { token: 'probe', leaseSeconds: 30, ttlSeconds: 60 });
      expect(await probe('reply#req-1#fallback')).toEqual({ status: 'done', value: slack.posts[0]!.ts });
      expect(await probe('reply#req-1#0')).toMatchObject({ status: 'claimed' }); // released: a redrive posts the answer
    });

    it('ends the task with the fallback: its agent session leaves processing (no Stop button left over it)', async () => {
      // The sign of life opened the thread's session, as agent-invoker does.
      const slackPorts = replies as SlackReplies & SlackLive & SlackAssistant;
      const live = createLiveReply({ slack: slackPorts, store: new MemoryLiveReplies(), sessions: true, workingText: 'is working on it…', placeholderText: '_Working on it…_', log: createLogger('test') });
      await live.signOfLife({ team_id: 'T1', channel: 'C1', ts: USER_TS, request_id: 'req-1', user_id: 'U1' });
      expect(slack.sessionOf('C1', USER_TS)?.status).toBe('processing');
      slack.failNext('chat.postMessage', { error: 'msg_too_long' });

      await expect(lastReceivePoster({ live })(delivery(replyMessage(), 3))).rejects.toMatchObject({ code: 'msg_too_long' });

      expect(slack.posts.map((p) => p.text)).toEqual([FALLBACK]);
      expect(slack.sessionOf('C1', USER_TS)?.history).toEqual(['processing', 'active']);
    });

    it('posts the fallback once: a redrive that fails again on its last receive does not repeat it, and one that succeeds posts what is missing', async () => {
      const body = replyMessage({ text: [paragraph('first', 500), paragraph('second', 400)].join('\n\n') });
      let refusals = 2;
      const secondChunkRefused: SlackReplies = {
        ...replies,
        post: async (message, options) => {
          if (message.marker?.chunk === 1 && refusals-- > 0) slack.failNext('chat.postMessage', { error: 'invalid_blocks' });
          return replies.post(message, options);
        },
      };
      const post = lastReceivePoster({ replies: secondChunkRefused });

      await expect(post(delivery(body, 3))).rejects.toMatchObject({ code: 'invalid_blocks' });
      // Redriven: the receive count starts again, and its last receive fails the same way.
      await expect(post(delivery(body, 3))).rejects.toMatchObject({ code: 'invalid_blocks' });
      // Fixed and redriven again: only the missing chunk goes out.
      await post(delivery(body, 1));

      expect(slack.posts.map((p) => p.text.split(' ')[0])).toEqual(['first', 'Sorry,', 'second']);
      expect(failures().filter((line) => line.level === 'error').map((line) => line.extra.user_told)).toEqual([true, true]);
    });

    it('says the user has no answer when the fallback cannot be posted either (a revoked token, the bot removed from the channel)', async () => {
      slack.failNext('chat.postMessage', { error: 'not_in_channel', times: 2 });
      const metrics = { replyLost: jest.fn(), slackApiError: jest.fn(), latency: jest.fn() };

      await expect(lastReceivePoster({ metrics: metrics as unknown as SlackPosterOptions['metrics'] })(delivery(replyMessage(), 3))).rejects.toMatchObject({ code: 'not_in_channel' });

      expect(postRequests()).toHaveLength(2); // the answer, then the fallback
      expect(slack.posts).toHaveLength(0);
      expect(failures()).toEqual([
        expect.objectContaining({ level: 'error', message: expect.stringMatching(/fallback message could not be posted either: .*the user has no answer until it is redriven/), extra: expect.objectContaining({ user_told: false, fallback_code: 'not_in_channel' }) }),
      ]);
      expect(metrics.replyLost).toHaveBeenCalledWith('not_in_channel');
    });

    it('posts no fallback while another delivery of the same reply is posting the chunk', async () => {
      await claims.acquire('reply#req-1#0', { token: 'other-delivery', leaseSeconds: 90, ttlSeconds: 3600 });

      await expect(lastReceivePoster()(delivery(replyMessage(), 3))).rejects.toBeInstanceOf(ChunkInProgressError);

      expect(slack.requests).toHaveLength(0);
      expect(failures()).toEqual([expect.objectContaining({ level: 'error', message: expect.stringMatching(/another delivery posting the same chunk/) })]);
    });

    it('posts nothing more when the function is out of time', async () => {
      const controller = new AbortController();
      controller.abort();

      await expect(lastReceivePoster()(delivery(replyMessage(), 3), { signal: controller.signal })).rejects.toThrow();

      expect(slack.requests).toHaveLength(0);
      expect(failures()).toEqual([expect.objectContaining({ level: 'error', extra: expect.objectContaining({ user_told: false, fallback_code: 'no_time_left' }) })]);
    });

    it('swaps 👀 for ⚠️ once the user was told', async () => {
      await acknowledgeReceipt(replies, { channel: 'C1', ts: USER_TS });
      slack.failNext('chat.postMessage', { error: 'msg_too_long' });

      await expect(lastReceivePoster({ reactions: true })(delivery(replyMessage(), 3))).rejects.toBeInstanceOf(SlackApiError);

      expect(slack.posts.map((p) => p.text)).toEqual([FALLBACK]);
      expect(slack.reactions.map((r) => `${r.op} ${r.name}`)).toEqual(['add eyes', 'remove eyes', 'add warning']);
    });
  });

  it('throws PoisonMessageError for a body that is not a reply message, and calls Slack for nothing', async () => {
    const post = poster();

    await expect(post(delivery('{not json'))).rejects.toBeInstanceOf(PoisonMessageError);
    await expect(post(delivery({ channel: 'C1', text: 'no kind' }))).rejects.toThrow(/unknown kind/);
    await expect(post(delivery({ kind: 'answer', channel: 'C1', text: 'no thread, no id' }))).rejects.toThrow(/malformed: .*ts.*request_id/);
    // A kind is looked up among the table's own rows: Object's members are no kinds.
    await expect(post(delivery({ ...replyMessage(), kind: 'constructor' }))).rejects.toThrow(/unknown kind/);
    await expect(post(delivery({ ...replyMessage(), kind: 'shout' }))).rejects.toMatchObject({ name: 'PoisonMessageError' });
    expect(slack.requests).toHaveLength(0);
  });

  it('posts nothing for a reply with no visible text, and does not ask for a retry', async () => {
    await expect(poster()(delivery(replyMessage({ text: ' \n\t ' })))).resolves.toBeUndefined();
    expect(slack.requests).toHaveLength(0);
  });

  it('sends the fallback message, once, for a reply with no visible text', async () => {
    const post = poster({ fallbackText: 'Sorry, something went wrong.' });
    await expect(post(delivery(replyMessage({ text: ' \n\t ' }), 1))).resolves.toBeUndefined();
    await expect(post(delivery(replyMessage({ text: ' \n\t ' }), 2))).resolves.toBeUndefined();
    expect(slack.posts.map((p) => p.text)).toEqual(['Sorry, something went wrong.']);
  });

  it('stops before the next chunk when the Lambda is out of time, leaving it for the redelivery', async () => {
    // Prepare: a two-chunk reply; the Lambda runs out of time once Slack has taken chunk 1.
    const body = replyMessage({ text: [paragraph('one', 900), paragraph('two', 900)].join('\n\n') });
    const chunks = splitForSlack(body.text);
    expect(chunks).toHaveLength(2);
    const outOfTime = new Error('the Lambda is about to stop');
    const controller = new AbortController();
    const timed: SlackReplies = new Proxy(replies, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property !== 'post' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<SlackReplies['post']>) => {
          const posted = await (value as SlackReplies['post']).apply(target, args);
          controller.abort(outOfTime);
          return posted;
        };
      },
    });

    // Act: the first delivery posts chunk 1 and gives up with the time-out; SQS delivers again.
    await expect(poster({ replies: timed })(delivery(body, 1), { signal: controller.signal })).rejects.toBe(outOfTime);
    const afterFirst = slack.posts.map((p) => p.text);
    await poster()(delivery(body, 2));

    // Assess: chunk 2 was left for the redelivery, which posted it, and chunk 1 only once.
    expect(afterFirst).toEqual([chunks[0]]);
    expect(slack.posts.map((p) => p.text)).toEqual(chunks);
    expect(postRequests().map((r) => r.body.text)).toEqual(chunks);
    // A third delivery finds both chunks done and posts nothing.
    await poster()(delivery(body, 3));
    expect(postRequests()).toHaveLength(2);
  });

  it('posts with the rotated bot token once Slack refuses the old one, without a restart', async () => {
    // Prepare: the bot token in (fake) Secrets Manager, read through the real SDK client.
    const secrets = await startFakeSecretsManager();
    try {
      const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-bot-token-AbCdEf';
      secrets.setSecret(arn, BOT_TOKEN);
      const post = poster({ replies: slackRepliesFromSecret(secretsManagerSecret(arn), { apiUrl: slack.apiUrl, retries: 0 }) });
      await post(delivery(replyMessage({ request_id: 'before', text: 'with token A' })));

      // Act: the secret rotates, and Slack stops taking the old token.
      const rotated = 'test-bot-token-rotated-b';
      secrets.setSecret(arn, rotated);
      slack.rotateToken(rotated);
      await post(delivery(replyMessage({ request_id: 'after', text: 'with token B' })));

      // Assess
      expect(slack.posts.map((p) => p.text)).toEqual(['with token A', 'with token B']);
      expect(postRequests().map((r) => [r.headers.authorization, r.body.text])).toEqual([
        [`Bearer ${BOT_TOKEN}`, 'with token A'],
        [`Bearer ${BOT_TOKEN}`, 'with token B'],
        [`Bearer ${rotated}`, 'with token B'],
      ]);
      expect(secrets.requests).toHaveLength(2);
      // The retry with token B happened within the same post: one delivery, one claim.
      expect(await claims.acquire('reply#after#0', { token: 'probe', leaseSeconds: 30, ttlSeconds: 60 })).toMatchObject({ status: 'done' });
    } finally {
      await secrets.close();
    }
  });

  describe('reactions', () => {
    const thread = { channel: 'C1', ts: USER_TS };

    it('swaps 👀 for ✅ on the user’s message once an answer is posted', async () => {
      await acknowledgeReceipt(replies, thread);
      await poster({ reactions: true })(delivery(replyMessage({ thread_ts: THREAD_TS })));

      expect(slack.reactions).toEqual([
        { op: 'add', channel: 'C1', timestamp: USER_TS, name: 'eyes' },
        { op: 'remove', channel: 'C1', timestamp: USER_TS, name: 'eyes' },
        { op: 'add', channel: 'C1', timestamp: USER_TS, name: 'white_check_mark' },
      ]);
    });

    it('swaps 👀 for ⚠️ after an error reply', async () => {
      await acknowledgeReceipt(replies, thread);
      await poster({ reactions: true })(delivery(replyMessage({ kind: 'error', text: 'Sorry, something went wrong.' })));

      expect(slack.reactions.map((r) => `${r.op} ${r.name}`)).toEqual(['add eyes', 'remove eyes', 'add warning']);
    });

    it('leaves a notice without reactions, since no task ever started', async () => {
      await poster({ reactions: true })(delivery(replyMessage({ kind: 'notice', text: 'Please ask your admin.' })));
      expect(slack.posts).toHaveLength(1);
      expect(reactionRequests()).toHaveLength(0);
    });

    it('does not touch reactions when they are off', async () => {
      await poster({ reactions: false })(delivery(replyMessage()));
      expect(slack.posts).toHaveLength(1);
      expect(reactionRequests()).toHaveLength(0);
    });

    it('never fails a posted reply because a reaction failed', async () => {
      slack.failNext('reactions.remove', { error: 'invalid_name' });
      slack.failNext('reactions.add', { error: 'too_many_reactions' });

      await expect(poster({ reactions: true })(delivery(replyMessage()))).resolves.toBeUndefined();

      expect(slack.posts).toHaveLength(1);
      expect(reactionRequests().map((r) => r.method)).toEqual(['reactions.remove', 'reactions.add']);
    });
  });

  describe('the bot token', () => {
    const previousLevel = process.env.POWERTOOLS_LOG_LEVEL;
    let output: string[];
    let spies: jest.SpyInstance[];
    beforeEach(() => {
      process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
      output = [];
      spies = [process.stdout, process.stderr].map((stream) =>
        jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
          output.push(String(chunk));
          return true;
        }),
      );
    });
    afterEach(() => {
      for (const spy of spies) spy.mockRestore();
      process.env.POWERTOOLS_LOG_LEVEL = previousLevel;
    });

    it('travels only in the Authorization header, and never reaches a log line', async () => {
      // Prepare: a client that logs through ours, and calls that make it log (429s, a failure).
      const log = createLogger('slack-poster-test');
      const logged = new WebApiSlackReplies(createSlackWebClient({ token: BOT_TOKEN, apiUrl: slack.apiUrl, retries: 1, log }), { log });
      const post = poster({ replies: logged, reactions: true, log });
      slack.failNext('chat.postMessage', { retryAfterSeconds: 0 });
      slack.failNext('reactions.add', { error: 'already_reacted' });

      // Act
      await acknowledgeReceipt(logged, { channel: 'C1', ts: USER_TS });
      await post(delivery(replyMessage({ text: [paragraph('x', 1000), paragraph('y', 1000)].join('\n\n') })));
      slack.failNext('chat.postMessage', { error: 'channel_not_found' });
      await post(delivery(replyMessage({ request_id: 'req-2' }))).catch(() => undefined);

      // Assess
      expect(slack.requests.length).toBeGreaterThan(4);
      for (const request of slack.requests) {
        expect(request.headers.authorization).toBe(`Bearer ${BOT_TOKEN}`);
        const { authorization: _, ...otherHeaders } = request.headers;
        expect(JSON.stringify({ ...request, headers: otherHeaders })).not.toContain(BOT_TOKEN);
      }
      expect(JSON.stringify([slack.posts, slack.reactions])).not.toContain(BOT_TOKEN);
      const logText = output.join('');
      expect(logText).toContain('reply posted');
      expect(logText).toContain('rate-limited');
      expect(logText).not.toContain(BOT_TOKEN);
    });
  });
});
