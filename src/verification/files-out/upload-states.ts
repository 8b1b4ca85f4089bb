/**
 * How far the upload of one file of one answer got (docs/architecture.md, "Files the agent makes"),
 * kept between attempts so a retry, a redelivery or a takeover goes on from the last step that
 * surely happened, and never does again one that did:
 * - `fileId`, `uploadUrl`: step 1 (files.getUploadURLExternal) answered;
 * - `bytesSent`: step 2 (the POST to the upload URL) answered 200 for this many bytes;
 * - `shareTried`: step 3 (files.completeUploadExternal) was called — it may have landed, so the
 *   next attempt asks Slack (files.info) before sharing again;
 * - `completed`: the file is in the thread.
 * Memory locally, DynamoDB (the state table) when deployed.
 */
export type FileUploadState = {
  fileId?: string;
  uploadUrl?: string;
  bytesSent?: number;
  shareTried?: boolean;
  completed?: boolean;
};

export interface FileUploadStates {
  get(key: string): Promise<FileUploadState | undefined>;
  /** Replaces the state under `key` for `ttlSeconds`: a retried save is the same save. */
  save(key: string, state: FileUploadState, ttlSeconds: number): Promise<void>;
}
