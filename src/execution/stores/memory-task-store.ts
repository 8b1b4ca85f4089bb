import { PENDING_STATUSES, type TaskStatus } from '../../contract';
import { TaskStoreFullError, type CreateOutcome, type TaskRecord, type TaskStore, type TaskUpdate } from './task-store';

export type MemoryTaskStoreOptions = {
  /**
   * At most this many records are kept. To make room the oldest expired or finished record is
   * dropped; a pending task never is, so a store full of pending tasks refuses new ones.
   */
  maxRecords?: number;
  now?: () => number;
};

type Entry = { record: TaskRecord; requestKey?: string };

/**
 * A bounded in-memory task store for local runs, tests and single-session AgentCore hosts. A
 * streaming task's partial text is kept in its record, whole, updated with every piece.
 */
export class MemoryTaskStore implements TaskStore {
  /** By task id, in insertion order: the first entries are the oldest tasks. */
  private readonly entries = new Map<string, Entry>();
  /** Request key → task id, for the entries created with one. */
  private readonly requests = new Map<string, string>();
  /** Params kept for a handoff, by task id; dropped with their task, at expiry, or by deleteParams. */
  private readonly params = new Map<string, { json: string; expiresAt: number }>();
  private readonly maxRecords: number;
  private readonly now: () => number;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  async create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome> {
    const existing = (requestKey === undefined ? undefined : this.liveByRequest(requestKey)) ?? this.live(record.task_id);
    if (existing) return { created: false, record: { ...existing.record } };
    this.makeRoom();
    this.entries.set(record.task_id, { record: { ...record }, ...(requestKey === undefined ? {} : { requestKey }) });
    if (requestKey !== undefined) this.requests.set(requestKey, record.task_id);
    return { created: true, record: { ...record } };
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
    const entry = this.live(taskId);
    if (!entry || !from.includes(entry.record.status)) return undefined;
    // Map.set on an existing key keeps its place, so a task's age is its creation.
    const { partial, ...rest } = update;
    const record: TaskRecord = { ...entry.record, ...rest, updated_at: this.now() };
    if (partial === null) delete record.partial;
    else if (partial !== undefined) record.partial = { text: partial.text ?? entry.record.partial?.text ?? '', length: partial.length };
    entry.record = record;
    return { ...entry.record };
  }

  async putParams(taskId: string, json: string, expiresAt: number): Promise<void> {
    for (const [id, kept] of this.params) if (kept.expiresAt * 1000 <= this.now()) this.params.delete(id);
    this.params.set(taskId, { json, expiresAt });
  }

  async getParams(taskId: string): Promise<string | undefined> {
    const kept = this.params.get(taskId);
    if (!kept) return undefined;
    if (kept.expiresAt * 1000 <= this.now()) {
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

  private live(taskId: string): Entry | undefined {
    const entry = this.entries.get(taskId);
    if (!entry) return undefined;
    if (this.expired(entry)) {
      this.drop(taskId, entry);
      return undefined;
    }
    return entry;
  }

  private liveByRequest(requestKey: string): Entry | undefined {
    const taskId = this.requests.get(requestKey);
    if (taskId === undefined) return undefined;
    const entry = this.live(taskId);
    if (!entry) this.requests.delete(requestKey);
    return entry;
  }

  /**
   * Frees one slot when the store is full: the oldest record that is expired or finished. Pending
   * tasks are skipped; they are few (bounded by the tasks running at once), so the scan is short.
   */
  private makeRoom(): void {
    if (this.entries.size < this.maxRecords) return;
    for (const [taskId, entry] of this.entries) {
      if (this.expired(entry) || !PENDING_STATUSES.includes(entry.record.status)) {
        this.drop(taskId, entry);
        if (this.entries.size < this.maxRecords) return;
      }
    }
    throw new TaskStoreFullError(this.maxRecords);
  }

  private expired(entry: Entry): boolean {
    return entry.record.expires_at * 1000 <= this.now();
  }

  private drop(taskId: string, entry: Entry): void {
    this.entries.delete(taskId);
    this.params.delete(taskId);
    if (entry.requestKey !== undefined && this.requests.get(entry.requestKey) === taskId) this.requests.delete(entry.requestKey);
  }
}
