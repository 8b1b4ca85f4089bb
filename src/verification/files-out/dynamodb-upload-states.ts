import type { Item } from '../../aws/dynamodb';
import { StateTable, type StateTableOptions } from '../stores/state-table';
import type { FileUploadState, FileUploadStates } from './upload-states';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * Upload states as items of the state table, one attribute per step (`file_id`, `upload_url`,
 * `bytes_sent`, `share_tried`, `completed`) beside `expires_at`; an expired item is no state.
 */
export class DynamoDbFileUploadStates implements FileUploadStates {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
    // Its own prefix: the uploader's claims use the same keys in the same table.
    this.table = new StateTable({ keyPrefix: STATE_KEYS.fileUpload.prefix, ...options });
  }

  async get(key: string): Promise<FileUploadState | undefined> {
    const item = await this.table.get(key);
    if (!item || !this.table.isLive(item)) return undefined;
    return {
      ...(item.file_id?.S ? { fileId: item.file_id.S } : {}),
      ...(item.upload_url?.S ? { uploadUrl: item.upload_url.S } : {}),
      ...(item.bytes_sent?.N ? { bytesSent: Number(item.bytes_sent.N) } : {}),
      ...(item.share_tried?.BOOL ? { shareTried: true } : {}),
      ...(item.completed?.BOOL ? { completed: true } : {}),
    };
  }

  async save(key: string, state: FileUploadState, ttlSeconds: number): Promise<void> {
    const item: Item = {
      ...this.table.key(key),
      expires_at: { N: String(this.table.nowSeconds() + Math.ceil(ttlSeconds)) },
      ...(state.fileId ? { file_id: { S: state.fileId } } : {}),
      ...(state.uploadUrl ? { upload_url: { S: state.uploadUrl } } : {}),
      ...(state.bytesSent !== undefined ? { bytes_sent: { N: String(state.bytesSent) } } : {}),
      ...(state.shareTried ? { share_tried: { BOOL: true } } : {}),
      ...(state.completed ? { completed: { BOOL: true } } : {}),
    };
    await this.table.put({ Item: item });
  }
}
