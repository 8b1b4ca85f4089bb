import type { Guardrail, GuardrailResult } from '../../src/guardrail/guardrail';
import { createLogger } from '../../src/observability/logger';
import type { StepsShown } from '../../src/protocols/outcome';
import { SlackApiError } from '../../src/slack/slack-api-error';
import type { LiveCards, LiveMessage, LiveTask, SlackLive } from '../../src/slack/slack-live';
import { createLiveReply } from '../../src/verification/live/live-reply';
import type { LiveTarget } from '../../src/verification/live/live-parts';
import { cardPrint, cardsOf, finalCards, queuedSteps, stepsLine, stepsOfReply } from '../../src/verification/live/step-cards';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';

/**
 * The agent's steps in the live message (src/verification/live/live-steps.ts) on their own, over
 * a recording stand-in for Slack (a unit test of one function; the whole path runs against the
 * fake Slack API in test/integration/agent-steps.test.ts).
 */
type Call = { method: string; tasks: LiveTask[]; planTitle?: string; text?: string };

function setup(options: { refuse?: Partial<Record<string, SlackApiError>>; guardrail?: Guardrail } = {}) {
  const calls: Call[] = [];
  const fail = (method: string) => {
    const error = options.refuse?.[method];
    if (error) {
      delete options.refuse![method];
      throw error;
    }
  };
  let ts = 0;
  const slack: SlackLive & { post(message: { channel: string; threadTs: string; text: string }): Promise<{ ts: string }> } = {
    async setStatus() {},
    async startStream(stream) {
      calls.push({ method: 'startStream', tasks: [...(stream.tasks ?? [])], ...(stream.planTitle ? { planTitle: stream.planTitle } : {}), ...(stream.markdownText ? { text: stream.markdownText } : {}) });
      fail('startStream');
      return { ts: `s${(ts += 1)}` };
    },
    async appendStream(_message: LiveMessage, text: string, cards: LiveCards = {}) {
      calls.push({ method: 'appendStream', tasks: [...(cards.tasks ?? [])], ...(cards.planTitle ? { planTitle: cards.planTitle } : {}), text });
      fail('appendStream');
    },
    async stopStream(_message, stop = {}) {
      calls.push({ method: 'stopStream', tasks: [...(stop.tasks ?? []), ...(stop.task ? [stop.task] : [])] });
    },
    async update(_message, text) {
      calls.push({ method: 'update', tasks: [], text });
      fail('update');
    },
    async post(message) {
      calls.push({ method: 'post', tasks: [], text: message.text });
      return { ts: `p${(ts += 1)}` };
    },
  };
  const store = new MemoryLiveReplies();
  const live = createLiveReply({ slack, store, workingText: 'is working on it…', placeholderText: '_Working on it…_', log: createLogger('test'), ...(options.guardrail ? { guardrail: { guardrail: options.guardrail, blockedText: 'blocked' } } : {}) });
  return { live, store, calls };
}

const target: LiveTarget = { team_id: 'T1', channel: 'C1', ts: '100.000001', request_id: 'req-1', user_id: 'U1' };
const step = (n: number, status: StepsShown['steps'][number]['status'], extra: Record<string, unknown> = {}) => ({ id: `s${n}`, title: `Step ${n}`, status, ...extra });
const noAnswer = () => new SlackApiError('chat.appendStream: no answer', 'request_error', true, { outcome: 'unknown' });

describe('the agent’s steps in the live message', () => {
  it('start the stream as cards; the same steps again send nothing (a redelivered poll); a change sends only the card that changed', async () => {
    const { live, calls, store } = setup();
    const first: StepsShown = { steps: [step(1, 'in_progress')], planTitle: 'Plan' };
    await live.showSteps(target, first);
    await live.showSteps(target, first);
    await live.showSteps(target, { steps: [step(1, 'complete'), step(2, 'in_progress')], planTitle: 'Plan' });
    await live.showSteps(target, { steps: [step(1, 'complete'), step(2, 'in_progress')], planTitle: 'Plan' });

    expect(calls).toEqual([
      { method: 'startStream', tasks: [{ id: 's1', title: 'Step 1', status: 'in_progress' }], planTitle: 'Plan' },
      { method: 'appendStream', tasks: [{ id: 's1', title: 'Step 1', status: 'complete' }, { id: 's2', title: 'Step 2', status: 'in_progress' }], text: '' },
    ]);
    expect(Object.keys((await store.get('req-1'))!.cards!)).toEqual(['s1', '#plan', 's2']);

    // Text then goes on in the same stream, and the final answer ends the cards not yet shown so.
    await live.show(target, 0, 'The answer');
    const final = await finalCards(undefined, { steps: [step(1, 'complete'), step(2, 'complete')] }, undefined, {});
    await live.finish('req-1', 'The answer.', 'answer', { steps: { cards: final.cards, line: final.line } });
    expect(calls.slice(2).map((call) => [call.method, call.tasks.map((task) => `${task.id}:${task.status}`)])).toEqual([
      ['appendStream', []],
      ['stopStream', ['s2:complete', 'answer:complete']],
      ['update', []],
    ]);
  });

  it('a task that fails ends the cards still open as errors under its apology; those that ended stay as they were', async () => {
    const { live, calls } = setup();
    await live.showSteps(target, { steps: [step(1, 'complete'), step(2, 'in_progress'), step(3, 'pending')] });
    await live.finish('req-1', 'Sorry, that failed.', 'error');
    expect(calls.at(-1)).toEqual({ method: 'stopStream', tasks: [{ id: 's2', title: 'Step 2', status: 'error' }, { id: 's3', title: 'Step 3', status: 'error' }, { id: 'answer', title: 'is working on it…', status: 'error' }] });
  });

  it('send nothing while another writer holds the message, or once the final answer closed it', async () => {
    const { live, calls, store } = setup();
    await live.showSteps(target, { steps: [step(1, 'in_progress')] });
    const record = (await store.get('req-1'))!;
    await store.advance('req-1', record.shown, { ...record, pending: { token: 'other', from: 0, until: Date.now() + 60_000 } }, 60);
    await live.showSteps(target, { steps: [step(1, 'complete')] });
    expect(calls.map((call) => call.method)).toEqual(['startStream']);

    await store.settle('req-1', 'other', { ...record, dirty: true }, 60);
    await live.showSteps(target, { steps: [step(1, 'complete')] });
    expect(calls.map((call) => call.method)).toEqual(['startStream']);
  });

  it('an append with no answer counts its cards (they may show) and stops further cards; a refused one counts nothing', async () => {
    for (const [error, counted] of [
      [noAnswer(), true],
      [new SlackApiError('chat.appendStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false), false],
    ] as const) {
      const { live, calls, store } = setup({ refuse: { appendStream: error } });
      await live.showSteps(target, { steps: [step(1, 'in_progress')] });
      await live.showSteps(target, { steps: [step(1, 'complete')] });
      const record = (await store.get('req-1'))!;
      expect(record.dirty).toBe(true);
      expect(record.pending).toBeUndefined();
      // Counted: the record's print is the complete card's, else still the in-progress one's.
      const { cards: shownNow } = await finalCards(undefined, { steps: [step(1, 'complete')] }, undefined, {});
      const { cards: before } = await finalCards(undefined, { steps: [step(1, 'in_progress')] }, undefined, {});
      expect(record.cards!.s1).toBe(cardPrint((counted ? shownNow : before).tasks[0]!));
      await live.showSteps(target, { steps: [step(1, 'complete'), step(2, 'in_progress')] });
      expect(calls.map((call) => call.method)).toEqual(['startStream', 'appendStream']);
    }
  });

  it('where Slack refuses the stream, fold to one line above the message that is updated, which the text previews keep', async () => {
    const { live, calls, store } = setup({ refuse: { startStream: new SlackApiError('chat.startStream failed: missing_recipient_user_id', 'missing_recipient_user_id', false) } });
    await live.showSteps(target, { steps: [step(1, 'in_progress')] });
    await live.showSteps(target, { steps: [step(1, 'complete'), step(2, 'in_progress')] });
    await live.show(target, 0, 'The answer so far');
    expect(calls.slice(1).map((call) => [call.method, call.text])).toEqual([
      ['post', '… Step 1\n\n_Working on it…_'],
      ['update', '✓ Step 1 · … Step 2\n\n_Working on it…_'],
      ['update', '✓ Step 1 · … Step 2\n\nThe answer so far …'],
    ]);
    expect((await store.get('req-1'))!.stepsLine).toBe('✓ Step 1 · … Step 2');

    await live.finish('req-1', 'The answer.', 'answer', { steps: { cards: cardsOf({ steps: [step(1, 'complete'), step(2, 'complete')] }), line: '✓ Step 1 · ✓ Step 2' } });
    expect(calls.at(-1)).toMatchObject({ method: 'update', text: '✓ Step 1 · ✓ Step 2\n\nThe answer.' });
  });

  it('pass titles and details through the output guardrail: masked where it masks, a blocked title hidden, blocked details left out', async () => {
    const guardrail: Guardrail = {
      kind: 'stand-in',
      check: async (text): Promise<GuardrailResult> => (text.includes('secret') ? { action: 'blocked', text: '', findings: { KEY: 1 } } : { action: text.includes('@') ? 'masked' : 'none', text: text.replace(/\S+@\S+/g, '[EMAIL-1]'), findings: {} }),
      modeOf: () => 'mask',
      holdFrom: (text) => text.length,
    };
    const { live, calls } = setup({ guardrail });
    await live.showSteps(target, { steps: [step(1, 'in_progress', { title: 'Mail bob@example.com', details: 'the secret key' }), step(2, 'pending', { title: 'secret plan' })] });
    expect(calls[0]!.tasks).toEqual([
      { id: 's1', title: 'Mail [EMAIL-1]', status: 'in_progress' },
      { id: 's2', title: DEFAULT_USER_MESSAGES.stepHidden, status: 'pending' },
    ]);
  });
});

describe('queuedSteps', () => {
  it('carries the steps to slack-poster cut to what Slack shows, whatever the agent sent: a reply stays small', () => {
    const huge = { steps: [step(1, 'complete', { title: 't'.repeat(300), details: 'd'.repeat(1_000_000), sources: Array.from({ length: 20 }, (_, n) => ({ url: `https://x.example/${n}`, title: 's'.repeat(500) })) })], planTitle: 'p'.repeat(400) };
    const queued = queuedSteps(huge);
    expect(JSON.stringify(queued).length).toBeLessThan(5_000);
    expect(queued.steps[0]).toMatchObject({ id: 's1', status: 'complete', title: expect.stringMatching(/^t{255}…$/), details: expect.stringMatching(/^d{255}…$/) });
    expect(queued.steps[0]!.sources).toHaveLength(5);
    expect(stepsOfReply(queued).planTitle).toHaveLength(256);
  });
});

describe('stepsLine', () => {
  it('folds each step to its status and title, in order, within a bounded length', () => {
    const texts = DEFAULT_USER_MESSAGES;
    expect(stepsLine(cardsOf({ steps: [step(1, 'complete'), step(2, 'error'), step(3, 'in_progress'), step(4, 'pending')] }), texts)).toBe('✓ Step 1 · ✗ Step 2 · … Step 3 · … Step 4');
    const many = cardsOf({ steps: Array.from({ length: 50 }, (_, n) => step(n, 'complete', { title: 'x'.repeat(200) })) });
    expect(stepsLine(many, texts).length).toBe(1_000);
  });
});
