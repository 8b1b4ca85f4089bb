import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import type { FeedbackMessage } from '../../src/verification/queues/replies-queue';
import { capturingLog } from '../support/slack-surface';
import type { SlackAssistant } from '../../src/slack/slack-assistant';
import { createAuditFeedback } from '../../src/verification/budgets/usage-ledger';
import { userMessages } from '../../src/verification/messages/user-messages';
import { createAssistantSurface } from '../../src/verification/surface/assistant-surface';
import { createFeedbackRecords, listFeedback } from '../../src/verification/surface/feedback-records';
import { MemoryRecords } from '../../src/verification/stores/memory-records';
import { manualClock } from '../support/manual-clock';

const REQUEST_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const click = (value: 'positive' | 'negative' | undefined, clickedAt: number, extra: Partial<FeedbackMessage> = {}): FeedbackMessage => ({
  kind: 'feedback',
  team_id: 'T1',
  channel: 'C1',
  message_ts: '2.000001',
  thread_ts: '1.000001',
  user: 'U1',
  request_id: REQUEST_ID,
  agent: 'main',
  ...(value ? { value } : {}),
  clicked_at: clickedAt,
  ...extra,
});

describe('createFeedbackRecords', () => {
  const clock = manualClock();
  const setup = () => {
    const records = new MemoryRecords(clock);
    return { records, feedback: createFeedbackRecords(records, { clock, ttlSeconds: 3600 }) };
  };

  it('keeps one record per answer and user, the later click winning', async () => {
    // Prepare
    const { records, feedback } = setup();
    // Act
    const first = await feedback.record(click('positive', 1000));
    const second = await feedback.record(click('negative', 2000));
    // Assess
    expect(first.changedValue).toBe(true);
    expect(second.changedValue).toBe(true);
    expect(await listFeedback(records)).toEqual([expect.objectContaining({ request_id: REQUEST_ID, user: 'U1', agent: 'main', value: 'negative', clicked_at: 2000 })]);
  });

  it('never lets a click that reached slack-events earlier undo a newer one (a late redelivery)', async () => {
    // Prepare
    const { records, feedback } = setup();
    await feedback.record(click('negative', 2000));
    // Act
    const late = await feedback.record(click('positive', 1000));
    // Assess
    expect(late.changedValue).toBe(false);
    expect((await listFeedback(records))[0]?.value).toBe('negative');
  });

  it('adds the form\'s text to the record without changing the rating, and counts a repeated click once', async () => {
    // Prepare
    const { records, feedback } = setup();
    await feedback.record(click('negative', 1000));
    // Act
    const comment = await feedback.record(click(undefined, 3000, { comment: 'the numbers were wrong' }));
    const again = await feedback.record(click('negative', 4000));
    // Assess
    expect(comment.changedValue).toBe(false);
    expect(again.changedValue).toBe(false);
    expect(await listFeedback(records)).toEqual([expect.objectContaining({ value: 'negative', comment: 'the numbers were wrong' })]);
  });

  it('keeps the "what went wrong" text when the rating changes to 👍 afterwards (docs/operations.md, "Feedback"); a new form replaces it', async () => {
    // Prepare
    const { records, feedback } = setup();
    await feedback.record(click('negative', 1000));
    await feedback.record(click(undefined, 2000, { comment: 'the numbers were wrong' }));
    // Act
    const changed = await feedback.record(click('positive', 3000));
    const afterChange = await listFeedback(records);
    await feedback.record(click('negative', 4000));
    await feedback.record(click(undefined, 5000, { comment: 'still wrong' }));
    // Assess
    expect(changed.changedValue).toBe(true);
    expect(afterChange).toEqual([expect.objectContaining({ value: 'positive', comment: 'the numbers were wrong' })]);
    expect(await listFeedback(records)).toEqual([expect.objectContaining({ value: 'negative', comment: 'still wrong' })]);
  });

  it('keeps different users\' feedback on one answer apart', async () => {
    // Prepare
    const { records, feedback } = setup();
    // Act
    await feedback.record(click('positive', 1000));
    await feedback.record(click('negative', 1000, { user: 'U2' }));
    // Assess
    expect((await listFeedback(records)).map((record) => `${record.user}:${record.value}`).sort()).toEqual(['U1:positive', 'U2:negative']);
  });
});

describe('feedback against the task\'s audit record (who clicked, where)', () => {
  const clock = manualClock();
  const AUDIT_KEY = `audit#${REQUEST_ID}`;
  const setup = async () => {
    const records = new MemoryRecords(clock);
    await records.put(AUDIT_KEY, { request_id: REQUEST_ID, team_id: 'T1', channel: 'C1', user: 'U1', received_at: 0, outcome: 'answered' }, 3600);
    const ephemerals: Array<{ user: string; text: string }> = [];
    // The Slack side is not what is tested here: a stand-in that records the thank-you.
    const slack = { postEphemeral: async (message: { user: string; text: string }) => void ephemerals.push(message) } as unknown as SlackAssistant;
    const surface = createAssistantSurface({ slack, feedback: createFeedbackRecords(records, { clock, ttlSeconds: 3600 }), audit: createAuditFeedback(records, 3600), messages: userMessages(), log: capturingLog(), clock });
    return { records, surface, ephemerals };
  };

  it('ignores a click whose request id belongs to another channel or team: nothing recorded, nobody thanked', async () => {
    const { records, surface, ephemerals } = await setup();
    await surface.feedback(click('negative', 1000, { channel: 'C0OTHER' }));
    await surface.feedback(click('negative', 1000, { team_id: 'T0OTHER' }));
    expect(await listFeedback(records)).toEqual([]);
    expect(ephemerals).toEqual([]);
    expect((await records.get<{ feedback?: string }>(AUDIT_KEY))?.feedback).toBeUndefined();
  });

  it('keeps the asker\'s rating on the audit record, whoever clicks last', async () => {
    const { records, surface } = await setup();
    await surface.feedback(click('positive', 1000, { user: 'U1' }));
    await surface.feedback(click('negative', 2000, { user: 'U2' }));
    expect((await records.get<{ feedback?: string }>(AUDIT_KEY))?.feedback).toBe('positive');
    expect((await listFeedback(records)).map((record) => [record.user, record.value]).sort()).toEqual([['U1', 'positive'], ['U2', 'negative']]);
  });
});

describe('a feedback form\'s comment with GUARDRAIL: kept as the input guardrail passes it', () => {
  const clock = manualClock();
  const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' });
  const surfaceKeeping = (guardComment: (text: string) => Promise<string | undefined>) => {
    const records = new MemoryRecords(clock);
    const slack = { postEphemeral: async () => undefined } as unknown as SlackAssistant;
    const surface = createAssistantSurface({ slack, feedback: createFeedbackRecords(records, { clock, ttlSeconds: 3600 }), messages: userMessages(), log: capturingLog(), clock, guardComment });
    return { records, surface };
  };

  it('masked, never as written; none when blocked', async () => {
    const masking = surfaceKeeping(async (text) => (await guardrail.check(text, 'input')).text);
    await masking.surface.feedback(click(undefined, 1000, { comment: 'wrong: my number is 090-1234-5678' }));
    expect((await listFeedback(masking.records))[0]?.comment).toBe('wrong: my number is [PHONE-1]');
    const blocking = surfaceKeeping(async () => undefined);
    await blocking.surface.feedback(click('negative', 1000, { comment: 'AKIAABCDEFGHIJKLMNOP' }));
    const [kept] = await listFeedback(blocking.records);
    expect(kept?.value).toBe('negative');
    expect(kept?.comment).toBeUndefined();
  });
});
