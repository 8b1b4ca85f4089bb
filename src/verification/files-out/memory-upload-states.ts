import { systemClock, type Clock } from '../../clock';
import { MemoryRecords } from '../stores/memory-records';
import type { FileUploadState, FileUploadStates } from './upload-states';

/** Upload states in memory, for local runs and tests: records (src/verification/stores), copied in and out as a table would. */
export class MemoryFileUploadStates implements FileUploadStates {
  private readonly records: MemoryRecords;

  constructor(clock: Clock = systemClock) {
    this.records = new MemoryRecords(clock);
  }

  get(key: string): Promise<FileUploadState | undefined> {
    return this.records.get<FileUploadState & Record<string, unknown>>(key);
  }

  save(key: string, state: FileUploadState, ttlSeconds: number): Promise<void> {
    return this.records.put(key, { ...state }, ttlSeconds);
  }
}
