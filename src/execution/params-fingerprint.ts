import { hash } from 'node:crypto';
import type { ExecuteTaskParams } from '../contract';

/**
 * SHA-256 of the params in canonical JSON (object keys sorted at every depth, arrays in order),
 * so the same params in another key order hash alike. Left out:
 * - `bot_token`: it is a credential, not part of the task, and a token rotated between two
 *   attempts does not make the retry another task.
 * - `messages` and `attachments`: the task's context, not the task. The verification zone reads
 *   the thread and downloads the files afresh on every SQS retry, so a retry of the same task may
 *   carry a slightly different context (a reply posted meanwhile, a file re-encoded) and must not
 *   be refused with -32005; and hashing megabytes of attachments on every request would cost
 *   time for nothing. The text, channel, thread and asker still tell one task from another.
 * - `stream`: how the caller shows the answer, not what the task is; a retry that asks for the
 *   text as it is produced (or no longer does) is the same task.
 */
export function paramsHashOf(params: ExecuteTaskParams): string {
  return hash('sha256', canonicalObject(params as Record<string, unknown>, NOT_HASHED), 'hex');
}

/**
 * What tells a retry of a task (the same params) from a reused request id (other params): the
 * params' hash (paramsHashOf), worked out when first asked for. Only a repeated id or a store
 * that writes the hash down asks; in a memory store most tasks are never repeated, and their
 * hash (canonical JSON and SHA-256: more CPU than an echo task) is never needed.
 *
 * Until then it holds the params themselves, but only params that are small and all task: no
 * credential (`bot_token`) and no context (`messages`, `attachments`: up to the body limit) is
 * kept for as long as a record lives. Any other params are hashed at once, as before.
 */
export class ParamsFingerprint {
  private params: ExecuteTaskParams | undefined;
  private hashed: string | undefined;

  constructor(params: ExecuteTaskParams) {
    if (isSmallAndAllHashed(params)) this.params = params;
    else this.hashed = paramsHashOf(params);
  }

  get hash(): string {
    if (this.hashed === undefined) {
      this.hashed = paramsHashOf(this.params!);
      this.params = undefined;
    }
    return this.hashed;
  }
}

/** Characters of string members a fingerprint keeps unhashed at most (a Slack message has at most 40,000). */
const MAX_KEPT_CHARS = 16_384;

/**
 * Params every member of which is hashed and a string (with at most MAX_KEPT_CHARS characters in
 * all), a number, a boolean or null. `stream` is the one member outside the hash kept too: a
 * boolean says nothing and holds nothing.
 */
function isSmallAndAllHashed(params: ExecuteTaskParams): boolean {
  let chars = 0;
  for (const key in params) {
    const member = (params as Record<string, unknown>)[key];
    switch (typeof member) {
      case 'string':
        if (key === 'bot_token') return false;
        chars += member.length;
        if (chars > MAX_KEPT_CHARS) return false;
        break;
      case 'number':
      case 'boolean':
      case 'undefined':
        break;
      default:
        // Objects and arrays (`messages` and `attachments` among them); null is kept, it is small.
        if (member !== null) return false;
    }
  }
  return true;
}

/** The params left out of paramsHashOf. */
const NOT_HASHED: ReadonlySet<string> = new Set(['bot_token', 'messages', 'attachments', 'stream']);
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

/**
 * Keys the one-call path below leaves to the general one: those JSON.stringify would not write in
 * insertion order (array indices come first: any key starting with a digit, to keep the test
 * cheap) and `__proto__`, which an assignment would not make a key.
 */
const outOfOrder = (key: string): boolean => {
  const first = key.charCodeAt(0);
  return (first >= 48 && first <= 57) || key === '__proto__';
};

function canonicalObject(value: Record<string, unknown>, leftOut: ReadonlySet<string>): string {
  const keys = Object.keys(value).sort();
  // The usual case, every member a string, number, boolean or null: one JSON.stringify of the
  // members in sorted order writes exactly what the general case below would, piece by piece.
  const sorted: Record<string, unknown> = {};
  let flat = true;
  for (const key of keys) {
    const member = value[key];
    if (member === undefined || leftOut.has(key)) continue;
    if ((typeof member === 'object' && member !== null) || typeof member === 'function' || typeof member === 'symbol' || outOfOrder(key)) {
      flat = false;
      break;
    }
    sorted[key] = member;
  }
  if (flat) return JSON.stringify(sorted);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = value[key];
    if (member === undefined || leftOut.has(key)) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
    first = false;
  }
  return `${out}}`;
}
