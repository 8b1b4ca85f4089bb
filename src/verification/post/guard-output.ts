import type { Guardrail } from '../../guardrail/guardrail';
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

/**
 * An agent's words on their way to Slack (an answer, a step's title: src/verification/live/step-cards.ts)
 * through the output guardrail: the text that may pass, masked where it masks; undefined when it is blocked.
 */
export async function guardedOutput(guardrail: Guardrail, text: string, call: { signal?: AbortSignal; remainingMs?: number }): Promise<string | undefined> {
  const checked = await guardrail.check(text, 'output', call);
  return checked.action === 'blocked' ? undefined : checked.text;
}
