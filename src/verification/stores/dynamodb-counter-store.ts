import { isConditionCheckFailure } from '../../aws/dynamodb';
import type { CounterStore } from './counter-store';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbCounterStoreOptions = StateTableOptions;

/** Each round is two conditional writes; contention on an expired key settles within a few rounds. */
const MAX_ROUNDS = 5;

/**
 * Counters as atomic `ADD`s. DynamoDB removes expired items only eventually, so an item past its
 * `expires_at` must count as fresh: the `ADD` is conditional on the item being live, and when
 * it is not, a conditional PutItem starts the counter again at one. Racing writers on an expired
 * item agree: one Put wins, the others see a live item again and `ADD` to it.
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly table: StateTable;

  constructor(options: DynamoDbCounterStoreOptions) {
    this.table = new StateTable(options);
  }

  async increment(key: string, ttlSeconds: number): Promise<number> {
    const item = this.table.key(key);
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const nowSeconds = this.table.nowSeconds();
      const now = { N: String(nowSeconds) };
      const expiresAt = { N: String(nowSeconds + Math.ceil(ttlSeconds)) };
      try {
        const { Attributes } = await this.table.update({
          Key: item,
          // The TTL is set on creation only: a fixed window must not slide with each hit.
          UpdateExpression: 'ADD #count :one SET expires_at = if_not_exists(expires_at, :exp)',
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at > :now',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':exp': expiresAt, ':now': now },
          ReturnValues: 'UPDATED_NEW',
        });
        return Number(Attributes?.count?.N);
      } catch (error) {
        if (!isConditionCheckFailure(error)) throw error;
      }
      // The item exists but has expired: replace it, unless another writer already did.
      const restarted = await this.table.ifMet(
        this.table.put({ Item: { ...item, count: { N: '1' }, expires_at: expiresAt }, ConditionExpression: 'expires_at <= :now', ExpressionAttributeValues: { ':now': now } }),
      );
      if (restarted) return 1;
    }
    throw new Error(`could not increment counter ${key}: the item kept changing under contention`);
  }
}
