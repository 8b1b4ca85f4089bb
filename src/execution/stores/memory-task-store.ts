import { systemClock, type Clock } from '../../clock';
import { PENDING_STATUSES, type TaskStatus } from '../../contract';
import { TaskStoreFullError, type CreateOutcome, type TaskRecord, type TaskStore, type TaskUpdate } from './task-store';

export type MemoryTaskStoreOptions = {
  /**
   * At most this many records are kept. To make room the oldest expired or finished record is
   * dropped; a pending task never is, so a store full of pending tasks refuses new ones.
   */
  maxRecords?: number;
  clock?: Clock;
};

/**
 * A record, the request key it was created with, and its place in creation order (a list, so the
 * oldest are found without walking past dropped ones).
 */
type Entry = { record: TaskRecord; requestKey?: string; older?: Entry; newer?: Entry };

/**
 * A bounded in-memory task store for local runs, tests and single-session AgentCore hosts. A
 * streaming task's partial text is kept in its record, whole, updated with every piece.
 */
export class MemoryTaskStore implements TaskStore {
  /** By task id. */
  private readonly entries = new Map<string, Entry>();
  /**
   * The same entries oldest first, linked. Not the Map's own order: a Map walked from its start
   * steps over every entry deleted since it last rehashed, thousands once a full store drops its
   * oldest record on every create.
   */
  private oldest: Entry | undefined;
  private newest: Entry | undefined;
  /** Request key → the entry created with it (the entry itself: one lookup, not two). */
  private readonly requests = new Map<string, Entry>();
  /** Params kept for a handoff, by task id; dropped with their task, at expiry, or by deleteParams. */
  private readonly params = new Map<string, { json: string; expiresAt: number }>();
  private readonly maxRecords: number;
  private readonly clock: Clock;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.clock = options.clock ?? systemClock;
  }

  /** The id itself, typed: nothing leaves the process, so there is nothing to hash it for. */
  requestKeyOf(requestId: string | number): string {
    return `${typeof requestId}:${requestId}`;
  }

  async create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome> {
    const existing = (requestKey === undefined ? undefined : this.liveByRequest(requestKey)) ?? this.live(record.task_id);
    if (existing) return { created: false, record: { ...existing.record } };
    this.makeRoom();
    // The store keeps a copy; the caller gets its own record back (nothing the store holds). The
    // copy is made by assignment, not by a spread: V8 adds a property (the result, later) to a
    // spread copy ~30× slower than to an object built up key by key.
    const entry: Entry = { record: Object.assign({}, record), requestKey, older: this.newest, newer: undefined };
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    this.entries.set(record.task_id, entry);
    if (requestKey !== undefined) this.requests.set(requestKey, entry);
    return { created: true, record };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const entry = this.live(taskId);
    return entry && { ...entry.record };
  }

  async getByRequest(requestKey: string): Promise<TaskRecord | undefined> {
    const entry = this.liveByRequest(requestKey);
    return entry && { ...entry.record };
  }

  async transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined> {
    const now = this.clock.now();
    const entry = this.live(taskId, now);
    if (!entry || !from.includes(entry.record.status)) return undefined;
    // A task's place in the creation order is its entry's: replacing the record keeps it.
    if (!('partial' in update)) {
      // The store's own copy (create copied it; readers get copies): changed where it is, field by field.
      const record = entry.record;
      record.status = update.status;
      if ('result' in update) record.result = update.result;
      if ('error' in update) record.error = update.error;
      record.updated_at = now;
      return { ...record };
    }
    const { partial, ...rest } = update;
    const record: TaskRecord = Object.assign({}, entry.record, rest, { updated_at: now });
    if (partial === null) delete record.partial;
    else if (partial !== undefined) record.partial = { text: partial.text ?? entry.record.partial?.text ?? '', length: partial.length };
    entry.record = record;
    return { ...entry.record };
  }

  async putParams(taskId: string, json: string, expiresAt: number): Promise<void> {
    for (const [id, kept] of this.params) if (kept.expiresAt * 1000 <= this.clock.now()) this.params.delete(id);
    this.params.set(taskId, { json, expiresAt });
  }

  async getParams(taskId: string): Promise<string | undefined> {
    const kept = this.params.get(taskId);
    if (!kept) return undefined;
    if (kept.expiresAt * 1000 <= this.clock.now()) {
      this.params.delete(taskId);
      return undefined;
    }
    return kept.json;
  }

  async deleteParams(taskId: string): Promise<void> {
    this.params.delete(taskId);
  }

  get size(): number {
    return this.entries.size;
  }

  private live(taskId: string, now = this.clock.now()): Entry | undefined {
    const entry = this.entries.get(taskId);
    if (!entry) return undefined;
    if (this.expired(entry, now)) {
      this.drop(taskId, entry);
      return undefined;
    }
    return entry;
  }

  /** The entry a request key was created with, while it lives (a dropped entry leaves `requests` with it). */
  private liveByRequest(requestKey: string): Entry | undefined {
    const entry = this.requests.get(requestKey);
    if (!entry) return undefined;
    if (this.expired(entry)) {
      this.drop(entry.record.task_id, entry);
      return undefined;
    }
    return entry;
  }

  /**
   * Frees one slot when the store is full: the oldest record that is expired or finished. Pending
   * tasks are skipped; they are few (bounded by the tasks running at once), so the scan is short.
   */
  private makeRoom(): void {
    if (this.entries.size < this.maxRecords) return;
    for (let entry = this.oldest; entry; ) {
      const newer = entry.newer;
      if (!PENDING_STATUSES.includes(entry.record.status) || this.expired(entry)) {
        this.drop(entry.record.task_id, entry);
        if (this.entries.size < this.maxRecords) return;
      }
      entry = newer;
    }
    throw new TaskStoreFullError(this.maxRecords);
  }

  private expired(entry: Entry, now = this.clock.now()): boolean {
    return entry.record.expires_at * 1000 <= now;
  }

  private drop(taskId: string, entry: Entry): void {
    this.entries.delete(taskId);
    if (this.params.size > 0) this.params.delete(taskId);
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
    if (entry.requestKey !== undefined && this.requests.get(entry.requestKey) === entry) this.requests.delete(entry.requestKey);
  }
}
