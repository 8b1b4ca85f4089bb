import { randomBytes } from 'node:crypto';
import { SlackApiError } from '../slack/slack-api-error';
import type { SlackUploads } from '../slack/slack-uploads';

/**
 * Slack's three-call upload in the local workspace (ConsoleSlackReplies), taking the calls as
 * Slack does (docs/architecture.md, "Files the agent makes"): a file id and an upload URL for a
 * name and a length, the bytes sent to that URL, then the share into a thread — and refusing what
 * a workspace refuses (`file_uploads_disabled`, `file_upload_size_restricted`,
 * `file_type_not_allowed`; `invalid_arguments` without a name or a length; `file_not_found` for a
 * share of an id whose bytes never came). Sharing the same file again shows it again, as on Slack.
 */

/** A file shared in a thread of the local workspace: what the playground and `zone say` show. */
export type LocalSharedFile = { id: string; channel: string; threadTs: string; name: string; title: string; size: number; mimetype: string; at: number };

/** What the local workspace refuses; by default Slack's own limit of 1 GB. */
export type LocalUploadPolicy = { uploads?: 'enabled' | 'disabled'; maxFileBytes?: number; blockedExtensions?: readonly string[] };

const SLACK_MAX_FILE_BYTES = 1024 * 1024 * 1024;
const UPLOAD_URL_PREFIX = 'local-upload://';

export class LocalUploads implements SlackUploads {
  readonly shared: LocalSharedFile[] = [];
  private readonly pending = new Map<string, { filename: string; length: number; bytes?: Buffer }>();

  constructor(
    private readonly hooks: { now: () => number; keep: (file: { id: string; name: string; mimetype: string; bytes: Buffer }) => void; print: (line: string) => void },
    private readonly policy: LocalUploadPolicy = {},
  ) {}

  async startUpload({ filename, length }: { filename: string; length: number }): Promise<{ fileId: string; uploadUrl: string }> {
    if (!filename || !Number.isInteger(length) || length <= 0) throw refusal('files.getUploadURLExternal', 'invalid_arguments');
    if (this.policy.uploads === 'disabled') throw refusal('files.getUploadURLExternal', 'file_uploads_disabled');
    if (length > (this.policy.maxFileBytes ?? SLACK_MAX_FILE_BYTES)) throw refusal('files.getUploadURLExternal', 'file_upload_size_restricted');
    if (this.policy.blockedExtensions?.includes(extensionOf(filename))) throw refusal('files.getUploadURLExternal', 'file_type_not_allowed');
    const fileId = `F${randomBytes(5).toString('hex').toUpperCase()}`;
    this.pending.set(fileId, { filename, length });
    return { fileId, uploadUrl: `${UPLOAD_URL_PREFIX}${fileId}` };
  }

  async sendBytes(uploadUrl: string, bytes: Buffer): Promise<void> {
    const upload = this.pending.get(uploadUrl.slice(UPLOAD_URL_PREFIX.length));
    if (!uploadUrl.startsWith(UPLOAD_URL_PREFIX) || !upload) throw new SlackApiError('upload_url answered HTTP 404', 'http_404', false);
    upload.bytes = Buffer.from(bytes);
  }

  async share({ fileId, title, channel, threadTs }: { fileId: string; title: string; channel: string; threadTs: string }): Promise<void> {
    const upload = this.pending.get(fileId);
    if (!channel) throw refusal('files.completeUploadExternal', 'invalid_arguments');
    if (!upload?.bytes) throw refusal('files.completeUploadExternal', 'file_not_found');
    const mimetype = mimetypeOf(upload.filename);
    this.hooks.keep({ id: fileId, name: upload.filename, mimetype, bytes: upload.bytes });
    this.shared.push({ id: fileId, channel, threadTs, name: upload.filename, title, size: upload.bytes.length, mimetype, at: this.hooks.now() });
    this.hooks.print(`\n📎 file in ${channel} (thread ${threadTs}): ${upload.filename} (${mimetype}, ${upload.bytes.length} bytes)`);
  }

  async isShared({ fileId, channel, threadTs }: { fileId: string; channel: string; threadTs: string }): Promise<boolean> {
    return this.shared.some((file) => file.id === fileId && file.channel === channel && file.threadTs === threadTs);
  }
}

function refusal(method: string, code: string): SlackApiError {
  return new SlackApiError(`${method} failed: ${code}`, code, false);
}

function extensionOf(name: string): string {
  return /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
}

const MIMETYPES: Readonly<Record<string, string>> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', csv: 'text/csv', txt: 'text/plain', md: 'text/markdown', pdf: 'application/pdf', json: 'application/json' };

/** As Slack does, the type of a shared file is read from its name. */
function mimetypeOf(name: string): string {
  return MIMETYPES[extensionOf(name)] ?? 'application/octet-stream';
}
