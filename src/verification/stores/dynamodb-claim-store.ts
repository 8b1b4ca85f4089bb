import { randomUUID } from 'node:crypto';
import { isConditionCheckFailure, itemMetBy, type Item } from '../../aws/dynamodb';
import type { AcquireOptions, ClaimState, ClaimStore } from './claim-store';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbClaimStoreOptions = StateTableOptions;

const STATE_AND_OWNER = { '#state': 'claim_state', '#owner': 'owner' };
const WITH_VALUE = { ...STATE_AND_OWNER, '#value': 'claim_value' };
/** DynamoDB refuses names an expression does not use. */
const namesFor = (usesValue: boolean) => (usesValue ? WITH_VALUE : STATE_AND_OWNER);

/**
 * Claims as conditional writes on one item per key: `claim_state` (pending | done), `owner` (the
 * token of the attempt that holds it), `lease_until`, `expires_at` (TTL) and `claim_value`.
 * DynamoDB deletes expired items only eventually (often hours later), so every condition treats an
 * item past its `expires_at` as absent.
 *
 * `acquire` succeeds for its own token too, so a retry re-sending a write whose response was lost
 * finds its own claim and counts it as claimed; a refused write returns the item it met
 * (ReturnValuesOnConditionCheckFailure), which tells "done" from "busy" without a second read.
 */
export class DynamoDbClaimStore implements ClaimStore {
  private readonly table: StateTable;

  constructor(options: DynamoDbClaimStoreOptions) {
    this.table = new StateTable(options);
  }

  async acquire(key: string, options: AcquireOptions): Promise<ClaimState> {
    const now = this.table.nowSeconds();
    const leaseUntil = now + Math.ceil(options.leaseSeconds);
    const expiresAt = Math.max(leaseUntil, now + Math.ceil(options.ttlSeconds));
    // The value of an earlier claim survives a takeover (if_not_exists): the work it guards keeps
    // its identity (an event keeps its request id). Only until the item is deleted by TTL.
    const setValue = options.value !== undefined ? ', #value = if_not_exists(#value, :value)' : '';
    try {
      const output = await this.table.update({
        Key: this.table.key(key),
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR (#state = :pending AND (lease_until <= :now OR #owner = :token))',
        UpdateExpression: `SET #state = :pending, #owner = :token, lease_until = :lease, expires_at = :expires${setValue}`,
        ExpressionAttributeNames: namesFor(options.value !== undefined),
        ExpressionAttributeValues: {
          ':now': { N: String(now) },
          ':pending': { S: 'pending' },
          ':token': { S: options.token },
          ':lease': { N: String(leaseUntil) },
          ':expires': { N: String(expiresAt) },
          ...(options.value !== undefined ? { ':value': { S: options.value } } : {}),
        },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      const old = output.Attributes;
      const value = old?.claim_value?.S ?? options.value;
      const takenOver = old?.owner?.S !== undefined && old.owner.S !== options.token && Number(old.expires_at?.N ?? 0) > now;
      return { status: 'claimed', token: options.token, takenOver, ...(value !== undefined ? { value } : {}) };
    } catch (error) {
      if (!isConditionCheckFailure(error)) throw error;
      // DynamoDB returns the item it met; an emulator that does not gets one strongly consistent read.
      const item = itemMetBy(error) ?? (await this.table.get(key)) ?? {};
      if (item.claim_state?.S === 'done') return { status: 'done', ...valueOf(item) };
      return { status: 'busy', leaseEndsAt: Number(item.lease_until?.N ?? now) * 1000 };
    }
  }

  async complete(key: string, token: string, options: { ttlSeconds: number; value?: string }): Promise<boolean> {
    const now = this.table.nowSeconds();
    return this.table.ifMet(
      this.table.update({
        Key: this.table.key(key),
        ConditionExpression: '#owner = :token',
        UpdateExpression: `SET #state = :done, expires_at = :expires${options.value !== undefined ? ', #value = :value' : ''} REMOVE lease_until`,
        ExpressionAttributeNames: namesFor(options.value !== undefined),
        ExpressionAttributeValues: {
          ':token': { S: token },
          ':done': { S: 'done' },
          ':expires': { N: String(now + Math.ceil(options.ttlSeconds)) },
          ...(options.value !== undefined ? { ':value': { S: options.value } } : {}),
        },
      }),
    );
  }

  async release(key: string, token: string): Promise<void> {
    // Freed, not deleted: the next attempt may take it at once, and keeps its value (an event's
    // request id), in case the work did happen after all — a send whose answer was lost. A claim
    // that is not ours any more (taken over, or already gone) has nothing to give back.
    await this.table.ifMet(
      this.table.update({
        Key: this.table.key(key),
        ConditionExpression: '#owner = :token AND #state = :pending',
        UpdateExpression: 'SET lease_until = :zero REMOVE #owner',
        ExpressionAttributeNames: STATE_AND_OWNER,
        ExpressionAttributeValues: { ':token': { S: token }, ':pending': { S: 'pending' }, ':zero': { N: '0' } },
      }),
    );
  }

  async mark(key: string, ttlSeconds: number): Promise<boolean> {
    const now = this.table.nowSeconds();
    // Its own token, so a retry re-sending a write whose answer was lost still counts as set.
    const token = randomUUID();
    return this.table.ifMet(
      this.table.put({
        Item: { ...this.table.key(key), claim_state: { S: 'done' }, owner: { S: token }, expires_at: { N: String(now + Math.ceil(ttlSeconds)) } },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR #owner = :token',
        ExpressionAttributeNames: { '#owner': STATE_AND_OWNER['#owner'] },
        ExpressionAttributeValues: { ':now': { N: String(now) }, ':token': { S: token } },
      }),
    );
  }
}

function valueOf(item: Item): { value?: string } {
  return item.claim_value?.S !== undefined ? { value: item.claim_value.S } : {};
}
