import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import type { TaskStatus } from '../../contract';
import type { CreateOutcome, TaskRecord, TaskStore, TaskUpdate } from './task-store';

export type DynamoDbTaskStoreOptions = {
  client: DynamoDBClient;
  tableName: string;
  now?: () => number;
};

/**
 * Tasks in DynamoDB: partition key `task_id`, TTL attribute `expires_at`. DynamoDB deletes
 * expired items lazily, so reads treat an item past its `expires_at` as gone, and `create`
 * may overwrite it.
 */
export class DynamoDbTaskStore implements TaskStore {
  private readonly now: () => number;
  constructor(private readonly options: DynamoDbTaskStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(record: TaskRecord): Promise<CreateOutcome> {
    try {
      await this.options.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: toItem(record),
          ConditionExpression: 'attribute_not_exists(task_id) OR expires_at <= :now',
          ExpressionAttributeValues: { ':now': { N: String(this.nowSeconds()) } },
        }),
      );
      return { created: true, record };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = await this.get(record.task_id);
      // The item expired between the failed write and this read: the next create will succeed.
      if (!existing) return this.create(record);
      return { created: false, record: existing };
    }
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const { Item } = await this.options.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: { task_id: { S: taskId } }, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const record = fromItem(Item);
    return record.expires_at <= this.nowSeconds() ? undefined : record;
  }

  async transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined> {
    const names: Record<string, string> = { '#status': 'status', '#updated_at': 'updated_at' };
    const values: Record<string, AttributeValue> = {
      ':status': { S: update.status },
      ':updated_at': { N: String(this.now()) },
      ':now': { N: String(this.nowSeconds()) },
    };
    const sets = ['#status = :status', '#updated_at = :updated_at'];
    if (update.result !== undefined) {
      names['#result'] = 'result';
      values[':result'] = { S: JSON.stringify(update.result) };
      sets.push('#result = :result');
    }
    if (update.error !== undefined) {
      names['#error'] = 'error';
      values[':error'] = { S: JSON.stringify(update.error) };
      sets.push('#error = :error');
    }
    const fromPlaceholders = from.map((status, index) => {
      values[`:from${index}`] = { S: status };
      return `:from${index}`;
    });
    try {
      const { Attributes } = await this.options.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { task_id: { S: taskId } },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `attribute_exists(task_id) AND expires_at > :now AND #status IN (${fromPlaceholders.join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? fromItem(Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }
}

function toItem(record: TaskRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    task_id: { S: record.task_id },
    status: { S: record.status },
    created_at: { N: String(record.created_at) },
    updated_at: { N: String(record.updated_at) },
    expires_at: { N: String(record.expires_at) },
  };
  if (record.result) item.result = { S: JSON.stringify(record.result) };
  if (record.error) item.error = { S: JSON.stringify(record.error) };
  return item;
}

function fromItem(item: Record<string, AttributeValue>): TaskRecord {
  const record: TaskRecord = {
    task_id: item.task_id?.S ?? '',
    status: (item.status?.S ?? 'failed') as TaskStatus,
    created_at: Number(item.created_at?.N ?? 0),
    updated_at: Number(item.updated_at?.N ?? 0),
    expires_at: Number(item.expires_at?.N ?? 0),
  };
  if (item.result?.S) record.result = JSON.parse(item.result.S);
  if (item.error?.S) record.error = JSON.parse(item.error.S);
  return record;
}
