import type { Detector } from './builtin-detectors';
import type { Numbering } from './numbering';

/** One entity found in a text: where it is and what it is (the text itself stays in the caller's string). */
export type EntitySpan = { start: number; end: number; type: string };

/**
 * Every entity the detectors find, in text order, without overlaps: where two overlap, the one
 * that starts first wins, and of two starting together the longer (a card number is not also read
 * as a phone number inside it).
 */
export function findEntities(text: string, detectors: readonly Detector[]): EntitySpan[] {
  const found: EntitySpan[] = [];
  for (const detector of detectors) {
    if (detector.mayContain && !detector.mayContain(text)) continue;
    detector.pattern.lastIndex = 0;
    for (const match of text.matchAll(detector.pattern)) {
      if (match[0].length === 0) continue;
      const accepted = detector.accept ? detector.accept(match[0]) : match[0];
      if (accepted) found.push({ start: match.index, end: match.index + accepted.length, type: detector.type });
    }
  }
  return withoutOverlaps(found);
}

/** Spans in text order; of two that overlap, the one starting first, or starting together the longer, is kept. */
export function withoutOverlaps(spans: EntitySpan[]): EntitySpan[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: EntitySpan[] = [];
  for (const span of spans) if (kept.length === 0 || span.start >= kept[kept.length - 1]!.end) kept.push(span);
  return kept;
}

/** The text with each span replaced by its numbered placeholder (`[EMAIL-1]`). */
export function maskSpans(text: string, spans: readonly EntitySpan[], numbering: Numbering): string {
  if (spans.length === 0) return text;
  let masked = '';
  let at = 0;
  for (const span of spans) {
    masked += text.slice(at, span.start) + numbering.placeholder(span.type, text.slice(span.start, span.end));
    at = span.end;
  }
  return masked + text.slice(at);
}
