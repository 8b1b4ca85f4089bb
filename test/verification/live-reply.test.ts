import { createLogger } from '../../src/observability/logger';
import { SlackApiError } from '../../src/slack/slack-api-error';
import type { LiveMessage, LiveThread, SlackLive } from '../../src/slack/slack-live';
import { createLiveReply } from '../../src/verification/live/live-reply';
import { LIVE_INTENT_LEASE_MS, type LiveTarget } from '../../src/verification/live/live-parts';
import type { LiveReplies, LiveReply } from '../../src/verification/stores/live-replies';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';
import { manualClock, type ManualClock } from '../support/manual-clock';

/**
 * The live-answer logic on its own, over a recording stand-in for Slack (a unit test of one
 * function; the whole path runs against the fake Slack API in test/integration/live-answers.test.ts).
 */
type Call = { method: string; args: unknown[] };

function recordingSlack(refuse: Partial<Record<string, string>> = {}) {
  const calls: Call[] = [];
  const texts = new Map<string, string>();
  let ts = 0;
  const call = async (method: string, ...args: unknown[]) => {
    calls.push({ method, args });
    if (refuse[method]) throw new SlackApiError(`${method} failed: ${refuse[method]}`, refuse[method]!, false);
  };
  const slack: SlackLive & { post(message: { channel: string; threadTs: string; text: string }): Promise<{ ts: string }> } = {
    async setStatus(thread: LiveThread, status: string) {
      await call('setStatus', thread, status);
    },
    async startStream(stream) {
      await call('startStream', stream);
      const id = `s${(ts += 1)}`;
      texts.set(id, stream.markdownText ?? '');
      return { ts: id };
    },
    async appendStream(message: LiveMessage, text: string) {
      await call('appendStream', message, text);
      texts.set(message.ts, (texts.get(message.ts) ?? '') + text);
    },
    async stopStream(message: LiveMessage, options = {}) {
      await call('stopStream', message, options);
      texts.set(message.ts, (texts.get(message.ts) ?? '') + (options.markdownText ?? ''));
    },
    async update(message: LiveMessage, text: string) {
      await call('update', message, text);
      texts.set(message.ts, text);
    },
    async post(message) {
      await call('post', message);
      const id = `p${(ts += 1)}`;
      texts.set(id, message.text);
      return { ts: id };
    },
  };
  return { slack, calls, texts, methods: () => calls.map((c) => c.method) };
}

const target: LiveTarget = { team_id: 'T1', channel: 'C1', ts: '100.000001', request_id: 'req-1', user_id: 'U1' };

function setup(refuse: Partial<Record<string, string>> = {}, options: { clock?: ManualClock } = {}) {
  const recorded = recordingSlack(refuse);
  const store = new FaultyStore(new MemoryLiveReplies(options.clock));
  const live = createLiveReply({ slack: recorded.slack, store, workingText: 'is working on it…', placeholderText: '_Working on it…_', log: createLogger('test'), ...(options.clock ? { clock: options.clock } : {}) });
  return { ...recorded, store, live };
}

/**
 * A store whose next write of a kind fails: `failed` — not made; `lost` — made, its answer lost
 * (what a write looks like whose answer the client never got, after its retries).
 */
class FaultyStore implements LiveReplies {
  private readonly faults: Array<{ method: 'create' | 'advance' | 'settle'; how: 'failed' | 'lost' }> = [];
  constructor(private readonly inner: LiveReplies) {}
  failNext(method: 'create' | 'advance' | 'settle', how: 'failed' | 'lost'): void {
    this.faults.push({ method, how });
  }
  get(requestId: string) {
    return this.inner.get(requestId);
  }
  create(requestId: string, reply: LiveReply, ttlSeconds: number) {
    return this.write('create', () => this.inner.create(requestId, reply, ttlSeconds));
  }
  advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number) {
    return this.write('advance', () => this.inner.advance(requestId, from, next, ttlSeconds));
  }
  settle(requestId: string, token: string, next: LiveReply, ttlSeconds: number) {
    return this.write('settle', () => this.inner.settle(requestId, token, next, ttlSeconds));
  }
  private async write<T>(method: 'create' | 'advance' | 'settle', write: () => Promise<T>): Promise<T> {
    const index = this.faults.findIndex((fault) => fault.method === method);
    if (index < 0) return write();
    const [fault] = this.faults.splice(index, 1);
    if (fault!.how === 'lost') await write();
    throw new Error(`${method}: no answer from the store`);
  }
}

/** Lets every callback queued so far run (the other side of a race gets to its next await). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('live answers: the sign of life', () => {
  it('is the thread status where Slack shows one', async () => {
    const { live, calls } = setup();
    expect(await live.signOfLife(target)).toBe('status');
    expect(calls).toEqual([{ method: 'setStatus', args: [{ channel: 'C1', threadTs: '100.000001' }, 'is working on it…'] }]);
  });

  it('is a stream started with a working step where the status is refused, naming the recipient', async () => {
    const { live, calls, store } = setup({ setStatus: 'not_allowed_token_type' });
    expect(await live.signOfLife(target)).toBe('stream');
    expect(calls[1]).toEqual({
      method: 'startStream',
      args: [{ channel: 'C1', threadTs: '100.000001', recipientUserId: 'U1', recipientTeamId: 'T1', task: { id: 'answer', title: 'is working on it…', status: 'in_progress' } }],
    });
    expect(await store.get('req-1')).toMatchObject({ mode: 'stream', shown: 0 });
  });

  it('is a placeholder message where streams are refused too, and nothing (but no error) where posts are', async () => {
    const placeholder = setup({ setStatus: 'not_allowed_token_type', startStream: 'missing_recipient_team_id' });
    expect(await placeholder.live.signOfLife(target)).toBe('update');
    expect(placeholder.calls.at(-1)).toMatchObject({ method: 'post', args: [{ text: '_Working on it…_' }] });

    const nothing = setup({ setStatus: 'not_allowed_token_type', startStream: 'missing_recipient_team_id', post: 'channel_not_found' });
    expect(await nothing.live.signOfLife(target)).toBe('none');
  });
});

describe('live answers: previews, once each', () => {
  it('appends only what is not shown yet: a repeated or grown delta from a redelivered poll adds nothing twice', async () => {
    const { live, texts, methods } = setup();
    await live.show(target, 0, 'Hello ');
    await live.show(target, 0, 'Hello '); // the same poll again
    await live.show(target, 6, 'world');
    await live.show(target, 0, 'Hello world, again'); // an older cursor, answered with more text
    expect(texts.get('s1')).toBe('Hello world, again');
    expect(methods()).toEqual(['startStream', 'appendStream', 'appendStream']);
  });

  it('never lets a Slack token cut in two come together: a split <!channel> pings no one', async () => {
    const { live, texts } = setup();
    await live.show(target, 0, 'Hey <!chan');
    await live.show(target, 10, 'nel> look');
    expect(texts.get('s1')).not.toContain('<!channel>');
    expect(texts.get('s1')).toMatch(/^Hey ‹!channel.* look$/);
  });

  it('marks the record dirty when an append may or may not have landed, and shows no more previews', async () => {
    const { live, slack, store, calls, methods } = setup();
    await live.show(target, 0, 'one ');
    // Slack gives no answer to any append from now on; each attempt is recorded.
    slack.appendStream = async (message, text) => {
      calls.push({ method: 'appendStream', args: [message, text] });
      throw new SlackApiError('chat.appendStream: no answer', 'request_error', true, { outcome: 'unknown' });
    };
    await live.show(target, 4, 'two ');
    // The record counted the piece before the append (its intent), and keeps it: unknown, so dirty.
    expect(await store.get('req-1')).toMatchObject({ shown: 8, dirty: true });
    await live.show(target, 8, 'three');
    await live.show(target, 13, ' and four');
    // The one append that went unanswered, and none after it.
    expect(methods()).toEqual(['startStream', 'appendStream']);
    expect(calls[1]?.args[1]).toBe('two ');
  });

  it('falls back to one message that is updated when Slack refuses the stream', async () => {
    const { live, texts, methods } = setup({ startStream: 'missing_recipient_user_id' });
    await live.show(target, 0, 'Hello ');
    await live.show(target, 6, 'world');
    expect(methods()).toEqual(['startStream', 'post', 'update']);
    expect(texts.get('p1')).toBe('Hello world …');
  });
});

describe('live answers: the final answer', () => {
  it('stops the stream and rewrites the message with the answer as the agent wrote it, with the reply marker', async () => {
    const { live, calls, texts } = setup();
    await live.show(target, 0, 'Hello **wor');
    expect(await live.finish('req-1', 'Hello *world*', 'answer')).toBe('s1');
    expect(texts.get('s1')).toBe('Hello *world*');
    expect(calls.slice(-2)).toEqual([
      { method: 'stopStream', args: [{ channel: 'C1', ts: 's1' }, expect.objectContaining({ marker: { requestId: 'req-1', chunk: 0 }, task: expect.objectContaining({ status: 'complete' }) })] },
      { method: 'update', args: [{ channel: 'C1', ts: 's1' }, 'Hello *world*'] },
    ]);
  });

  it('finishing again (a redelivered reply) rewrites the same message the same way, never a second message', async () => {
    const { live, slack, texts, methods } = setup();
    await live.show(target, 0, 'Hi');
    await live.finish('req-1', 'Hi there', 'answer');
    slack.stopStream = async () => {
      throw new SlackApiError('chat.stopStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false, { outcome: 'unknown' });
    };
    expect(await live.finish('req-1', 'Hi there', 'answer')).toBe('s1');
    expect(texts.get('s1')).toBe('Hi there');
    expect(methods().filter((method) => method === 'post' || method === 'startStream')).toEqual(['startStream']);
  });

  it('ends a stream that fails mid-way with the apology under what was shown', async () => {
    const { live, texts } = setup();
    await live.show(target, 0, 'Part of an answer');
    await live.finish('req-1', 'Sorry, I could not complete that request.', 'error');
    expect(texts.get('s1')).toBe('Part of an answer\n\nSorry, I could not complete that request.');
  });

  it('keeps what was shown when Slack stopped the stream first (a Stop, an expiry): the note is added under it', async () => {
    const { live, texts, methods } = setup({ stopStream: 'message_not_in_streaming_state' });
    await live.show(target, 0, 'Part of ');
    await live.show(target, 8, 'an answer');
    expect(await live.finish('req-1', '_Stopped._', 'stopped')).toBe('s1');
    expect(methods().slice(-2)).toEqual(['stopStream', 'update']);
    expect(texts.get('s1')).toBe('Part of an answer\n\n_Stopped._');
  });

  it('ends a stopped answer with what was shown, never with a piece Slack refused after the Stop', async () => {
    // Prepare: a piece is out; then the user presses Stop and Slack stops the stream.
    const refuse: Partial<Record<string, string>> = {};
    const { live, texts } = setup(refuse);
    await live.show(target, 0, 'Part of ');
    refuse.appendStream = 'message_not_in_streaming_state';
    refuse.stopStream = 'message_not_in_streaming_state';
    // Act: the next piece, on its way when Stop was pressed, is refused; then the Stop's note.
    await live.show(target, 8, 'an answer');
    await live.finish('req-1', '_Stopped._', 'stopped');
    // Assess: the words the user never saw do not appear under the Stop.
    expect(texts.get('s1')).toBe('Part of \n\n_Stopped._');
  });

  it('leaves the answer to the usual post when there is no live message', async () => {
    const { live } = setup();
    expect(await live.finish('req-1', 'answer', 'answer')).toBeUndefined();
  });
});

/**
 * Issue 25, item 4: a preview is recorded before Slack shows it (an intent, with its writer's
 * token), so a record write that fails never shows a piece twice, and one whose answer was lost
 * recognises itself instead of freezing the preview (test/verification/stores/live-replies.test.ts
 * runs the lost answers against DynamoDB).
 */
describe('live answers: a preview whose record write fails', () => {
  it('shows nothing rather than twice: the same poll again shows "one two three", not "one two two three"', async () => {
    const { live, store, texts } = setup();
    await live.show(target, 0, 'one ');
    store.failNext('advance', 'failed');
    await live.show(target, 4, 'two ');
    // The poll comes again (its function failed after the preview), with what the agent has now.
    await live.show(target, 4, 'two three');
    expect(texts.get('s1')).toBe('one two three');
    expect(await store.get('req-1')).toMatchObject({ shown: 13 });
    expect((await store.get('req-1'))?.dirty).toBeUndefined();
  });

  it.each([
    ['the write of its intent (the token read back is its own)', 'advance'],
    ['the record of the piece shown', 'settle'],
  ] as const)('goes on when %s was made but not answered', async (_write, method) => {
    const { live, store, texts } = setup();
    await live.show(target, 0, 'one ');
    store.failNext(method, 'lost');
    await live.show(target, 4, 'two ');
    await live.show(target, 8, 'three');
    expect(texts.get('s1')).toBe('one two three');
    expect((await store.get('req-1'))?.dirty).toBeUndefined();
  });

  it('two steps at once (two copies of a poll): one shows the piece, the other nothing', async () => {
    const { live, texts, methods } = setup();
    await live.show(target, 0, 'one ');
    await Promise.all([live.show(target, 4, 'two '), live.show(target, 4, 'two ')]);
    expect(texts.get('s1')).toBe('one two ');
    expect(methods()).toEqual(['startStream', 'appendStream']);
  });

  it('leaves a piece another step is showing to it; once that step is long gone, the piece counts as unknown and the answer rewrites the message', async () => {
    const clock = manualClock();
    const { live, store, texts, methods } = setup({}, { clock });
    await live.show(target, 0, 'one ');
    // A step recorded its intent for "two " and died before Slack answered it.
    const record = (await store.get('req-1'))!;
    expect(await store.advance('req-1', 4, { ...record, shown: 8, text: 'one two ', pending: { token: 'dead', from: 4, until: clock.now() + LIVE_INTENT_LEASE_MS } }, 3600)).toBe(true);
    await live.show(target, 8, 'three');
    expect(methods()).toEqual(['startStream']);
    clock.advance(LIVE_INTENT_LEASE_MS);
    await live.show(target, 8, 'three');
    expect(await store.get('req-1')).toMatchObject({ dirty: true });
    expect(await store.settle('req-1', 'dead', { ...record, shown: 8 }, 3600)).toBe(false);
    expect(await live.finish('req-1', 'one two three', 'answer')).toBe('s1');
    expect(texts.get('s1')).toBe('one two three');
  });
});

/**
 * Issue 25, item 2: SQS can hold two copies of one task (the client sent a SendMessage again after
 * its answer was lost). Both copies reach the sign of life, and later the previews; only one may
 * start the live message, and a message nobody records must not stay at "working…".
 */
describe('live answers: one task, two copies', () => {
  it('two copies starting at once start one live message; the other shows nothing', async () => {
    const { live, store, methods } = setup({ setStatus: 'not_allowed_token_type' });
    const shown = await Promise.all([live.signOfLife(target), live.signOfLife(target)]);
    expect(methods().filter((method) => method === 'startStream' || method === 'post')).toEqual(['startStream']);
    expect(shown).toContain('stream');
    expect(await store.get('req-1')).toMatchObject({ mode: 'stream', ts: 's1' });
    expect((await store.get('req-1'))?.pending).toBeUndefined();
  });

  it('two copies whose first text comes at once (a status shown, no message yet) start one live message', async () => {
    const { live, texts, methods } = setup();
    await live.signOfLife(target);
    await Promise.all([live.show(target, 0, 'Hello '), live.show(target, 0, 'Hello ')]);
    expect(methods()).toEqual(['setStatus', 'startStream']);
    expect(texts.get('s1')).toBe('Hello ');
  });

  it('a start whose writer died is left alone while its lease runs, then taken over: the answer still shows live', async () => {
    const clock = manualClock();
    const { live, store, texts, methods } = setup({ setStatus: 'not_allowed_token_type' }, { clock });
    // The other copy claimed the start and died before Slack answered it.
    await store.create('req-1', { mode: 'starting', channel: 'C1', ts: '', shown: 0, pending: { token: 'dead', from: 0, until: clock.now() + LIVE_INTENT_LEASE_MS } }, 3600);
    expect(await live.signOfLife(target)).toBe('starting');
    await live.show(target, 0, 'Hello ');
    expect(methods()).toEqual([]);
    clock.advance(LIVE_INTENT_LEASE_MS);
    await live.show(target, 0, 'Hello ');
    expect(methods()).toEqual(['startStream']);
    expect(texts.get('s1')).toBe('Hello ');
    // The dead writer, back after all, cannot record over it.
    expect(await store.settle('req-1', 'dead', { mode: 'stream', channel: 'C1', ts: 's9', shown: 0 }, 3600)).toBe(false);
    expect(await store.get('req-1')).toMatchObject({ mode: 'stream', ts: 's1' });
  });

  it('a start the final answer overtook is closed: the answer is posted as usual, and the stream started late is stopped empty', async () => {
    const { live, slack, calls, store } = setup({ setStatus: 'not_allowed_token_type' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const startStream = slack.startStream.bind(slack);
    slack.startStream = async (stream, options) => {
      await gate;
      return startStream(stream, options);
    };
    const sign = live.signOfLife(target);
    await settled();
    // Slack is slow to start the stream; meanwhile the other copy's answer is out.
    expect(await live.finish('req-1', 'the answer', 'answer')).toBeUndefined();
    release();
    await sign;
    const stops = calls.filter((call) => call.method === 'stopStream');
    expect(stops).toEqual([{ method: 'stopStream', args: [{ channel: 'C1', ts: 's1' }, expect.objectContaining({ task: expect.objectContaining({ status: 'complete' }) })] }]);
    expect(stops[0]!.args[1]).not.toHaveProperty('markdownText');
    expect(await store.get('req-1')).toMatchObject({ mode: 'none' });
    // Nothing more is shown for it.
    await live.show(target, 0, 'late text');
    expect(calls.filter((call) => call.method !== 'setStatus' && call.method !== 'startStream' && call.method !== 'stopStream')).toEqual([]);
  });

  it('a preview a second copy shows after the answer is out never overwrites the answer', async () => {
    const { live, texts } = setup({ startStream: 'missing_recipient_user_id' });
    await live.show(target, 0, 'Hello ');
    expect(await live.finish('req-1', 'Hello world', 'answer')).toBe('p1');
    // The other copy's poll chain saw the task still pending, with more text.
    await live.show(target, 6, 'world');
    expect(texts.get('p1')).toBe('Hello world');
  });

  it('an answer out before any message was started is posted as usual; the record is closed to late starts and keeps the session to end', async () => {
    const { live, store, methods } = setup();
    await store.create('req-1', { mode: 'status', channel: 'C1', ts: '', shown: 0, session: true, threadTs: '100.000001' }, 3600);
    expect(await live.finish('req-1', 'answer', 'answer')).toBeUndefined();
    expect(await store.get('req-1')).toMatchObject({ mode: 'none', session: true, threadTs: '100.000001' });
    await live.show(target, 0, 'late text');
    expect(methods()).toEqual([]);
  });
});

describe('live answers: a question pauses the task (live-interim.ts)', () => {
  it('leaves what was shown as it stands and touches that message no more: the answer after the question is a new message', async () => {
    const { live, methods, texts } = setup({ setStatus: 'not_allowed_token_type' });
    await live.signOfLife(target);
    await live.show(target, 0, 'Looking at the deploy plan first.');
    const before = methods().length;
    expect(await live.interim('req-1')).toEqual({ session: false });
    expect(methods().slice(before)).toEqual(['stopStream']);
    expect(texts.get('s1')).toBe('Looking at the deploy plan first.');
    // Again (a redelivered question): nothing more.
    await live.interim('req-1');
    expect(methods().slice(before)).toEqual(['stopStream']);
    // The resumed task's text counts from 0 again: no preview goes into the old message, and the final answer is posted anew.
    await live.show(target, 0, 'Deployed.');
    expect(await live.finish('req-1', 'Deployed.', 'answer')).toBeUndefined();
    expect(methods().slice(before)).toEqual(['stopStream']);
  });

  it('suspends and resumes the thread’s agent session only where the sign of life started one', async () => {
    const { live, slack, store } = setup();
    const statuses: string[] = [];
    Object.assign(slack, { setSessionStatus: async (session: { status: string }) => void statuses.push(session.status) });
    expect(await live.sessionStatus('req-1', 'suspended')).toBe(false);
    await store.create('req-1', { mode: 'status', channel: 'C1', ts: '', shown: 0, session: true, threadTs: '100.000001' }, 3600);
    expect(await live.interim('req-1')).toEqual({ session: true });
    expect(await live.sessionStatus('req-1', 'suspended')).toBe(true);
    expect(await live.sessionStatus('req-1', 'processing')).toBe(true);
    expect(statuses).toEqual(['suspended', 'processing']);
    // The session stays on record for the poster to end once the final message is out.
    expect(await store.get('req-1')).toMatchObject({ mode: 'none', session: true });
  });
});
