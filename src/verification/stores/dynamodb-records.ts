import type { PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { DynamoDb } from '../../aws/dynamodb';
import { isConditionCheckFailure } from '../../aws/dynamodb';
import { systemClock, type Clock } from '../../clock';
import type { RecordValue, Records } from './records';

export type DynamoDbRecordsOptions = {
  dynamodb: DynamoDb;
  /** The state table: string partition key `pk`, TTL on `expires_at` (shared with claims and counters). */
  tableName: string;
  clock?: Clock;
};

/**
 * Records as items of the state table: `pk`, the value as a JSON string in `record`, and
 * `expires_at`. DynamoDB deletes expired items only eventually, so a read treats an item past its
 * `expires_at` as absent. Conditional writes compare one top-level field, copied beside the JSON
 * as `cond` so the condition can read it.
 */
export class DynamoDbRecords implements Records {
  private readonly clock: Clock;

  constructor(private readonly options: DynamoDbRecordsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  async get<T extends RecordValue>(key: string): Promise<T | undefined> {
    const output = await this.options.dynamodb.getItem({ TableName: this.options.tableName, Key: { pk: { S: key } }, ConsistentRead: true });
    const item = output.Item;
    if (!item?.record?.S || Number(item.expires_at?.N ?? 0) <= Math.floor(this.clock.now() / 1000)) return undefined;
    return JSON.parse(item.record.S) as T;
  }

  async put(key: string, value: RecordValue, ttlSeconds: number): Promise<void> {
    await this.options.dynamodb.putItem({ TableName: this.options.tableName, Item: this.item(key, value, ttlSeconds) });
  }

  async putIf(key: string, value: RecordValue, ttlSeconds: number, when: { field: string; expected: string | undefined }): Promise<boolean> {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const names = { '#cond': `cond_${when.field}` };
    const condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> =
      when.expected === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR attribute_not_exists(#cond)', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } } }
        : { ConditionExpression: '#cond = :expected AND expires_at > :now', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':expected': { S: when.expected }, ':now': { N: String(nowSeconds) } } };
    try {
      await this.options.dynamodb.putItem({ TableName: this.options.tableName, Item: this.item(key, value, ttlSeconds, when.field), ...condition });
      return true;
    } catch (error) {
      if (isConditionCheckFailure(error)) return false;
      throw error;
    }
  }

  private item(key: string, value: RecordValue, ttlSeconds: number, condField?: string) {
    const expiresAt = Math.floor(this.clock.now() / 1000) + Math.ceil(ttlSeconds);
    const cond = condField ?? 'request_id';
    const condValue = value[cond];
    return {
      pk: { S: key },
      record: { S: JSON.stringify(value) },
      expires_at: { N: String(expiresAt) },
      ...(typeof condValue === 'string' ? { [`cond_${cond}`]: { S: condValue } } : {}),
    };
  }
}
