import type { Item } from '../../aws/dynamodb';
import type { RecordValue, Records } from './records';
import { StateTable, type StateTableOptions } from './state-table';

/**
 * Records as items of the state table: the value as JSON in `record`, its lifetime in
 * `expires_at`. A conditional write compares one top-level string field of the value, which is
 * copied beside the JSON as `cond_<field>` so the condition can read it; an expired item counts as
 * absent, as everywhere in the table.
 */
/** The one field a conditional write compares (the thread's task is replaced only by the same request). */
const CONDITION_FIELD = 'request_id';

export class DynamoDbRecords implements Records {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
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
    if (when.field !== CONDITION_FIELD) throw new Error(`DynamoDbRecords compares only ${CONDITION_FIELD}, not ${when.field}`);
    const now = { ':now': { N: String(this.table.nowSeconds()) } };
    const names = { '#cond': `cond_${when.field}` };
    const condition =
      when.expected === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR attribute_not_exists(#cond)', ExpressionAttributeNames: names, ExpressionAttributeValues: now }
        : { ConditionExpression: '#cond = :expected AND expires_at > :now', ExpressionAttributeNames: names, ExpressionAttributeValues: { ...now, ':expected': { S: when.expected } } };
    return this.table.ifMet(this.table.put({ Item: this.item(key, value, ttlSeconds), ...condition }));
  }

  private item(key: string, value: RecordValue, ttlSeconds: number): Item {
    const conditions = Object.fromEntries(Object.entries(value).flatMap(([field, fieldValue]) => (typeof fieldValue === 'string' && field === CONDITION_FIELD ? [[`cond_${field}`, { S: fieldValue }]] : [])));
    return { ...this.table.key(key), record: { S: JSON.stringify(value) }, expires_at: { N: String(this.table.nowSeconds() + Math.ceil(ttlSeconds)) }, ...conditions };
  }
}
