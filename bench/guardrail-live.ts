import { BuiltinGuardrail } from '../src/guardrail/builtin-guardrail';
import type { Log } from '../src/observability/logger';
import { textStep, type StreamStep } from '../src/protocols/outcome';
import { createSlackWebClient, WebApiSlackReplies } from '../src/slack/slack-replies';
import type { LiveTarget } from '../src/verification/live/live-parts';
import { createLiveReply } from '../src/verification/live/live-reply';
import { holdStream } from '../src/verification/live/stream-hold';
import { MemoryLiveReplies } from '../src/verification/stores/memory-live-replies';
import { fakeSlackNow, startFakeSlackApi, type FakeSlackApi, type FakeSlackRequest } from '../test/support/fake-slack-api';
import { guardrailCorpus, seededRandom } from '../test/support/guardrail-corpus';
import { percentile } from './stats';

/**
 * Part 8 (c): the first-text delay output masking adds, through the real live path — a held stream
 * (src/verification/live/stream-hold.ts, its flush rules and real timers) showing a 60-word answer
 * in Slack through the live reply (live-preview.ts, with and without the output guardrail:
 * live-guard.ts) and the real @slack/web-api client against the fake Slack API on loopback. Each
 * answer (corpus sentences, entities included, a word every `wordMs`) runs twice, unmasked and
 * with GUARDRAIL=builtin masking; the first text is the fake Slack's arrival time of the first call
 * that showed answer text, against the first word's, and the delay masking adds is the masked
 * run's first text minus the unmasked run's, answer by answer.
 */
export type LiveMaskDelay = { answers: number; words: number; wordMs: number; plain: { p50: number; p95: number }; masked: { p50: number; p95: number }; added: { p50: number; p95: number; max: number }; leaked: number };
export type LiveMaskOptions = { answers: number; words: number; wordMs: number; log: (line: string) => void };

const SHOWS_TEXT = new Set(['chat.startStream', 'chat.appendStream', 'chat.update', 'chat.postMessage']);
const SILENT: Log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' });

function answersOf(options: LiveMaskOptions): Array<{ words: string[]; entities: string[] }> {
  const corpus = guardrailCorpus(39, 100);
  const random = seededRandom(9);
  return Array.from({ length: options.answers }, () => {
    const words: string[] = [];
    const entities: string[] = [];
    while (words.length < options.words) {
      const message = corpus[Math.floor(random() * corpus.length)]!;
      // A space between sentences: two entities glued together are one no guardrail reads as either.
      words.push(...`${message.text} `.split(/(?<=\s)/));
      entities.push(...message.entities.map((entity) => entity.value));
    }
    return { words: words.slice(0, options.words), entities };
  });
}

/** The answer as an agent streams it: a word every `wordMs`, then done; resolves the first word's time. */
function streamOf(words: readonly string[], wordMs: number, firstWordAt: (at: number) => void): (signal: AbortSignal) => AsyncIterable<StreamStep> {
  return async function* stream(signal) {
    const handle = { taskId: 'bench-task' };
    for (const [index, word] of words.entries()) {
      if (index > 0) await new Promise((resolve) => setTimeout(resolve, wordMs));
      if (signal.aborted) return;
      if (index === 0) firstWordAt(fakeSlackNow());
      yield textStep(word, handle);
    }
    yield { kind: 'success', text: words.join(''), extra: {} };
  };
}

function shownText(request: FakeSlackRequest): string {
  const body = request.body;
  if (typeof body.markdown_text === 'string') return body.markdown_text;
  if (typeof body.text === 'string') return body.text;
  return JSON.stringify(body.chunks ?? '');
}

/** One answer through the live path; the ms from its first word to the first Slack call that showed text, and what every call showed. */
async function runOnce(slack: FakeSlackApi, words: readonly string[], wordMs: number, channel: string, masked: boolean): Promise<{ firstMs: number; shown: string }> {
  const client = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }));
  const live = createLiveReply({
    slack: client,
    store: new MemoryLiveReplies(),
    workingText: 'is working on it…',
    placeholderText: '…',
    log: SILENT,
    ...(masked ? { guardrail: { guardrail, blockedText: 'blocked' } } : {}),
  });
  const target: LiveTarget = { team_id: 'T0FAKE', channel, ts: '1700000000.000100', request_id: `bench-${channel}`, user_id: 'U0ASKER' };
  let firstWord = 0;
  await holdStream(streamOf(words, wordMs, (at) => (firstWord = at)), { before: 0, show: (before, delta) => live.show(target, before, delta) });
  const calls = slack.requests.filter((request) => request.body.channel === channel && SHOWS_TEXT.has(request.method));
  const first = calls.find((request) => shownText(request).trim() !== '');
  return { firstMs: (first?.at ?? Number.NaN) - firstWord, shown: calls.map(shownText).join('\n') };
}

export async function measureLiveMaskDelay(options: LiveMaskOptions): Promise<LiveMaskDelay> {
  const slack = await startFakeSlackApi();
  const plain: number[] = [];
  const masked: number[] = [];
  const added: number[] = [];
  let leaked = 0;
  try {
    const answers = answersOf(options);
    // Ten answers at a time, each in its own channel: the two runs of one answer side by side.
    for (let at = 0; at < answers.length; at += 10) {
      const batch = answers.slice(at, at + 10);
      const runs = await Promise.all(
        batch.map(async (answer, i) => {
          const n = at + i;
          const [bare, guarded] = await Promise.all([runOnce(slack, answer.words, options.wordMs, `C0PLAIN${n}`, false), runOnce(slack, answer.words, options.wordMs, `C0MASK${n}`, true)]);
          return { bare, guarded, entities: answer.entities };
        }),
      );
      for (const run of runs) {
        plain.push(run.bare.firstMs);
        masked.push(run.guarded.firstMs);
        added.push(Math.max(0, run.guarded.firstMs - run.bare.firstMs));
        if (run.entities.some((entity) => run.guarded.shown.includes(entity))) leaked++;
      }
    }
  } finally {
    await slack.close();
  }
  const p = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95) });
  const result: LiveMaskDelay = { answers: options.answers, words: options.words, wordMs: options.wordMs, plain: p(plain), masked: p(masked), added: { ...p(added), max: added.reduce((a, b) => Math.max(a, b), 0) }, leaked };
  options.log(`  live path: first text ${result.plain.p95.toFixed(0)} ms p95 unmasked, ${result.masked.p95.toFixed(0)} ms masked; added +${result.added.p95.toFixed(0)} ms p95 (max ${result.added.max.toFixed(0)}), ${leaked} answers with an entity shown`);
  return result;
}
