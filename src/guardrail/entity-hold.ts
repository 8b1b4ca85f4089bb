/**
 * How much of a stream's unreleased text the built-in guardrail holds back (Guardrail.holdFrom):
 * the shortest end of it that could still be the start of an entity once more text arrives —
 * nothing more, so the answer flows with at most a word's delay. Three shapes of entity can grow:
 *
 * - a run of the characters entities are made of (an address, a key, a token, a number written
 *   without spaces): held from the run's start. Japanese text needs no spaces around an entity,
 *   and its letters are not such characters, so `メールはtaro@ex` holds back `taro@ex` only;
 * - groups of digits (or an IBAN's groups of four) joined by single spaces — `+1 415 555`,
 *   `DE89 3704 00`: held from the first group;
 * - a private key block whose footer has not come yet: held from its header.
 *
 * A custom pattern that can match across spaces declares its `maxLength`, and that many characters
 * stay held. test/guardrail/stream-masker.test.ts cuts every corpus message at every point to hold
 * this to what masking the whole text finds.
 */
const ENTITY_CHAR = /[A-Za-z0-9._%+\-@/=０-９＋－‐‑–ー()（）]/;
/** Characters of a group of a number written in groups: digits with their punctuation. */
const DIGIT_GROUP_CHAR = /[0-9０-９+＋()（）\-－‐‑–ー.]/;
const IBAN_GROUP_CHAR = /[A-Z0-9]/;
const KEY_HEADER = '-----BEGIN ';

export function entityHoldFrom(text: string, customMaxLength = 0): number {
  let from = runStart(text, text.length);
  // Groups joined by one space, back from the last one (which may still be empty, or partial):
  // a group may be glued to what is before it (`2024-01-15)+44`), and then the number starts no earlier.
  // A cut is always at the start of a run, so a window's check sees each entity's left edge as the whole text does.
  while (from >= 2 && text[from - 1] === ' ' && !/\s/.test(text[from - 2]!)) {
    const current = text.slice(from, runEnd(text, from));
    if (current !== '' && groupStart(current, 0, current.length) !== 0) break;
    const previous = runStart(text, from - 1);
    const group = groupStart(text, previous, from - 1);
    if (group === from - 1) break;
    // Glued: held from the whole run, so the check sees what the number is glued to (`ID12(303) 555-0100` is no phone).
    from = previous;
    if (group > previous) break;
  }
  from = Math.min(from, openKeyBlock(text, from));
  if (customMaxLength > 1) from = Math.min(from, Math.max(0, text.length - (customMaxLength - 1)));
  return from;
}

/** Where the end of text[start, end) that can be a group of a number begins (digits and their punctuation, or up to four capitals and digits); `end` if none. */
function groupStart(text: string, start: number, end: number): number {
  let digits = end;
  while (digits > start && DIGIT_GROUP_CHAR.test(text[digits - 1]!)) digits--;
  let iban = end;
  while (iban > start && end - iban < 4 && IBAN_GROUP_CHAR.test(text[iban - 1]!)) iban--;
  if (iban > start && IBAN_GROUP_CHAR.test(text[iban - 1]!)) iban = end;
  return Math.min(digits, iban);
}

function runStart(text: string, end: number): number {
  let start = end;
  while (start > 0 && ENTITY_CHAR.test(text[start - 1]!)) start--;
  return start;
}

function runEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && ENTITY_CHAR.test(text[end]!)) end++;
  return end;
}

/**
 * Where a private key block starts whose footer has not come yet — or has, but ends after `from`
 * (cutting there would cut the block) — or where the text ends with the start of a header; else text.length.
 */
function openKeyBlock(text: string, from: number): number {
  const header = text.lastIndexOf(KEY_HEADER);
  if (header >= 0) {
    const lineEnd = text.indexOf('\n', header);
    const headerLine = text.slice(header, lineEnd < 0 ? text.length : lineEnd);
    const isKey = lineEnd < 0 || headerLine.includes('PRIVATE KEY-----');
    const footer = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/.exec(text.slice(header));
    if (isKey && (!footer || header + footer.index + footer[0].length > from)) return header;
  }
  const dashes = text.lastIndexOf('-----');
  if (dashes >= 0) {
    const tail = text.slice(dashes);
    if (KEY_HEADER.startsWith(tail) || (tail.startsWith(KEY_HEADER) && /^-----BEGIN [A-Z0-9 ]*-{0,5}$/.test(tail))) return dashes;
  }
  return text.length;
}
