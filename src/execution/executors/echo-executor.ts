import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecuteTaskParams } from '../../contract';
import { RpcError } from '../rpc-error';
import { echoFilesOf } from './echo-files';
import type { Executor, ExecutorContext, ExecutorOutput } from './executor';
import { InputRequired } from './input-required';

/**
 * A deterministic executor for local runs, demos and tests: it answers `echo: <text>`.
 * Directives in the text make it behave like a real model would on a bad day:
 *   `#sleep=<ms>`  take that long (overrides the configured delay)
 *   `#stream=<ms>` produce the answer word by word, that long per word (overrides ECHO_STREAM_MS)
 *   `#chunk=<n>`   when streaming, n characters at a time instead of words: an address or a
 *                  number cut anywhere, for the output guardrail's stream tests
 *   `#fail`        fail with a server-defined error (-32000)
 *   `#crash`       throw an unexpected error (reported as -32603)
 *   `#asker`       adds `asker: <id>` (or `(none)`): who is asking, as the params said
 *   `#steps=<n>`   show n steps (docs/contract.md, "Steps") before answering, `Step 1` … `Step n`,
 *                  each in_progress then complete, `#sleep`'s delay (or 50 ms) apart
 *   `#ask=<question>` pause on that question (the text up to the next ` #` or the end), with the
 *                  options Approve and Reject (docs/contract.md, "Questions"); resumed, it answers
 *                  `echo: … \nanswer: <label> (by <who>)`; several (`#ask=First?#ask=Second?`)
 *                  ask in turn, one round each, and answer one `answer:` line each, in order;
 *                  with `#stream=<ms>` the echo line is streamed before the first question and
 *                  the resumed run answers only the `answer:` lines (what it showed stays above)
 * and show what context it was given, on lines after the echo, in this order:
 *   `#context`     adds `context: <n> turns (<roles>)`: the thread messages it received
 *                  (`params.messages`), roles in order as received, joined by ", " — e.g.
 *                  `context: 3 turns (user, assistant, user)`; none is `context: 0 turns ()`
 *   attachments    always, one line per attachment in order:
 *                  `attachment: <name> <mimetype> <size> bytes sha256=<hex>`, the SHA-256 of the
 *                  decoded bytes, so a test can tell the file arrived intact without echoing it
 *
 * Given `onText` (a task that streams), it hands over its answer as it produces it: word by word
 * when streaming (`ECHO_STREAM_MS` or `#stream=<ms>`: each word with the whitespace after it, then
 * a pause, abortable by the task's signal), else all at once; the context and attachment lines
 * follow at the end, one piece each. The pieces always add up to `response_text`.
 *
 * Its `usage` (docs/contract.md, "Usage") counts one token per whitespace-separated word: of its
 * input, the text and the thread's earlier messages (what a model would read; attachments are not
 * counted), and of its output, `response_text`; the model is `echo`. Counts a person can check by
 * eye, so budgets and usage reports can be tried locally without a model. A task that fails
 * (`#fail`) or is stopped while it streams reports what it used until then (ExecutorContext.used).
 */
export class EchoExecutor implements Executor {
  readonly name = 'echo';
  constructor(
    private readonly delayMs = 0,
    private readonly streamMs = 0,
  ) {}

  // `context.signal` is read only when there is a wait to abort: a task that answers at once needs none (src/execution/task-control.ts).
  async execute(params: ExecuteTaskParams, context: ExecutorContext): Promise<ExecutorOutput> {
    const { onText } = context;
    // Every directive starts with '#': a text without one is looked at once, not once per directive.
    const directives = params.text.includes('#');
    const sleepDirective = directives ? /#sleep=(\d+)/.exec(params.text) : null;
    const delayMs = sleepDirective ? Number(sleepDirective[1]) : this.delayMs;
    if (delayMs > 0) await sleep(delayMs, undefined, { signal: context.signal });
    if (directives && params.text.includes('#fail')) {
      // A model that failed had read its input: the failure is charged for it.
      context.used?.({ input_tokens: inputWords(params), output_tokens: 0, model: 'echo' });
      throw new RpcError(-32000, 'The echo executor was asked to fail');
    }
    if (directives && params.text.includes('#crash')) throw new Error('echo executor crashed on purpose');
    const streamDirective = directives ? /#stream=(\d+)/.exec(params.text) : null;
    const streamMs = streamDirective ? Number(streamDirective[1]) : this.streamMs;
    // `#stream=` with `#ask=`: the echo line is streamed before the first question, and the resumed
    // run answers only what follows it — the thread keeps what was shown before the question.
    const showsBeforeAsking = onText !== undefined && streamDirective !== null && /#ask(-text)?=/.test(params.text);
    const resumed = (context.answers?.length ?? 0) > 0;
    const echo = showsBeforeAsking && resumed ? undefined : `echo: ${params.text}`;
    const lines: string[] = [];
    if (directives) {
      await showSteps(params.text, context, delayMs);
      if (showsBeforeAsking && !resumed) await streamWords(echo!, params, context, streamMs);
      const answer = askedAnswer(params.text, context);
      if (answer) lines.push(answer);
    }
    if (directives && params.text.includes('#context')) {
      const roles = (params.messages ?? []).map((message) => message.role);
      lines.push(`context: ${roles.length} turns (${roles.join(', ')})`);
      // What the user was looking at (docs/contract.md, "Context").
      if (params.context?.entities.length) lines.push(`looking at: ${params.context.entities.map((entity) => `${entity.type} ${entity.id}`).join(', ')}`);
    }
    // Who is asking (docs/contract.md, "Who is asking"), as the verification zone said.
    if (directives && params.text.includes('#asker')) lines.push(`asker: ${params.asker ? `${params.asker.id}${params.asker.enterprise_id ? ` (${params.asker.enterprise_id})` : ''}` : '(none)'}`);
    for (const attachment of params.attachments ?? []) {
      const sha256 = createHash('sha256').update(Buffer.from(attachment.data, 'base64')).digest('hex');
      lines.push(`attachment: ${attachment.name} ${attachment.mimetype} ${attachment.size} bytes sha256=${sha256}`);
    }
    if (onText) {
      // A resumed run that showed its echo before asking has no echo: only the answer lines are new.
      if (echo !== undefined && streamMs > 0) await streamWords(echo, params, context, streamMs);
      else if (echo !== undefined) onText(echo);
      lines.forEach((line, index) => onText(echo === undefined && index === 0 ? line : `\n${line}`));
    }
    const responseText = [...(echo === undefined ? [] : [echo]), ...lines].join('\n');
    const files = directives ? echoFilesOf(params.text) : [];
    return { response_text: responseText, usage: { input_tokens: inputWords(params), output_tokens: countWords(responseText), model: 'echo' }, ...(files.length ? { files } : {}) };
  }
}

/** Word by word (or `#chunk=<n>` characters at a time), what it has cost so far going with each word: a task stopped midway is charged for what it wrote. */
async function streamWords(text: string, params: ExecuteTaskParams, context: ExecutorContext, streamMs: number): Promise<void> {
  const input = inputWords(params);
  let output = 0;
  const chunkDirective = /#chunk=(\d+)/.exec(params.text);
  for (const word of chunkDirective ? piecesOf(text, Number(chunkDirective[1])) : words(text)) {
    context.onText!(word);
    output += countWords(word);
    context.used?.({ input_tokens: input, output_tokens: output, model: 'echo' });
    await sleep(streamMs, undefined, { signal: context.signal });
  }
}

/** The words a model would read of a task: its text and the thread's earlier messages. */
function inputWords(params: ExecuteTaskParams): number {
  let count = countWords(params.text);
  for (const message of params.messages ?? []) count += countWords(message.text);
  return count;
}

/** How many whitespace-separated words a text has: one pass over its characters, nothing allocated (the echo runs on the hot path). */
export function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i += 1) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) count += 1;
    inWord = !space;
  }
  return count;
}

/** The characters `\s` matches that a text may hold: ASCII whitespace, NBSP, the Unicode spaces and line separators, BOM. */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/** The words of a text, each with the whitespace after it (leading whitespace alone first): they add up to the text. */
export function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** The text in pieces of `size` characters (at least one): they add up to the text. */
function piecesOf(text: string, size: number): string[] {
  return text.match(new RegExp(`[\\s\\S]{1,${Math.max(1, size)}}`, 'g')) ?? [];
}

/** The question `#ask=<question>` asks, and its two options. */
export const ECHO_QUESTION_ID = 'echo-ask';
const ECHO_OPTIONS = [
  { value: 'approve', label: 'Approve' },
  { value: 'reject', label: 'Reject' },
];

/** `#steps=<n>`: n steps, each shown in progress, then complete, a moment apart (abortable). */
async function showSteps(text: string, context: ExecutorContext, delayMs: number): Promise<void> {
  const directive = /#steps=(\d+)/.exec(text);
  if (!directive || !context.onStep) return;
  const count = Math.min(Number(directive[1]), 20);
  const pauseMs = delayMs > 0 ? delayMs : 50;
  for (let index = 1; index <= count; index += 1) {
    const step = { id: `step-${index}`, title: `Step ${index}` };
    context.onStep({ ...step, status: 'in_progress' }, 'Echo plan');
    await sleep(pauseMs, undefined, { signal: context.signal });
    context.onStep({ ...step, status: 'complete', details: `step ${index} of ${count} done` });
  }
}

/**
 * `#ask=<question>`: the lines naming the answers once answered; before that, the task pauses on
 * the first question not yet answered (InputRequired) with Approve and Reject, or a free-text field
 * with `#ask-text=`. Each `#ask` is its own round: the first is `echo-ask`, the n-th `echo-ask-<n>`.
 */
function askedAnswer(text: string, context: ExecutorContext): string | undefined {
  const directives = [...text.matchAll(/#ask(-text)?=([^#]+)/g)];
  if (directives.length === 0) return undefined;
  const lines: string[] = [];
  for (const [index, directive] of directives.entries()) {
    const id = index === 0 ? ECHO_QUESTION_ID : `${ECHO_QUESTION_ID}-${index + 1}`;
    const answer = context.answers?.find((given) => given.question_id === id);
    if (!answer) {
      const question = directive[2]!.trim() || 'Go ahead?';
      throw new InputRequired(directive[1] ? { id, text: question, free_text: { label: 'Your answer' } } : { id, text: question, options: ECHO_OPTIONS });
    }
    const chosen = ECHO_OPTIONS.find((option) => option.value === answer.value)?.label ?? answer.text ?? answer.value;
    lines.push(`answer: ${chosen}${answer.answered_by ? ` (by ${answer.answered_by.id})` : ''}`);
  }
  return lines.join('\n');
}
