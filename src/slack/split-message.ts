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
 * each piece is closed and re-opened so the formatting survives. A Slack control sequence (`<…>`:
 * a link, a mention) and an escape (`&amp;`, `&lt;`, `&gt;`) are never cut, unless one is longer
 * than a whole chunk. Whitespace at chunk edges is dropped; every other character arrives in order.
 *
 * The time taken is linear in the text's length, whatever its shape (bench part 6 measures the
 * worst shapes we know): boundaries are found by scans that never look back, and `Intl.Segmenter`,
 * whose iteration slows down on long strings, is only asked about a window around each cut.
 */

export const SLACK_CHUNK_LIMIT = 3900;

/** Small enough for tests; large enough that a re-fenced code piece always has room for text. */
const MIN_LIMIT = 64;

/**
 * A piece of text that moves as a unit, and the whitespace that preceded it in the input. `cut`:
 * longer than a chunk and with no whitespace left to break at; pack() cuts it where it must.
 */
type Atom = { sep: string; text: string; cut?: true };

/** Where a text may be broken: calls `found` with the [from, to) of each separator, in order; the separator is dropped at a chunk edge. */
type Separator = (text: string, found: (from: number, to: number) => void) => void;

const CODE_BLOCK = /```[\s\S]*?```/g;
/** Slack control sequences and escapes, which must arrive whole (see safe-mrkdwn.ts). */
const PROTECTED = /<[^<>\n]*>|&(?:amp|lt|gt);/g;
/** A fence line's language tag (```python): kept on the first piece only; Slack does not render it. */
const FENCE_TAG = /^\s*[\w+#.-]{0,30}\s*$/;

/**
 * Made at the first split that needs one, not with the module: a segmenter loads ICU's break
 * data (~10 ms), and slack-events bundles this file without ever splitting (bench part 1).
 */
let segmenters: { word: Intl.Segmenter; grapheme: Intl.Segmenter } | undefined;
const segmenter = (granularity: 'word' | 'grapheme') => (segmenters ??= { word: new Intl.Segmenter(undefined, { granularity: 'word' }), grapheme: new Intl.Segmenter(undefined, { granularity: 'grapheme' }) })[granularity];

export function splitForSlack(text: string, limit = SLACK_CHUNK_LIMIT): string[] {
  if (!Number.isInteger(limit) || limit < MIN_LIMIT) throw new RangeError(`limit must be an integer of at least ${MIN_LIMIT}, got ${limit}`);
  return pack(atomsOf(text, limit), limit);
}

function matchesOf(pattern: RegExp): Separator {
  return (text, found) => {
    for (const match of text.matchAll(pattern)) found(match.index, match.index + match[0].length);
  };
}

const PARAGRAPH_BREAK = matchesOf(/\n\s*\n/g);
const LINE_BREAK = matchesOf(/\r?\n/g);
const WHITESPACE = matchesOf(/\s+/g);

/** `\s` as JavaScript regular expressions define it. */
function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

const enum Mark {
  None,
  /** `. ! ?`: ends a sentence when whitespace follows. */
  LatinEnd,
  /** `。！？．`: ends a sentence with or without a space. */
  CjkEnd,
  /** A closing quote or bracket, `"'”’)]}」』）】〕〉》`: stays with the sentence it ends. */
  Closer,
}

function markOf(code: number): Mark {
  switch (code) {
    case 0x2e: // .
    case 0x21: // !
    case 0x3f: // ?
      return Mark.LatinEnd;
    case 0x3002: // 。
    case 0xff01: // ！
    case 0xff1f: // ？
    case 0xff0e: // ．
      return Mark.CjkEnd;
    case 0x22: // "
    case 0x27: // '
    case 0x201d: // ”
    case 0x2019: // ’
    case 0x29: // )
    case 0x5d: // ]
    case 0x7d: // }
    case 0x300d: // 」
    case 0x300f: // 』
    case 0xff09: // ）
    case 0x3011: // 】
    case 0x3015: // 〕
    case 0x3009: // 〉
    case 0x300b: // 》
      return Mark.Closer;
    default:
      return Mark.None;
  }
}

/**
 * Sentence ends, in one pass. A Latin end (`. ! ?`) needs whitespace after it, so "3.14" and
 * "example.com" stay whole; a CJK end (`。！？．`) needs none, and the break comes after the last
 * ender and closer of a run ("？！」"). Closing quotes and brackets after an ender stay with it. The
 * separator is the whitespace after the end (possibly none, after a CJK end).
 */
const sentenceBreaks: Separator = (text, found) => {
  const length = text.length;
  // What the nearest character before `at` that is not a closer was.
  let before = Mark.None;
  for (let at = 0; at <= length; ) {
    const code = at < length ? text.charCodeAt(at) : -1;
    const mark = code === -1 ? Mark.None : markOf(code);
    if (before === Mark.LatinEnd ? code !== -1 && isSpace(code) : before === Mark.CjkEnd && mark !== Mark.CjkEnd && mark !== Mark.Closer) {
      let end = at;
      while (end < length && isSpace(text.charCodeAt(end))) end += 1;
      found(at, end);
      if (end > at) {
        before = Mark.None;
        at = end;
        continue;
      }
    }
    if (mark !== Mark.Closer) before = mark;
    at += 1;
  }
};

/** Protected spans of `text` that fit in a chunk, as sorted, disjoint [start, end) pairs. */
function protectedSpans(text: string, limit: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  if (!text.includes('<') && !text.includes('&')) return spans;
  for (const match of text.matchAll(PROTECTED)) {
    if (match[0].length <= limit) spans.push([match.index, match.index + match[0].length]);
  }
  return spans;
}

/** Code blocks and paragraphs, with anything longer than the limit broken down further. */
function atomsOf(text: string, limit: number): Atom[] {
  const atoms: Atom[] = [];
  // Whitespace seen but not yet attached to an atom (it precedes the next one).
  let pending = '';
  const addText = (segment: string) => {
    if (segment === '') return;
    const split = splitOn(segment, PARAGRAPH_BREAK, limit);
    split.atoms.forEach((atom, index) => refine(index === 0 ? { sep: pending + atom.sep, text: atom.text } : atom, limit, 0, atoms));
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
const LEVELS: Separator[] = [sentenceBreaks, LINE_BREAK, WHITESPACE];

/** Appends `atom` to `out`, broken at the first level of boundaries that makes its parts fit. */
function refine(atom: Atom, limit: number, level: number, out: Atom[]): void {
  if (atom.text.length <= limit) {
    out.push(atom);
    return;
  }
  const separator = LEVELS[level];
  if (!separator) {
    out.push({ ...atom, cut: true });
    return;
  }
  splitOn(atom.text, separator, limit).atoms.forEach((part, index) => refine(index === 0 ? { sep: atom.sep + part.sep, text: part.text } : part, limit, level + 1, out));
}

/**
 * Splits at every separator outside a protected span. Whitespace goes to the separators, so it can
 * be dropped at a chunk's edge; indentation after the last leading newline stays with its text.
 */
function splitOn(text: string, separator: Separator, limit: number): { atoms: Atom[]; trailing: string } {
  const atoms: Atom[] = [];
  let sep = '';
  const take = (piece: string) => {
    if (piece === '') return;
    if (!isSpace(piece.charCodeAt(0))) {
      const body = piece.trimEnd();
      atoms.push({ sep, text: body });
      sep = body.length === piece.length ? '' : piece.slice(body.length);
      return;
    }
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
  // Found on the first separator, if the text has anything to protect.
  let spans: Array<[number, number]> | undefined;
  let span = 0;
  let start = 0;
  separator(text, (from, to) => {
    spans ??= protectedSpans(text, limit);
    while (span < spans.length && spans[span]![1] <= from) span += 1;
    if (span < spans.length && spans[span]![0] < from) return;
    take(text.slice(start, from));
    sep += text.slice(from, to);
    start = to;
  });
  take(text.slice(start));
  return { atoms, trailing: sep };
}

/** Greedy: each chunk takes atoms, with the whitespace between them, while they fit. */
function pack(atoms: Atom[], limit: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const atom of atoms) {
    if (atom.cut) {
      current = packCut(atom, current, chunks, limit);
    } else if (current === '') {
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

/**
 * Text with no whitespace left to break at, longer than a chunk: its start tops up the current
 * chunk if a word of it fits there, whole chunks follow, and what is left becomes the current
 * chunk (returned) for the atoms after it.
 */
function packCut(atom: Atom, current: string, chunks: string[], limit: number): string {
  const cutter = new Cutter(atom.text, limit);
  let start = 0;
  if (current !== '') {
    const room = limit - current.length - atom.sep.length;
    if (room > 0) start = cutter.cut(0, room);
    chunks.push(start > 0 ? current + atom.sep + atom.text.slice(0, start) : current);
  }
  const slices = cutter.slicesFrom(start);
  const rest = slices.pop()!;
  for (const slice of slices) chunks.push(slice);
  return rest;
}

type Found = { start: number; end: number; whole: boolean };

/** How far a cut looks first, and how close to a window's edge a boundary is not trusted. */
const SMALL_WINDOW = 64;
const EDGE = 16;

/**
 * Where to cut a text that has no better boundary. A word that fits in a chunk is never cut: the
 * chunk ends before it. A longer word is cut at a grapheme boundary, and a grapheme longer than a
 * chunk (a long chain of combining marks) between code units, never inside a surrogate pair.
 * Protected spans that fit in a chunk are never cut. Segmenters only see a window of about two
 * chunks around the cut, so each cut costs O(limit) and a whole text O(length).
 */
class Cutter {
  constructor(
    private readonly text: string,
    private readonly limit: number,
  ) {}

  /** The text from `start` on, in slices of at most `limit` units; only the last may be short. */
  slicesFrom(start: number): string[] {
    const slices: string[] = [];
    while (this.text.length - start > this.limit) {
      const end = this.cut(start, this.limit);
      slices.push(this.text.slice(start, end));
      start = end;
    }
    slices.push(this.text.slice(start));
    return slices;
  }

  /**
   * The end of the next piece starting at `start` that fits in `room` units: after `start`, or
   * `start` itself when nothing fits in a partly filled chunk (`room` < limit).
   */
  cut(start: number, room: number): number {
    const fresh = room >= this.limit;
    const at = start + room;
    const word = this.segmentAt(segmenter('word'), at, this.limit + 1);
    const candidates: number[] = [];
    if (word.whole && word.end - word.start <= this.limit) {
      candidates.push(word.start);
    }
    if (!candidates.length || fresh) {
      const grapheme = this.segmentAt(segmenter('grapheme'), at, this.limit + 1);
      if (grapheme.whole && grapheme.end - grapheme.start <= this.limit) candidates.push(grapheme.start);
      else candidates.push(this.codeUnitCut(at));
    }
    for (const candidate of candidates) {
      const end = this.outsideSpans(this.betweenFlags(candidate, start));
      if (end > start) return end;
      // A word that fits in a chunk but not in what is left of this one waits for the next chunk.
      if (!fresh) return start;
    }
    // Only reached on a fresh chunk: progress over neatness.
    return this.codeUnitCut(at);
  }

  /**
   * The segment that contains `at`, found in a window reaching `reach` units either side; `whole`
   * if the window holds all of it. A segmenter sees no context beyond its window, so a boundary
   * close to either edge may be an artefact: a segment near an edge does not count as whole.
   */
  private segmentAt(segmenter: Intl.Segmenter, at: number, reach: number): Found {
    // Most words and graphemes are short: try a small window first.
    for (const size of [Math.min(SMALL_WINDOW, reach), reach]) {
      const from = Math.max(0, at - size - EDGE);
      const to = Math.min(this.text.length, at + size + EDGE);
      const found = segmenter.segment(this.text.slice(from, to)).containing(at - from)!;
      const start = from + found.index;
      const end = start + found.segment.length;
      const whole = (from === 0 || start >= from + EDGE) && (to === this.text.length || end <= to - EDGE);
      if (whole || size === reach) return { start, end, whole };
    }
    throw new Error('unreachable');
  }

  /**
   * `at`, or one regional indicator earlier if `at` would split a flag (🇯🇵 is two of them). A
   * segmenter pairs them from the first it sees, which a window may start in the middle of, so
   * they are counted here from `start`, itself a boundary (or the start of the text).
   */
  private betweenFlags(at: number, start: number): number {
    if (!this.isRegionalIndicator(at) || !this.isRegionalIndicator(at - 2)) return at;
    let first = at;
    while (first - 2 >= start && this.isRegionalIndicator(first - 2)) first -= 2;
    return ((at - first) / 2) % 2 === 0 ? at : at - 2;
  }

  /** U+1F1E6–U+1F1FF (regional indicators) starting at `index`. */
  private isRegionalIndicator(index: number): boolean {
    if (index < 0) return false;
    const low = this.text.charCodeAt(index + 1);
    return this.text.charCodeAt(index) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
  }

  /** `at`, or one unit earlier if `at` falls inside a surrogate pair. */
  private codeUnitCut(at: number): number {
    return isHighSurrogate(this.text.charCodeAt(at - 1)) && isLowSurrogate(this.text.charCodeAt(at)) ? at - 1 : at;
  }

  /**
   * `cut`, or the start of the protected span it falls inside. Looked for around it only (at most
   * a chunk either way), so a cut costs O(limit) however many spans the text has: an escape is
   * the `&` at most four units back; a sequence opens at the nearest `<` before `at` with no `>` or
   * newline between, and closes at the first `>` from `at` on with no `<` or newline between —
   * exactly the spans PROTECTED finds.
   */
  private outsideSpans(cut: number): number {
    const text = this.text;
    let at = cut;
    for (let amp = at - 1; amp >= 0 && amp >= at - 4; amp -= 1) {
      if (text.charCodeAt(amp) !== AMPERSAND) continue;
      const entity = ENTITIES.find((name) => text.startsWith(name, amp));
      if (entity && amp + entity.length > at) at = amp;
      break;
    }
    // An escape may sit inside a link's label: look for the sequence around the escape's start.
    for (let open = at - 1; open >= 0 && open > at - this.limit; open -= 1) {
      const code = text.charCodeAt(open);
      if (code === GREATER_THAN || code === NEWLINE) break;
      if (code !== LESS_THAN) continue;
      for (let close = at; close < text.length && close < open + this.limit; close += 1) {
        const next = text.charCodeAt(close);
        if (next === GREATER_THAN) return open;
        if (next === LESS_THAN || next === NEWLINE) break;
      }
      break;
    }
    return at;
  }
}

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
const AMPERSAND = 0x26;
const NEWLINE = 0x0a;
const ENTITIES = ['&amp;', '&lt;', '&gt;'];

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
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
  const cutLines = lines.flatMap((line) => (line.length <= room ? [line] : new Cutter(line, room).slicesFrom(0)));

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
