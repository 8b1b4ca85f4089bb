import { randomUUID } from 'node:crypto';
import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import { liveReplyKey, type LiveReplies, type LiveReply } from './live-replies';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbLiveRepliesOptions = StateTableOptions;

const WRITER = { '#writer': 'writer' };

/**
 * LiveReplies as one item per request in the state table: the record as JSON in `live`, and
 * beside it what the conditions read — its `shown` count, the token of the intent pending on it
 * (`pending_token`) — and `writer`, an id fresh for each write. The client sends a write again
 * when its answer is lost (a 5xx, a broken connection); the second copy carries the same id, so
 * it meets `writer = :write` and succeeds instead of failing on the change it made itself.
 * Reads are strongly consistent: the function that reads next may run a second after the one
 * that wrote.
 */
export class DynamoDbLiveReplies implements LiveReplies {
  private readonly table: StateTable;

  constructor(options: DynamoDbLiveRepliesOptions) {
    this.table = new StateTable(options);
  }

  async get(requestId: string): Promise<LiveReply | undefined> {
    return this.live(await this.table.get(liveReplyKey(requestId)));
  }

  async create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply> {
    const now = this.table.nowSeconds();
    const write = randomUUID();
    try {
      await this.table.put({
        Item: {
          ...this.table.key(liveReplyKey(requestId)),
          live: { S: JSON.stringify(reply) },
          shown: { N: String(reply.shown) },
          expires_at: { N: String(now + Math.ceil(ttlSeconds)) },
          writer: { S: write },
          ...(reply.pending ? { pending_token: { S: reply.pending.token } } : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR #writer = :write',
        ExpressionAttributeNames: WRITER,
        ExpressionAttributeValues: { ':now': { N: String(now) }, ':write': { S: write } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return reply;
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      return this.live(itemMetBy(error)) ?? (await this.get(requestId)) ?? reply;
    }
  }

  async advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    return this.replace(requestId, '(shown = :from AND attribute_not_exists(pending_token) AND expires_at > :now)', { ':from': { N: String(from) } }, next, ttlSeconds);
  }

  async settle(requestId: string, token: string, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    return this.replace(requestId, '(pending_token = :token AND expires_at > :now)', { ':token': { S: token } }, next, ttlSeconds);
  }

  /** Writes `next` where `condition` holds, or where this very write already did (a resend). */
  private replace(requestId: string, condition: string, values: Item, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    const now = this.table.nowSeconds();
    const set = 'SET live = :live, shown = :shown, expires_at = :expires, #writer = :write';
    return this.table.ifMet(
      this.table.update({
        Key: this.table.key(liveReplyKey(requestId)),
        ConditionExpression: `${condition} OR #writer = :write`,
        UpdateExpression: next.pending ? `${set}, pending_token = :pending` : `${set} REMOVE pending_token`,
        ExpressionAttributeNames: WRITER,
        ExpressionAttributeValues: {
          ...values,
          ':now': { N: String(now) },
          ':live': { S: JSON.stringify(next) },
          ':shown': { N: String(next.shown) },
          ':expires': { N: String(now + Math.ceil(ttlSeconds)) },
          ':write': { S: randomUUID() },
          ...(next.pending ? { ':pending': { S: next.pending.token } } : {}),
        },
      }),
    );
  }

  private live(item: Item | undefined): LiveReply | undefined {
    if (!item?.live?.S || !this.table.isLive(item)) return undefined;
    return JSON.parse(item.live.S) as LiveReply;
  }
}
