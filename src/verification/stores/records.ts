/**
 * Small JSON records with a lifetime, in the state table next to claims and counters: what the
 * agent surface remembers between functions — the task working in a thread (so a Stop finds
 * it), a Stop that came first, what a user is looking at, and feedback on answers
 * (docs/architecture.md §2.6). One item per key; a write replaces the item, so a retried write
 * is the same write.
 */
export type RecordValue = Record<string, unknown>;

export interface Records {
  get<T extends RecordValue>(key: string): Promise<T | undefined>;
  /** Stores `value` under `key` for `ttlSeconds`, replacing what was there. */
  put(key: string, value: RecordValue, ttlSeconds: number): Promise<void>;
  /**
   * Replaces the record only while `field` still holds `expected` (absent = the record is absent
   * or lacks it); false when another writer got there first. The field is `request_id` (the one
   * the DynamoDB records can compare).
   */
  putIf(key: string, value: RecordValue, ttlSeconds: number, when: { field: string; expected: string | undefined }): Promise<boolean>;
}

/** Records whose every entry can be listed: the local stack's, for `zone feedback`. */
export interface ListableRecords extends Records {
  list<T extends RecordValue>(prefix: string): Promise<Array<{ key: string; value: T }>>;
}
