import { toSafeMrkdwn } from '../src/slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../src/slack/split-message';
import { summarize, type Summary } from './stats';

/**
 * Part 6: the reply splitter (src/slack/split-message.ts) on input shaped to hurt it. Each shape is
 * exactly `chars` UTF-16 code units; each sample is one `splitForSlack(text)` at Slack's default
 * chunk limit, in this process (it is pure CPU). The posting path also runs `toSafeMrkdwn` first;
 * that is reported beside it. Every result is checked as the unit tests check it — chunks within
 * the limit, none blank, no surrogate pair cut, no visible character lost — so a fast wrong answer
 * does not pass.
 */

export const SPLITTER_CHARS = 100_000;
/** The target: well under this for every shape. */
export const SPLITTER_TARGET_MS = 100;

export type SplitterShape = { name: string; what: string; build: (chars: number) => string };

/** `unit` repeated, padded with `x` to exactly `chars` units: never a cut pair or ZWJ sequence at the end. */
function fill(unit: string, chars: number, prefix = '', suffix = ''): string {
  const room = chars - prefix.length - suffix.length;
  const body = unit.repeat(Math.floor(room / unit.length));
  return prefix + body + 'x'.repeat(room - body.length) + suffix;
}

export const SPLITTER_SHAPES: readonly SplitterShape[] = [
  { name: 'no whitespace', what: 'one word: `a` × n', build: (n) => fill('a', n) },
  { name: 'URL-like, no whitespace', what: '`https://example.com/a/b?c=d&e=f#` repeated', build: (n) => fill('https://example.com/a/b?c=d&e=f#', n) },
  { name: 'CJK, no punctuation', what: '`日本語の文章です漢字かな` repeated', build: (n) => fill('日本語の文章です漢字かな', n) },
  { name: '。 then closing brackets', what: '`。` + `」` × (n − 1)', build: (n) => fill('」', n, '。') },
  { name: '. then closing brackets', what: '`.` + `)` × (n − 3) + ` x`', build: (n) => fill(')', n, '.', ' x') },
  { name: 'many tiny sentences', what: '`a. ` repeated', build: (n) => fill('a. ', n) },
  { name: 'many tiny CJK sentences', what: '`あ。` repeated', build: (n) => fill('あ。', n) },
  { name: 'a run of newlines', what: '`a` + `\\n` × (n − 2) + `b`', build: (n) => fill('\n', n, 'a', 'b') },
  { name: 'blank lines of spaces', what: '` \\n \\t\\n` repeated between two words', build: (n) => fill(' \n \t\n', n, 'a', 'b') },
  { name: 'emoji at odd offsets', what: '`x` + `😀` repeated (surrogate pairs)', build: (n) => fill('😀', n, 'x') },
  { name: 'flags', what: '`x` + `🇯🇵🇺🇸` repeated (two regional indicators per flag)', build: (n) => fill('🇯🇵🇺🇸', n, 'x') },
  { name: 'ZWJ sequences', what: '`👩‍💻` repeated (5 units per grapheme)', build: (n) => fill('👩‍💻', n) },
  { name: 'one giant grapheme', what: '`a` + U+0301 × (n − 1): a single grapheme', build: (n) => fill('\u0301', n, 'a') },
  { name: 'combining marks', what: '`e` + U+0301 repeated', build: (n) => fill('e\u0301', n) },
  { name: 'backticks', what: '`` ` `` × n (fences everywhere)', build: (n) => fill('`', n) },
  { name: 'one long code line', what: '```` ``` ```` + newline + `x` × (n − 8) + newline + ```` ``` ````', build: (n) => fill('x', n, '```\n', '\n```') },
  { name: 'links and entities', what: '`<https://example.com/x|a link> a &amp; b &lt; c ` repeated', build: (n) => fill('<https://example.com/x|a link> a &amp; b &lt; c ', n) },
  { name: 'stray < and &', what: '`<a&` repeated (escaped on the posting path)', build: (n) => fill('<a&', n) },
];

export type SplitterRow = {
  name: string;
  what: string;
  chunks: number;
  /** ms per `splitForSlack`. */
  split: Summary;
  /** ms per `splitForSlack(toSafeMrkdwn(text))`, the posting path. */
  posting: Summary;
  /** Why a result was wrong, if it was. */
  problem?: string;
};

export type SplitterResult = { chars: number; limit: number; samples: number; rows: SplitterRow[] };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const visible = (text: string) => text.replace(/```|\s/g, '');

/** What is wrong with `chunks` as a split of `text`, or undefined. The unit tests' rules, in one pass. */
export function splitProblem(text: string, chunks: readonly string[], limit: number): string | undefined {
  for (const [index, chunk] of chunks.entries()) {
    if (chunk.length > limit) return `chunk ${index} has ${chunk.length} units`;
    if (chunk.trim() === '') return `chunk ${index} is blank`;
    if (LONE_SURROGATE.test(chunk)) return `chunk ${index} has half a surrogate pair`;
  }
  if (visible(chunks.join('')) !== visible(text)) return 'the chunks do not add up to the text';
  return undefined;
}

export type SplitterOptions = {
  samples: number;
  /** A shape stops sampling once it has used this much time (a slow splitter still gets one sample). */
  budgetMs: number;
  chars?: number;
  log: (line: string) => void;
};

function timed<T>(run: () => T): { value: T; ms: number } {
  const started = process.hrtime.bigint();
  const value = run();
  return { value, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

function sample(run: () => unknown, samples: number, budgetMs: number): number[] {
  const times: number[] = [];
  let spent = 0;
  while (times.length < samples && (times.length === 0 || spent < budgetMs)) {
    const { ms } = timed(run);
    times.push(ms);
    spent += ms;
  }
  return times;
}

export function runReplySplitter(options: SplitterOptions): SplitterResult {
  const chars = options.chars ?? SPLITTER_CHARS;
  const limit = SLACK_CHUNK_LIMIT;
  const rows: SplitterRow[] = [];
  for (const shape of SPLITTER_SHAPES) {
    const text = shape.build(chars);
    if (text.length !== chars) throw new Error(`shape ${shape.name} built ${text.length} units, not ${chars}`);
    // Warm up on a tenth of the size, so the samples measure compiled code.
    splitForSlack(shape.build(Math.floor(chars / 10)));
    const chunks = splitForSlack(text);
    const problem = splitProblem(text, chunks, limit);
    const split = summarize(sample(() => splitForSlack(text), options.samples, options.budgetMs));
    const posting = summarize(sample(() => splitForSlack(toSafeMrkdwn(text)), options.samples, options.budgetMs));
    rows.push({ name: shape.name, what: shape.what, chunks: chunks.length, split, posting, ...(problem ? { problem } : {}) });
    options.log(`  ${shape.name}: ${split.median.toFixed(1)} ms (posting path ${posting.median.toFixed(1)} ms), ${chunks.length} chunks${problem ? `, WRONG: ${problem}` : ''}`);
  }
  return { chars, limit, samples: options.samples, rows };
}
