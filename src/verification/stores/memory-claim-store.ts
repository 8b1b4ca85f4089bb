import { systemClock, type Clock } from '../../clock';
import type { AcquireOptions, ClaimState, ClaimStore } from './claim-store';

export type MemoryClaimStoreOptions = { clock?: Clock };

/** Expired claims are swept after this many writes, so a long local run does not grow without bound. */
const SWEEP_EVERY = 1_000;

type Item = { state: 'pending' | 'done'; owner?: string; leaseUntil?: number; expiresAt: number; value?: string };

/**
 * Claims in memory for local runs and tests. Times are kept in whole epoch seconds, exactly as the
 * DynamoDB store keeps them, so both answer the same for the same clock.
 */
export class MemoryClaimStore implements ClaimStore {
  private readonly items = new Map<string, Item>();
  private readonly clock: Clock;
  private writes = 0;

  constructor(options: MemoryClaimStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async acquire(key: string, options: AcquireOptions): Promise<ClaimState> {
    const now = this.nowSeconds();
    const item = this.live(key, now);
    if (item?.state === 'done') return { status: 'done', ...(item.value !== undefined ? { value: item.value } : {}) };
    if (item && item.owner !== options.token && item.leaseUntil! > now) return { status: 'busy', leaseEndsAt: item.leaseUntil! * 1000 };
    const leaseUntil = now + Math.ceil(options.leaseSeconds);
    const value = item?.value ?? options.value;
    const expiresAt = Math.max(leaseUntil, now + Math.ceil(options.ttlSeconds));
    this.set(key, { state: 'pending', owner: options.token, leaseUntil, expiresAt, ...(value !== undefined ? { value } : {}) }, now);
    return { status: 'claimed', token: options.token, takenOver: item?.owner !== undefined && item.owner !== options.token, ...(value !== undefined ? { value } : {}) };
  }

  async complete(key: string, token: string, options: { ttlSeconds: number; value?: string }): Promise<boolean> {
    const now = this.nowSeconds();
    const item = this.live(key, now);
    if (!item || item.owner !== token) return false;
    const value = options.value ?? item.value;
    this.set(key, { state: 'done', owner: token, expiresAt: now + Math.ceil(options.ttlSeconds), ...(value !== undefined ? { value } : {}) }, now);
    return true;
  }

  async release(key: string, token: string): Promise<void> {
    const item = this.items.get(key);
    // Freed, not deleted: the value (an event's request id) stays for the next attempt.
    if (item?.state === 'pending' && item.owner === token) this.items.set(key, { ...item, owner: undefined, leaseUntil: 0 });
  }

  async mark(key: string, ttlSeconds: number): Promise<boolean> {
    const now = this.nowSeconds();
    if (this.live(key, now)) return false;
    this.set(key, { state: 'done', expiresAt: now + Math.ceil(ttlSeconds) }, now);
    return true;
  }

  get size(): number {
    return this.items.size;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  private live(key: string, now: number): Item | undefined {
    const item = this.items.get(key);
    return item && item.expiresAt > now ? item : undefined;
  }

  private set(key: string, item: Item, now: number): void {
    this.items.set(key, item);
    if ((this.writes += 1) % SWEEP_EVERY === 0) for (const [k, it] of this.items) if (it.expiresAt <= now) this.items.delete(k);
  }
}
