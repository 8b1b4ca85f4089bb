import { answerReply } from '../../src/verification/settle/answer-reply';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';

describe('answerReply', () => {
  it.each([[''], ['   '], ['\n\t \n'], ['\u200B\u200D'], ['\uFEFF ']])('answers %j (nothing visible) with the same apology as a failed task', (text) => {
    expect(answerReply(text, DEFAULT_USER_MESSAGES)).toEqual({ kind: 'error', text: DEFAULT_USER_MESSAGES.executionFailed });
  });

  it('passes any visible answer through untouched, surrounding whitespace included', () => {
    expect(answerReply('  42\n', DEFAULT_USER_MESSAGES)).toEqual({ kind: 'answer', text: '  42\n' });
  });
});
