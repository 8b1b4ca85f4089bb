import { createHash } from 'node:crypto';

/**
 * AgentCore's runtimeSessionId from a transport session key (docs/architecture.md §10.3: 33–256 characters).
 * The same key must give the same id, so `get_task_result` lands in the session (microVM) that
 * runs the task; without an id the SDK would send a fresh UUID and open a new session each call.
 *
 * Keys that are already safe header text of a usable length (the verification zone's UUID v4
 * request ids are) keep a readable form, `slack-zone-<key>`, so an operator can match an
 * AgentCore session to a task. Any other key is hashed. The two forms cannot collide: the
 * readable one always has `-` after the prefix and the hashed one `_`.
 */
export const SESSION_ID_MIN_LENGTH = 33;
export const SESSION_ID_MAX_LENGTH = 256;

const READABLE_PREFIX = 'slack-zone-';
const HASHED_PREFIX = 'slack-zone_sha256_';
const SAFE_KEY = /^[A-Za-z0-9-]+$/;

export function runtimeSessionId(sessionKey: string): string {
  if (sessionKey.length === 0) throw new RangeError('a session key must not be empty');
  const readable = READABLE_PREFIX + sessionKey;
  if (SAFE_KEY.test(sessionKey) && readable.length >= SESSION_ID_MIN_LENGTH && readable.length <= SESSION_ID_MAX_LENGTH) return readable;
  return HASHED_PREFIX + createHash('sha256').update(sessionKey, 'utf8').digest('hex');
}
