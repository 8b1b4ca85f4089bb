import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import { StateTable, type StateTableOptions } from './state-table';
import { emptyTotals, tokensOf, USAGE_SCOPES, type Charge, type Hold, type Reservation, type UsageDelta, type UsageKey, type UsageRow, type UsageScope, type UsageStore } from './usage-store';

/** Counters read at once by `day` (zone usage --table): the operator's credentials, a modest fan-out. */
const READ_CONCURRENCY = 8;

const n = (value: number): AttributeValue => ({ N: String(value) });
const num = (item: Item | undefined, name: string): number => Number(item?.[name]?.N ?? 0);

/** A hold's value on its counter: `held/<lease end, epoch s>/<estimate>`, then `lapsed/<estimate>` once its lease let it go. */
const HELD = 'held/';
const LAPSED = 'lapsed/';
/** Attributes of a counter keyed by task: its hold, and its mark once charged. */
const holdOf = (requestId: string) => `hold#${requestId}`;
const markOf = (requestId: string) => `charged#${requestId}`;
/** Rounds of a keyed write that meets a hold changing under it (a lease ending, a settle): a few settle it. */
const MAX_ROUNDS = 4;

type HoldState = { held: true; leaseUntil: number; estimate: number } | { held: false; estimate: number };

function readHold(value: string | undefined): HoldState | undefined {
  if (value?.startsWith(HELD)) {
    const [leaseUntil, estimate] = value.slice(HELD.length).split('/').map(Number);
    return { held: true, leaseUntil: leaseUntil ?? 0, estimate: estimate ?? 0 };
  }
  if (value?.startsWith(LAPSED)) return { held: false, estimate: Number(value.slice(LAPSED.length)) };
  return undefined;
}

/**
 * Usage counters in the state table: one item per day and scope under `usage#<day>#<scope>#<id>`,
 * changed only by `ADD`, and one index item per day, `usage#<day>`, whose string set names every
 * counter of the day (so a day is read without a Scan). Besides the totals each counter keeps what
 * budgets need: `reserved` tokens and `inflight` tasks (holds not yet settled), `committed` =
 * `tokens` + `reserved` (a condition cannot add two attributes), and per task in flight its hold
 * `hold#<request id>`; a task being charged leaves `charged#<request id>` until the ledger forgets
 * it. Every write is conditional on those, so one the client sends again after a lost answer meets
 * its own change (docs/architecture.md §2.7, "Keyed by task").
 */
export class DynamoDbUsageStore implements UsageStore {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
    this.table = new StateTable({ ...options, keyPrefix: `${options.keyPrefix ?? ''}usage#` });
  }

  async reserve(key: UsageKey, limit: number, ttlSeconds: number, hold: Hold): Promise<Reservation> {
    const value = `${HELD}${Math.ceil(hold.leaseUntil / 1000)}/${hold.estimate}`;
    for (let round = 0; ; round += 1) {
      const met = await this.write(key, ttlSeconds, {
        set: '#hold = :hold',
        add: 'reserved :estimate, committed :estimate, inflight :one',
        // Not held yet; and room for the estimate, or nothing in flight and the limit not reached (attributes a new counter lacks count as 0).
        condition: '(attribute_not_exists(#hold) OR begins_with(#hold, :lapsed)) AND (attribute_not_exists(pk) OR committed <= :room OR ((attribute_not_exists(inflight) OR inflight <= :zero) AND (attribute_not_exists(tokens) OR tokens < :limit)))',
        names: { '#hold': holdOf(hold.request_id) },
        values: { ':hold': { S: value }, ':lapsed': { S: LAPSED }, ':estimate': n(hold.estimate), ':one': n(1), ':zero': n(0), ':room': n(limit - hold.estimate), ':limit': n(limit) },
      });
      if (met === 'made') return { admitted: true, estimate: hold.estimate };
      // Held already: this task's own hold (a redelivery, or the write sent again after its answer was lost).
      const own = readHold(met?.[holdOf(hold.request_id)]?.S);
      if (own?.held) return { admitted: true, estimate: own.estimate };
      const lapsed = round < MAX_ROUNDS && (await this.lapseExpired(key, met));
      if (lapsed) continue;
      const used = num(met, 'tokens');
      return { admitted: false, over: used >= limit, used };
    }
  }

  async release(key: UsageKey, requestId: string, ttlSeconds: number): Promise<void> {
    const name = holdOf(requestId);
    const hold = await this.table.get(this.name(key));
    const state = readHold(hold?.[name]?.S);
    if (!state?.held) return;
    await this.write(key, ttlSeconds, {
      remove: '#hold',
      add: 'reserved :back, committed :back, inflight :minusOne',
      condition: '#hold = :seen',
      names: { '#hold': name },
      values: { ':seen': { S: hold![name]!.S! }, ':back': n(-state.estimate), ':minusOne': n(-1) },
    });
  }

  async charge(day: string, requestId: string, charges: readonly Charge[], ttlSeconds: number): Promise<void> {
    await Promise.all([
      // The day's index: a string set, so adding a name twice is the same write.
      this.table.update({
        Key: this.table.key(day),
        UpdateExpression: 'SET expires_at = if_not_exists(expires_at, :exp) ADD counters :names',
        ExpressionAttributeValues: { ':exp': n(this.table.nowSeconds() + ttlSeconds), ':names': { SS: charges.map(({ scope, id }) => `${scope}#${id}`) } },
      }),
      ...charges.map(({ scope, id, delta }) => this.chargeOne({ day, scope, id }, requestId, delta, ttlSeconds)),
    ]);
  }

  async forget(day: string, requestId: string, counters: ReadonlyArray<{ scope: UsageScope; id: string }>): Promise<void> {
    await Promise.all(
      counters.map(({ scope, id }) =>
        // Only on a counter that exists: an update would otherwise create an item with no lifetime.
        this.table.ifMet(this.table.update({ Key: this.table.key(this.name({ day, scope, id })), UpdateExpression: 'REMOVE #mark', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeNames: { '#mark': markOf(requestId) } })),
      ),
    );
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

  /**
   * Charges one counter once: with the task's hold given back when it still holds one, without
   * when it holds none or its lease let it go; a counter that has the task's mark was charged.
   */
  private async chargeOne(key: UsageKey, requestId: string, delta: UsageDelta, ttlSeconds: number): Promise<void> {
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
    };
    const names = { '#hold': holdOf(requestId), '#mark': markOf(requestId) };
    let seen: string | undefined;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const state = readHold(seen);
      // committed = tokens + reserved, always: what the reservation's condition reads.
      const back = state?.held ? { reserved: -state.estimate, inflight: -1, committed: tokens - state.estimate } : { committed: tokens };
      const all = { ...adds, ...back };
      const values: Record<string, AttributeValue> = { ':one': n(1) };
      for (const [field, value] of Object.entries(all)) values[`:${field}`] = n(value);
      const met = await this.write(key, ttlSeconds, {
        set: '#mark = :one',
        remove: '#hold',
        add: Object.keys(all).map((field) => `${field} :${field}`).join(', '),
        condition: seen === undefined ? 'attribute_not_exists(#mark) AND (attribute_not_exists(#hold) OR begins_with(#hold, :lapsed))' : 'attribute_not_exists(#mark) AND #hold = :seen',
        names,
        values: { ...values, ...(seen === undefined ? { ':lapsed': { S: LAPSED } } : { ':seen': { S: seen } }) },
      });
      if (met === 'made' || met?.[names['#mark']]) return;
      seen = met?.[names['#hold']]?.S;
    }
    throw new Error(`could not charge usage counter ${this.name(key)}: the task's hold kept changing`);
  }

  /**
   * Lets go of the holds on a counter whose lease is over (their tasks died): true when there were
   * any — let go by this write, or by another (or by this one, its answer lost): look again.
   */
  private async lapseExpired(key: UsageKey, item: Item | undefined): Promise<boolean> {
    const now = this.table.nowSeconds();
    const expired = Object.entries(item ?? {}).filter(([name, value]) => {
      const state = name.startsWith('hold#') ? readHold(value.S) : undefined;
      return state?.held === true && state.leaseUntil <= now;
    });
    await Promise.all(
      expired.map(([name, value]) =>
        this.table.ifMet(
          this.table.update({
            Key: this.table.key(this.name(key)),
            UpdateExpression: 'SET #hold = :lapsed ADD reserved :back, committed :back, inflight :minusOne',
            ConditionExpression: '#hold = :seen',
            ExpressionAttributeNames: { '#hold': name },
            ExpressionAttributeValues: { ':seen': value, ':lapsed': { S: `${LAPSED}${readHold(value.S)!.estimate}` }, ':back': n(-readHold(value.S)!.estimate), ':minusOne': n(-1) },
          }),
        ),
      ),
    );
    return expired.length > 0;
  }

  /** One conditional write that also sets what the counter counts: `made`, or the item its condition met. */
  private async write(key: UsageKey, ttlSeconds: number, expression: { set?: string; remove?: string; add: string; condition: string; names: Record<string, string>; values: Record<string, AttributeValue> }): Promise<'made' | Item | undefined> {
    const update = [`SET ${[this.identity, ...(expression.set ? [expression.set] : [])].join(', ')}`, ...(expression.remove ? [`REMOVE ${expression.remove}`] : []), `ADD ${expression.add}`].join(' ');
    try {
      await this.table.update({
        Key: this.table.key(this.name(key)),
        UpdateExpression: update,
        ConditionExpression: expression.condition,
        ExpressionAttributeNames: { ...this.identityNames, ...expression.names },
        ExpressionAttributeValues: { ...this.identityValues(key, ttlSeconds), ...expression.values },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return 'made';
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      // DynamoDB returns the item it met; an emulator that does not gets one strongly consistent read.
      return itemMetBy(error) ?? (await this.table.get(this.name(key)));
    }
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
