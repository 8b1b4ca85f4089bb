import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import { StateTable, type StateTableOptions } from './state-table';
import { emptyTotals, tokensOf, USAGE_SCOPES, type Reservation, type UsageDelta, type UsageKey, type UsageRow, type UsageScope, type UsageStore } from './usage-store';

/** Counters read at once by `day` (zone usage --table): the operator's credentials, a modest fan-out. */
const READ_CONCURRENCY = 8;

const n = (value: number): AttributeValue => ({ N: String(value) });
const num = (item: Item | undefined, name: string): number => Number(item?.[name]?.N ?? 0);

/**
 * Usage counters in the state table: one item per day and scope under `usage#<day>#<scope>#<id>`,
 * changed only by `ADD`, and one index item per day, `usage#<day>`, whose string set names every
 * counter of the day (so a day is read without a Scan). Besides the totals each counter keeps what
 * budgets need: `reserved` tokens and `inflight` tasks (reservations not yet settled), `committed`
 * = `tokens` + `reserved` (a condition cannot add two attributes).
 */
export class DynamoDbUsageStore implements UsageStore {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
    this.table = new StateTable({ ...options, keyPrefix: `${options.keyPrefix ?? ''}usage#` });
  }

  async reserve(key: UsageKey, limit: number, ttlSeconds: number, estimate: number): Promise<Reservation> {
    try {
      await this.table.update({
        Key: this.table.key(this.name(key)),
        UpdateExpression: `SET ${this.identity} ADD reserved :estimate, committed :estimate, inflight :one`,
        // Room for the estimate, or nothing in flight and the limit not reached (attributes a new counter lacks count as 0).
        ConditionExpression: 'attribute_not_exists(pk) OR committed <= :room OR ((attribute_not_exists(inflight) OR inflight <= :zero) AND (attribute_not_exists(tokens) OR tokens < :limit))',
        ExpressionAttributeNames: this.identityNames,
        ExpressionAttributeValues: { ...this.identityValues(key, ttlSeconds), ':estimate': n(estimate), ':one': n(1), ':zero': n(0), ':room': n(limit - estimate), ':limit': n(limit) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { admitted: true, estimate };
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      // DynamoDB returns the item it met; an emulator that does not gets one strongly consistent read.
      const used = num(itemMetBy(error) ?? (await this.table.get(this.name(key))), 'tokens');
      return { admitted: false, over: used >= limit, used };
    }
  }

  async add(day: string, counters: ReadonlyArray<{ scope: UsageScope; id: string; delta: UsageDelta }>, ttlSeconds: number): Promise<void> {
    await Promise.all([
      // The day's index: a string set, so adding a name twice is the same write.
      this.table.update({
        Key: this.table.key(day),
        UpdateExpression: 'SET expires_at = if_not_exists(expires_at, :exp) ADD counters :names',
        ExpressionAttributeValues: { ':exp': n(this.table.nowSeconds() + ttlSeconds), ':names': { SS: counters.map(({ scope, id }) => `${scope}#${id}`) } },
      }),
      ...counters.map(({ scope, id, delta }) => this.addOne({ day, scope, id }, delta, ttlSeconds)),
    ]);
  }

  async day(day: string): Promise<UsageRow[]> {
    const index = await this.table.get(day, { consistent: false });
    const names = index?.counters?.SS ?? [];
    const rows: UsageRow[] = [];
    for (let start = 0; start < names.length; start += READ_CONCURRENCY) {
      const items = await Promise.all(names.slice(start, start + READ_CONCURRENCY).map((name) => this.table.get(`${day}#${name}`, { consistent: false })));
      for (const [offset, item] of items.entries()) {
        const [scope, ...rest] = names[start + offset]!.split('#');
        if (!item || !this.table.isLive(item) || !USAGE_SCOPES.includes(scope as UsageScope)) continue;
        rows.push({
          day,
          scope: scope as UsageScope,
          id: rest.join('#'),
          ...Object.fromEntries(Object.keys(emptyTotals()).map((field) => [field, num(item, field)])),
        } as UsageRow);
      }
    }
    return rows;
  }

  private async addOne(key: UsageKey, delta: UsageDelta, ttlSeconds: number): Promise<void> {
    const usage = delta.usage;
    const tokens = tokensOf(usage);
    const adds: Record<string, number> = {
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
      cache_read_tokens: usage?.cache_read_tokens ?? 0,
      cache_write_tokens: usage?.cache_write_tokens ?? 0,
      tokens,
      tasks: delta.tasks ?? 0,
      refused: delta.refused ?? 0,
      // committed = tokens + reserved, always: what the reservation's condition reads.
      committed: tokens - (delta.release ?? 0),
      ...(delta.release !== undefined ? { reserved: -delta.release, inflight: -1 } : {}),
    };
    const values: Record<string, AttributeValue> = { ...this.identityValues(key, ttlSeconds) };
    for (const [field, value] of Object.entries(adds)) values[`:${field}`] = n(value);
    await this.table.update({
      Key: this.table.key(this.name(key)),
      UpdateExpression: `SET ${this.identity} ADD ${Object.keys(adds).map((field) => `${field} :${field}`).join(', ')}`,
      ExpressionAttributeNames: this.identityNames,
      ExpressionAttributeValues: values,
    });
  }

  private name(key: UsageKey): string {
    return `${key.day}#${key.scope}#${key.id}`;
  }

  /** What every write sets on a counter: what it counts (for reading it back), and its TTL on creation only. */
  private readonly identity = 'expires_at = if_not_exists(expires_at, :exp), #scope = :scope, #id = :id, #day = :day';
  private readonly identityNames = { '#scope': 'scope', '#id': 'id', '#day': 'day' };

  private identityValues(key: UsageKey, ttlSeconds: number): Record<string, AttributeValue> {
    return { ':exp': n(this.table.nowSeconds() + ttlSeconds), ':scope': { S: key.scope }, ':id': { S: key.id }, ':day': { S: key.day } };
  }
}
