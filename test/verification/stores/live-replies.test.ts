import { DynamoDb } from '../../../src/aws/dynamodb';
import { createLogger } from '../../../src/observability/logger';
import { SlackApiError } from '../../../src/slack/slack-api-error';
import type { LiveMessage, SlackLive } from '../../../src/slack/slack-live';
import { createLiveReply } from '../../../src/verification/live/live-reply';
import { type LiveTarget } from '../../../src/verification/live/live-parts';
import { DynamoDbLiveReplies } from '../../../src/verification/stores/dynamodb-live-replies';
import type { LiveReplies, LiveReply } from '../../../src/verification/stores/live-replies';
import { MemoryLiveReplies } from '../../../src/verification/stores/memory-live-replies';
import { keyOf, startDynamoDbFaultProxy, type DynamoDbFaultProxy, type DynamoDbRequest } from '../../support/dynamodb-fault-proxy';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

/**
 * The live-message record (docs/architecture.md §2.5, "Once, in order"): the same cases against
 * memory and DynamoDB (dynalite), then DynamoDB behind a proxy that loses answers — the write is
 * made, its answer never comes, and the client sends it again (issue 25, item 4).
 */
const stateTable = useStateTable();
const clock = manualClock();

const stores: Array<[string, () => LiveReplies]> = [
  ['DynamoDbLiveReplies (dynalite)', () => new DynamoDbLiveReplies({ dynamodb: stateTable().dynamodb, tableName: 'state', clock })],
  ['MemoryLiveReplies', () => new MemoryLiveReplies(clock)],
];

let n = 0;
const requestId = () => `req-${(n += 1)}`;
const stream = (shown: number, extra: Partial<LiveReply> = {}): LiveReply => ({ mode: 'stream', channel: 'C1', ts: '1.1', shown, ...extra });
const intent = (token: string, from: number) => ({ token, from, until: clock.now() + 10_000 });

describe.each(stores)('%s', (_name, makeStore) => {
  let store: LiveReplies;
  beforeEach(() => {
    store = makeStore();
  });

  it('create keeps the first record: the second writer gets the first one back', async () => {
    const id = requestId();
    const first = { mode: 'starting', channel: 'C1', ts: '', shown: 0, pending: intent('first', 0) } satisfies LiveReply;
    expect(await store.create(id, first, 3600)).toEqual(first);
    expect(await store.create(id, { ...first, pending: intent('second', 0) }, 3600)).toEqual(first);
    expect(await store.get(id)).toEqual(first);
  });

  it('advance moves the record only from the count it read, and not while an intent is pending on it', async () => {
    const id = requestId();
    await store.create(id, stream(0), 3600);
    expect(await store.advance(id, 0, stream(4, { pending: intent('a', 0) }), 3600)).toBe(true);
    // Another writer, from the same count or the new one: the intent holds the record.
    expect(await store.advance(id, 0, stream(4, { pending: intent('b', 0) }), 3600)).toBe(false);
    expect(await store.advance(id, 4, stream(8, { pending: intent('b', 4) }), 3600)).toBe(false);
    expect(await store.get(id)).toMatchObject({ shown: 4, pending: { token: 'a' } });
  });

  it("settle replaces the record only for the pending intent's token; then advance may go on", async () => {
    const id = requestId();
    await store.create(id, stream(0, { pending: intent('a', 0) }), 3600);
    expect(await store.settle(id, 'b', stream(0), 3600)).toBe(false);
    expect(await store.settle(id, 'a', stream(4), 3600)).toBe(true);
    expect(await store.get(id)).toEqual(stream(4));
    // Settled: the token holds nothing any more.
    expect(await store.settle(id, 'a', stream(9), 3600)).toBe(false);
    expect(await store.advance(id, 4, stream(8), 3600)).toBe(true);
  });

  it('keeps what each task card shows through an intent and its settling (a card change claims the record as a piece of text does)', async () => {
    const id = requestId();
    await store.create(id, stream(3), 3600);
    // A card change leaves `shown` where it is: the intent is what holds the record.
    expect(await store.advance(id, 3, stream(3, { cards: { s1: 'print-a' }, pending: intent('a', 3) }), 3600)).toBe(true);
    expect(await store.advance(id, 3, stream(3, { cards: { s1: 'print-b' }, pending: intent('b', 3) }), 3600)).toBe(false);
    expect(await store.settle(id, 'a', stream(3, { cards: { s1: 'print-a', '#plan': 'Plan' } }), 3600)).toBe(true);
    expect(await store.get(id)).toEqual(stream(3, { cards: { s1: 'print-a', '#plan': 'Plan' } }));
  });

  it('settle can hand an intent over (a lapsed one taken over): the old token cannot settle it after', async () => {
    const id = requestId();
    await store.create(id, stream(0, { pending: intent('dead', 0) }), 3600);
    expect(await store.settle(id, 'dead', stream(0, { pending: intent('heir', 0) }), 3600)).toBe(true);
    expect(await store.settle(id, 'dead', stream(4), 3600)).toBe(false);
    expect(await store.settle(id, 'heir', stream(4), 3600)).toBe(true);
  });

  it('a record past its lifetime is gone: a new one can be created', async () => {
    const id = requestId();
    await store.create(id, stream(4), 60);
    clock.advance(60_000);
    expect(await store.get(id)).toBeUndefined();
    expect(await store.advance(id, 4, stream(8), 60)).toBe(false);
    expect(await store.create(id, stream(0), 60)).toEqual(stream(0));
  });
});

describe.each(['reset', '500'] as const)('DynamoDbLiveReplies: a write made, its answer lost (%s), sent again by the client', (how) => {
  let proxy: DynamoDbFaultProxy;
  let store: DynamoDbLiveReplies;
  beforeAll(async () => {
    proxy = await startDynamoDbFaultProxy(stateTable().endpoint);
    const dynamodb = new DynamoDb({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    store = new DynamoDbLiveReplies({ dynamodb, tableName: 'state' });
  });
  afterAll(() => proxy.close());
  beforeEach(() => proxy.reset());

  const write = (operation: string, id: string) => (request: DynamoDbRequest) => request.operation === operation && keyOf(request) === `live#${id}`;

  it.each([
    ['create', 'PutItem', async (s: LiveReplies, id: string) => (await s.create(id, stream(0, { pending: intent('mine', 0) }), 3600)).pending?.token === 'mine'],
    ['advance', 'UpdateItem', async (s: LiveReplies, id: string) => s.advance(id, 0, stream(4, { pending: intent('mine', 0) }), 3600)],
    ['settle', 'UpdateItem', async (s: LiveReplies, id: string) => s.settle(id, 'first', stream(4), 3600)],
  ])('%s counts as made: the copy sent again meets its own change', async (method, operation, act) => {
    const id = requestId();
    if (method !== 'create') await store.create(id, stream(0, method === 'settle' ? { pending: intent('first', 0) } : {}), 3600);
    proxy.loseAnswerOf({ match: write(operation, id), how });
    expect(await act(store, id)).toBe(true);
    // The fault happened: the same write went twice, the first answer lost.
    expect(proxy.lost).toHaveLength(1);
    expect(proxy.forwarded.filter(write(operation, id))).toHaveLength(2);
  });

  it('a writer whose change came in between still makes the copy fail', async () => {
    const id = requestId();
    await store.create(id, stream(0), 3600);
    expect(await store.advance(id, 0, stream(4, { pending: intent('a', 0) }), 3600)).toBe(true);
    expect(await store.settle(id, 'a', stream(4), 3600)).toBe(true);
    expect(await store.advance(id, 0, stream(8, { pending: intent('late', 0) }), 3600)).toBe(false);
  });

  /** Slack's stream, recorded: what each message shows now. */
  function streamingSlack() {
    const texts = new Map<string, string>();
    let ts = 0;
    const slack: SlackLive & { post(): Promise<{ ts: string }> } = {
      async setStatus() {
        throw new SlackApiError('assistant.threads.setStatus failed: not_allowed_token_type', 'not_allowed_token_type', false);
      },
      async startStream(started) {
        const id = `s${(ts += 1)}`;
        texts.set(id, started.markdownText ?? '');
        return { ts: id };
      },
      async appendStream(message: LiveMessage, text: string) {
        texts.set(message.ts, (texts.get(message.ts) ?? '') + text);
      },
      async stopStream() {},
      async update(message: LiveMessage, text: string) {
        texts.set(message.ts, text);
      },
      async post() {
        return { ts: `p${(ts += 1)}` };
      },
    };
    return { slack, texts };
  }

  /** The write that moves the count of text shown (today the intent; before, the record after the append). */
  const movesShown = (id: string) => (request: DynamoDbRequest) =>
    write('UpdateItem', id)(request) && (request.input.ExpressionAttributeValues as Record<string, { N?: string }> | undefined)?.[':shown']?.N === '8';

  it('the preview goes on when the answer to recording a piece is lost: "one two three", not frozen at "one two"', async () => {
    const { slack, texts } = streamingSlack();
    const live = createLiveReply({ slack, store, workingText: 'working', placeholderText: 'working', log: createLogger('test') });
    const target: LiveTarget = { team_id: 'T1', channel: 'C1', ts: '100.000001', request_id: requestId(), user_id: 'U1' };
    await live.show(target, 0, 'one ');
    proxy.loseAnswerOf({ match: movesShown(target.request_id), how });
    await live.show(target, 4, 'two ');
    await live.show(target, 8, 'three');
    expect(proxy.lost).toHaveLength(1);
    expect(texts.get('s1')).toBe('one two three');
    expect(await store.get(target.request_id)).toMatchObject({ shown: 13 });
    expect((await store.get(target.request_id))?.dirty).toBeUndefined();
  });

  it('the sign of life shows once when the answer to claiming it is lost', async () => {
    const { slack, texts } = streamingSlack();
    const live = createLiveReply({ slack, store, workingText: 'working', placeholderText: 'working', log: createLogger('test') });
    const target: LiveTarget = { team_id: 'T1', channel: 'C1', ts: '100.000001', request_id: requestId(), user_id: 'U1' };
    proxy.loseAnswerOf({ match: write('PutItem', target.request_id), how });
    expect(await live.signOfLife(target)).toBe('stream');
    expect([...texts.keys()]).toEqual(['s1']);
    await live.show(target, 0, 'Hello');
    expect(texts.get('s1')).toBe('Hello');
  });
});
