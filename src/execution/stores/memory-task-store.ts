import { systemClock, type Clock } from '../../clock';
import { UNFINISHED_STATUSES, type TaskStatus } from '../../contract';
import { JSON_FIELDS, TaskStoreFullError, takeable, type CreateOutcome, type TaskLease, type TaskRecord, type TaskStore, type TaskUpdate } from './task-store';

/** The default byte bound (TASK_STORE_MAX_BYTES): 64 MiB, an eighth of the function URL's 512 MB Lambda. */
export const MEMORY_TASK_STORE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What one record costs besides its texts, as the store counts it: the record and its entry, the
 * task id, params hash and request key, a lease, and their places in two Maps (Node 20 measures
 * ~750 bytes for a short echo task kept with its request id, answer included).
 */
export const RECORD_BYTES = 768;
/** What kept params cost besides their JSON. */
const PARAMS_BYTES = 128;

export type MemoryTaskStoreOptions = {
  /**
   * At most this many records are kept. To make room the oldest expired or finished record is
   * dropped; a pending task never is, so a store full of pending tasks refuses new ones.
   */
  maxRecords?: number;
  /**
   * At most this many bytes are kept, as the store counts them (`bytes`): RECORD_BYTES a record,
   * plus 2 bytes a character (a UTF-16 code unit, the most V8 holds) of its partial text, of its
   * result's or error's strings (and 8 bytes a member), and of params kept for a handoff. Past
   * it the oldest expired or finished records are dropped first, never a pending one; when the
   * pending tasks alone hold it, a new task is refused (TaskStoreFullError `bytes`). A pending
   * task's writes (its streamed text) are never refused, and the record a write just finished
   * stays even if it alone is over the bound, until the next write makes room.
   * @default MEMORY_TASK_STORE_MAX_BYTES
   */
  maxBytes?: number;
  clock?: Clock;
};

/**
 * A record, the request key it was created with, the bytes it is counted for, and its place in
 * creation order (a list, so the oldest are found without walking past dropped ones).
 */
type Entry = { record: TaskRecord; requestKey?: string; bytes: number; older?: Entry; newer?: Entry };

/**
 * A bounded in-memory task store for local runs, tests and single-session AgentCore hosts:
 * bounded in records (`maxRecords`) and in bytes (`maxBytes`). A streaming task's partial text
 * is kept in its record, whole, updated with every piece.
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
  readonly maxBytes: number;
  /** What the records and kept params are counted for (see `maxBytes`). */
  private accounted = 0;
  private readonly clock: Clock;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.maxBytes = options.maxBytes ?? MEMORY_TASK_STORE_MAX_BYTES;
    this.clock = options.clock ?? systemClock;
  }

  /** The id itself, typed: nothing leaves the process, so there is nothing to hash it for. */
  requestKeyOf(requestId: string | number): string {
    return `${typeof requestId}:${requestId}`;
  }

  async create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome> {
    const existing = (requestKey === undefined ? undefined : this.liveByRequest(requestKey)) ?? this.live(record.task_id);
    if (existing) return { created: false, record: { ...existing.record } };
    const bytes = recordBytes(record);
    this.makeRoom(bytes);
    // The store keeps a copy; the caller gets its own record back (nothing the store holds). The
    // copy is made by assignment, not by a spread: V8 adds a property (the result, later) to a
    // spread copy ~30× slower than to an object built up key by key.
    const entry: Entry = { record: Object.assign({}, record), requestKey, bytes, older: this.newest, newer: undefined };
    this.accounted += bytes;
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
    if (update.owner !== undefined && entry.record.lease?.owner !== update.owner) return undefined;
    // A task's place in the creation order is its entry's: replacing the record keeps it.
    if (!('partial' in update)) {
      // The store's own copy (create copied it; readers get copies): changed where it is, field by field.
      const record = entry.record;
      record.status = update.status;
      if ('result' in update) record.result = update.result;
      if ('error' in update) record.error = update.error;
      const fields = writeJsonFields(record, update);
      record.updated_at = now;
      if ('result' in update || 'error' in update || fields) this.recount(entry);
      return { ...record };
    }
    const { partial, owner: _owner, steps: _steps, plan_title: _planTitle, question: _question, answers: _answers, ...rest } = update;
    const record: TaskRecord = Object.assign({}, entry.record, rest, { updated_at: now });
    writeJsonFields(record, update);
    if (partial === null) delete record.partial;
    else if (partial !== undefined) record.partial = { text: partial.text ?? entry.record.partial?.text ?? '', length: partial.length };
    entry.record = record;
    this.recount(entry);
    return { ...entry.record };
  }

  async take(taskId: string, lease: TaskLease, startPartial = false): Promise<TaskRecord | undefined> {
    const now = this.clock.now();
    const entry = this.live(taskId, now);
    if (!entry || !takeable(entry.record, now)) return undefined;
    const record = entry.record;
    record.status = 'working';
    record.lease = { owner: lease.owner, until: lease.until };
    record.updated_at = now;
    if (startPartial && !record.partial) record.partial = { text: '', length: 0 };
    return { ...record };
  }

  async putParams(taskId: string, json: string, expiresAt: number): Promise<void> {
    for (const [id, kept] of this.params) if (kept.expiresAt * 1000 <= this.clock.now()) this.forgetParams(id);
    this.forgetParams(taskId);
    this.params.set(taskId, { json, expiresAt });
    this.accounted += paramsBytes(json);
    this.trim(undefined);
  }

  async getParams(taskId: string): Promise<string | undefined> {
    const kept = this.params.get(taskId);
    if (!kept) return undefined;
    if (kept.expiresAt * 1000 <= this.clock.now()) {
      this.forgetParams(taskId);
      return undefined;
    }
    return kept.json;
  }

  async deleteParams(taskId: string): Promise<void> {
    this.forgetParams(taskId);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The bytes the store counts for what it keeps now (see `maxBytes`). */
  get bytes(): number {
    return this.accounted;
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
   * Frees a slot and `bytes` for a new record when the store is full (in records or in bytes),
   * or throws TaskStoreFullError when only pending tasks could make room.
   */
  private makeRoom(bytes: number): void {
    const roomy = () => this.entries.size < this.maxRecords && this.accounted + bytes <= this.maxBytes;
    if (roomy()) return;
    this.evict(undefined, roomy);
    if (this.entries.size >= this.maxRecords) throw new TaskStoreFullError('records', this.maxRecords);
    if (!roomy()) throw new TaskStoreFullError('bytes', this.maxBytes);
  }

  /** Counts an entry's record afresh after a write, and makes room if it grew the store past its bound. */
  private recount(entry: Entry): void {
    const bytes = recordBytes(entry.record);
    this.accounted += bytes - entry.bytes;
    entry.bytes = bytes;
    this.trim(entry);
  }

  /** Back under `maxBytes` if it can be, without dropping `keep` (the record just written). */
  private trim(keep: Entry | undefined): void {
    if (this.accounted > this.maxBytes) this.evict(keep, () => this.accounted <= this.maxBytes);
  }

  /**
   * Drops the oldest records that are expired or finished, never `keep`, until `enough`. Pending
   * tasks are skipped; they are few (bounded by the tasks running at once), so the scan is short.
   */
  private evict(keep: Entry | undefined, enough: () => boolean): void {
    for (let entry = this.oldest; entry && !enough(); ) {
      const newer = entry.newer;
      if (entry !== keep && (!UNFINISHED_STATUSES.includes(entry.record.status) || this.expired(entry))) this.drop(entry.record.task_id, entry);
      entry = newer;
    }
  }

  private expired(entry: Entry, now = this.clock.now()): boolean {
    return entry.record.expires_at * 1000 <= now;
  }

  private forgetParams(taskId: string): void {
    const kept = this.params.get(taskId);
    if (!kept) return;
    this.params.delete(taskId);
    this.accounted -= paramsBytes(kept.json);
  }

  private drop(taskId: string, entry: Entry): void {
    this.entries.delete(taskId);
    this.accounted -= entry.bytes;
    if (this.params.size > 0) this.forgetParams(taskId);
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
    if (entry.requestKey !== undefined && this.requests.get(entry.requestKey) === entry) this.requests.delete(entry.requestKey);
  }
}

/** Bytes of a string as the store counts them: 2 a character (UTF-16 code unit), the most V8 holds. */
function textBytes(text: string): number {
  return 2 * text.length;
}

/** Bytes of a JSON value (a result, an error): its strings, and 8 bytes a member or number. */
function valueBytes(value: unknown): number {
  if (typeof value === 'string') return textBytes(value);
  if (typeof value !== 'object' || value === null) return 8;
  let bytes = 16;
  if (Array.isArray(value)) {
    for (const item of value) bytes += 8 + valueBytes(item);
    return bytes;
  }
  for (const key of Object.keys(value)) bytes += 8 + textBytes(key) + valueBytes((value as Record<string, unknown>)[key]);
  return bytes;
}

/** What the store counts a record for: RECORD_BYTES, its partial text, its result, its error. */
function recordBytes(record: TaskRecord): number {
  let bytes = RECORD_BYTES;
  if (record.partial) bytes += textBytes(record.partial.text);
  if (record.result) bytes += valueBytes(record.result);
  if (record.error) bytes += valueBytes(record.error);
  return bytes;
}

function paramsBytes(json: string): number {
  return PARAMS_BYTES + textBytes(json);
}

/** Writes (or, given null, drops) the update's JSON fields on the record; true when it had any. */
function writeJsonFields(record: TaskRecord, update: TaskUpdate): boolean {
  let any = false;
  for (const field of JSON_FIELDS) {
    if (!(field in update) || update[field] === undefined) continue;
    any = true;
    const value = update[field];
    if (value === null) delete record[field];
    else (record as Record<string, unknown>)[field] = value;
  }
  return any;
}
