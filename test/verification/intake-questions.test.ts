import { createLogger } from '../../src/observability/logger';
import type { IntakeContext } from '../../src/verification/intake/intake';
import { INTERACTION_HANDLERS } from '../../src/verification/intake/intake-table';
import { InteractionPayloadSchema } from '../../src/verification/intake/interaction-payload';
import { encodeQuestionRef, QUESTION_FORM_CALLBACK_ID, questionFormView } from '../../src/verification/questions/question-blocks';
import { DEFAULT_AGENT_PROMPTS } from '../../src/verification/surface/suggested-prompts';

// The intake's rows for a question's buttons and its answer form (docs/architecture.md, "Questions"): they decide, with no read and no Slack call.
const REQUEST_ID = '0b5c3f1e-8a6e-4c71-9d3e-2f4a5b6c7d8e';
const context = (): IntakeContext => ({ prompts: DEFAULT_AGENT_PROMPTS, log: createLogger('test'), now: 1_800_000_000_000 });

function click(value: string, actionId = 'question_answer_1') {
  return InteractionPayloadSchema.parse({
    type: 'block_actions',
    team: { id: 'T1' },
    user: { id: 'U1' },
    container: { type: 'message', message_ts: '1800000000.000200', channel_id: 'C1' },
    trigger_id: 'trigger-1',
    actions: [{ action_id: actionId, type: 'button', value, action_ts: '1800000001.000001' }],
  });
}

describe('the intake of questions', () => {
  it('queues an option’s click as an answer naming the task, the round and the option', async () => {
    expect(await INTERACTION_HANDLERS.block_actions!(click(encodeQuestionRef({ requestId: REQUEST_ID, round: 1, choice: 1 })), context())).toEqual({
      kind: 'accept',
      claimKey: 'interaction#U1#1800000001.000001',
      results: [{ kind: 'answer', answer: { request_id: REQUEST_ID, round: 1, team_id: 'T1', channel: 'C1', user_id: 'U1', option: 1, clicked_at: 1_800_000_000_000 } }],
    });
  });

  it('opens the answer form for "type an answer", with the click’s trigger and the question’s field label', async () => {
    const decision = await INTERACTION_HANDLERS.block_actions!(click(encodeQuestionRef({ requestId: REQUEST_ID, round: 0, choice: 'text', label: 'Release name' }), 'question_answer_2'), context());
    expect(decision).toMatchObject({ kind: 'accept', results: [{ kind: 'slack', action: { type: 'open-view', trigger_id: 'trigger-1', view: { callback_id: QUESTION_FORM_CALLBACK_ID, blocks: [{ label: { text: 'Release name' } }] } } }] });
  });

  it('queues the form’s text as the answer, and ignores an empty form or one that is not ours', async () => {
    const view = questionFormView({ requestId: REQUEST_ID, round: 0 }, { title: 'Your answer', submit: 'Send', label: 'Name' });
    const submitted = (text: string, metadata = view.private_metadata) => InteractionPayloadSchema.parse({ type: 'view_submission', team: { id: 'T1' }, user: { id: 'U1' }, view: { ...view, private_metadata: metadata, id: 'V1', state: { values: { answer: { text: { type: 'plain_text_input', value: text } } } } } });
    expect(await INTERACTION_HANDLERS.view_submission!(submitted(' Nightingale '), context())).toEqual({
      kind: 'accept',
      claimKey: 'interaction#U1#view#V1',
      results: [{ kind: 'answer', answer: { request_id: REQUEST_ID, round: 0, team_id: 'T1', channel: '', user_id: 'U1', text: 'Nightingale', clicked_at: 1_800_000_000_000 } }],
    });
    expect(await INTERACTION_HANDLERS.view_submission!(submitted('  '), context())).toEqual({ kind: 'ignore', reason: 'empty-answer' });
    expect(await INTERACTION_HANDLERS.view_submission!(submitted('x', 'forged'), context())).toEqual({ kind: 'ignore', reason: 'not-our-question' });
  });

  it('ignores a question button whose value is not one of ours', async () => {
    expect(await INTERACTION_HANDLERS.block_actions!(click('approve'), context())).toEqual({ kind: 'ignore', reason: 'not-our-question' });
  });
});
