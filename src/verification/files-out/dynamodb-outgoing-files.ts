import type { AgentFile } from '../../contract';
import { StateTable, type StateTableOptions } from '../stores/state-table';
import type { OutgoingFiles } from './outgoing-files';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * Outgoing files in the state table. An item holds 400 KB, an answer's files up to 6 MiB of
 * base64: the files go as JSON cut in parts of PART_CHARS (`<id>#<n>`), written before the item
 * that names how many there are (`<id>`), so a reader that finds the count finds every part.
 */
const PART_CHARS = 350_000;

export class DynamoDbOutgoingFiles implements OutgoingFiles {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
    this.table = new StateTable({ keyPrefix: STATE_KEYS.outgoingFiles.prefix, ...options });
  }

  async put(requestId: string, files: readonly AgentFile[], ttlSeconds: number): Promise<void> {
    const json = JSON.stringify(files);
    const expires = { N: String(this.table.nowSeconds() + Math.ceil(ttlSeconds)) };
    const parts = Math.max(1, Math.ceil(json.length / PART_CHARS));
    for (let part = 0; part < parts; part++) {
      await this.table.put({ Item: { ...this.table.key(`${requestId}#${part}`), body: { S: json.slice(part * PART_CHARS, (part + 1) * PART_CHARS) }, expires_at: expires } });
    }
    await this.table.put({ Item: { ...this.table.key(requestId), parts: { N: String(parts) }, expires_at: expires } });
  }

  async get(requestId: string): Promise<AgentFile[]> {
    const head = await this.table.get(requestId);
    if (!head || !this.table.isLive(head)) return [];
    const parts = Number(head.parts?.N ?? 0);
    let json = '';
    for (let part = 0; part < parts; part++) json += (await this.table.get(`${requestId}#${part}`))?.body?.S ?? '';
    return parts === 0 ? [] : (JSON.parse(json) as AgentFile[]);
  }
}
