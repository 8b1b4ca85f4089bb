import type { IncomingMessage } from 'node:http';

/**
 * Slack's file upload, for the fake Slack API (fake-slack-api.ts), in its three calls as Slack
 * documents them (docs.slack.dev, files.getUploadURLExternal and files.completeUploadExternal):
 *
 * 1. `files.getUploadURLExternal` with `filename` and `length` (bytes; both required, else
 *    `invalid_arguments`) → `upload_url`, `file_id`. The workspace's policy is applied here, where
 *    Slack knows the name and the size: `file_uploads_disabled`, `file_uploads_except_images_disabled`,
 *    `file_upload_size_restricted`, `file_type_not_allowed`.
 * 2. POST the bytes to `upload_url` (raw, or multipart form with the file as a part) → HTTP 200
 *    `OK - <length>`; an unknown upload 404. No token is needed: the URL is the credential. A
 *    second POST replaces the bytes (Slack keeps the last).
 * 3. `files.completeUploadExternal` with `files` [{id, title}] (JSON), `channel_id`, `thread_ts`,
 *    `initial_comment` → the file is shared in the thread: each share is a message there. An
 *    unknown id, or one whose bytes never arrived, is `file_not_found`; a `thread_ts` without a
 *    channel, or no files, `invalid_arguments`. Completing the same file again shares it again —
 *    what a caller that repeats step 3 blindly would show its users: the file twice.
 * And `files.info` (`file`) → the file with its `shares` ({private: {<channel>: [{ts, thread_ts}]}}),
 * where a caller looks whether a step 3 that got no clear answer landed; unknown: `file_not_found`.
 *
 * Faults: `failNext('upload_url', …)` and `failWhen('upload_url', …)` apply to step 2 as the API
 * methods' failures apply to theirs (`afterEffect`: the bytes land, then the error is answered).
 */

export type FakeUploadPolicy = {
  /** `images-only`: Slack's "except images" setting. @default 'enabled' */
  uploads?: 'enabled' | 'disabled' | 'images-only';
  /** Larger files are refused with `file_upload_size_restricted`. */
  maxFileBytes?: number;
  /** File-name extensions (lower case, no dot) refused with `file_type_not_allowed`. */
  blockedExtensions?: readonly string[];
};

/** One upload as step 1 made it; `bytes` once step 2 delivered them, `posts` how many POSTs arrived. */
export type FakeSlackUpload = { file_id: string; filename: string; length: number; alt_txt?: string; bytes?: Buffer; posts: number; tokenSent: boolean };

/** A file shared in a channel or thread by step 3: what the thread shows. */
export type FakeSlackFileShare = { file_id: string; title: string; filename: string; channel: string; thread_ts?: string; bytes: Buffer; initial_comment?: string; ts: string };

type Answer = { status: number; body: Record<string, unknown>; headers?: Record<string, string> };

/** The pseudo-method name step 2 is recorded and faulted under. */
export const UPLOAD_URL_METHOD = 'upload_url';

const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'heic']);

export function createFakeUploads(options: { origin: () => string; nextTs: () => string; botWroteIn: (channel: string, threadTs: string | undefined) => void }) {
  const uploads = new Map<string, FakeSlackUpload>();
  const shares: FakeSlackFileShare[] = [];
  let policy: FakeUploadPolicy = {};
  let counter = 0;
  const shareWaiters = new Set<{ count: number; resolve: (shares: FakeSlackFileShare[]) => void; timer: NodeJS.Timeout }>();

  const ok = (fields: Record<string, unknown>): Answer => ({ status: 200, body: { ok: true, ...fields } });
  const apiError = (error: string): Answer => ({ status: 200, body: { ok: false, error } });

  function getUploadUrl(body: Record<string, unknown>): Answer {
    const filename = typeof body.filename === 'string' ? body.filename : '';
    const length = Number(body.length);
    if (!filename || !Number.isInteger(length) || length <= 0) return apiError('invalid_arguments');
    const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? '';
    if (policy.uploads === 'disabled') return apiError('file_uploads_disabled');
    if (policy.uploads === 'images-only' && !IMAGE_EXTENSIONS.has(extension)) return apiError('file_uploads_except_images_disabled');
    if (policy.maxFileBytes !== undefined && length > policy.maxFileBytes) return apiError('file_upload_size_restricted');
    if (policy.blockedExtensions?.includes(extension)) return apiError('file_type_not_allowed');
    counter += 1;
    const fileId = `F0UP${String(counter).padStart(5, '0')}`;
    uploads.set(fileId, { file_id: fileId, filename, length, ...(typeof body.alt_txt === 'string' ? { alt_txt: body.alt_txt } : {}), posts: 0, tokenSent: false });
    return ok({ upload_url: `${options.origin()}/upload/v1/${fileId}`, file_id: fileId });
  }

  function complete(body: Record<string, unknown>): Answer {
    const files = parseFiles(body.files);
    if (!files) return apiError('invalid_arguments');
    const channel = typeof body.channel_id === 'string' && body.channel_id ? body.channel_id : undefined;
    const threadTs = typeof body.thread_ts === 'string' && body.thread_ts ? body.thread_ts : undefined;
    if (threadTs && !channel) return apiError('invalid_arguments');
    const found = files.map((file) => ({ ...file, upload: uploads.get(file.id) }));
    if (found.some(({ upload }) => !upload?.bytes)) return apiError('file_not_found');
    const comment = typeof body.initial_comment === 'string' && body.initial_comment ? body.initial_comment : undefined;
    if (channel) {
      for (const { id, title, upload } of found) {
        shares.push({ file_id: id, title: title ?? upload!.filename, filename: upload!.filename, channel, ...(threadTs ? { thread_ts: threadTs } : {}), bytes: upload!.bytes!, ...(comment ? { initial_comment: comment } : {}), ts: options.nextTs() });
      }
      options.botWroteIn(channel, threadTs);
      notify();
    }
    return ok({ files: found.map(({ id, title, upload }) => ({ id, name: upload!.filename, title: title ?? upload!.filename, size: upload!.bytes!.length })) });
  }

  function info(body: Record<string, unknown>): Answer {
    const upload = typeof body.file === 'string' ? uploads.get(body.file) : undefined;
    if (!upload) return apiError('file_not_found');
    const byChannel: Record<string, Array<{ ts: string; thread_ts?: string }>> = {};
    for (const share of shares.filter((candidate) => candidate.file_id === upload.file_id)) {
      (byChannel[share.channel] ??= []).push({ ts: share.ts, ...(share.thread_ts ? { thread_ts: share.thread_ts } : {}) });
    }
    return ok({ file: { id: upload.file_id, name: upload.filename, size: upload.bytes?.length ?? 0, shares: Object.keys(byChannel).length ? { private: byChannel } : {} } });
  }

  /** Step 2: the bytes of an upload, raw or as the file part of a multipart form. */
  async function receive(fileId: string, request: IncomingMessage, raw: Buffer): Promise<{ status: number; text: string }> {
    const upload = uploads.get(fileId);
    if (!upload || request.method !== 'POST') return { status: 404, text: 'upload not found' };
    upload.posts += 1;
    if (request.headers.authorization) upload.tokenSent = true;
    upload.bytes = fileBytesOf(request.headers['content-type'] ?? '', raw);
    return { status: 200, text: `OK - ${upload.bytes.length}` };
  }

  function notify(): void {
    for (const waiter of shareWaiters) {
      if (shares.length < waiter.count) continue;
      clearTimeout(waiter.timer);
      shareWaiters.delete(waiter);
      waiter.resolve(shares.slice());
    }
  }

  return {
    handlers: { 'files.getUploadURLExternal': getUploadUrl, 'files.completeUploadExternal': complete, 'files.info': info },
    receive,
    uploads,
    shares,
    setPolicy(next: FakeUploadPolicy) {
      policy = { ...next };
    },
    waitForShares(count: number, timeoutMs = 5000): Promise<FakeSlackFileShare[]> {
      if (shares.length >= count) return Promise.resolve(shares.slice());
      return new Promise((resolve, reject) => {
        const waiter = {
          count,
          resolve,
          timer: setTimeout(() => {
            shareWaiters.delete(waiter);
            reject(new Error(`fake Slack API: expected ${count} shared file(s) within ${timeoutMs} ms, got ${shares.length}`));
          }, timeoutMs),
        };
        shareWaiters.add(waiter);
      });
    },
    reset() {
      uploads.clear();
      shares.length = 0;
      policy = {};
    },
    close() {
      for (const waiter of shareWaiters) clearTimeout(waiter.timer);
      shareWaiters.clear();
    },
  };
}

export type FakeUploads = ReturnType<typeof createFakeUploads>;

/** `files` of completeUploadExternal: a JSON array (a string in a form) of {id, title?}. */
function parseFiles(value: unknown): Array<{ id: string; title?: string }> | undefined {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const files = parsed.map((entry: unknown) => (typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {}));
  if (files.some((file) => typeof file.id !== 'string' || !file.id)) return undefined;
  return files.map((file) => ({ id: file.id as string, ...(typeof file.title === 'string' && file.title ? { title: file.title } : {}) }));
}

/** The bytes of a raw body, or of the part of a multipart form that carries a file. */
function fileBytesOf(contentType: string, raw: Buffer): Buffer {
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) return raw;
  const delimiter = Buffer.from(`--${boundary}`);
  let start = raw.indexOf(delimiter);
  while (start >= 0) {
    const next = raw.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = raw.subarray(start + delimiter.length, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0 && /filename=/i.test(part.subarray(0, headerEnd).toString('latin1'))) return Buffer.from(part.subarray(headerEnd + 4, part.length - 2));
    start = next;
  }
  return raw;
}
