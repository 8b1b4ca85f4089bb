import { entityHoldFrom } from './entity-hold';

/** A streamed answer is checked a sentence at a time; a run-on sentence at most this long. */
const STREAM_WINDOW_CHARS = 400;
/**
 * After a stream's first window (its first sentence: the first text is not delayed), Bedrock is
 * asked again only once this many characters can go: a window is billed as at least one text unit
 * (1,000 characters), so a stream costs at most about two units per 1,000 characters shown, not
 * one per append. Guardrail.streamWindowChars.
 */
export const BEDROCK_STREAM_WINDOW_CHARS = 500;
const SENTENCE_END = /[.!?。！？\n]\s*/g;

/**
 * GUARDRAIL=bedrock's hold for a stream (Guardrail.holdFrom): Bedrock's entities (names,
 * addresses) span words, so a window ends where a sentence does — as Bedrock Agents checks a
 * stream in windows. Each window is one ApplyGuardrail call, billed as at least one text unit.
 */
export function sentenceHoldFrom(text: string): number {
  let cut = 0;
  for (const match of text.matchAll(SENTENCE_END)) if (match.index + match[0].length < text.length) cut = match.index + match[0].length;
  if (text.length - cut > STREAM_WINDOW_CHARS) cut = Math.max(cut, entityHoldFrom(text));
  return cut;
}
