import * as z from '../../config/zod-mini';

/**
 * When a conversation's AgentCore session is ended (AGENTCORE_STOP_SESSION; docs/operations.md,
 * "AgentCore sessions" and "What it costs"): AgentCore bills a session's memory until it ends, idle
 * included, and ends it on its own only after its idle timeout. `npm run model` prices the
 * choices: `never` (the default) leaves it to the idle timeout — the cheapest policy whose cold
 * starts stay near the fewest; `after-answer` ends it as soon as a task ends, so every follow-up
 * starts cold; `quiet-<N>s` / `quiet-<N>m` ends it once the thread has had no new task for N after
 * an answer (an SQS delay: 15 minutes at most) — the same sessions an idle timeout of N leaves, for
 * a runtime whose timeout you cannot change.
 */
export const SESSION_STOP_PATTERN = /^(never|after-answer|quiet-([1-9]\d*)(s|m))$/;
/** The longest quiet a delayed check can wait for: SQS's largest delay. */
export const MAX_QUIET_SECONDS = 900;

export const SessionStopSchema = z._default(
  z.string().check(
    z.regex(SESSION_STOP_PATTERN, 'AGENTCORE_STOP_SESSION must be never, after-answer, or quiet-<N>s / quiet-<N>m'),
    z.refine((value) => quietSeconds(value) <= MAX_QUIET_SECONDS, `AGENTCORE_STOP_SESSION: a quiet of at most ${MAX_QUIET_SECONDS} s (15 min)`),
  ),
  'never',
);

export type AgentCoreSessionStopPolicy = { kind: 'never' } | { kind: 'after-answer' } | { kind: 'quiet'; seconds: number };

function quietSeconds(value: string): number {
  const match = SESSION_STOP_PATTERN.exec(value);
  if (!match?.[2]) return 0;
  return Number(match[2]) * (match[3] === 'm' ? 60 : 1);
}

export function agentCoreSessionStopPolicy(value: string): AgentCoreSessionStopPolicy {
  if (value === 'after-answer') return { kind: 'after-answer' };
  const seconds = quietSeconds(value);
  return seconds > 0 ? { kind: 'quiet', seconds } : { kind: 'never' };
}
