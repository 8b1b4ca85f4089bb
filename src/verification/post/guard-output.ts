import type { Guardrail } from '../../guardrail/guardrail';
import { guardedOutput } from '../../guardrail/guarded-output';
import type { ReplyMessage } from '../queues/replies-queue';

/**
 * slack-poster, before Slack shows a final answer (docs/operations.md, "Guardrails"): its text
 * through the output guardrail — masked, or, when blocked, the `guardrailBlockedAnswer` notice in
 * its place. Notices, errors and the Stop note are the zone's own words and pass as they are. The
 * built-in guardrail masks the same text the same way, so a redelivery splits and claims the same
 * chunks; a check that fails throws, and the replies queue brings the reply back.
 */
export async function guardedReplyText(guardrail: Guardrail, message: ReplyMessage, blockedText: string, call: { signal?: AbortSignal; remainingMs?: number }): Promise<string> {
  if (message.kind !== 'answer') return message.text;
  return (await guardedOutput(guardrail, message.text, call)) ?? blockedText;
}

