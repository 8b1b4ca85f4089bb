import { createLogger } from '../../src/observability/logger';
import { SlackApiError } from '../../src/slack/slack-api-error';
import type { LiveMessage, LiveThread, SlackLive } from '../../src/slack/slack-live';
import { createLiveReply, type LiveTarget } from '../../src/verification/live-reply';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';

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

function setup(refuse: Partial<Record<string, string>> = {}) {
  const recorded = recordingSlack(refuse);
  const store = new MemoryLiveReplies();
  const live = createLiveReply({ slack: recorded.slack, store, workingText: 'is working on it…', placeholderText: '_Working on it…_', log: createLogger('test') });
  return { ...recorded, store, live };
}

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
    const { live, slack, store, methods } = setup();
    await live.show(target, 0, 'one ');
    slack.appendStream = async () => {
      throw new SlackApiError('chat.appendStream: no answer', 'request_error', true, { outcome: 'unknown' });
    };
    await live.show(target, 4, 'two ');
    expect(await store.get('req-1')).toMatchObject({ shown: 4, dirty: true });
    await live.show(target, 8, 'three');
    expect(methods()).toEqual(['startStream']);
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

  it('leaves the answer to the usual post when there is no live message', async () => {
    const { live } = setup();
    expect(await live.finish('req-1', 'answer', 'answer')).toBeUndefined();
  });
});
