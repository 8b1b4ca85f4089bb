/**
 * Splits a reply into Slack-sized messages (docs/architecture.md §2.4). Slack truncates a message's text at
 * 40,000 characters and asks apps to stay under 4,000, so long answers go out as several posts
 * in the same thread.
 *
 * Lengths are counted in UTF-16 code units (`String.prototype.length`). Slack states its limits in
 * characters; a code-unit count is never below the character count (an emoji outside the Basic
 * Multilingual Plane is two units), so a chunk within the limit in units is within it however Slack
 * counts, and the default of 3,900 leaves room under the 4,000 guidance.
 *
 * Where a chunk ends, in order of preference: a blank line (paragraph), a sentence end (`. ! ?`
 * followed by whitespace; `。！？．` with no space needed, as in Japanese and Chinese), a line
 * break, whitespace, a word boundary found by `Intl.Segmenter` (CJK text has no spaces), a grapheme
 * boundary, and last of all a code-unit cut that never separates a surrogate pair. A fenced code
 * block (```…```) that fits in one chunk is never broken; one that does not is split by lines and
 * each piece is closed and re-opened so the formatting survives. Whitespace at chunk edges is
 * dropped; every other character arrives in order.
 */

export const SLACK_CHUNK_LIMIT = 3900;

/** Small enough for tests; large enough that a re-fenced code piece always has room for text. */
const MIN_LIMIT = 64;

/** A piece of text that moves as a unit, and the whitespace that preceded it in the input. */
type Atom = { sep: string; text: string };

const CODE_BLOCK = /```[\s\S]*?```/g;
const PARAGRAPH_BREAK = /\n\s*\n/g;
/** Closing quotes and brackets that stay with the sentence they end. */
const CLOSERS = `"'”’)\\]}」』）】〕〉》`;
const SENTENCE_BREAK = new RegExp(
  // Latin sentence ends need whitespace after them, so "3.14" and "example.com" stay whole.
  `(?<=[.!?][${CLOSERS}]*)\\s+` +
    // CJK sentence ends need none; break after the last ender and closer of a run ("？！」").
    `|(?<=[。！？．][${CLOSERS}]*)(?![。！？．${CLOSERS}])\\s*`,
  'g',
);
const LINE_BREAK = /\r?\n/g;
const WHITESPACE = /\s+/g;
/** A fence line's language tag (```python): kept on the first piece only; Slack does not render it. */
const FENCE_TAG = /^\s*[\w+#.-]{0,30}\s*$/;

const words = new Intl.Segmenter(undefined, { granularity: 'word' });
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function splitForSlack(text: string, limit = SLACK_CHUNK_LIMIT): string[] {
  if (!Number.isInteger(limit) || limit < MIN_LIMIT) throw new RangeError(`limit must be an integer of at least ${MIN_LIMIT}, got ${limit}`);
  return pack(atomsOf(text, limit), limit);
}

/** Code blocks and paragraphs, with anything longer than the limit broken down further. */
function atomsOf(text: string, limit: number): Atom[] {
  const atoms: Atom[] = [];
  // Whitespace seen but not yet attached to an atom (it precedes the next one).
  let pending = '';
  const addText = (segment: string) => {
    const split = splitOn(segment, PARAGRAPH_BREAK);
    split.atoms.forEach((atom, index) => atoms.push(...refine(index === 0 ? { sep: pending + atom.sep, text: atom.text } : atom, limit, 0)));
    pending = split.atoms.length === 0 ? pending + split.trailing : split.trailing;
  };

  let last = 0;
  for (const match of text.matchAll(CODE_BLOCK)) {
    addText(text.slice(last, match.index));
    const block = match[0];
    if (block.length <= limit) {
      atoms.push({ sep: pending, text: block });
    } else {
      codeBlockPieces(block, limit).forEach((piece, index) => atoms.push({ sep: index === 0 ? pending : '\n', text: piece }));
    }
    pending = '';
    last = match.index + block.length;
  }
  addText(text.slice(last));
  return atoms;
}

/** Finer boundaries for an atom that does not fit: sentences, then lines, then whitespace. */
const LEVELS = [SENTENCE_BREAK, LINE_BREAK, WHITESPACE];

function refine(atom: Atom, limit: number, level: number): Atom[] {
  if (atom.text.length <= limit) return [atom];
  const separator = LEVELS[level];
  if (!separator) return hardCut(atom, limit);
  const { atoms } = splitOn(atom.text, separator);
  return atoms.flatMap((part, index) => refine(index === 0 ? { sep: atom.sep + part.sep, text: part.text } : part, limit, level + 1));
}

/**
 * Splits at every match of `separator`. Whitespace goes to the separators, so it can be dropped at
 * a chunk's edge; indentation after the last leading newline stays with its text.
 */
function splitOn(text: string, separator: RegExp): { atoms: Atom[]; trailing: string } {
  const atoms: Atom[] = [];
  let sep = '';
  const take = (piece: string) => {
    if (piece.trim() === '') {
      sep += piece;
      return;
    }
    const lead = /^\s*\n/.exec(piece)?.[0] ?? '';
    const rest = piece.slice(lead.length);
    const body = rest.trimEnd();
    atoms.push({ sep: sep + lead, text: body });
    sep = rest.slice(body.length);
  };
  let start = 0;
  for (const match of text.matchAll(separator)) {
    take(text.slice(start, match.index));
    sep += match[0];
    start = match.index + match[0].length;
  }
  take(text.slice(start));
  return { atoms, trailing: sep };
}

/** Text with no whitespace left to break at: words (dictionary-based for CJK), else graphemes. */
function hardCut(atom: Atom, limit: number): Atom[] {
  const pieces: string[] = [];
  for (const { segment } of words.segment(atom.text)) {
    if (segment.length <= limit) {
      pieces.push(segment);
      continue;
    }
    for (const { segment: grapheme } of graphemes.segment(segment)) {
      if (grapheme.length <= limit) pieces.push(grapheme);
      else pieces.push(...codeUnitSlices(grapheme, limit));
    }
  }
  // pack() joins these back up to the limit; an empty separator keeps them glued together.
  return pieces.map((text, index) => ({ sep: index === 0 ? atom.sep : '', text }));
}

/** The last resort: slices of at most `limit` units that never separate a surrogate pair. */
function codeUnitSlices(text: string, limit: number): string[] {
  const slices: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + limit);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    slices.push(text.slice(start, end));
    start = end;
  }
  return slices;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A code block too long for one message, as several complete blocks: lines are packed into
 * pieces, each closed with ``` and the next re-opened, so each message renders as code.
 */
function codeBlockPieces(block: string, limit: number): string[] {
  const close = '\n```';
  const reopen = '```\n';
  const lines = block.slice(3, -3).split('\n');
  let open = '```';
  if (lines.length > 1 && FENCE_TAG.test(lines[0]!)) open = `\`\`\`${lines.shift()}\n`;
  // The newline before the closing fence is supplied by `close`.
  if (lines.length > 1 && lines[lines.length - 1]!.trim() === '') lines.pop();

  // A line longer than any piece's room is cut; the room is the smaller of first and later pieces'.
  const room = limit - Math.max(open.length, reopen.length) - close.length;
  const cutLines = lines.flatMap((line) => (line.length <= room ? [line] : hardCut({ sep: '', text: line }, room).reduce<string[]>(packInto(room), [])));

  const pieces: string[] = [];
  let body: string[] = [];
  let bodyLength = 0;
  for (const line of cutLines) {
    const added = body.length === 0 ? line.length : bodyLength + 1 + line.length;
    if (body.length > 0 && open.length + added + close.length > limit) {
      pieces.push(open + body.join('\n') + close);
      open = reopen;
      body = [line];
      bodyLength = line.length;
    } else {
      body.push(line);
      bodyLength = added;
    }
  }
  if (body.length > 0) pieces.push(open + body.join('\n') + close);
  return pieces;
}

/** A reducer that glues small pieces into strings of at most `limit` units. */
function packInto(limit: number) {
  return (packed: string[], atom: Atom): string[] => {
    const lastIndex = packed.length - 1;
    if (lastIndex >= 0 && packed[lastIndex]!.length + atom.text.length <= limit) packed[lastIndex] += atom.text;
    else packed.push(atom.text);
    return packed;
  };
}

/** Greedy: each chunk takes atoms, with the whitespace between them, while they fit. */
function pack(atoms: Atom[], limit: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const atom of atoms) {
    if (current === '') {
      current = atom.text;
    } else if (current.length + atom.sep.length + atom.text.length <= limit) {
      current += atom.sep + atom.text;
    } else {
      chunks.push(current);
      current = atom.text;
    }
  }
  if (current !== '') chunks.push(current);
  return chunks;
}
