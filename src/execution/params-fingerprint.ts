import { hash } from 'node:crypto';
import type { ExecuteTaskParams } from '../contract';

/**
 * The params' fingerprint: SHA-256 of the params in canonical JSON (object keys sorted at every
 * depth, arrays in order), so the same params in another key order hash alike. It tells a retry of
 * a task (the same params) from a reused request id (other params); the task service works it out
 * once for every `execute_task` and the store keeps it with the task (`params_hash`). Left out:
 * - `bot_token`: it is a credential, not part of the task, and a token rotated between two
 *   attempts does not make the retry another task.
 * - `messages` and `attachments`: the task's context, not the task. The verification zone reads
 *   the thread and downloads the files afresh on every SQS retry, so a retry of the same task may
 *   carry a slightly different context (a reply posted meanwhile, a file re-encoded) and must not
 *   be refused with -32005; and hashing megabytes of attachments on every request would cost
 *   time for nothing. The text, channel, thread and asker still tell one task from another.
 * - `stream` and `hold_ms`: how the caller shows the answer and how long it reads a streamed one,
 *   not what the task is; a retry that asks for the text as it is produced (or no longer does,
 *   or holds the stream for another time) is the same task.
 */
export function paramsHashOf(params: ExecuteTaskParams): string {
  return hash('sha256', canonicalObject(params as Record<string, unknown>, NOT_HASHED), 'hex');
}

/** The params left out of paramsHashOf. */
const NOT_HASHED: ReadonlySet<string> = new Set(['bot_token', 'messages', 'attachments', 'stream', 'hold_ms']);
const NOTHING_LEFT_OUT: ReadonlySet<string> = new Set();

/** JSON with object keys sorted at every depth and undefined members left out (array holes stay empty). */
function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) out += ',';
      if (index in value) out += canonicalJson(value[index] ?? null);
    }
    return `${out}]`;
  }
  return canonicalObject(value as Record<string, unknown>, NOTHING_LEFT_OUT);
}

function canonicalObject(value: Record<string, unknown>, leftOut: ReadonlySet<string>): string {
  let out = '{';
  let first = true;
  for (const key of Object.keys(value).sort()) {
    const member = value[key];
    if (member === undefined || leftOut.has(key)) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
    first = false;
  }
  return `${out}}`;
}
