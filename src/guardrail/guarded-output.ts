import type { Guardrail } from './guardrail';

/**
 * An agent's words on their way to Slack — an answer (src/verification/post/guard-output.ts), a
 * step's title or details (src/verification/live/step-cards.ts) — through the output guardrail:
 * the text that may pass, masked where it masks; undefined when it is blocked. A check that
 * fails throws: the caller shows nothing unchecked.
 */
export async function guardedOutput(guardrail: Guardrail, text: string, call: { signal?: AbortSignal; remainingMs?: number }): Promise<string | undefined> {
  const checked = await guardrail.check(text, 'output', call);
  return checked.action === 'blocked' ? undefined : checked.text;
}
