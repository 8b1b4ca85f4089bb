import { systemClock, type Clock } from '../../clock';
import type { DynamoDb } from '../../aws/dynamodb';
import { botThreadKey, type BotThread, type BotThreads } from './bot-threads';

export type DynamoDbBotThreadsOptions = {
  dynamodb: DynamoDb;
  /** The state table: string partition key `pk`, TTL on `expires_at` (shared with claims and counters). */
  tableName: string;
  clock?: Clock;
};

/**
 * BotThreads as one item per thread in the state table. A put is idempotent (a retried write just
 * moves the expiry again), and DynamoDB deletes expired items only eventually, so a read treats an
 * item past its `expires_at` as absent.
 */
export class DynamoDbBotThreads implements BotThreads {
  private readonly clock: Clock;

  constructor(private readonly options: DynamoDbBotThreadsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  async remember(thread: BotThread, ttlSeconds: number): Promise<void> {
    const expiresAt = Math.floor(this.clock.now() / 1000) + Math.ceil(ttlSeconds);
    await this.options.dynamodb.putItem({ TableName: this.options.tableName, Item: { pk: { S: botThreadKey(thread) }, expires_at: { N: String(expiresAt) } } });
  }

  async has(thread: BotThread): Promise<boolean> {
    // An eventually consistent read: a record written a moment ago by the poster is rarely missed,
    // and the next reply in the thread finds it.
    const output = await this.options.dynamodb.getItem({ TableName: this.options.tableName, Key: { pk: { S: botThreadKey(thread) } }, ProjectionExpression: 'expires_at' });
    const expiresAt = Number(output.Item?.expires_at?.N ?? 0);
    return expiresAt > Math.floor(this.clock.now() / 1000);
  }
}
