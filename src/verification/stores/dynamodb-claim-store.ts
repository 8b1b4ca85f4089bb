import { ConditionalCheckFailedException, DeleteItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimStore } from './claim-store';

export type DynamoDbClaimStoreOptions = {
  client: DynamoDBClient;
  /** A table with string partition key `pk` and TTL on `expires_at`; counters may share it. */
  tableName: string;
  /** Prepended to every key, to keep claims apart from other items in a shared table. */
  keyPrefix?: string;
  now?: () => number;
};

/**
 * Claims as conditional PutItems. DynamoDB deletes expired items only eventually (often hours
 * later), so the condition itself treats an item past its `expires_at` as absent.
 */
export class DynamoDbClaimStore implements ClaimStore {
  private readonly now: () => number;
  private readonly keyPrefix: string;

  constructor(private readonly options: DynamoDbClaimStoreOptions) {
    this.now = options.now ?? Date.now;
    this.keyPrefix = options.keyPrefix ?? '';
  }

  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const nowSeconds = Math.floor(this.now() / 1000);
    try {
      await this.options.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: { pk: { S: this.keyPrefix + key }, expires_at: { N: String(nowSeconds + Math.ceil(ttlSeconds)) } },
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
          ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async release(key: string): Promise<void> {
    await this.options.client.send(new DeleteItemCommand({ TableName: this.options.tableName, Key: { pk: { S: this.keyPrefix + key } } }));
  }
}
