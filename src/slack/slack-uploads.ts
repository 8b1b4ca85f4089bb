import type { SlackCallOptions } from './slack-port';

/**
 * Slack's three-call file upload (docs/architecture.md, "Files the agent makes"), step by step,
 * so the caller can record each step and never repeat one that landed:
 * 1. `startUpload` — files.getUploadURLExternal: a file id and the URL to send the bytes to;
 * 2. `sendBytes` — POST the bytes to that URL (no token: the URL is the credential);
 * 3. `share` — files.completeUploadExternal: the file appears in the thread.
 * `isShared` — files.info: whether a `share` that got no clear answer landed after all.
 * Failures are SlackApiErrors (`outcome` says whether the call may have taken effect).
 */
export interface SlackUploads {
  startUpload(file: { filename: string; length: number; altText?: string }, options?: SlackCallOptions): Promise<{ fileId: string; uploadUrl: string }>;
  sendBytes(uploadUrl: string, bytes: Buffer, options?: SlackCallOptions): Promise<void>;
  share(file: { fileId: string; title: string; channel: string; threadTs: string; comment?: string }, options?: SlackCallOptions): Promise<void>;
  isShared(file: { fileId: string; channel: string; threadTs: string }, options?: SlackCallOptions): Promise<boolean>;
}

/**
 * Slack's refusals of a file that say the workspace will not take it (not a passing state): the
 * thread gets one line naming the file and the reason, and the file is not tried again.
 */
export const FILE_REFUSED_ERRORS: Readonly<Record<string, string>> = {
  file_upload_size_restricted: 'this workspace does not take files this large',
  file_uploads_disabled: 'this workspace does not allow file uploads',
  file_uploads_except_images_disabled: 'this workspace allows only images to be uploaded',
  file_type_not_allowed: 'this workspace does not allow files of this type',
};
