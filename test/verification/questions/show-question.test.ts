import { randomUUID } from 'node:crypto';
import { createLogger } from '../../../src/observability/logger';
import { DEFAULT_USER_MESSAGES } from '../../../src/verification/messages/user-messages';
import { showQuestion, type QuestionSlack } from '../../../src/verification/questions/show-question';
import { MemoryPauses } from '../../../src/verification/stores/memory-pauses';
import type { Pause } from '../../../src/verification/stores/pauses';

/** slack-poster's side of a question on its own, over a recording stand-in for Slack (the whole path: test/integration/questions.test.ts). */
function setup(question: Pause['question']) {
  const calls: Array<{ method: string; args: Record<string, unknown> }> = [];
  const slack: QuestionSlack = {
    post: async (message) => (calls.push({ method: 'post', args: message }), { ts: '2.000001' }),
    update: async (message, text, options) => void calls.push({ method: 'update', args: { ...message, text, blocks: options?.blocks } }),
    postEphemeral: async (message) => void calls.push({ method: 'postEphemeral', args: message }),
  };
  const pauses = new MemoryPauses();
  const pause: Pause = { request_id: randomUUID(), round: 0, state: 'waiting', thread: { team_id: 'T1', channel: 'C1', ts: '1.000001' }, event_id: 'Ev1', asker: 'UASKER', agent: 'a2a', handle: { taskId: 't' }, question, expires_at_ms: 0, received_at: 0 };
  const parts = { slack, pauses, postOnce: async (target: { channel: string; threadTs: string }, piece: { text: string; blocks: unknown[] }) => slack.post({ ...target, text: piece.text, blocks: piece.blocks as never }), messages: DEFAULT_USER_MESSAGES, log: createLogger('test') };
  return { calls, pauses, pause, parts };
}

describe('showing a question in Slack', () => {
  it('shows an auth question’s sign-in link to the asker alone, never in the thread', async () => {
    const { calls, pauses, pause, parts } = setup({ id: 'auth', text: 'The agent needs you to sign in.', kind: 'auth', auth_url: 'https://login.example.com/start?x=1' });
    await pauses.open(pause, 60);
    await showQuestion(parts, { kind: 'question', ...pause.thread, request_id: pause.request_id, round: 0 }, {});
    const post = calls.find((call) => call.method === 'post')!;
    expect(JSON.stringify(post.args)).not.toContain('login.example.com');
    expect(JSON.stringify(post.args)).toContain(DEFAULT_USER_MESSAGES.questionSignedIn);
    expect(calls.filter((call) => call.method === 'postEphemeral')).toEqual([
      { method: 'postEphemeral', args: { channel: 'C1', user: 'UASKER', text: expect.stringContaining('https://login.example.com/start?x=1'), threadTs: '1.000001' } },
    ]);
    expect(await pauses.get(pause.request_id)).toMatchObject({ message_ts: '2.000001' });
  });

  it('closes a question answered while it was being posted: the post is updated at once, without buttons', async () => {
    const { calls, pauses, pause, parts } = setup({ id: 'q', text: 'Go?', options: [{ value: 'go', label: 'Go' }] });
    await pauses.open(pause, 60);
    const post = parts.postOnce;
    parts.postOnce = async (target, piece) => {
      const posted = await post(target, piece);
      await pauses.close(pause.request_id, 0, 'answered', { closed_by: 'click', answer: { value: 'go', label: 'Go', user: 'UASKER' } }, 60);
      return posted;
    };
    await showQuestion(parts, { kind: 'question', ...pause.thread, request_id: pause.request_id, round: 0 }, {});
    const update = calls.find((call) => call.method === 'update')!;
    expect(update.args).toMatchObject({ channel: 'C1', ts: '2.000001' });
    expect(JSON.stringify(update.args.blocks)).not.toContain('"actions"');
    expect(JSON.stringify(update.args.blocks)).toContain('answered by <@UASKER>');
  });
});
