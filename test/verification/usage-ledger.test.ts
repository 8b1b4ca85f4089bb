import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import { DEFAULT_MAX_TASK_TOKENS } from '../../src/contract';
import { createLogger } from '../../src/observability/logger';
import { MemoryRecords } from '../../src/verification/stores/memory-records';
import { MemoryUsageStore } from '../../src/verification/stores/memory-usage-store';
import type { UsageStore } from '../../src/verification/stores/usage-store';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { createUsageLedger, listAudit, untilMidnightUtc, type Budgets } from '../../src/verification/budgets/usage-ledger';
import { userMessages } from '../../src/verification/messages/user-messages';

/** The usage ledger on its own (src/verification/budgets/usage-ledger.ts): reservations across budgets, and counting once. */
const DAY = Date.UTC(2026, 10, 25, 12);
let sequence = 0;
const task = (user = 'U1', channel = 'C1'): TaskMessage => ({
  team_id: 'T1',
  channel,
  ts: `1.${(sequence += 1)}`,
  request_id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
  event_id: `Ev${sequence}`,
  user_id: user,
  text: 'hi',
  received_at: DAY,
});

function ledgerWith(budgets: Budgets, usage: UsageStore = new MemoryUsageStore()) {
  const records = new MemoryRecords();
  const ledger = createUsageLedger({ usage, records, budgets, usageTtlSeconds: 3600, auditTtlSeconds: 3600, auditText: false, messages: userMessages(), clock: { now: () => DAY }, log: createLogger('test') });
  return { ledger, records, usage };
}

describe('usage ledger', () => {
  it('gives back what it reserved on the user when the channel refuses, and audits the refusal with the channel\'s budget', async () => {
    const adds: unknown[] = [];
    const memory = new MemoryUsageStore();
    const usage: UsageStore = {
      reserve: (...args) => memory.reserve(...args),
      day: (day) => memory.day(day),
      release: (key, requestId, ttl) => (adds.push([{ scope: key.scope, id: key.id, release: requestId }]), memory.release(key, requestId, ttl)),
      charge: (day, requestId, charges, ttl) => (adds.push(charges), memory.charge(day, requestId, charges, ttl)),
      forget: (...args) => memory.forget(...args),
    };
    const { ledger, records } = ledgerWith({ user: 1000, channel: 10 }, usage);
    const first = task();
    expect(await ledger.admit(first, 'default')).toEqual({ admitted: true });
    await ledger.settled(first, { ended: 'answered', agent: 'default', usage: { input_tokens: 8, output_tokens: 4 } });
    adds.length = 0;

    const refused = task();
    const answer = await ledger.admit(refused, 'default');
    expect(answer).toMatchObject({ admitted: false, scope: 'channel', limit: 10, used: 12 });
    expect((answer as { notice: string }).notice).toBe(`This channel has used its daily allowance of 10 tokens, so I didn't send this one. It resets at midnight UTC (in 12 h 0 min).`);
    // The user's reservation (the per-task ceiling, MAX_TASK_TOKENS) was given back, then the refusal counted on every counter.
    expect(adds[0]).toEqual([{ scope: 'user', id: 'T1/U1', release: refused.request_id }]);
    expect(await usage.reserve({ day: '2026-11-25', scope: 'user', id: 'T1/U1' }, 1000, 3600, { request_id: 'another', estimate: DEFAULT_MAX_TASK_TOKENS, leaseUntil: DAY + 1 })).toMatchObject({ admitted: true });
    expect(adds[1]).toEqual(expect.arrayContaining([{ scope: 'user', id: 'T1/U1', delta: { refused: 1 } }, { scope: 'channel', id: 'T1/C1', delta: { refused: 1 } }]));
    expect((await listAudit(records)).find((record) => record.request_id === refused.request_id)).toMatchObject({ outcome: 'refused-budget', budget: { scope: 'channel', limit: 10, used: 12 } });
  });

  it('admits a redelivered task without reserving again, and counts a task settled twice once', async () => {
    const { ledger, usage } = ledgerWith({ user: 100 });
    const one = task('U2');
    expect(await ledger.admit(one, 'default')).toEqual({ admitted: true });
    // Redelivered before it settled: the reservation stands, no second one (which would leave one in flight forever).
    expect(await ledger.admit(one, 'default')).toEqual({ admitted: true });
    const settled = { ended: 'answered' as const, agent: 'default', usage: { input_tokens: 3, output_tokens: 2 } };
    await ledger.settled(one, settled);
    await ledger.settled(one, settled);
    const [user] = (await usage.day('2026-11-25')).filter((row) => row.scope === 'user');
    expect(user).toMatchObject({ tokens: 5, tasks: 1 });
    // 98 of 100 used, no room for the estimate (5): admitted only alone — so nothing was left in flight.
    await ledger.settled(task('U2'), { ended: 'answered', agent: 'default', usage: { input_tokens: 93, output_tokens: 0 } });
    expect(await ledger.admit(task('U2'), 'default')).toEqual({ admitted: true });
  });

  it('counts down to midnight UTC for the notice', () => {
    expect(untilMidnightUtc(Date.UTC(2026, 10, 25, 23, 59, 30))).toBe('1 min');
    expect(untilMidnightUtc(Date.UTC(2026, 10, 25, 21, 15))).toBe('2 h 45 min');
  });
});

describe('usage ledger: the audit record keeps the message as the input guardrail passes it', () => {
  const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' });
  const ledgerKeeping = (guardText: (text: string) => Promise<string | undefined>) => {
    const records = new MemoryRecords();
    const ledger = createUsageLedger({ usage: new MemoryUsageStore(), records, budgets: {}, usageTtlSeconds: 3600, auditTtlSeconds: 3600, auditText: true, guardText, messages: userMessages(), clock: { now: () => DAY }, log: createLogger('test') });
    return { ledger, records };
  };

  it('masked, never as written', async () => {
    const { ledger, records } = ledgerKeeping(async (text) => (await guardrail.check(text, 'input')).text);
    const asked = { ...task(), text: 'mail taro@example.com about card 4111 1111 1111 1111' };
    await ledger.admit(asked, 'default');
    const [audit] = await listAudit(records);
    expect(audit?.text).toBe('mail [EMAIL-1] about card [CREDIT_DEBIT_CARD_NUMBER-1]');
  });

  it('none when the text could not be checked', async () => {
    const { ledger, records } = ledgerKeeping(() => Promise.reject(new Error('ApplyGuardrail failed: ThrottlingException')));
    await ledger.admit({ ...task(), text: 'mail taro@example.com' }, 'default');
    const [audit] = await listAudit(records);
    expect(audit).toBeDefined();
    expect(audit?.text).toBeUndefined();
  });
});
