import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import { liveReplyKey, type LiveReplies, type LiveReply } from './live-replies';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbLiveRepliesOptions = StateTableOptions;

/**
 * LiveReplies as one item per request in the state table: the record as JSON in `live`, its
 * `shown` count beside it for the condition of `advance`. Reads are strongly consistent: the
 * function that reads next may run a second after the one that wrote.
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
    try {
      await this.table.put({
        Item: { ...this.table.key(liveReplyKey(requestId)), ...this.attributes(reply, now + Math.ceil(ttlSeconds)) },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
        ExpressionAttributeValues: { ':now': { N: String(now) } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return reply;
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      return this.live(itemMetBy(error)) ?? (await this.get(requestId)) ?? reply;
    }
  }

  async advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    const now = this.table.nowSeconds();
    return this.table.ifMet(
      this.table.update({
        Key: this.table.key(liveReplyKey(requestId)),
        ConditionExpression: 'shown = :from AND expires_at > :now',
        UpdateExpression: 'SET live = :live, shown = :shown, expires_at = :expires',
        ExpressionAttributeValues: {
          ':from': { N: String(from) },
          ':now': { N: String(now) },
          ':live': { S: JSON.stringify(next) },
          ':shown': { N: String(next.shown) },
          ':expires': { N: String(now + Math.ceil(ttlSeconds)) },
        },
      }),
    );
  }

  private attributes(reply: LiveReply, expiresAt: number): Item {
    return { live: { S: JSON.stringify(reply) }, shown: { N: String(reply.shown) }, expires_at: { N: String(expiresAt) } };
  }

  private live(item: Item | undefined): LiveReply | undefined {
    if (!item?.live?.S || !this.table.isLive(item)) return undefined;
    return JSON.parse(item.live.S) as LiveReply;
  }
}
