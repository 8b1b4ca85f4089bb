import { randomUUID } from 'node:crypto';
import type { ClaimStore } from './claim-store';

/**
 * The verification zone's one exactly-once step (docs/architecture.md §6), in the spirit of
 * Powertools' `makeIdempotent`: `once(claims, key, lease, work)` claims `key`, runs `work` while it
 * holds the claim, and marks the claim done with what the work returns — or gives it back when the
 * work failed in a way that did not happen (so the next attempt may run it at once). Its answer:
 * - `done`: this call ran the work; `kept` is false when the claim could not be marked done (its
 *   lease ran out and another took it over, or the store did not answer): the caller says what that risks;
 * - `duplicate`: an earlier attempt did it; `value` is what that attempt stored;
 * - `busy`: another attempt holds the claim until `leaseEndsAt` — come back later.
 * Nothing outside src/verification/stores calls the claim store's acquire/complete/release.
 */
export type OnceResult<Result> =
  | { status: 'done'; result: Result; kept: boolean; keepError?: unknown }
  | { status: 'duplicate'; value?: string }
  | { status: 'busy'; leaseEndsAt: number };

export type OnceLease = {
  /** How long the work may take before another attempt may take the claim over. */
  leaseSeconds: number;
  /** How long the claim — pending or done — is remembered. */
  ttlSeconds: number;
  /** Stored with the first claim and kept by every takeover (the request id chosen for an event). */
  value?: string;
  /**
   * The work threw: true when what it did may have happened all the same (a Slack call with no
   * answer), so the claim keeps its lease instead of being given back. By default it is given back.
   */
  mayHaveHappened?: (error: unknown) => boolean;
};

/** What the work is told of its claim: the value stored with it, and whether an attempt before it died holding it. */
export type OnceClaim = { value?: string; takenOver: boolean };

/** What the work hands back: its result, and the value to keep with the done claim. */
export type OnceWork<Result> = (claim: OnceClaim) => Promise<{ result: Result; value?: string }>;

export async function once<Result>(claims: ClaimStore, key: string, lease: OnceLease, work: OnceWork<Result>): Promise<OnceResult<Result>> {
  const token = randomUUID();
  const claim = await claims.acquire(key, { token, leaseSeconds: lease.leaseSeconds, ttlSeconds: lease.ttlSeconds, ...(lease.value !== undefined ? { value: lease.value } : {}) });
  if (claim.status === 'done') return { status: 'duplicate', ...(claim.value !== undefined ? { value: claim.value } : {}) };
  if (claim.status === 'busy') return { status: 'busy', leaseEndsAt: claim.leaseEndsAt };
  let done: { result: Result; value?: string };
  try {
    done = await work({ ...(claim.value !== undefined ? { value: claim.value } : {}), takenOver: claim.takenOver });
  } catch (error) {
    // If even the release fails, the lease runs out and the next attempt takes the claim over.
    if (!lease.mayHaveHappened?.(error)) await claims.release(key, token).catch(() => undefined);
    throw error;
  }
  try {
    const kept = await claims.complete(key, token, { ttlSeconds: lease.ttlSeconds, ...(done.value !== undefined ? { value: done.value } : {}) });
    return { status: 'done', result: done.result, kept };
  } catch (keepError) {
    return { status: 'done', result: done.result, kept: false, keepError };
  }
}
