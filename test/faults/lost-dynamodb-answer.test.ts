import { userMessages } from '../../src/verification/messages/user-messages';
import { keyOf, type DynamoDbRequest } from '../support/dynamodb-fault-proxy';
import { lambdaContext } from '../support/lambda-context';
import { replaySlackEvent, SqsReplay, sqsEvent, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 11, fault 2: DynamoDB applies a claim's conditional write and its answer is lost (the
 * connection is reset, or a 500 comes back instead). The SDK sends the same write again, which
 * now meets the item it wrote itself. That must count as claimed — the same token — so the only
 * delivery does the work: the event is queued (not acknowledged as a duplicate, nor left to a
 * retry), the chunk is posted. The same holds for the once-only marker behind a refusal notice
 * (a PutItem): the refused user must still be told.
 */
let pipeline: FaultPipeline;
const ALLOWED_USER = 'ULOCALUSER';
beforeAll(async () => {
  // One allowed user: anyone else is refused with a notice, once per minute window. One event
  // per user and minute (each scenario is a new window): an event counted twice is refused.
  pipeline = await startFaultPipeline({ env: { ALLOWED_USER_IDS: ALLOWED_USER, RATE_LIMIT_PER_MINUTE: '1' } });
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());

/** The write that takes a claim: a conditional UpdateItem on a key with this prefix. */
const claimWrite = (prefix: string) => (request: DynamoDbRequest) => request.operation === 'UpdateItem' && (keyOf(request) ?? '').startsWith(prefix) && String(request.input.ConditionExpression ?? '').includes('attribute_not_exists');

const tokenOf = (request: DynamoDbRequest) => (request.input.ExpressionAttributeValues as Record<string, { S?: string }> | undefined)?.[':token']?.S;

describe.each(['reset', '500'] as const)('a claim write applied, its answer lost (%s)', (how) => {
  it('slack-events: the only delivery claims the event, queues the task and acknowledges it', async () => {
    pipeline.clock.begin();
    const { body, eventId } = pipeline.mention(`lost answer ${how}`);
    pipeline.dynamo.loseAnswerOf({ match: claimWrite(`event#${eventId}`), how });

    const deliveries = await replaySlackEvent(pipeline, body);

    // One delivery, acknowledged in time; Slack had no reason to retry.
    expect(deliveries.map((d) => [d.retryNum, statusOf(d), d.answeredInTime])).toEqual([[0, 200, true]]);
    expect(pipeline.tasks()).toEqual([expect.objectContaining({ event_id: eventId, text: `lost answer ${how}` })]);
    // The fault happened: the SDK sent the same write (the same token) twice; the first answer was lost.
    expect(pipeline.dynamo.lost.map(keyOf)).toEqual([`event#${eventId}`]);
    const tokens = pipeline.dynamo.forwarded.filter(claimWrite(`event#${eventId}`)).map(tokenOf);
    expect(tokens).toEqual([tokenOf(pipeline.dynamo.lost[0]!), tokenOf(pipeline.dynamo.lost[0]!)]);
    expect(await pipeline.claim(`event#${eventId}`)).toMatchObject({ claim_state: { S: 'done' } });

    await new SqsReplay(pipeline).drain();
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual([`echo: lost answer ${how}`]);
  });

  it('slack-poster: the only delivery claims the chunk and posts it once', async () => {
    pipeline.clock.begin();
    const reply = { request_id: globalThis.crypto.randomUUID(), team_id: 'T1', channel: 'C1', ts: '1700000000.000100', kind: 'answer', text: `chunk with a lost claim answer (${how})` };
    pipeline.dynamo.loseAnswerOf({ match: claimWrite(`reply#${reply.request_id}#0`), how });

    const result = await pipeline.handlers.slackPoster(sqsEvent([{ id: 'reply-1', body: JSON.stringify(reply), receiveCount: 1 }]), lambdaContext(60_000, 'slack-poster'));

    expect(result.batchItemFailures).toEqual([]);
    expect(pipeline.slack.posts).toEqual([expect.objectContaining({ channel: 'C1', thread_ts: reply.ts, text: reply.text })]);
    expect(pipeline.dynamo.lost.map(keyOf)).toEqual([`reply#${reply.request_id}#0`]);
    const token = tokenOf(pipeline.dynamo.lost[0]!);
    expect(pipeline.dynamo.forwarded.filter(claimWrite(`reply#${reply.request_id}#0`)).map(tokenOf)).toEqual([token, token]);
    expect(await pipeline.claim(`reply#${reply.request_id}#0`)).toMatchObject({ claim_state: { S: 'done' }, claim_value: { S: pipeline.slack.posts[0]!.ts } });
  });
});

describe.each(['reset', '500'] as const)('the once-per-window refusal marker written, its answer lost (%s)', (how) => {
  it('slack-events: the refused user is still told, once', async () => {
    pipeline.clock.begin();
    const { body } = pipeline.mention('let me in', { userId: 'UOUTSIDER' });
    pipeline.dynamo.loseAnswerOf({ match: (request) => request.operation === 'PutItem' && (keyOf(request) ?? '').startsWith('notice#not-allowed#'), how });

    const deliveries = await replaySlackEvent(pipeline, body);

    expect(deliveries.map((d) => [d.retryNum, statusOf(d)])).toEqual([[0, 200]]);
    expect(pipeline.dynamo.lost.map(keyOf)).toEqual([expect.stringMatching(/^notice#not-allowed#/)]);
    expect(pipeline.tasks()).toEqual([]);
    await new SqsReplay(pipeline).drain();
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual([userMessages(undefined).notAllowed]);
  });
});

/**
 * Issue 25: the rate limit's counter is an `ADD`; applied, its answer lost, the client sends the
 * same write again. The event must count once — the user, within the limit, gets an answer and
 * no "slow down".
 */
describe.each(['reset', '500'] as const)('the rate-limit count written, its answer lost (%s)', (how) => {
  it('slack-events: the event counts once, so the user within the limit is answered', async () => {
    pipeline.clock.begin();
    const { body, eventId } = pipeline.mention(`counted once (${how})`);
    const rateWrite = (request: DynamoDbRequest) => request.operation === 'UpdateItem' && (keyOf(request) ?? '').startsWith(`rate#`);
    pipeline.dynamo.loseAnswerOf({ match: rateWrite, how });

    const deliveries = await replaySlackEvent(pipeline, body);

    expect(deliveries.map((d) => [d.retryNum, statusOf(d)])).toEqual([[0, 200]]);
    expect(pipeline.dynamo.lost.map(keyOf)).toEqual([expect.stringMatching(/^rate#/)]);
    expect(pipeline.dynamo.forwarded.filter(rateWrite).length).toBeGreaterThanOrEqual(2);
    expect(pipeline.tasks()).toEqual([expect.objectContaining({ event_id: eventId, text: `counted once (${how})` })]);
    await new SqsReplay(pipeline).drain();
    expect(pipeline.slack.posts.map((post) => post.text)).toEqual([`echo: counted once (${how})`]);
  });
});
