import type { AgentFile, RefusedFile } from '../../contract';
import { FileFetchError } from '../../net/safe-file-fetch';
import type { Log } from '../../observability/logger';
import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackCallOptions } from '../../slack/slack-port';
import { FILE_REFUSED_ERRORS, type SlackUploads } from '../../slack/slack-uploads';
import type { ClaimStore } from '../stores/claim-store';
import { once } from '../stores/once';
import { FETCH_REFUSAL_REASONS } from './file-refusals';
import type { FileUploadState, FileUploadStates } from './upload-states';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * Uploads an answer's files to its thread, each exactly once (docs/architecture.md, "Files the
 * agent makes"). Per (task, file) it holds a claim while it works (`once`: one attempt at a time,
 * and a done file is never done again) and records each of Slack's three steps as it lands
 * (FileUploadStates), so whatever breaks an attempt — a Slack call that landed and answered 5xx,
 * a killed function, a redelivered message — the next attempt goes on from there:
 * - step 1 again only if it never answered (an orphaned upload slot is never shown);
 * - step 2 again until it answers 200 for the file's bytes (the same bytes to the same URL replace them);
 * - step 3 never blindly: once it was tried, Slack is asked first whether the file is in the thread.
 * A file the workspace refuses (its size, its type, uploads off) or a URL the fetcher refuses is
 * not tried again: it is reported once, with the reason, for the caller's one line in the thread.
 * A passing failure (a rate limit, a 5xx, no answer) is thrown: the queue delivers again.
 */

export type FileUploaderOptions = {
  slack: SlackUploads;
  states: FileUploadStates;
  claims: ClaimStore;
  /** The bytes of a URL file (src/net/safe-file-fetch.ts with the operator's allow-list); throws a FileFetchError. */
  fetchUrl: (url: string, options: { signal?: AbortSignal }) => Promise<Buffer>;
  log?: Pick<Log, 'info' | 'warn'>;
  /** How long one file's upload may take before another attempt may take it over. @default 120 */
  leaseSeconds?: number;
  /** How long a file's state and its done claim are remembered: longer than any redelivery. @default 86400 */
  ttlSeconds?: number;
};

/** Where the files go: the answer's task (the key of its files) and its thread. */
export type UploadTarget = { taskKey: string; channel: string; threadTs: string };

/** What became of one file: shared (now, or by an earlier attempt: `again`), or refused with a reason. */
export type FileUploadOutcome = { name: string; status: 'shared'; fileId: string; again: boolean } | { name: string; status: 'refused'; reason: string; again: boolean };

/** Another attempt is uploading this file right now: the caller comes back later (a redelivery). */
export class FileUploadBusyError extends Error {
  override readonly name = 'FileUploadBusyError';
}

const DEFAULT_LEASE_SECONDS = 120;
const DEFAULT_TTL_SECONDS = 24 * 60 * 60;

export class FileUploader {
  private readonly leaseSeconds: number;
  private readonly ttlSeconds: number;

  constructor(private readonly options: FileUploaderOptions) {
    this.leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  }

  /** The files, in order, one after the other (each holds its bytes once, never all at once). */
  async uploadAll(target: UploadTarget, files: readonly AgentFile[], call: SlackCallOptions = {}): Promise<FileUploadOutcome[]> {
    const outcomes: FileUploadOutcome[] = [];
    for (const [index, file] of files.entries()) outcomes.push(await this.upload(target, file, index, call));
    return outcomes;
  }

  async upload(target: UploadTarget, file: AgentFile, index: number, call: SlackCallOptions = {}): Promise<FileUploadOutcome> {
    const key = `${STATE_KEYS.fileUploadClaim.prefix}${target.taskKey}:${index}`;
    const done = await once(this.options.claims, key, { leaseSeconds: this.leaseSeconds, ttlSeconds: this.ttlSeconds }, async () => {
      const outcome = await this.steps(key, target, file, call);
      return { result: outcome, value: outcome.status === 'shared' ? `shared:${outcome.fileId}` : `refused:${outcome.reason}` };
    });
    if (done.status === 'busy') throw new FileUploadBusyError(`${file.name} is being uploaded by another attempt until ${new Date(done.leaseEndsAt).toISOString()}`);
    if (done.status === 'duplicate') return outcomeOf(file.name, done.value);
    if (!done.kept) this.options.log?.warn('A file was shared but its claim could not be marked done; its state still says so', { file: file.name, task: target.taskKey });
    return done.result;
  }

  private async steps(key: string, target: UploadTarget, file: AgentFile, call: SlackCallOptions): Promise<FileUploadOutcome> {
    let state: FileUploadState = (await this.options.states.get(key)) ?? {};
    const save = async (next: FileUploadState) => {
      state = next;
      await this.options.states.save(key, state, this.ttlSeconds);
    };
    if (state.completed) return { name: file.name, status: 'shared', fileId: state.fileId!, again: true };
    const bytes = await this.bytesOf(file, call);
    if ('reason' in bytes) return { name: file.name, status: 'refused', reason: bytes.reason, again: false };
    try {
      if (!state.fileId || !state.uploadUrl) {
        const started = await this.options.slack.startUpload({ filename: file.name, length: bytes.data.length }, call);
        await save({ fileId: started.fileId, uploadUrl: started.uploadUrl });
      }
      if (state.bytesSent !== bytes.data.length) {
        await this.options.slack.sendBytes(state.uploadUrl!, bytes.data, call);
        await save({ ...state, bytesSent: bytes.data.length });
      }
      const shareTarget = { fileId: state.fileId!, channel: target.channel, threadTs: target.threadTs };
      const landedBefore = state.shareTried === true && (await this.options.slack.isShared(shareTarget, call));
      if (!landedBefore) {
        await save({ ...state, shareTried: true });
        await this.options.slack.share({ ...shareTarget, title: file.name }, call);
      }
      await save({ ...state, completed: true });
      return { name: file.name, status: 'shared', fileId: state.fileId!, again: false };
    } catch (error) {
      const reason = error instanceof SlackApiError && !error.retryable ? refusalReason(error) : undefined;
      if (reason === undefined) throw error;
      this.options.log?.warn('Slack refused a file', { file: file.name, code: (error as SlackApiError).code });
      return { name: file.name, status: 'refused', reason, again: false };
    }
  }

  private async bytesOf(file: AgentFile, call: SlackCallOptions): Promise<{ data: Buffer } | RefusedFile> {
    if (file.data !== undefined) return { data: Buffer.from(file.data, 'base64') };
    try {
      return { data: await this.options.fetchUrl(file.url, call.signal ? { signal: call.signal } : {}) };
    } catch (error) {
      if (!(error instanceof FileFetchError)) throw error;
      this.options.log?.warn('A file URL was refused or could not be fetched', { file: file.name, reason: error.reason, detail: error.message });
      // Not tried again: the answer is in the thread already, and a host that failed it once would hold up the rest.
      return { name: file.name, reason: FETCH_REFUSAL_REASONS[error.reason] };
    }
  }
}

/** Slack's words for a refusal, as the thread says them; any other refusal by its code. */
function refusalReason(error: SlackApiError): string {
  return FILE_REFUSED_ERRORS[error.code] ?? `Slack refused it (${error.code})`;
}

/** What an earlier attempt recorded with its done claim. */
function outcomeOf(name: string, value: string | undefined): FileUploadOutcome {
  if (value?.startsWith('refused:')) return { name, status: 'refused', reason: value.slice('refused:'.length), again: true };
  return { name, status: 'shared', fileId: value?.startsWith('shared:') ? value.slice('shared:'.length) : '', again: true };
}
