import type { TaskStatus } from '../../contract';
import type { CreateOutcome, TaskRecord, TaskStore, TaskUpdate } from './task-store';

export type MemoryTaskStoreOptions = {
  /** At most this many records are kept; the oldest are dropped first. */
  maxRecords?: number;
  now?: () => number;
};

/** A bounded in-memory task store for local runs, tests and single-session AgentCore hosts. */
export class MemoryTaskStore implements TaskStore {
  private readonly records = new Map<string, TaskRecord>();
  private readonly maxRecords: number;
  private readonly now: () => number;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxRecords = options.maxRecords ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  async create(record: TaskRecord): Promise<CreateOutcome> {
    const existing = await this.get(record.task_id);
    if (existing) return { created: false, record: { ...existing } };
    this.records.set(record.task_id, { ...record });
    this.evictOverflow();
    return { created: true, record: { ...record } };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const record = this.records.get(taskId);
    if (!record) return undefined;
    if (record.expires_at * 1000 <= this.now()) {
      this.records.delete(taskId);
      return undefined;
    }
    return { ...record };
  }

  async transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined> {
    const record = await this.get(taskId);
    if (!record || !from.includes(record.status)) return undefined;
    const next: TaskRecord = { ...record, ...update, updated_at: this.now() };
    this.records.set(taskId, next);
    return { ...next };
  }

  get size(): number {
    return this.records.size;
  }

  private evictOverflow(): void {
    // Map iteration is insertion order, so the first keys are the oldest records.
    for (const key of this.records.keys()) {
      if (this.records.size <= this.maxRecords) break;
      this.records.delete(key);
    }
  }
}
