import { judgeAnswer, SIGNED_IN_TEXT } from '../../../src/verification/questions/answer-rules';
import { decodeQuestionRef, encodeQuestionRef, questionBlocks } from '../../../src/verification/questions/question-blocks';
import type { AnswerMessage } from '../../../src/verification/queues/tasks-queue';
import type { Pause } from '../../../src/verification/stores/pauses';

const REQUEST = '0b5c3f1e-8a6e-4c71-9d3e-2f4a5b6c7d8e';

const pause: Pause = {
  request_id: REQUEST,
  round: 0,
  state: 'waiting',
  thread: { team_id: 'T1', channel: 'C1', ts: '1.1' },
  event_id: 'Ev1',
  asker: 'UASKER',
  agent: 'echo',
  handle: { taskId: 'task-1' },
  question: { id: 'q', text: 'Go?', options: [{ value: 'approve', label: 'Approve' }, { value: 'reject', label: 'Reject' }] },
  expires_at_ms: 0,
  received_at: 0,
};

const answer = (over: Partial<AnswerMessage> = {}): AnswerMessage => ({ kind: 'answer', event_id: 'click', request_id: REQUEST, round: 0, team_id: 'T1', channel: 'C1', user_id: 'UASKER', option: 1, clicked_at: 0, ...over });

describe('who may answer a question, and what the answer is', () => {
  it('takes the asker’s click and reads the option from the pause, not the click', () => {
    expect(judgeAnswer(pause, answer(), undefined)).toEqual({ ok: true, answer: { value: 'reject', label: 'Reject' } });
  });

  it('takes an approver’s click, and refuses anyone else', () => {
    expect(judgeAnswer(pause, answer({ user_id: 'UBOSS' }), ['UBOSS'])).toMatchObject({ ok: true });
    expect(judgeAnswer(pause, answer({ user_id: 'UOTHER' }), ['UBOSS'])).toEqual({ ok: false, reason: 'not-yours' });
  });

  it('refuses a click from another team or channel, an old round, a closed pause, an option it does not have, text it does not take', () => {
    expect(judgeAnswer(pause, answer({ team_id: 'T2' }), undefined)).toEqual({ ok: false, reason: 'elsewhere' });
    expect(judgeAnswer(pause, answer({ channel: 'C2' }), undefined)).toEqual({ ok: false, reason: 'elsewhere' });
    expect(judgeAnswer(pause, answer({ round: 1 }), undefined)).toEqual({ ok: false, reason: 'closed' });
    expect(judgeAnswer({ ...pause, state: 'expired' }, answer(), undefined)).toEqual({ ok: false, reason: 'closed' });
    expect(judgeAnswer(undefined, answer(), undefined)).toEqual({ ok: false, reason: 'closed' });
    expect(judgeAnswer(pause, answer({ option: 5 }), undefined)).toEqual({ ok: false, reason: 'no-such-option' });
    const { option: _option, ...typed } = answer({ text: 'free' });
    expect(judgeAnswer(pause, typed, undefined)).toEqual({ ok: false, reason: 'no-such-option' });
  });

  it('takes a typed answer where the question has a free-text field (a form names no channel), and "signed in" for an auth question', () => {
    const { option: _option, ...typed } = answer({ text: 'Nightingale', channel: '' });
    expect(judgeAnswer({ ...pause, question: { id: 'q', text: 'Name?', free_text: { label: 'Name' } } }, typed, undefined)).toEqual({ ok: true, answer: { text: 'Nightingale', label: 'Nightingale' } });
    expect(judgeAnswer({ ...pause, question: { id: 'q', text: 'Sign in', kind: 'auth', auth_url: 'https://example.com/login' } }, answer({ option: 0 }), undefined)).toEqual({ ok: true, answer: { text: SIGNED_IN_TEXT, label: SIGNED_IN_TEXT } });
  });
});

describe('question buttons', () => {
  it('name the task, the round and the option, and read back only what they wrote', () => {
    const blocks = questionBlocks(pause.question, { requestId: REQUEST, round: 2 }, { typeAnswer: 'Type', signedIn: 'Signed in' });
    const values = (blocks[1] as unknown as { elements: Array<{ value: string }> }).elements.map((button) => button.value);
    expect(values.map(decodeQuestionRef)).toEqual([
      { requestId: REQUEST, round: 2, choice: 0 },
      { requestId: REQUEST, round: 2, choice: 1 },
    ]);
    expect(values.join()).not.toMatch(/approve|reject/);
    expect(decodeQuestionRef(encodeQuestionRef({ requestId: REQUEST, round: 0, choice: 'text', label: 'Your | name' }))).toEqual({ requestId: REQUEST, round: 0, choice: 'text', label: 'Your | name' });
    for (const forged of ['v1|positive|x|y', `q1|not-a-uuid|0|1`, `q1|${REQUEST}|0|12`, `q1|${REQUEST}|x|1`, undefined]) expect(decodeQuestionRef(forged)).toBeUndefined();
  });
});
