import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../clock';
import type { TaskStatus } from '../../contract';
import { JSON_FIELDS, type CreateOutcome, type PartialTextPolicy, type TaskLease, type TaskRecord, type TaskStore, type TaskUpdate } from './task-store';

export type DynamoDbTaskStoreOptions = {
  client: DynamoDBClient;
  tableName: string;
  clock?: Clock;
  /** Default DYNAMODB_PARTIAL_TEXT. */
  partialText?: PartialTextPolicy;
};

/**
 * A streaming task's partial text in its item: written at most every 500 ms (each write is a
 * whole-item write, billed by the item's size), and at most 350,000 UTF-8 bytes of it — 350,000
 * characters of ASCII, fewer of other text — so the item stays well under DynamoDB's 400 KB.
 */
export const DYNAMODB_PARTIAL_TEXT: PartialTextPolicy = { writeIntervalMs: 500, maxBytes: 350_000 };

/** The key of the item that maps a request key to its task, in the same table as the tasks. */
function requestItemKey(requestKey: string): string {
  return `request-${requestKey}`;
}

/** The key of the item that describes a task's kept params (`putParams`): chunk count, length, hash. */
function paramsItemKey(taskId: string): string {
  return `params-${taskId}`;
}

/** The key of one chunk of a task's kept params, numbered from 0. */
function paramsChunkKey(taskId: string, index: number): string {
  return `params-${taskId}-${index}`;
}

/** Bytes of params per chunk item: well under DynamoDB's 400 KB item limit, key and attributes included. */
export const PARAMS_CHUNK_BYTES = 256 * 1024;
/** Chunk items written or read at once. */
const PARAMS_CHUNK_CONCURRENCY = 4;

/**
 * Tasks in DynamoDB: partition key `task_id`, TTL attribute `expires_at`. DynamoDB deletes
 * expired items lazily, so reads treat an item past its `expires_at` as gone, and `create`
 * may overwrite it. Next to each task created for a request id lives one small item keyed
 * `request-<request key>` that names the task (`request_task_id`) and expires with it: task ids
 * are random, so that item is how a repeated `execute_task` finds its task from any process.
 * Neither item holds the task's params, only their hash (`params_hash`). A streaming task's item
 * holds the text produced so far while it runs (`partial_text`, `partial_length`: see
 * DYNAMODB_PARTIAL_TEXT); the update that settles the task removes it. The runner that took the
 * task (`take`) is named in `lease_owner`, with `lease_until` (epoch ms): the take's condition,
 * and the writes of a runner (`TaskUpdate.owner`), read them, so two runners never both run it.
 *
 * Params too large for a handoff message (`putParams`) are kept in the same table, with the
 * task's `expires_at`, as binary chunks of PARAMS_CHUNK_BYTES keyed `params-<task id>-<n>` and,
 * written last, one item keyed `params-<task id>` with their count, length and SHA-256; reads
 * are consistent and check the reassembled bytes against both. `deleteParams` overwrites every
 * one of these items with an empty one that expires at once: the task table grants GetItem,
 * PutItem and UpdateItem only (no DeleteItem, no batch or transaction calls).
 */
export class DynamoDbTaskStore implements TaskStore {
  readonly partialText: PartialTextPolicy;
  private readonly clock: Clock;
  constructor(private readonly options: DynamoDbTaskStoreOptions) {
    this.clock = options.clock ?? systemClock;
    this.partialText = options.partialText ?? DYNAMODB_PARTIAL_TEXT;
  }

  async create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome> {
    // Another process may be the one a repeated id comes back to: the params hash is written with the task.
    const created = await this.putTask(record);
    if (!created.created || requestKey === undefined) return created;
    return this.claimRequest(requestKey, record);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const Item = await this.item(taskId);
    // Request and params items share the table; one is never a task, whatever key it is read by.
    if (!Item || Item.request_task_id || !Item.status?.S) return undefined;
    const record = fromItem(Item);
    return record.expires_at <= this.nowSeconds() ? undefined : record;
  }

  async getByRequest(requestKey: string): Promise<TaskRecord | undefined> {
    const taskId = await this.requestTaskId(requestItemKey(requestKey));
    return taskId === undefined ? undefined : this.get(taskId);
  }

  async transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined> {
    const names: Record<string, string> = { '#status': 'status', '#updated_at': 'updated_at' };
    const values: Record<string, AttributeValue> = {
      ':status': { S: update.status },
      ':updated_at': { N: String(this.clock.now()) },
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
    const removes: string[] = [];
    // Steps, question, answers: each one attribute of JSON (docs/contract.md, "Steps", "Questions").
    for (const field of JSON_FIELDS) {
      const value = update[field];
      if (value === undefined) continue;
      names[`#${field}`] = field;
      if (value === null) removes.push(`#${field}`);
      else {
        values[`:${field}`] = { S: JSON.stringify(value) };
        sets.push(`#${field} = :${field}`);
      }
    }
    if (update.partial === null) {
      names['#partial_text'] = 'partial_text';
      names['#partial_length'] = 'partial_length';
      removes.push('#partial_text', '#partial_length');
    } else if (update.partial !== undefined) {
      names['#partial_length'] = 'partial_length';
      values[':partial_length'] = { N: String(update.partial.length) };
      sets.push('#partial_length = :partial_length');
      if (update.partial.text !== undefined) {
        names['#partial_text'] = 'partial_text';
        values[':partial_text'] = { S: update.partial.text };
        sets.push('#partial_text = :partial_text');
      }
    }
    const fromPlaceholders = from.map((status, index) => {
      values[`:from${index}`] = { S: status };
      return `:from${index}`;
    });
    let condition = `attribute_exists(task_id) AND expires_at > :now AND #status IN (${fromPlaceholders.join(', ')})`;
    if (update.owner !== undefined) {
      values[':owner'] = { S: update.owner };
      condition += ' AND lease_owner = :owner';
    }
    return this.update(taskId, `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`, condition, names, values);
  }

  async take(taskId: string, lease: TaskLease, startPartial = false): Promise<TaskRecord | undefined> {
    const names: Record<string, string> = { '#status': 'status', '#updated_at': 'updated_at' };
    const values: Record<string, AttributeValue> = {
      ':working': { S: 'working' },
      ':accepted': { S: 'accepted' },
      ':owner': { S: lease.owner },
      ':until': { N: String(lease.until) },
      ':updated_at': { N: String(this.clock.now()) },
      ':now': { N: String(this.nowSeconds()) },
      ':now_ms': { N: String(this.clock.now()) },
    };
    const sets = ['#status = :working', 'lease_owner = :owner', 'lease_until = :until', '#updated_at = :updated_at'];
    if (startPartial) {
      values[':empty'] = { S: '' };
      values[':zero'] = { N: '0' };
      sets.push('partial_text = if_not_exists(partial_text, :empty)', 'partial_length = if_not_exists(partial_length, :zero)');
    }
    // accepted, or working with no lease (written before leases) or a lease that is over.
    const condition =
      'attribute_exists(task_id) AND expires_at > :now AND (#status = :accepted OR (#status = :working AND (attribute_not_exists(lease_until) OR lease_until <= :now_ms)))';
    return this.update(taskId, `SET ${sets.join(', ')}`, condition, names, values);
  }

  /** A conditional UpdateItem of a task item: the record as it is after it, or undefined when the condition failed. */
  private async update(taskId: string, expression: string, condition: string, names: Record<string, string>, values: Record<string, AttributeValue>): Promise<TaskRecord | undefined> {
    try {
      const { Attributes } = await this.options.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { task_id: { S: taskId } },
          UpdateExpression: expression,
          ConditionExpression: condition,
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

  async putParams(taskId: string, json: string, expiresAt: number): Promise<void> {
    const bytes = Buffer.from(json, 'utf8');
    const count = Math.max(1, Math.ceil(bytes.length / PARAMS_CHUNK_BYTES));
    const expires = { N: String(expiresAt) };
    await inPool(count, PARAMS_CHUNK_CONCURRENCY, (index) =>
      this.put({
        task_id: { S: paramsChunkKey(taskId, index) },
        params_chunk: { B: bytes.subarray(index * PARAMS_CHUNK_BYTES, (index + 1) * PARAMS_CHUNK_BYTES) },
        expires_at: expires,
      }),
    );
    // Last: a reader that finds this item finds every chunk it names.
    await this.put({
      task_id: { S: paramsItemKey(taskId) },
      params_chunks: { N: String(count) },
      params_bytes: { N: String(bytes.length) },
      params_sha256: { S: sha256(bytes) },
      expires_at: expires,
    });
  }

  async getParams(taskId: string): Promise<string | undefined> {
    const head = await this.item(paramsItemKey(taskId));
    if (!head?.params_chunks?.N || Number(head.expires_at?.N ?? 0) <= this.nowSeconds()) return undefined;
    const count = Number(head.params_chunks.N);
    const chunks = await inPool(count, PARAMS_CHUNK_CONCURRENCY, async (index) => {
      const chunk = (await this.item(paramsChunkKey(taskId, index)))?.params_chunk?.B;
      if (!chunk) throw new Error(`kept params of ${taskId}: chunk ${index} of ${count} is missing`);
      return chunk;
    });
    const bytes = Buffer.concat(chunks);
    // Chunks of two puts, or of a put and an erase, must not pass for params.
    if (bytes.length !== Number(head.params_bytes?.N) || sha256(bytes) !== head.params_sha256?.S) {
      throw new Error(`kept params of ${taskId}: the chunks do not add up to what was written (changed while read?)`);
    }
    return bytes.toString('utf8');
  }

  async deleteParams(taskId: string): Promise<void> {
    const head = await this.item(paramsItemKey(taskId));
    if (!head?.params_chunks?.N) return;
    const gone = { N: String(this.nowSeconds()) };
    // Chunks first: an erase cut short leaves the item that still counts them.
    await inPool(Number(head.params_chunks.N), PARAMS_CHUNK_CONCURRENCY, (index) => this.put({ task_id: { S: paramsChunkKey(taskId, index) }, expires_at: gone }));
    await this.put({ task_id: { S: paramsItemKey(taskId) }, expires_at: gone });
  }

  private async put(Item: Record<string, AttributeValue>): Promise<void> {
    await this.options.client.send(new PutItemCommand({ TableName: this.options.tableName, Item }));
  }

  /** Writes the task item unless a live item has its id (ids are random: only a caller reusing one meets it). */
  private async putTask(record: TaskRecord): Promise<CreateOutcome> {
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
      if (!existing) return this.putTask(record);
      return { created: false, record: existing };
    }
  }

  /**
   * Points the request key at the task just written, unless a live task holds the key already:
   * then that task is the answer and the one just written is retired unseen (its id was never
   * given out). The task item goes first, so a live request item always names a written task.
   * No transaction: dynalite has none, and the task table grants GetItem, PutItem and
   * UpdateItem only.
   */
  private async claimRequest(requestKey: string, record: TaskRecord): Promise<CreateOutcome> {
    const key = requestItemKey(requestKey);
    let dangling: string | undefined;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await this.options.client.send(
          new PutItemCommand({
            TableName: this.options.tableName,
            Item: { task_id: { S: key }, request_task_id: { S: record.task_id }, expires_at: { N: String(record.expires_at) } },
            ...(dangling === undefined
              ? { ConditionExpression: 'attribute_not_exists(task_id) OR expires_at <= :now', ExpressionAttributeValues: { ':now': { N: String(this.nowSeconds()) } } }
              : { ConditionExpression: 'request_task_id = :dangling', ExpressionAttributeValues: { ':dangling': { S: dangling } } }),
          }),
        );
        return { created: true, record };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      const holder = await this.requestTaskId(key);
      const existing = holder === undefined ? undefined : await this.get(holder);
      if (existing) {
        await this.retire(record.task_id);
        return { created: false, record: existing };
      }
      // The key expired meanwhile (holder undefined), or names a task that is gone: take it over.
      dangling = holder;
    }
    await this.retire(record.task_id);
    throw new Error('could not claim the request key of a new task: three conditional writes lost in a row');
  }

  /** The task id a live request item names. */
  private async requestTaskId(key: string): Promise<string | undefined> {
    const Item = await this.item(key);
    if (!Item?.request_task_id?.S || Number(Item.expires_at?.N ?? 0) <= this.nowSeconds()) return undefined;
    return Item.request_task_id.S;
  }

  private async item(key: string): Promise<Record<string, AttributeValue> | undefined> {
    const { Item } = await this.options.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: { task_id: { S: key } }, ConsistentRead: true }),
    );
    return Item;
  }

  /** Expires a task item nobody will ask for; reads treat it as gone at once, TTL deletes it later. */
  private async retire(taskId: string): Promise<void> {
    await this.options.client
      .send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { task_id: { S: taskId } },
          UpdateExpression: 'SET expires_at = :now',
          ConditionExpression: 'attribute_exists(task_id)',
          ExpressionAttributeValues: { ':now': { N: String(this.nowSeconds()) } },
        }),
      )
      // Best effort: a task left behind is an `accepted` record of an id never given out, gone at its TTL.
      .catch(() => undefined);
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `work(0 … count-1)` with at most `concurrency` calls running at once; results in index order. */
async function inPool<T>(count: number, concurrency: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      results[index] = await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return results;
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
  if (record.params_hash) item.params_hash = { S: record.params_hash };
  if (record.partial) {
    item.partial_text = { S: record.partial.text };
    item.partial_length = { N: String(record.partial.length) };
  }
  for (const field of JSON_FIELDS) if (record[field] !== undefined) item[field] = { S: JSON.stringify(record[field]) };
  if (record.lease) {
    item.lease_owner = { S: record.lease.owner };
    item.lease_until = { N: String(record.lease.until) };
  }
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
  if (item.params_hash?.S) record.params_hash = item.params_hash.S;
  if (item.partial_length?.N !== undefined) record.partial = { text: item.partial_text?.S ?? '', length: Number(item.partial_length.N) };
  for (const field of JSON_FIELDS) if (item[field]?.S) (record as Record<string, unknown>)[field] = JSON.parse(item[field].S);
  if (item.lease_owner?.S !== undefined && item.lease_until?.N !== undefined) record.lease = { owner: item.lease_owner.S, until: Number(item.lease_until.N) };
  return record;
}
