import { systemClock, type Clock } from '../../clock';
import { type DynamoDb, isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import { liveReplyKey, type LiveReplies, type LiveReply } from './live-replies';

export type DynamoDbLiveRepliesOptions = {
  dynamodb: DynamoDb;
  /** The state table: string partition key `pk`, TTL on `expires_at` (shared with claims). */
  tableName: string;
  clock?: Clock;
};

/**
 * LiveReplies as one item per request in the state table: the record as JSON in `live`, its
 * `shown` count beside it for the condition of `advance`. Reads are strongly consistent: the
 * function that reads next may run a second after the one that wrote.
 */
export class DynamoDbLiveReplies implements LiveReplies {
  private readonly clock: Clock;

  constructor(private readonly options: DynamoDbLiveRepliesOptions) {
    this.clock = options.clock ?? systemClock;
  }

  async get(requestId: string): Promise<LiveReply | undefined> {
    const output = await this.options.dynamodb.getItem({ TableName: this.options.tableName, Key: this.key(requestId), ConsistentRead: true });
    return this.live(output.Item);
  }

  async create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply> {
    const now = this.nowSeconds();
    try {
      await this.options.dynamodb.putItem({
        TableName: this.options.tableName,
        Item: { ...this.key(requestId), ...this.attributes(reply, now + Math.ceil(ttlSeconds)) },
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
    const now = this.nowSeconds();
    try {
      await this.options.dynamodb.updateItem({
        TableName: this.options.tableName,
        Key: this.key(requestId),
        ConditionExpression: 'shown = :from AND expires_at > :now',
        UpdateExpression: 'SET live = :live, shown = :shown, expires_at = :expires',
        ExpressionAttributeValues: {
          ':from': { N: String(from) },
          ':now': { N: String(now) },
          ':live': { S: JSON.stringify(next) },
          ':shown': { N: String(next.shown) },
          ':expires': { N: String(now + Math.ceil(ttlSeconds)) },
        },
      });
      return true;
    } catch (error) {
      if (isConditionCheckFailure(error)) return false;
      throw error;
    }
  }

  private key(requestId: string): Item {
    return { pk: { S: liveReplyKey(requestId) } };
  }

  private attributes(reply: LiveReply, expiresAt: number): Item {
    return { live: { S: JSON.stringify(reply) }, shown: { N: String(reply.shown) }, expires_at: { N: String(expiresAt) } };
  }

  private live(item: Item | undefined): LiveReply | undefined {
    if (!item?.live?.S || Number(item.expires_at?.N ?? 0) <= this.nowSeconds()) return undefined;
    return JSON.parse(item.live.S) as LiveReply;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }
}
