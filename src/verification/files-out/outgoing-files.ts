import type { RefusedFile } from '../../contract';
import type { AgentFile } from '../../contract';

/**
 * An answer's files on their way from the function that settled the task to slack-poster
 * (docs/architecture.md, "Files the agent makes"). The reply message carries only how many there
 * are — an SQS message holds 1 MiB, an answer up to 6 MiB of files — and the files wait here, under
 * the task's request id, until the poster has shared them. A repeated put is the same put.
 */
export interface OutgoingFiles {
  put(requestId: string, files: readonly AgentFile[], ttlSeconds: number): Promise<void>;
  /** The files put for the request, in order; none when they expired or were never put. */
  get(requestId: string): Promise<AgentFile[]>;
}

/** How long an answer's files wait for the poster: longer than any redelivery of its reply (SQS keeps a message 14 days at most). */
export const OUTGOING_FILES_TTL_SECONDS = 14 * 24 * 60 * 60;

/** What a reply message says of its answer's files (they wait in OutgoingFiles): how many, and those refused. */
export type ReplyFiles = { count: number; refused?: RefusedFile[] | undefined };
