import { DynamoDb, type Item } from '../../src/aws/dynamodb';
import { createLogger } from '../../src/observability/logger';
import { createUsageLedger } from '../../src/verification/budgets/usage-ledger';
import { loadVerificationConfig } from '../../src/verification/config';
import { userMessages } from '../../src/verification/messages/user-messages';
import { DEFAULT_POLL_SCHEDULE, reservationLeaseSeconds } from '../../src/verification/poll-schedule';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { DynamoDbRecords } from '../../src/verification/stores/dynamodb-records';
import { DynamoDbUsageStore } from '../../src/verification/stores/dynamodb-usage-store';
import { useStateTable } from '../support/dynalite';
import { manualClock } from '../support/manual-clock';

/**
 * A task waiting on a question holds no budget (docs/architecture.md §2.8, "Budgets while a
 * question waits"): its reservation lapses with its lease (the poll deadline + 15 min, 45 min by
 * default) long before an unanswered question expires (INPUT_TIMEOUT_S, 4 h by default), so other
 * tasks are admitted meanwhile; the resumed task is charged when it settles — late, once, on the
 * day it was received — and its lapsed hold is not given back a second time. The ledger's defaults
 * and dynalite, the question's default wait on the clock.
 */
const stateTable = useStateTable();
/** An hour before midnight UTC: the answer comes the next day. */
const ASKED_AT = Date.UTC(2026, 10, 25, 23);
const DAY = '2026-11-25';

it('a task waiting on a question lets its reservation lapse; resumed the next day, it is charged once on the day it was received', async () => {
  const inputTimeoutSeconds = loadVerificationConfig({}).INPUT_TIMEOUT_S;
  // The premise: by default a question may wait longer than a reservation holds.
  expect(inputTimeoutSeconds).toBeGreaterThan(reservationLeaseSeconds(DEFAULT_POLL_SCHEDULE));

  const clock = manualClock(ASKED_AT);
  const dynamodb = new DynamoDb({ endpoint: stateTable().endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const table = { dynamodb, tableName: 'state', keyPrefix: 'question-wait#', clock };
  const ledger = createUsageLedger({
    usage: new DynamoDbUsageStore(table),
    records: new DynamoDbRecords(table),
    budgets: { user: 50 },
    usageTtlSeconds: 7 * 24 * 3600,
    auditTtlSeconds: 3600,
    auditText: false,
    maxTaskTokens: 30,
    messages: userMessages(),
    clock,
    log: createLogger('test'),
  });
  const counter = async (): Promise<Record<string, number>> => {
    const { Item } = await stateTable().dynamodb.getItem({ TableName: 'state', Key: { pk: { S: `question-wait#usage#${DAY}#user#T1/U1` } }, ConsistentRead: true });
    const item: Item = Item ?? {};
    return Object.fromEntries(['tokens', 'tasks', 'reserved', 'inflight'].map((name) => [name, Number(item[name]?.N ?? 0)]));
  };
  let sequence = 0;
  const task = (): TaskMessage => ({ team_id: 'T1', channel: 'C1', ts: `1.${(sequence += 1)}`, request_id: `00000000-0000-4000-9000-${String(sequence).padStart(12, '0')}`, event_id: `Ev${sequence}`, user_id: 'U1', text: 'hi', received_at: ASKED_AT });
  const [asking, other] = [task(), task()];

  // The asking task is admitted (30 reserved of 50) and pauses on its question; another waits for room.
  expect(await ledger.admit(asking, 'default')).toEqual({ admitted: true });
  expect(await ledger.admit(other, 'default')).toEqual({ admitted: 'later' });
  // The question waits past the reservation's lease: the other task is admitted meanwhile.
  clock.advance((reservationLeaseSeconds(DEFAULT_POLL_SCHEDULE) + 1) * 1000);
  expect(await ledger.admit(other, 'default')).toEqual({ admitted: true });
  await ledger.settled(other, { ended: 'answered', agent: 'default', usage: { input_tokens: 10, output_tokens: 0 } });

  // Answered three hours after it was asked — past midnight — the resumed task settles: charged late, once.
  clock.advance(3 * 3600 * 1000);
  const resumed = { ended: 'answered' as const, agent: 'default', usage: { input_tokens: 20, output_tokens: 5 } };
  await ledger.settled(asking, resumed);
  await ledger.settled(asking, resumed);
  expect(await counter()).toEqual({ tokens: 35, tasks: 2, reserved: 0, inflight: 0 });
});
