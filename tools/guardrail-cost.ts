import { BEDROCK_STREAM_WINDOW_CHARS } from '../src/guardrail/sentence-hold';
import { LIVE_TEXT_LIMIT } from '../src/verification/live/live-parts';
import { PRICES } from './prices';

/**
 * What GUARDRAIL=bedrock adds to a message (docs/operations.md, "Guardrails" and "What it costs"):
 * each ApplyGuardrail call is billed by text units of its sensitive-information filter — a unit
 * is up to 1,000 characters of one call, so a short text is a whole unit — and the zone makes one
 * call per text it checks: on input the message and each earlier turn of the thread it carries
 * (src/verification/invoke/guard-input.ts); on output the final answer, the windows of its
 * streamed previews (the first sentence, then BEDROCK_STREAM_WINDOW_CHARS or more at a time:
 * src/guardrail/stream-window.ts), and the agent session's title where Slack has one. Off by
 * default, so it is shown beside the total, not in it.
 */
export const GUARDRAIL_ASSUMPTIONS = {
  /** The message and the thread's earlier turns it carries, each checked on its own, each under 1,000 characters. */
  inputTexts: 3,
  /** Characters per output token (English prose; Japanese is about one). */
  charsPerToken: 4,
  /** The first window of a streamed answer: its first sentence. */
  firstWindowChars: 100,
} as const;

export type GuardrailCostRow = { direction: 'input' | 'output'; what: string; units: number; per1000: number };

export function guardrailCostRows(outputTokens: number, g = GUARDRAIL_ASSUMPTIONS): GuardrailCostRow[] {
  const answerChars = outputTokens * g.charsPerToken;
  const previewChars = Math.min(answerChars, LIVE_TEXT_LIMIT);
  // What a preview releases is checked; the tail it still holds when the answer is done is the final answer's.
  const windows = previewChars <= g.firstWindowChars ? 1 : 1 + Math.floor((previewChars - g.firstWindowChars) / BEDROCK_STREAM_WINDOW_CHARS);
  const row = (direction: GuardrailCostRow['direction'], what: string, units: number): GuardrailCostRow => ({ direction, what, units, per1000: 1000 * units * PRICES.guardrailPiiTextUnit.usd });
  return [
    row('input', `the message and the thread turns it carries: ${g.inputTexts} calls`, g.inputTexts),
    row('output', `the final answer: ${answerChars.toLocaleString('en-US')} characters (${outputTokens} tokens × ${g.charsPerToken})`, Math.ceil(answerChars / 1000)),
    row('output', `its streamed previews: ${windows} windows (first sentence, then ≥ ${BEDROCK_STREAM_WINDOW_CHARS} characters)`, windows),
    row('output', 'the agent session title (AGENT_SESSIONS)', 1),
  ];
}
