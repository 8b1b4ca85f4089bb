import { systemClock } from '../../clock';
import { SlackApiError } from '../slack-api-error';
import type { SlackCallOptions } from '../slack-port';
import type { SlackUploads } from '../slack-uploads';
import { WebApiPort } from './web-api-port';

/** One POST of a file's bytes never waits longer than this, whatever the deadline. */
const SEND_BYTES_TIMEOUT_MS = 60_000;

/** SlackUploads over a WebClient; the bytes go to the upload URL by plain HTTP, without the token. */
export class WebApiUploads extends WebApiPort implements SlackUploads {
  async startUpload({ filename, length, altText }: { filename: string; length: number; altText?: string }, options: SlackCallOptions = {}): Promise<{ fileId: string; uploadUrl: string }> {
    const result = await this.call(
      'files.getUploadURLExternal',
      () => this.client.files.getUploadURLExternal({ filename, length, ...(altText ? { alt_txt: altText } : {}) }),
      options,
      // A repeat only makes another upload slot; one never completed is never shown.
      { afterNoAnswer: true },
    );
    if (!result.file_id || !result.upload_url) throw new SlackApiError('files.getUploadURLExternal answered without file_id or upload_url', 'invalid_response', false);
    return { fileId: result.file_id, uploadUrl: result.upload_url };
  }

  async sendBytes(uploadUrl: string, bytes: Buffer, options: SlackCallOptions = {}): Promise<void> {
    // The same bytes to the same URL replace what arrived: safe to repeat, so the bounded call may.
    await this.call('upload_url', () => postBytes(uploadUrl, bytes, options), options, { afterNoAnswer: true });
  }

  async share({ fileId, title, channel, threadTs, comment }: { fileId: string; title: string; channel: string; threadTs: string; comment?: string }, options: SlackCallOptions = {}): Promise<void> {
    // Never repeated blindly: a share that landed would show the file twice. The uploader asks isShared first.
    await this.call('files.completeUploadExternal', () => this.client.files.completeUploadExternal({ files: [{ id: fileId, title }], channel_id: channel, thread_ts: threadTs, ...(comment ? { initial_comment: comment } : {}) }), options);
  }

  async isShared({ fileId, channel, threadTs }: { fileId: string; channel: string; threadTs: string }, options: SlackCallOptions = {}): Promise<boolean> {
    const result = await this.call('files.info', () => this.client.files.info({ file: fileId }), options, { afterServerError: true });
    const shares = result.file?.shares;
    const inChannel = [...(shares?.private?.[channel] ?? []), ...(shares?.public?.[channel] ?? [])];
    return inChannel.some((share) => share.thread_ts === threadTs || share.ts === threadTs);
  }
}

/** The POST of step 2, raw bytes; a failure is a SlackApiError as the client's are. */
async function postBytes(uploadUrl: string, bytes: Buffer, options: SlackCallOptions): Promise<void> {
  const remaining = options.deadline === undefined ? SEND_BYTES_TIMEOUT_MS : Math.min(SEND_BYTES_TIMEOUT_MS, options.deadline - systemClock.now());
  if (remaining <= 0) throw new SlackApiError('upload_url: no time left to send the bytes', 'request_error', true, { outcome: 'refused' });
  const timeout = AbortSignal.timeout(remaining);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(uploadUrl, { method: 'POST', body: bytes as unknown as BodyInit, headers: { 'content-type': 'application/octet-stream' }, signal });
  } catch (error) {
    throw new SlackApiError('upload_url: the request did not complete', 'request_error', true, { cause: error, outcome: 'unknown' });
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return;
  const status = response.status;
  throw new SlackApiError(`upload_url answered HTTP ${status}`, `http_${status}`, status >= 500 || status === 408 || status === 429, { outcome: status >= 500 || status === 408 ? 'unknown' : 'refused' });
}
