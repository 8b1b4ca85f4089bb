/**
 * Claims guard work that must happen once: a Slack event turned into a task, a reply chunk posted.
 * DynamoDB conditional writes when deployed; memory locally (docs/architecture.md §6).
 *
 * A claim has a lifecycle. `acquire` makes it `pending`: owned by the caller's token, with a lease.
 * The owner then does the work and calls `complete` (the claim is `done`, kept for a TTL, with an
 * optional value such as the posted message's `ts`) or `release` (the work did not happen; the
 * claim is gone). A pending claim whose owner died is taken over once its lease runs out, so a
 * dead Lambda never swallows the work it claimed; a live one tells other callers to come back.
 *
 * Calls are idempotent for the same token: a write that was applied but whose response was lost
 * (and that the client retried) finds the caller's own claim and counts as claimed.
 */
export type ClaimState =
  /** The caller owns a pending claim: do the work, then `complete` or `release`. */
  | { status: 'claimed'; token: string; value?: string; takenOver: boolean }
  /** Another owner holds a pending claim whose lease is still running. */
  | { status: 'busy'; leaseEndsAt: number }
  /** The work is done; `value` is what its owner stored. */
  | { status: 'done'; value?: string };

export type AcquireOptions = {
  /** The caller's own token: a fresh random id per attempt (a redelivery is a new attempt). */
  token: string;
  /** How long the owner may take before others may take the claim over. */
  leaseSeconds: number;
  /** How long a pending claim (and its value) is remembered, at least the lease. */
  ttlSeconds: number;
  /**
   * Stored with the first claim and kept by every takeover until the claim expires (e.g. the
   * request id chosen for an event, so a takeover re-sends the same task, not a second one).
   */
  value?: string;
};

export interface ClaimStore {
  acquire(key: string, options: AcquireOptions): Promise<ClaimState>;
  /** Marks the caller's claim done for `ttlSeconds`. False if the claim is no longer the caller's (its lease ran out and another took it over). */
  complete(key: string, token: string, options: { ttlSeconds: number; value?: string }): Promise<boolean>;
  /**
   * Frees the caller's pending claim so the next attempt can take it at once, keeping its value
   * (the work may have happened after all: a send whose answer was lost). No-op if it is not the caller's.
   */
  release(key: string, token: string): Promise<void>;
  /**
   * A once-only marker (one refusal notice per window): true if this call set it. Nothing to
   * complete: the marker is done at once.
   */
  mark(key: string, ttlSeconds: number): Promise<boolean>;
}
