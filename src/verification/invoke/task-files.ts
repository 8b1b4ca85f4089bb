import type { Attachment } from '../../contract';
import { ATTACHMENT_TYPES, attachmentTypeOf, type AttachmentKind, type AttachmentType } from '../../contract/attachments';
import type { Log } from '../../observability/logger';
import type { SlackCallOptions } from '../../slack/slack-port';
import { FileDownloadError, type SlackConversations } from '../../slack/slack-conversations';
import { contentMatches } from './file-content';
import type { TaskFile } from '../queues/task-file';
import type { AttachmentLimits } from './attachment-limits';

export type SkippedFile = { name: string; reason: string };
export type TaskFiles = { attachments: Attachment[]; skipped: SkippedFile[] };

/** Downloads at once at most. */
const DOWNLOAD_CONCURRENCY = 4;

/**
 * The files shared with a message, as `execute_task` attachments: each one's type resolved from
 * what Slack declared, checked against the limits before any byte is fetched, downloaded with the
 * bot token and checked by its content. A file that cannot be sent is skipped with a reason the
 * user is shown under the answer; nothing here fails the task.
 */
export async function taskFiles(files: readonly TaskFile[], deps: { slack: SlackConversations; limits: AttachmentLimits; log: Log }, options: SlackCallOptions): Promise<TaskFiles> {
  const { limits } = deps;
  const skipped: SkippedFile[] = [];
  const chosen: Array<{ index: number; file: TaskFile; type: AttachmentType; mimetype: string; maxBytes: number }> = [];
  const counts: Record<AttachmentKind, number> = { image: 0, document: 0 };
  let plannedBytes = 0;

  files.forEach((file, index) => {
    const resolved = resolveType(file);
    const skip = (reason: string) => skipped.push({ name: file.name || file.id, reason });
    if (!file.url) return skip('Slack no longer serves it');
    if (!resolved) return skip('that file type is not supported');
    const { type, mimetype } = resolved;
    const maxBytes = type.kind === 'image' ? limits.maxImageBytes : limits.maxDocumentBytes;
    if (file.size > maxBytes) return skip(`it is larger than ${megabytes(maxBytes)}`);
    const maxCount = type.kind === 'image' ? limits.maxImages : limits.maxDocuments;
    if (counts[type.kind] >= maxCount) return skip(`only the first ${maxCount} ${type.kind === 'image' ? 'images' : 'documents'} of a message are read`);
    if (plannedBytes + file.size > limits.maxTotalBytes) return skip(`the files of one message may add up to ${megabytes(limits.maxTotalBytes)}`);
    counts[type.kind] += 1;
    plannedBytes += file.size;
    chosen.push({ index, file, type, mimetype, maxBytes });
  });

  const results = new Map<number, Attachment>();
  let downloadedBytes = 0;
  await eachWithConcurrency(chosen, DOWNLOAD_CONCURRENCY, async ({ index, file, type, mimetype, maxBytes }) => {
    const name = file.name || file.id;
    let bytes: Buffer;
    try {
      bytes = await deps.slack.downloadFile(file.url!, { maxBytes, expectsHtml: type.format === 'html' }, options);
    } catch (error) {
      const reason = error instanceof FileDownloadError ? error.reason : 'failed';
      deps.log.warn('could not download a shared file; the task goes without it', { file_id: file.id, reason, error_message: (error as Error).message });
      skipped.push({ name, reason: DOWNLOAD_FAILURES[reason] });
      return;
    }
    // Slack's declared size may be off; what was really fetched counts against the total.
    if (downloadedBytes + bytes.length > limits.maxTotalBytes) {
      skipped.push({ name, reason: `the files of one message may add up to ${megabytes(limits.maxTotalBytes)}` });
      return;
    }
    // An HTML file cannot be told from Slack's HTML sign-in page by its bytes: by its size it can.
    if (type.format === 'html' && file.size > 0 && bytes.length !== file.size) {
      deps.log.warn('a shared HTML file came back with another size; taken for Slack\'s sign-in page and skipped', { file_id: file.id });
      skipped.push({ name, reason: DOWNLOAD_FAILURES.refused });
      return;
    }
    if (!contentMatches(type, bytes)) {
      deps.log.warn('a shared file does not contain what its type says; it is skipped', { file_id: file.id, declared: mimetype });
      skipped.push({ name, reason: `its content is not ${article(type.format)} ${type.format.toUpperCase()} file` });
      return;
    }
    downloadedBytes += bytes.length;
    results.set(index, { name, mimetype, size: bytes.length, data: bytes.toString('base64') });
  });
  const attachments = [...results.entries()].sort(([a], [b]) => a - b).map(([, attachment]) => attachment);
  return { attachments, skipped };
}

const DOWNLOAD_FAILURES: Record<FileDownloadError['reason'], string> = {
  'not-allowed-url': 'it is not hosted by Slack',
  'not-found': 'Slack no longer serves it',
  refused: 'Slack did not let me download it (the app may be missing the files:read scope)',
  'too-large': 'it is larger than its size limit',
  'timed-out': 'it took too long to download',
  failed: 'it could not be downloaded',
};

/**
 * The contract type of a Slack file: its mimetype when the table knows it, refined by Slack's
 * `filetype` or the name's extension (Slack calls a Markdown file `text/plain`), or taken from
 * those alone when Slack declared no useful mimetype.
 */
export function resolveType(file: Pick<TaskFile, 'mimetype' | 'filetype' | 'name'>): { type: AttachmentType; mimetype: string } | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  const hints = [file.filetype?.toLowerCase(), extension].filter((hint): hint is string => Boolean(hint));
  const byAlias = Object.entries(ATTACHMENT_TYPES).find(([, type]) => hints.some((hint) => type.aliases.includes(hint)));
  const declared = file.mimetype.split(';')[0]!.trim().toLowerCase();
  const byMime = attachmentTypeOf(declared);
  if (byMime) {
    const refinesText = byMime.format === 'txt' && byAlias && byAlias[1].kind === 'document' && ['md', 'csv', 'html', 'txt'].includes(byAlias[1].format);
    return refinesText ? { type: byAlias[1], mimetype: byAlias[0] } : { type: byMime, mimetype: declared };
  }
  const generic = declared === '' || declared === 'application/octet-stream' || declared === 'binary/octet-stream';
  return generic && byAlias ? { type: byAlias[1], mimetype: byAlias[0] } : undefined;
}

/** Decimal megabytes, as Slack and Bedrock state sizes. */
function megabytes(bytes: number): string {
  return `${Number((bytes / 1_000_000).toFixed(2))} MB`;
}

function article(format: string): string {
  return /^[aefhilmnorsx]/i.test(format) ? 'an' : 'a';
}

async function eachWithConcurrency<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
