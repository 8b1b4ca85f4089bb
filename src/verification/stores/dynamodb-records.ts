import type { PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { RecordValue, Records } from './records';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbRecordsOptions = StateTableOptions;

/**
 * Records as items of the state table: `pk`, the value as a JSON string in `record`, and
 * `expires_at`. DynamoDB deletes expired items only eventually, so a read treats an item past its
 * `expires_at` as absent. Conditional writes compare one top-level field, copied beside the JSON
 * as `cond` so the condition can read it.
 */
export class DynamoDbRecords implements Records {
  private readonly table: StateTable;

  constructor(options: DynamoDbRecordsOptions) {
    this.table = new StateTable(options);
  }

  async get<T extends RecordValue>(key: string): Promise<T | undefined> {
    const item = await this.table.get(key);
    if (!item?.record?.S || !this.table.isLive(item)) return undefined;
    return JSON.parse(item.record.S) as T;
  }

  async put(key: string, value: RecordValue, ttlSeconds: number): Promise<void> {
    await this.table.put({ Item: this.item(key, value, ttlSeconds) });
  }

  async putIf(key: string, value: RecordValue, ttlSeconds: number, when: { field: string; expected: string | undefined }): Promise<boolean> {
    const nowSeconds = this.table.nowSeconds();
    const names = { '#cond': `cond_${when.field}` };
    const condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> =
      when.expected === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR attribute_not_exists(#cond)', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } } }
        : { ConditionExpression: '#cond = :expected AND expires_at > :now', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':expected': { S: when.expected }, ':now': { N: String(nowSeconds) } } };
    return this.table.ifMet(this.table.put({ Item: this.item(key, value, ttlSeconds, when.field), ...condition }));
  }

  private item(key: string, value: RecordValue, ttlSeconds: number, condField?: string) {
    const expiresAt = this.table.nowSeconds() + Math.ceil(ttlSeconds);
    const cond = condField ?? 'request_id';
    const condValue = value[cond];
    return {
      ...this.table.key(key),
      record: { S: JSON.stringify(value) },
      expires_at: { N: String(expiresAt) },
      ...(typeof condValue === 'string' ? { [`cond_${cond}`]: { S: condValue } } : {}),
    };
  }
}
