import type { ClaimStore } from './claim-store';

export type MemoryClaimStoreOptions = { now?: () => number };

/** Expired claims are swept after this many writes, so a long local run does not grow without bound. */
const SWEEP_EVERY = 1_000;

/**
 * Claims in memory for local runs and tests. Expiry is kept in whole epoch seconds, exactly as the
 * DynamoDB store keeps it, so both answer the same for the same clock.
 */
export class MemoryClaimStore implements ClaimStore {
  private readonly claims = new Map<string, number>();
  private readonly now: () => number;
  private writes = 0;

  constructor(options: MemoryClaimStoreOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const expiresAt = this.claims.get(key);
    if (expiresAt !== undefined && expiresAt > nowSeconds) return false;
    this.claims.set(key, nowSeconds + Math.ceil(ttlSeconds));
    if ((this.writes += 1) % SWEEP_EVERY === 0) this.sweep(nowSeconds);
    return true;
  }

  async release(key: string): Promise<void> {
    this.claims.delete(key);
  }

  get size(): number {
    return this.claims.size;
  }

  private sweep(nowSeconds: number): void {
    for (const [key, expiresAt] of this.claims) if (expiresAt <= nowSeconds) this.claims.delete(key);
  }
}
