import { openQuestion, pickOption, questionText, stepLines, type TracedReply } from '../../src/cli/say-steps-questions';
import { encodeQuestionRef } from '../../src/verification/questions/question-blocks';

const REQUEST = '253d78e3-ca60-49c4-a5e2-7d8da9f57354';
const button = (index: number, label: string, choice: number | 'text' = index) => ({ actionId: `question_answer_${index}`, value: encodeQuestionRef({ requestId: REQUEST, round: 0, choice }), label });
const question: TracedReply = { text: 'Ship it?', ts: '1.000002', buttons: [button(0, 'Approve'), button(1, 'Reject'), button(2, 'Type an answer', 'text')] };

describe('zone say: steps and questions as the terminal prints them', () => {
  it('prints each step once per state it reaches, the plan title first', () => {
    const seen = new Map<string, string>();
    const reply = (status: string): TracedReply => ({ text: '', ts: '1.000003', planTitle: 'Echo plan', cards: [{ id: 'step-1', title: 'Step 1', status }] });
    expect(stepLines([reply('in_progress')], seen)).toEqual(['plan: Echo plan', '◐ Step 1 — in progress']);
    expect(stepLines([reply('in_progress')], seen)).toEqual([]);
    expect(stepLines([reply('error')], seen)).toEqual(['✖ Step 1 — error']);
  });

  it('finds the question still carrying its options, and none once it is answered (its buttons gone)', () => {
    expect(openQuestion([{ text: 'echo', ts: '1.000001' }, question])).toBe(question);
    expect(openQuestion([{ text: 'Ship it?\n*Approve* — answered by <@U1>', ts: '1.000002' }])).toBeUndefined();
  });

  it('lists the options as --answer takes them, the free text apart, and the command that answers later', () => {
    const text = questionText(question, '1.000001');
    expect(text).toContain('• Approve   (--answer approve)');
    expect(text).toContain('• Reject   (--answer reject)');
    expect(text).toContain('or type an answer (in the playground: a form)');
    expect(text).toContain('answer it: npx zone say --thread 1.000001 --answer approve');
    expect(questionText(question)).not.toContain('answer it:');
  });

  it('takes an option by its label in any case or its number, and refuses anything else naming the options', () => {
    expect(pickOption(question, 'APPROVE')).toEqual({ actionId: 'question_answer_0', label: 'Approve' });
    expect(pickOption(question, '2')).toEqual({ actionId: 'question_answer_1', label: 'Reject' });
    expect(() => pickOption(question, 'maybe')).toThrow('--answer "maybe" is not one of the options: approve, reject');
    // The free-text button opens a form: not an option --answer can click.
    expect(() => pickOption(question, 'type-an-answer')).toThrow(/not one of the options/);
  });
});
