import { systemClock, type Clock } from '../../clock';
import type { ListableRecords, RecordValue } from './records';

/** Entries kept at most; the oldest goes first when full. */
const MAX_RECORDS = 20_000;

/** Records in memory, for local runs and tests. Values are copied in and out, as a table would. */
export class MemoryRecords implements ListableRecords {
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async get<T extends RecordValue>(key: string): Promise<T | undefined> {
    return this.read<T>(key);
  }

  private read<T extends RecordValue>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt <= this.clock.now()) return undefined;
    return JSON.parse(entry.json) as T;
  }

  async put(key: string, value: RecordValue, ttlSeconds: number): Promise<void> {
    this.entries.delete(key);
    if (this.entries.size >= MAX_RECORDS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { json: JSON.stringify(value), expiresAt: this.clock.now() + ttlSeconds * 1000 });
  }

  async putIf(key: string, value: RecordValue, ttlSeconds: number, when: { field: string; expected: string | undefined }): Promise<boolean> {
    // Read and written with no await between: as atomic as DynamoDB's conditional put.
    const current = this.read(key);
    if (current?.[when.field] !== when.expected) return false;
    await this.put(key, value, ttlSeconds);
    return true;
  }

  async list<T extends RecordValue>(prefix: string): Promise<Array<{ key: string; value: T }>> {
    const now = this.clock.now();
    return [...this.entries]
      .filter(([key, entry]) => key.startsWith(prefix) && entry.expiresAt > now)
      .map(([key, entry]) => ({ key, value: JSON.parse(entry.json) as T }));
  }
}
