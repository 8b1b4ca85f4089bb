/**
 * Once-only markers with a TTL: Slack event ids (dedupe), posted reply chunks (no double post),
 * refusal notices (one per window). DynamoDB conditional writes when deployed; memory locally.
 */
export interface ClaimStore {
  /** True if this call made the claim; false if a live claim with this key already exists. */
  claim(key: string, ttlSeconds: number): Promise<boolean>;
  /** Drops a claim so a later attempt can make it again (e.g. after a failed enqueue). */
  release(key: string): Promise<void>;
}
