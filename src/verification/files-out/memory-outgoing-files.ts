import { systemClock, type Clock } from '../../clock';
import type { AgentFile } from '../../contract';
import { MemoryRecords } from '../stores/memory-records';
import type { OutgoingFiles } from './outgoing-files';

/** Outgoing files in memory, for local runs and tests (records: copied in and out, as a table would). */
export class MemoryOutgoingFiles implements OutgoingFiles {
  private readonly records: MemoryRecords;

  constructor(clock: Clock = systemClock) {
    this.records = new MemoryRecords(clock);
  }

  async put(requestId: string, files: readonly AgentFile[], ttlSeconds: number): Promise<void> {
    await this.records.put(requestId, { files: [...files] }, ttlSeconds);
  }

  async get(requestId: string): Promise<AgentFile[]> {
    return (await this.records.get<{ files: AgentFile[] }>(requestId))?.files ?? [];
  }
}
