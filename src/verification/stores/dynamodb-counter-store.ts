import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import type { CounterStore, CountOnce } from './counter-store';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbCounterStoreOptions = StateTableOptions;

/** Each round is at most two conditional writes; contention on an expired key settles within a few rounds. */
const MAX_ROUNDS = 5;

/**
 * Counters as atomic `ADD`s, each with the token it counts appended to the item's `tokens` (a list,
 * in the order counted). A write whose answer was lost is sent again by the client, and an `ADD`
 * sent twice counts twice: so the `ADD` is conditional on its token not being in `tokens`, and a
 * write that meets its own token returns the count it got the first time (its place in the list)
 * without adding. Tokens are kept for the first `upTo` counts only; past them the `ADD` goes
 * without one (CountOnce).
 *
 * DynamoDB removes expired items only eventually, so an item past its `expires_at` must count as
 * fresh: the `ADD` is conditional on the item being live, and when it is not, a conditional
 * PutItem starts the counter again at one (with its token, so a resent Put also counts once).
 * Racing writers on an expired item agree: one Put wins, the others see a live item again and
 * `ADD` to it.
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly table: StateTable;

  constructor(options: DynamoDbCounterStoreOptions) {
    this.table = new StateTable(options);
  }

  async increment(key: string, ttlSeconds: number, once: CountOnce): Promise<number> {
    const token = { S: once.token };
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const nowSeconds = this.table.nowSeconds();
      const now = { N: String(nowSeconds) };
      const expiresAt = { N: String(nowSeconds + Math.ceil(ttlSeconds)) };
      const added = await this.add(key, {
        // The TTL is set on creation only: a fixed window must not slide with each hit.
        update: 'SET expires_at = if_not_exists(expires_at, :exp), tokens = list_append(if_not_exists(tokens, :none), :counted) ADD #count :one',
        condition: '(attribute_not_exists(pk) OR expires_at > :now) AND NOT contains(tokens, :token) AND (attribute_not_exists(#count) OR #count < :upTo)',
        values: { ':exp': expiresAt, ':now': now, ':token': token, ':counted': { L: [token] }, ':none': { L: [] }, ':upTo': { N: String(once.upTo) } },
      });
      if ('count' in added) return added.count;
      // DynamoDB returns the item it met; an emulator that does not gets one strongly consistent read.
      const met = added.met ?? (await this.table.get(key));
      if (met && Number(met.expires_at?.N ?? 0) > nowSeconds) {
        // Counted already: this is the same write again, after an answer that was lost.
        const counted = (met.tokens?.L ?? []).findIndex((value) => value.S === once.token);
        if (counted >= 0) return counted + 1;
        if (Number(met.count?.N ?? 0) >= once.upTo) {
          // Past `upTo`: a plain ADD to the live item.
          const past = await this.add(key, { update: 'ADD #count :one', condition: 'expires_at > :now', values: { ':now': now } });
          if ('count' in past) return past.count;
        }
        // Otherwise it changed between the write and the look (it expired, or was restarted): again.
        continue;
      }
      // The item is gone, or exists but has expired: start it again, unless another writer already did.
      const restarted = await this.table.ifMet(
        this.table.put({
          Item: { ...this.table.key(key), count: { N: '1' }, tokens: { L: [token] }, expires_at: expiresAt },
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      );
      if (restarted) return 1;
    }
    throw new Error(`could not increment counter ${key}: the item kept changing under contention`);
  }

  /** One conditional `ADD` of one to the counter: its new count, or the item a refused condition met (when DynamoDB says it). */
  private async add(key: string, expression: { update: string; condition: string; values: Record<string, AttributeValue> }): Promise<{ count: number } | { met: Item | undefined }> {
    try {
      const { Attributes } = await this.table.update({
        Key: this.table.key(key),
        UpdateExpression: expression.update,
        ConditionExpression: expression.condition,
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':one': { N: '1' }, ...expression.values },
        ReturnValues: 'UPDATED_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { count: Number(Attributes?.count?.N) };
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      return { met: itemMetBy(error) };
    }
  }
}
