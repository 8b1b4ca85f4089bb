import type { PutItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { isConditionCheckFailure, type DynamoDb, type Item } from '../../aws/dynamodb';
import { systemClock, type Clock } from '../../clock';

/** What every DynamoDB store of the verification zone is given: the state table, and the clock its lifetimes count on. */
export type StateTableOptions = {
  dynamodb: DynamoDb;
  /**
   * The state table: string partition key `pk`, TTL on `expires_at` (epoch seconds). Claims,
   * counters, answered threads, live replies and records share it, each kind under its own key
   * prefix (state-keys.ts): a function's IAM grant names the prefixes it may touch.
   */
  tableName: string;
  /** Prepended to every key, to keep one store's items apart from another's in the shared table. */
  keyPrefix?: string;
  clock?: Clock;
};

/**
 * The state table as the DynamoDB stores use it (docs/architecture.md §6): one item per key under
 * `pk`, its lifetime in `expires_at`. DynamoDB deletes expired items only eventually (often hours
 * later), so a store treats an item past its `expires_at` as absent (`isLive`), and its conditions
 * do the same.
 */
export class StateTable {
  private readonly dynamodb: DynamoDb;
  private readonly tableName: string;
  private readonly keyPrefix: string;
  private readonly clock: Clock;

  constructor(options: StateTableOptions) {
    this.dynamodb = options.dynamodb;
    this.tableName = options.tableName;
    this.keyPrefix = options.keyPrefix ?? '';
    this.clock = options.clock ?? systemClock;
  }

  /** The item key of a store's key. */
  key(key: string): Item {
    return { pk: { S: this.keyPrefix + key } };
  }

  /** Now, in the epoch seconds `expires_at` is kept in. */
  nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** True for an item that has not passed its `expires_at`. */
  isLive(item: Item | undefined): boolean {
    return Number(item?.expires_at?.N ?? 0) > this.nowSeconds();
  }

  /** The item under `key`, expired or not; a strongly consistent read unless told otherwise. */
  async get(key: string, read: { consistent?: boolean; projection?: string } = {}): Promise<Item | undefined> {
    const output = await this.dynamodb.getItem({
      TableName: this.tableName,
      Key: this.key(key),
      ...((read.consistent ?? true) ? { ConsistentRead: true } : {}),
      ...(read.projection ? { ProjectionExpression: read.projection } : {}),
    });
    return output.Item;
  }

  put(input: Omit<PutItemCommandInput, 'TableName'>): ReturnType<DynamoDb['putItem']> {
    return this.dynamodb.putItem({ ...input, TableName: this.tableName });
  }

  update(input: Omit<UpdateItemCommandInput, 'TableName'>): ReturnType<DynamoDb['updateItem']> {
    return this.dynamodb.updateItem({ ...input, TableName: this.tableName });
  }

  /** A conditional write: true once it is made, false when its condition was not met. Any other failure is thrown. */
  async ifMet(write: Promise<unknown>): Promise<boolean> {
    try {
      await write;
      return true;
    } catch (error) {
      if (isConditionCheckFailure(error)) return false;
      throw error;
    }
  }
}
