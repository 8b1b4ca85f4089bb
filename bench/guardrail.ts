import { applyMode } from '../src/guardrail/apply-mode';
import { BuiltinGuardrail } from '../src/guardrail/builtin-guardrail';
import { Numbering } from '../src/guardrail/numbering';
import { StreamMasker } from '../src/guardrail/stream-masker';
import { guardrailCorpus, seededRandom } from '../test/support/guardrail-corpus';
import { measureLiveMaskDelay, type LiveMaskDelay } from './guardrail-live';
import { percentile, summarize, type Summary } from './stats';

/**
 * Part 8: the built-in guardrail (src/guardrail/, docs/operations.md "Guardrails"), pure CPU in the
 * bench process. (a) Masking 100,000 characters of text of several shapes — the seeded corpus (an
 * entity in every message), plain prose, Japanese prose, numbers everywhere — each result checked:
 * the corpus's entities all gone. (b) What the stream masker adds to a streamed answer: 60-word
 * answers (corpus sentences, entities included) arrive a word every `wordMs` on a simulated clock;
 * each word is shown when the push that releases it returns (the word's arrival plus the measured
 * CPU of that push), and the delay is that minus its arrival — for the first text, and for every
 * character. (c) The same through the real live path, in real time (bench/guardrail-live.ts).
 */
export const GUARDRAIL_CHARS = 100_000;
export const MASK_TARGET_MS = 50;
export const FIRST_TEXT_DELAY_TARGET_MS = 300;
/** Answers part 8 (c) streams through the live path, twice each (unmasked and masked), ten at a time. */
export const LIVE_PATH_ANSWERS = 40;

export type MaskRow = { name: string; entities: number; mask: Summary; problem?: string };
export type StreamDelay = { answers: number; words: number; wordMs: number; firstText: { p50: number; p95: number; max: number }; perChar: { p50: number; p95: number; max: number }; leaked: number };
export type GuardrailBenchResult = { chars: number; samples: number; rows: MaskRow[]; stream: StreamDelay; live: LiveMaskDelay };
export type GuardrailBenchOptions = { samples: number; answers: number; words: number; wordMs: number; log: (line: string) => void };

const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' });
const maskNow = (text: string) => applyMode(text, guardrail.scan(text), 'mask', { numbering: new Numbering() });

function fillTo(chars: number, pieces: readonly string[]): string {
  let text = '';
  for (let i = 0; text.length < chars; i++) text += `${pieces[i % pieces.length]!}\n`;
  return text.slice(0, chars);
}

function timedMs(run: () => unknown): number {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function maskRows(options: GuardrailBenchOptions): MaskRow[] {
  const corpus = guardrailCorpus(37, 200);
  const corpusText = fillTo(GUARDRAIL_CHARS, corpus.map((message) => message.text));
  const shapes: Array<{ name: string; text: string; mustVanish: string[] }> = [
    { name: 'seeded corpus (an entity per message)', text: corpusText, mustVanish: corpus.flatMap((message) => message.entities.map((entity) => entity.value)).filter((value) => corpusText.includes(value)) },
    { name: 'English prose, no entity', text: fillTo(GUARDRAIL_CHARS, ['The deploy finished at 10:30 and version 1.10.2 is live; order 48213 shipped on 2024-05-01. ']), mustVanish: [] },
    { name: 'Japanese prose, no entity', text: fillTo(GUARDRAIL_CHARS, ['本日のデプロイは10時30分に完了し、バージョン1.10.2が公開されました。注文番号は48213です。']), mustVanish: [] },
    { name: 'digits everywhere', text: fillTo(GUARDRAIL_CHARS, ['1234 5678 9012 3456 7890 2024-05-01 1712345678.123456 +1 ']), mustVanish: [] },
  ];
  return shapes.map((shape) => {
    maskNow(shape.text.slice(0, GUARDRAIL_CHARS / 10));
    const result = maskNow(shape.text);
    const survivor = shape.mustVanish.find((value) => result.text.includes(value));
    const times = Array.from({ length: options.samples }, () => timedMs(() => maskNow(shape.text)));
    const entities = Object.values(result.findings).reduce((sum, count) => sum + count, 0);
    const row: MaskRow = { name: shape.name, entities, mask: summarize(times), ...(survivor ? { problem: 'an entity survived' } : {}) };
    options.log(`  ${shape.name}: ${row.mask.median.toFixed(1)} ms, ${entities} entities masked${row.problem ? `, WRONG: ${row.problem}` : ''}`);
    return row;
  });
}

/** 60-word answers from corpus sentences, a word at a time on a simulated clock; the masker's CPU measured. */
async function streamDelay(options: GuardrailBenchOptions): Promise<StreamDelay> {
  const corpus = guardrailCorpus(38, 100);
  const random = seededRandom(8);
  const firstText: number[] = [];
  const perChar: number[] = [];
  let leaked = 0;
  for (let answer = 0; answer < options.answers; answer++) {
    const words: string[] = [];
    while (words.length < options.words) words.push(...corpus[Math.floor(random() * corpus.length)]!.text.split(/(?<=\s)/));
    const chunks = words.slice(0, options.words);
    const masker = new StreamMasker(guardrail);
    // Arrival time of every character pushed, and how many of them have been shown.
    const arrivals: number[] = [];
    let released = 0;
    let shown = '';
    let first: number | undefined;
    const show = (text: string, at: number) => {
      const nowReleased = arrivals.length - masker.held;
      for (let i = released; i < nowReleased; i++) perChar.push(at - arrivals[i]!);
      released = nowReleased;
      if (text === '') return;
      // Unmasked, the first word would show the moment it arrived (time 0).
      first ??= at;
      shown += text;
    };
    for (const [index, chunk] of chunks.entries()) {
      const arrivedAt = index * options.wordMs;
      for (let i = 0; i < chunk.length; i++) arrivals.push(arrivedAt);
      const started = process.hrtime.bigint();
      const piece = await masker.push(chunk);
      show(piece.text, arrivedAt + Number(process.hrtime.bigint() - started) / 1e6);
    }
    // The answer's end arrives with its last word.
    const endAt = (chunks.length - 1) * options.wordMs;
    const started = process.hrtime.bigint();
    const last = await masker.end();
    show(last.text, endAt + Number(process.hrtime.bigint() - started) / 1e6);
    if (first !== undefined) firstText.push(first);
    const whole = maskNow(chunks.join('')).text;
    if (shown !== whole) leaked++;
  }
  const describe = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95), max: values.reduce((a, b) => Math.max(a, b), 0) });
  const result: StreamDelay = { answers: options.answers, words: options.words, wordMs: options.wordMs, firstText: describe(firstText), perChar: describe(perChar), leaked };
  options.log(`  stream: first text +${result.firstText.p95.toFixed(1)} ms p95, a character +${result.perChar.p95.toFixed(1)} ms p95 (${options.answers} answers of ${options.words} words, one per ${options.wordMs} ms)`);
  return result;
}

export async function runGuardrailBench(options: GuardrailBenchOptions): Promise<GuardrailBenchResult> {
  const rows = maskRows(options);
  const stream = await streamDelay(options);
  // (c) In real time, so fewer answers: each takes words × wordMs.
  const live = await measureLiveMaskDelay({ answers: Math.min(options.answers, LIVE_PATH_ANSWERS), words: options.words, wordMs: options.wordMs, log: options.log });
  return { chars: GUARDRAIL_CHARS, samples: options.samples, rows, stream, live };
}
