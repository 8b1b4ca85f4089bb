import { MemoryQueue } from '../../src/queue/memory-queue';
import { createLogger } from '../../src/observability/logger';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { RateLimiter } from '../../src/verification/intake/rate-limiter';
import { staticSecret, type SecretSource } from '../../src/secrets/secret-source';
import { createSlackIngress, type SlackIngressOptions } from '../../src/verification/intake/slack-ingress';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { MemoryClaimStore } from '../../src/verification/stores/memory-claim-store';
import { MemoryCounterStore } from '../../src/verification/stores/memory-counter-store';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { appMentionEnvelope, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { MemoryBotThreads } from '../../src/verification/stores/memory-bot-threads';
import { manualClock } from '../support/manual-clock';

const SECRET = 'ingress-test-secret';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function setup(overrides: Partial<SlackIngressOptions> = {}) {
  const tasks = new MemoryQueue<TaskMessage>({ name: 'tasks' });
  const replies = new MemoryQueue<ReplyMessage>({ name: 'replies' });
  const claims = new MemoryClaimStore();
  const handle = createSlackIngress({
    signingSecret: staticSecret(SECRET),
    claims,
    rateLimiter: new RateLimiter({ counters: new MemoryCounterStore(), perMinute: 3 }),
    tasks,
    replies,
    messages: { ...DEFAULT_USER_MESSAGES },
    maxTextLength: 50,
    claimTtlSeconds: 3600,
    log: createLogger('test'),
    ...overrides,
  });
  const tasksSent = () => tasks.peek().map((body) => JSON.parse(body) as TaskMessage);
  const repliesSent = () => replies.peek().map((body) => JSON.parse(body) as ReplyMessage);
  return { handle, tasks, replies, claims, tasksSent, repliesSent };
}

const signed = (body: string, extra: Record<string, string> = {}, secret = SECRET) => ({ headers: { ...slackSignatureHeaders(secret, body), ...extra }, body });

describe('slack-events ingress', () => {
  it('answers url_verification with the challenge', async () => {
    const { handle } = setup();
    const response = await handle(signed(JSON.stringify({ type: 'url_verification', token: 't', challenge: 'abc123' })));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ challenge: 'abc123' });
  });

  it('queues one task with a UUID v4 request id and the Slack context, then acks', async () => {
    const { handle, tasksSent } = setup();
    const { body, eventId, ts } = appMentionEnvelope({ text: 'what is up?', threadTs: '111.222', channel: 'C9', userId: 'U9', teamId: 'T9' });
    const response = await handle(signed(body));
    expect(response).toMatchObject({ statusCode: 200, body: '' });
    expect(tasksSent()).toEqual([
      { request_id: expect.stringMatching(UUID_V4), event_id: eventId, team_id: 'T9', user_id: 'U9', channel: 'C9', ts, thread_ts: '111.222', text: 'what is up?', received_at: expect.any(Number), bot_user_id: 'UBOTLOCAL' },
    ]);
  });

  it('decodes nothing itself: a base64-decoded Buffer body verifies the same as text', async () => {
    const { handle, tasksSent } = setup();
    const { body } = appMentionEnvelope({ text: 'bytes' });
    const response = await handle({ headers: slackSignatureHeaders(SECRET, body), body: Buffer.from(body) });
    expect(response.statusCode).toBe(200);
    expect(tasksSent()).toHaveLength(1);
  });

  it.each([
    ['unsigned', () => ({ headers: {}, body: appMentionEnvelope({ text: 'x' }).body })],
    ['forged', () => signed(appMentionEnvelope({ text: 'x' }).body, {}, 'wrong-secret')],
    ['stale', () => {
      const { body } = appMentionEnvelope({ text: 'x' });
      return { headers: slackSignatureHeaders(SECRET, body, Math.floor(Date.now() / 1000) - 301), body };
    }],
    ['tampered', () => {
      const { body } = appMentionEnvelope({ text: 'x' });
      return { headers: slackSignatureHeaders(SECRET, body), body: body.replace('x', 'y') };
    }],
  ])('refuses a %s request with 401 and queues nothing', async (_label, make) => {
    const { handle, tasks, replies } = setup();
    const response = await handle(make());
    expect(response.statusCode).toBe(401);
    expect(tasks.size + replies.size).toBe(0);
  });

  it('re-reads a rotated signing secret once before refusing', async () => {
    let current = 'old-secret';
    const rotating: SecretSource = { get: async () => current, refresh: async () => (current = SECRET) };
    const { handle, tasksSent } = setup({ signingSecret: rotating });
    expect((await handle(signed(appMentionEnvelope({ text: 'hi' }).body))).statusCode).toBe(200);
    expect(tasksSent()).toHaveLength(1);
  });

  it('acknowledges Slack retries of the same event without a second task', async () => {
    const { handle, tasksSent } = setup();
    const { body } = appMentionEnvelope({ text: 'once please' });
    for (let retry = 0; retry < 4; retry += 1) {
      const headers: Record<string, string> = retry ? { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'http_timeout' } : {};
      expect((await handle(signed(body, headers))).statusCode).toBe(200);
    }
    expect(tasksSent()).toHaveLength(1);
  });

  it('releases the claim and answers 500 when the enqueue fails, so Slack\'s retry succeeds', async () => {
    const { handle, tasks, tasksSent } = setup();
    const realSend = tasks.send.bind(tasks);
    let failures = 1;
    tasks.send = async (message, options) => {
      if (failures-- > 0) throw new Error('SQS is down');
      return realSend(message, options);
    };
    const { body } = appMentionEnvelope({ text: 'eventually' });
    expect((await handle(signed(body))).statusCode).toBe(500);
    expect((await handle(signed(body, { 'x-slack-retry-num': '1' }))).statusCode).toBe(200);
    expect(tasksSent()).toHaveLength(1);
  });

  it('asks Slack to come back (503) while an earlier delivery holds the event, and takes over a dead one\'s claim with the same request id', async () => {
    const clock = manualClock(Date.now());
    const claims = new MemoryClaimStore({ clock });
    const { handle, tasks, tasksSent } = setup({ claims, clock });
    const { body, eventId } = appMentionEnvelope({ text: 'are you there' });
    // The first delivery claimed the event and died before queueing (a stalled SQS, a killed Lambda).
    const requestId = '0f8f1b8e-3a0b-4c2d-9e6f-1a2b3c4d5e6f';
    await claims.acquire(`event#${eventId}`, { token: 'dead-delivery', leaseSeconds: 30, ttlSeconds: 3600, value: requestId });

    const immediate = await handle(signed(body, { 'x-slack-retry-num': '1' }));
    clock.advance(60_000); // Slack's second retry, a minute later
    const later = await handle(signed(body, { 'x-slack-retry-num': '2' }));
    clock.advance(240_000);
    const last = await handle(signed(body, { 'x-slack-retry-num': '3' }));

    expect([immediate.statusCode, later.statusCode, last.statusCode]).toEqual([503, 200, 200]);
    expect(tasksSent().map((task) => task.request_id)).toEqual([requestId]);
    expect(tasks.size).toBe(1);
  });

  it('re-reads the signing secret at most once a minute on mismatches, and a failed re-read is a 401, not a 5xx', async () => {
    const clock = manualClock(Date.now());
    let refreshes = 0;
    let refreshFails = false;
    const secret: SecretSource = {
      get: async () => SECRET,
      refresh: async () => {
        refreshes += 1;
        if (refreshFails) throw new Error('Secrets Manager is down');
        return SECRET;
      },
    };
    const { handle } = setup({ signingSecret: secret, clock });
    const forged = () => handle({ headers: slackSignatureHeaders('forger', appMentionEnvelope({ text: 'x' }).body, Math.floor(clock.now() / 1000)), body: appMentionEnvelope({ text: 'x' }).body });

    const flood = await Promise.all(Array.from({ length: 20 }, forged));
    clock.advance(60_000);
    refreshFails = true;
    const afterAMinute = await forged();

    expect(flood.map((r) => r.statusCode)).toEqual(Array(20).fill(401));
    expect(afterAMinute.statusCode).toBe(401);
    expect(refreshes).toBe(2);
  });

  it('answers empty and over-long text with a friendly notice instead of a task', async () => {
    const { handle, tasksSent, repliesSent } = setup();
    await handle(signed(appMentionEnvelope({ text: '   ' }).body));
    await handle(signed(appMentionEnvelope({ text: 'x'.repeat(51) }).body));
    expect(tasksSent()).toHaveLength(0);
    expect(repliesSent().map((r) => [r.kind, r.text])).toEqual([
      ['notice', DEFAULT_USER_MESSAGES.emptyText],
      ['notice', expect.stringContaining('50 characters')],
    ]);
  });

  it('refuses users outside the allow-lists, with one notice per window', async () => {
    const { handle, tasksSent, repliesSent } = setup({ allowedTeamIds: ['TOK'], allowedUserIds: ['UOK'] });
    await handle(signed(appMentionEnvelope({ text: 'a', teamId: 'TOK', userId: 'UOK' }).body));
    await handle(signed(appMentionEnvelope({ text: 'b', teamId: 'TOK', userId: 'UBAD' }).body));
    await handle(signed(appMentionEnvelope({ text: 'c', teamId: 'TOK', userId: 'UBAD' }).body));
    await handle(signed(appMentionEnvelope({ text: 'd', teamId: 'TBAD', userId: 'UOK' }).body));
    expect(tasksSent().map((t) => t.text)).toEqual(['a']);
    expect(repliesSent().map((r) => r.text)).toEqual([DEFAULT_USER_MESSAGES.notAllowed, DEFAULT_USER_MESSAGES.notAllowed]);
  });

  it('rate-limits per team and user, with one polite notice per window', async () => {
    const { handle, tasksSent, repliesSent } = setup();
    for (let i = 0; i < 6; i += 1) await handle(signed(appMentionEnvelope({ text: `q${i}`, userId: 'UFAST' }).body));
    await handle(signed(appMentionEnvelope({ text: 'other user', userId: 'UCALM' }).body));
    expect(tasksSent().map((t) => t.text)).toEqual(['q0', 'q1', 'q2', 'other user']);
    expect(repliesSent().map((r) => r.text)).toEqual([DEFAULT_USER_MESSAGES.rateLimited]);
  });

  it('acknowledges but ignores bot messages and other event types', async () => {
    const { handle, tasks, replies } = setup();
    const envelope = JSON.parse(appMentionEnvelope({ text: 'x' }).body);
    envelope.event.bot_id = 'B1';
    expect((await handle(signed(JSON.stringify(envelope)))).statusCode).toBe(200);
    envelope.event = { type: 'reaction_added', user: 'U1' };
    expect((await handle(signed(JSON.stringify(envelope)))).statusCode).toBe(200);
    expect(tasks.size + replies.size).toBe(0);
  });
});

describe('slack-events ingress: follow-ups and files', () => {
  const followUp = (threadTs: string, text = 'and then?') => slackEventEnvelope('thread-reply', { text, threadTs, teamId: 'T9', channel: 'C9' });

  it('takes a reply without a mention only in a thread the bot answered in', async () => {
    const threads = new MemoryBotThreads();
    const { handle, tasksSent } = setup({ threads });
    await handle(signed(followUp('100.000001').body));
    expect(tasksSent()).toEqual([]);

    await threads.remember({ team_id: 'T9', channel: 'C9', thread_ts: '100.000001' }, 60);
    const { body, ts } = followUp('100.000001');
    expect((await handle(signed(body))).statusCode).toBe(200);
    expect(tasksSent()).toEqual([expect.objectContaining({ ts, thread_ts: '100.000001', text: 'and then?', follow_up: true })]);
  });

  it('refuses a reply without a mention silently: no notice to people who may be talking to each other', async () => {
    const threads = new MemoryBotThreads();
    await threads.remember({ team_id: 'T9', channel: 'C9', thread_ts: '100.000001' }, 60);
    const { handle, tasksSent, repliesSent } = setup({ threads, allowedUserIds: ['USOMEONEELSE'] });
    expect((await handle(signed(followUp('100.000001').body))).statusCode).toBe(200);
    const tooLong = setup({ threads, maxTextLength: 5 });
    expect((await tooLong.handle(signed(followUp('100.000001', 'a reply far longer than five characters').body))).statusCode).toBe(200);
    expect([...tasksSent(), ...repliesSent(), ...tooLong.tasksSent(), ...tooLong.repliesSent()]).toEqual([]);
  });

  it('takes no reply without a mention when follow-ups are off (no thread record given)', async () => {
    const { handle, tasksSent } = setup();
    expect((await handle(signed(followUp('100.000001').body))).statusCode).toBe(200);
    expect(tasksSent()).toEqual([]);
  });

  it('asks Slack to retry when the thread record cannot be read, and queues nothing', async () => {
    const threads = { remember: async () => undefined, has: async () => Promise.reject(new Error('DynamoDB is unavailable')) };
    const { handle, tasksSent, claims } = setup({ threads });
    const { body, eventId } = followUp('100.000001');
    expect((await handle(signed(body))).statusCode).toBe(500);
    expect(tasksSent()).toEqual([]);
    // Not claimed: Slack's retry is a first delivery.
    expect(await claims.acquire(`event#${eventId}`, { token: 't', leaseSeconds: 1, ttlSeconds: 60 })).toMatchObject({ status: 'claimed' });
  });

  it('queues the files of a direct message (file_share) with no text, as a question about them', async () => {
    const { handle, tasksSent } = setup();
    const file = { id: 'F1', name: 'a.pdf', mimetype: 'application/pdf', filetype: 'pdf', size: 10, url_private_download: 'https://files.slack.com/files-pri/T9-F1/download/a.pdf' };
    const deleted = { id: 'F2', name: 'gone.pdf', mode: 'tombstone' };
    await handle(signed(slackEventEnvelope('dm', { text: '', files: [file, deleted], teamId: 'T9' }).body));
    expect(tasksSent()).toEqual([
      expect.objectContaining({
        text: DEFAULT_USER_MESSAGES.filesWithoutText,
        files: [
          { id: 'F1', name: 'a.pdf', mimetype: 'application/pdf', filetype: 'pdf', size: 10, url: file.url_private_download },
          { id: 'F2', name: 'gone.pdf', mimetype: '', size: 0 },
        ],
      }),
    ]);
  });
});

