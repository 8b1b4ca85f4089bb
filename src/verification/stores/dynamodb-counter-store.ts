import { systemClock, type Clock } from '../../clock';
import { type DynamoDb, isConditionCheckFailure, type Item } from '../../aws/dynamodb';
import type { CounterStore } from './counter-store';

export type DynamoDbCounterStoreOptions = {
  dynamodb: DynamoDb;
  /** A table with string partition key `pk` and TTL on `expires_at`; claims may share it. */
  tableName: string;
  /** Prepended to every key, to keep counters apart from other items in a shared table. */
  keyPrefix?: string;
  clock?: Clock;
};

/** Each round is two conditional writes; contention on an expired key settles within a few rounds. */
const MAX_ROUNDS = 5;

/**
 * Counters as atomic `ADD`s. DynamoDB removes expired items only eventually, so an item past its
 * `expires_at` must count as fresh: the `ADD` is conditional on the item being live, and when
 * it is not, a conditional PutItem starts the counter again at one. Racing writers on an expired
 * item agree: one Put wins, the others see a live item again and `ADD` to it.
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly clock: Clock;
  private readonly keyPrefix: string;

  constructor(private readonly options: DynamoDbCounterStoreOptions) {
    this.clock = options.clock ?? systemClock;
    this.keyPrefix = options.keyPrefix ?? '';
  }

  async increment(key: string, ttlSeconds: number): Promise<number> {
    const pk = { S: this.keyPrefix + key };
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const nowSeconds = Math.floor(this.clock.now() / 1000);
      const now = { N: String(nowSeconds) };
      const expiresAt = { N: String(nowSeconds + Math.ceil(ttlSeconds)) };
      try {
        const { Attributes } = await this.options.dynamodb.updateItem({
          TableName: this.options.tableName,
          Key: { pk },
          // The TTL is set on creation only: a fixed window must not slide with each hit.
          UpdateExpression: 'ADD #count :one SET expires_at = if_not_exists(expires_at, :exp)',
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at > :now',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':exp': expiresAt, ':now': now },
          ReturnValues: 'UPDATED_NEW',
        });
        return Number(Attributes?.count?.N);
      } catch (error) {
        if (!isConditionCheckFailure(error)) throw error;
      }
      // The item exists but has expired: replace it, unless another writer already did.
      try {
        await this.options.dynamodb.putItem({
          TableName: this.options.tableName,
          Item: { pk, count: { N: '1' }, expires_at: expiresAt },
          ConditionExpression: 'expires_at <= :now',
          ExpressionAttributeValues: { ':now': now },
        });
        return 1;
      } catch (error) {
        if (!isConditionCheckFailure(error)) throw error;
      }
    }
    throw new Error(`could not increment counter ${key}: the item kept changing under contention`);
  }
}
