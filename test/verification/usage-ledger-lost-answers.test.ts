import { DynamoDb, type Item } from '../../src/aws/dynamodb';
import { createLogger } from '../../src/observability/logger';
import { createUsageLedger } from '../../src/verification/budgets/usage-ledger';
import { userMessages } from '../../src/verification/messages/user-messages';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { DynamoDbRecords } from '../../src/verification/stores/dynamodb-records';
import { DynamoDbUsageStore } from '../../src/verification/stores/dynamodb-usage-store';
import { utcDay } from '../../src/verification/stores/usage-store';
import { useStateTable } from '../support/dynalite';
import { keyOf, startDynamoDbFaultProxy, type DynamoDbFaultProxy, type DynamoDbRequest } from '../support/dynamodb-fault-proxy';
import { manualClock } from '../support/manual-clock';

/**
 * The usage ledger against dynalite behind a proxy that loses answers after the write landed
 * (issue 34, docs/architecture.md §2.7 "Keyed by task"): every ledger write — a reservation, its
 * release when another budget refuses, a dead task's hold let go by its lease, a charge, a refusal,
 * the records that count a task once and the marks forgotten after — has its answer lost once (the
 * client sends it again), or the whole ledger call is delivered twice; the counters come out exact:
 * no reservation leaked or given back twice, no usage lost or counted twice.
 */
const stateTable = useStateTable();
const START = Date.UTC(2026, 10, 25, 12);
const LEASE_SECONDS = 2700;
const TEAM = 'T1';
let run = 0;

type Write = { name: string; match: (request: DynamoDbRequest) => boolean };
const update = (part: string) => (request: DynamoDbRequest) => request.operation === 'UpdateItem' && String(request.input.UpdateExpression).includes(part);
const put = (prefix: string) => (request: DynamoDbRequest) => request.operation === 'PutItem' && (keyOf(request) ?? '').includes(prefix);
const WRITES: Write[] = [
  { name: 'a reservation', match: update('inflight :one') },
  { name: 'a release (another budget refused)', match: update('REMOVE #hold ADD reserved :back') },
  { name: 'a hold let go by its lease', match: update('#hold = :lapsed') },
  { name: 'a charge', match: update('#mark = :one') },
  { name: 'a refusal', match: (request) => update('#mark = :one')(request) && (request.input.ExpressionAttributeValues as Record<string, { N?: string }>)[':refused']?.N === '1' },
  { name: 'a mark forgotten', match: update('REMOVE #mark') },
  { name: 'the record that counts a task once', match: put('usage-counted#') },
  { name: 'the record that counts a refusal once', match: put('refusal-counted#') },
  { name: 'the record of a task\'s reservations', match: put('budget#') },
];

describe('usage ledger: each write repeated, each answer lost once', () => {
  let proxy: DynamoDbFaultProxy;
  beforeAll(async () => {
    proxy = await startDynamoDbFaultProxy(stateTable().endpoint);
  });
  afterAll(() => proxy.close());
  beforeEach(() => proxy.reset());

  /** A ledger whose every DynamoDB call goes through the proxy, on a clock the test moves. */
  function setup() {
    const prefix = `lost${(run += 1)}#`;
    const clock = manualClock(START);
    const dynamodb = new DynamoDb({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const table = { dynamodb, tableName: 'state', keyPrefix: prefix, clock };
    const ledger = createUsageLedger({
      usage: new DynamoDbUsageStore(table),
      records: new DynamoDbRecords(table),
      budgets: { user: 1000, channel: 50 },
      usageTtlSeconds: 3600,
      auditTtlSeconds: 3600,
      auditText: false,
      maxTaskTokens: 30,
      reservationLeaseSeconds: LEASE_SECONDS,
      messages: userMessages(),
      clock,
      log: createLogger('test'),
    });
    /** A counter as DynamoDB holds it, read past the proxy. */
    const counter = async (scope: string, id: string): Promise<Item> => {
      const { Item } = await stateTable().dynamodb.getItem({ TableName: 'state', Key: { pk: { S: `${prefix}usage#${utcDay(START)}#${scope}#${id}` } }, ConsistentRead: true });
      return Item ?? {};
    };
    return { ledger, clock, counter };
  }

  let sequence = 0;
  const task = (channel: string): TaskMessage => ({ team_id: TEAM, channel, ts: `1.${(sequence += 1)}`, request_id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`, event_id: `Ev${sequence}`, user_id: 'U1', text: 'hi', received_at: START });
  const settledWith = (input_tokens: number) => ({ ended: 'answered' as const, agent: 'default', usage: { input_tokens, output_tokens: 0 } });

  /**
   * Every kind of ledger write, in one day: A answered (60 tokens: channel C1 is over its 50), B
   * refused by C1 (its user reservation given back), C killed in C2 (never settles), D in C2 after
   * C's lease (C's hold let go), D answered (10), then C's settle arrives late (5). `twice`: each
   * ledger call delivered twice.
   */
  async function day(twice: boolean) {
    const { ledger, clock, counter } = setup();
    const again = async <T>(call: () => Promise<T>): Promise<T> => {
      const first = await call();
      if (twice) await call();
      return first;
    };
    const [a, b, c, d] = [task('C1'), task('C1'), task('C2'), task('C2')];
    expect(await again(() => ledger.admit(a, 'default'))).toEqual({ admitted: true });
    await again(() => ledger.settled(a, settledWith(60)));
    expect(await again(() => ledger.admit(b, 'default'))).toMatchObject({ admitted: false, scope: 'channel', used: 60 });
    expect(await again(() => ledger.admit(c, 'default'))).toEqual({ admitted: true });
    // C's function is killed. Within its lease, D waits for it…
    expect(await ledger.admit(d, 'default')).toEqual({ admitted: 'later' });
    clock.advance((LEASE_SECONDS + 1) * 1000);
    // …past it, C's hold no longer counts.
    expect(await again(() => ledger.admit(d, 'default'))).toEqual({ admitted: true });
    await again(() => ledger.settled(d, settledWith(10)));
    await again(() => ledger.settled(c, settledWith(5)));
    return counter;
  }

  /** What the day must leave, whatever was lost or repeated: usage counted once, nothing held, no task's hold or mark left. */
  async function expectExact(counter: (scope: string, id: string) => Promise<Item>) {
    const expected: Array<[string, string, { tokens: number; tasks: number; refused: number }]> = [
      ['user', `${TEAM}/U1`, { tokens: 75, tasks: 3, refused: 1 }],
      ['channel', `${TEAM}/C1`, { tokens: 60, tasks: 1, refused: 1 }],
      ['channel', `${TEAM}/C2`, { tokens: 15, tasks: 2, refused: 0 }],
      ['team', TEAM, { tokens: 75, tasks: 3, refused: 1 }],
      ['agent', 'default', { tokens: 75, tasks: 3, refused: 1 }],
    ];
    for (const [scope, id, totals] of expected) {
      const item = await counter(scope, id);
      const number = (name: string) => Number(item[name]?.N ?? 0);
      expect({ scope, id, tokens: number('tokens'), tasks: number('tasks'), refused: number('refused') }).toEqual({ scope, id, ...totals });
      // Nothing held: every reservation given back once, or let go by its lease once.
      expect({ scope, reserved: number('reserved'), inflight: number('inflight'), committed: number('committed') }).toEqual({ scope, reserved: 0, inflight: 0, committed: totals.tokens });
      expect(Object.keys(item).filter((name) => name.startsWith('hold#') || name.startsWith('charged#'))).toEqual([]);
    }
  }

  it('with every answer received, and with every ledger call delivered twice', async () => {
    await expectExact(await day(false));
    await expectExact(await day(true));
  }, 60_000);

  it.each(WRITES.flatMap((write) => (['reset', '500'] as const).map((how) => [write.name, how, write] as const)))('%s, its answer lost (%s): the totals exact', async (_name, how, write) => {
    proxy.loseAnswerOf({ match: write.match, how });
    const counter = await day(false);
    expect(proxy.lost).toHaveLength(1);
    await expectExact(counter);
  }, 60_000);
});
