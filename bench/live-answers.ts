import { runChildMeasure } from './support/child-entry';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { loadExecutionConfig } from '../src/execution/config';
import { EchoExecutor } from '../src/execution/executors/echo-executor';
import type { Executor } from '../src/execution/executors/executor';
import { readBody } from '../src/execution/hosts/http-host';
import { createExecutionRuntime } from '../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../src/local/local-pipeline';
import { postSignedEvent, slackEventEnvelope } from '../src/local/slack-event-builder';
import { createLogger } from '../src/observability/logger';
import { createSlackWebClient, WebApiSlackReplies } from '../src/slack/slack-replies';
import { loadVerificationConfig, pollScheduleOf } from '../src/verification/config';
import type { PipelineQueue } from '../src/verification/pipeline-settings';
import { pollTimeline, type PollSchedule } from '../src/verification/poll-schedule';
import { FAKE_BOT_USER_ID, fakeSlackNow, startFakeSlackApi, type FakeSlackRequest } from '../test/support/fake-slack-api';
import { taskCost, type TaskCost } from './poll-cost';
import { percentile, rotate, summarize, type Summary } from './stats';
import { PLACEHOLDER_AWS_ENV, close, listen } from './support/net';
import { bundleProgram, measuredEnv, spawnTracked } from './support/processes';
import { TRANSPORTS, serveBehindEveryTransport, type TransportName } from './support/transport-targets';

/**
 * Part 7: live answers (docs/architecture.md §2.5), in real time (timeScale 1), for each transport.
 * With held streams (STREAM_HOLD_S, 30 s by default) agent-invoker reads the answer as a stream and
 * appends as it comes; the figures below hold for both designs, and two more are for held streams:
 * how far Slack is behind the model at each append (its answer → when the model produced the
 * oldest character in it), p50 / p95; and the billed GB-seconds per answer (each delivery at its
 * function's memory) next to the model's output cost at a few Bedrock prices.
 *
 * A signed `app_mention` is POSTed over HTTP to the slack-events function of a local pipeline
 * (`createLocalPipeline`: the four verification functions with in-memory queues and stores, the real
 * @slack/web-api client against the fake Slack Web API on loopback); the execution runtime's echo
 * executor streams its answer word by word (ECHO_STREAM_MS). Per event:
 *   1. the first visible sign: the POST → the first Slack call that shows something (an accepted
 *      `agents.sessions.setStatus` to processing — the agent session, Slack's Stop button with it —
 *      or `assistant.threads.setStatus`, or a started stream or posted message), as the fake answers it;
 *   2. the first streamed text: the executor's first word → the first Slack call that shows answer
 *      text (a stream started with text, an append, an update, a post carrying it). The first word is
 *      timed by a wrapping executor around the echo executor (it wraps `onText`), passed to
 *      `createExecutionRuntime` as its `executor`: no hook in the runtime;
 *   3. the handler time of every agent-invoker, async-result and slack-poster delivery (the queues'
 *      own delivered → succeeded/failed events, timed here), billed as Lambda bills: rounded up to
 *      the millisecond. The 60-second figure comes from the model below, fed with these.
 * Everything runs in one child process (bundled with esbuild, logs at the default level to
 * /dev/null), so every timestamp is on one clock.
 */
const ROOT = join(__dirname, '..');
const SIGNING_SECRET = 'bench-live-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const CHANNEL = 'C0LIVEBENCH';
const ASKER = 'U0ASKER';

/** Issue 13's targets. */
export const SIGN_OF_LIFE_TARGET_MS = 1000;
export const FIRST_TEXT_TARGET_MS = 1000;
/** Billed ms for a streamed answer, at most this fraction of a function that holds on for the whole answer. */
export const COST_TARGET_FRACTION = 0.1;
/** The answer the cost model prices (seconds of streaming). */
export const MODEL_ANSWER_SECONDS = 60;

export type LiveAnswersOptions = {
  eventsPerTransport: number;
  warmupEvents: number;
  /** Words in each answer (`echo:` included). */
  words: number;
  /** ECHO_STREAM_MS: ms per word. */
  wordMs: number;
};

/** What one event measured (ms; absolute times are the fake Slack API's clock). */
export type EventSample = {
  /** POST of the signed event → the first Slack call that showed something. */
  signMs: number;
  signMethod: string;
  /** The executor's first word → the first Slack call that showed answer text. */
  firstTextMs: number;
  firstTextMethod: string;
  /** POST → the executor's first word. */
  firstWordMs: number;
  /** The executor's first word → its end (the whole answer streamed). */
  streamMs: number;
  /** The executor's first word → the end of the invoker's delivery (it queued the first poll then). */
  firstPollQueuedMs: number;
  /** POST → the last Slack call (the final answer in place). */
  doneMs: number;
  /** Handler time of each delivery, per function. */
  invokerMs: number[];
  pollMs: number[];
  posterMs: number[];
  /** Accepted chat.appendStream calls. */
  appends: number;
  /**
   * Per Slack call that showed answer text (the stream's start, each append): how far Slack was
   * behind the model — the call's answer → when the executor produced the oldest character in it.
   */
  appendLagsMs?: number[];
  /** Billed GB-seconds of the verification functions for this answer (each delivery at its function's memory). */
  billedGbSeconds?: number;
  /** Characters the executor produced (the answer). */
  answerChars?: number;
};

/** The memory each verification function is deployed with (cdk/stacks/verification-zone-stack.ts), in GB. */
export const FUNCTION_MEMORY_GB: Readonly<Record<PipelineQueue, number>> = { tasks: 1, polls: 0.25, replies: 0.25 };
/** Lambda's price per GB-second (x86, us-east-1). */
export const LAMBDA_GB_SECOND_USD = 0.0000166667;
/** Output-token prices per million on Bedrock, from a large model to a small one (USD). */
export const MODEL_OUTPUT_PRICES_PER_MILLION = [15, 4, 0.24] as const;
/** About four characters a token (English). */
export const CHARS_PER_TOKEN = 4;

/** What one streamed answer bills in Lambda, next to what its output tokens cost at each price. */
export function heldAnswerCost(gbSeconds: number, answerChars: number): { lambdaUsd: number; model: Array<{ pricePerMillion: number; usd: number; lambdaShare: number }> } {
  const lambdaUsd = gbSeconds * LAMBDA_GB_SECOND_USD;
  const tokens = answerChars / CHARS_PER_TOKEN;
  return {
    lambdaUsd,
    model: MODEL_OUTPUT_PRICES_PER_MILLION.map((pricePerMillion) => {
      const usd = (tokens * pricePerMillion) / 1_000_000;
      return { pricePerMillion, usd, lambdaShare: lambdaUsd / usd };
    }),
  };
}

/**
 * How far behind the model each showing Slack call was: for each call (in order), the time its
 * answer came → when the model produced the first character it showed (the one that waited
 * longest). `marks`: the model's text as it grew (time, characters so far), in order.
 */
export function appendLags(marks: ReadonlyArray<{ at: number; chars: number }>, calls: ReadonlyArray<{ at: number; chars: number }>): number[] {
  const lags: number[] = [];
  let shown = 0;
  for (const call of calls) {
    const produced = marks.find((mark) => mark.chars > shown);
    if (produced) lags.push(call.at - produced.at);
    shown += call.chars;
  }
  return lags;
}

export type LiveAnswersRaw = {
  options: LiveAnswersOptions;
  pollDelaySeconds: number;
  streamFirstTextMs: number;
  samples: Record<TransportName, EventSample[]>;
};

// ---------------------------------------------------------------------------------------------
// The arithmetic (pure; test/bench/live-answers.test.ts pins it down)

/** Lambda bills each invocation's duration rounded up to the millisecond. */
export const billed = (ms: number) => Math.ceil(ms);

/** The mean billed ms of a set of invocations: what a sum of many of them is expected to cost, per invocation. */
export function meanBilled(durations: readonly number[]): number {
  if (durations.length === 0) throw new RangeError('mean of no invocations');
  return durations.reduce((sum, ms) => sum + billed(ms), 0) / durations.length;
}

export type StreamCostInputs = {
  /** How long the agent streams: its first word → its last. */
  answerMs: number;
  /** The agent's first word → the invoker queueing the first poll (it answers `accepted` STREAM_FIRST_TEXT_MS after the first text). */
  firstPollQueuedMs: number;
  /** STREAM_POLL_DELAY_S, in ms: the SQS delay of each poll while text flows. */
  pollDelayMs: number;
  /** Billed per agent-invoker invocation (one per answer). */
  invokerMs: number;
  /** Billed per async-result invocation (get_task_result, the append to Slack, the next poll queued). */
  pollMs: number;
  /** Billed per slack-poster invocation (one per answer: the stream stopped, the answer put in place). */
  posterMs: number;
};

export type StreamCost = {
  answerMs: number;
  polls: number;
  invokerBilledMs: number;
  pollsBilledMs: number;
  posterBilledMs: number;
  /** agent-invoker + every poll + slack-poster. */
  billedMs: number;
  /** A function that holds the connection (or sleeps) for the whole answer is billed at least this: the answer's duration. */
  holdingBilledMs: number;
  /** billedMs ÷ holdingBilledMs: the target is ≤ COST_TARGET_FRACTION. */
  fraction: number;
  /** holdingBilledMs ÷ billedMs: how many times fewer billed ms. */
  ratio: number;
};

/**
 * Polls async-result makes while an answer streams. The invoker queues the first poll
 * `firstPollQueuedMs` after the first word, with the STREAM_POLL_DELAY_S delay; each poll queues the
 * next as it ends, with the same delay, so polls start `pollDelayMs + pollMs` apart (SQS's own
 * delivery latency is left out: it spaces polls further, so this counts high). The first poll
 * that starts at or after the answer's end finds it done and queues the reply.
 * Poll k starts at a + k·D + (k−1)·p; the count is the smallest k with that ≥ the answer's end.
 */
export function streamedPolls(inputs: Pick<StreamCostInputs, 'answerMs' | 'firstPollQueuedMs' | 'pollDelayMs' | 'pollMs'>): number {
  const { answerMs, firstPollQueuedMs, pollDelayMs, pollMs } = inputs;
  if (!(pollDelayMs > 0)) throw new RangeError('the poll delay must be positive');
  const afterFirst = answerMs - firstPollQueuedMs - pollDelayMs;
  return afterFirst <= 0 ? 1 : 1 + Math.ceil(afterFirst / (pollDelayMs + pollMs));
}

/** What the verification functions are billed for one streamed answer, against a function that holds on for all of it. */
export function streamedAnswerCost(inputs: StreamCostInputs): StreamCost {
  const polls = streamedPolls(inputs);
  const invokerBilledMs = billed(inputs.invokerMs);
  const pollsBilledMs = polls * billed(inputs.pollMs);
  const posterBilledMs = billed(inputs.posterMs);
  const billedMs = invokerBilledMs + pollsBilledMs + posterBilledMs;
  const holdingBilledMs = billed(inputs.answerMs);
  return { answerMs: inputs.answerMs, polls, invokerBilledMs, pollsBilledMs, posterBilledMs, billedMs, holdingBilledMs, fraction: billedMs / holdingBilledMs, ratio: holdingBilledMs / billedMs };
}

/**
 * The most a poll may bill (whole ms) with the answer still within `fraction` of a holding
 * function: one less than the first poll cost that misses (0 if even 1 ms misses).
 */
export function breakEvenPollMs(inputs: Omit<StreamCostInputs, 'pollMs'>, fraction = COST_TARGET_FRACTION): number {
  let best = 0;
  // The cost grows with the poll's ms (more ms per poll outweighs the fewer polls they make room for).
  for (let pollMs = 1; pollMs <= inputs.answerMs; pollMs += 1) {
    if (streamedAnswerCost({ ...inputs, pollMs }).fraction > fraction) break;
    best = pollMs;
  }
  return best;
}

/** p50, p95 and the whole sample. */
export type Distribution = { p50: number; p95: number; all: Summary };

export function distribution(values: readonly number[]): Distribution {
  return { p50: percentile(values, 50), p95: percentile(values, 95), all: summarize(values) };
}

/** How often each value occurs. */
export function tally(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

export type TransportFigures = {
  events: number;
  sign: Distribution & { methods: Record<string, number> };
  firstText: Distribution & { methods: Record<string, number> };
  firstWord: Summary;
  stream: Summary;
  done: Summary;
  appends: Summary;
  /** Polls per answer, measured, and as the model predicts them for the median measured answer. */
  polls: Summary;
  predictedPolls: number;
  firstPollQueued: Summary;
  /** Billed ms: per answer for the invoker and the poster (all their deliveries), per invocation for polls. */
  invoker: { mean: number; all: Summary };
  poll: { mean: number; all: Summary };
  poster: { mean: number; all: Summary };
  /** The model for a MODEL_ANSWER_SECONDS answer with these figures. */
  cost: StreamCost;
  breakEvenPollMs: number;
  /** How far Slack was behind the model at each showing call (all events' calls together). */
  appendLag?: Distribution;
  /** Billed GB-seconds per streamed answer, and its Lambda cost next to the model's at each price (median answer). */
  held?: { gbSeconds: Summary; cost: ReturnType<typeof heldAnswerCost> };
};

export type Assumptions = {
  /** A poll's AWS work: the AgentCore round trip and the SQS send (part 5's ASSUMED_AWS_POLL_MS). */
  awsCallMs: number;
  /** One Slack Web API round trip from Lambda (the append of each poll, the status, the stream's start and stop). */
  slackCallMs: number;
};

export type LiveAnswersResult = {
  options: LiveAnswersOptions;
  pollDelaySeconds: number;
  streamFirstTextMs: number;
  modelAnswerSeconds: number;
  transports: Record<TransportName, TransportFigures>;
  /** The model with stated AWS figures instead of loopback ones (the agentcore transport's measured first-poll time). */
  assumed: Assumptions & { invokerMs: number; pollMs: number; posterMs: number; cost: StreamCost; breakEvenPollMs: number };
  /**
   * Part 5's 10-minute check, recomputed with the unchanged poll schedule and this part's figures
   * (the invoker's whole billed time as its overhead, the streamed poll's billed ms as a poll's):
   * both larger than part 5's own, so the ratio can only come out lower.
   */
  part5: { timeline: number[]; pollMs: number; invokerMs: number; syncBudgetMs: number; tenMinutes: TaskCost };
};

/** From the raw samples: every figure of part 7, the model's figures and the part-5 check. */
export function summarizeLiveAnswers(raw: LiveAnswersRaw, assumptions: Assumptions, defaults: { syncBudgetMs: number; schedule: PollSchedule }): LiveAnswersResult {
  const pollDelayMs = raw.pollDelaySeconds * 1000;
  const answerMs = MODEL_ANSWER_SECONDS * 1000;
  const figures = (samples: EventSample[]): TransportFigures => {
    if (samples.length === 0) throw new RangeError('no events measured');
    const invokerPerAnswer = samples.map((s) => s.invokerMs.reduce((sum, ms) => sum + billed(ms), 0));
    const posterPerAnswer = samples.map((s) => s.posterMs.reduce((sum, ms) => sum + billed(ms), 0));
    const polls = samples.flatMap((s) => s.pollMs);
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    const firstPollQueued = summarize(samples.map((s) => s.firstPollQueuedMs));
    const base = { answerMs, firstPollQueuedMs: firstPollQueued.median, pollDelayMs, invokerMs: mean(invokerPerAnswer), posterMs: mean(posterPerAnswer) };
    // A held stream may see the whole answer in agent-invoker: no poll at all.
    const pollMean = polls.length ? meanBilled(polls) : 0;
    const lags = samples.flatMap((s) => s.appendLagsMs ?? []);
    const gbSeconds = samples.map((s) => s.billedGbSeconds).filter((v): v is number => v !== undefined);
    const chars = samples.map((s) => s.answerChars).filter((v): v is number => v !== undefined);
    const heldFigures = gbSeconds.length && chars.length ? { gbSeconds: summarize(gbSeconds), cost: heldAnswerCost(summarize(gbSeconds).median, summarize(chars).median) } : undefined;
    return {
      events: samples.length,
      sign: { ...distribution(samples.map((s) => s.signMs)), methods: tally(samples.map((s) => s.signMethod)) },
      firstText: { ...distribution(samples.map((s) => s.firstTextMs)), methods: tally(samples.map((s) => s.firstTextMethod)) },
      firstWord: summarize(samples.map((s) => s.firstWordMs)),
      stream: summarize(samples.map((s) => s.streamMs)),
      done: summarize(samples.map((s) => s.doneMs)),
      appends: summarize(samples.map((s) => s.appends)),
      polls: summarize(samples.map((s) => s.pollMs.length)),
      predictedPolls: streamedPolls({ answerMs: summarize(samples.map((s) => s.streamMs)).median, firstPollQueuedMs: firstPollQueued.median, pollDelayMs, pollMs: pollMean }),
      firstPollQueued,
      invoker: { mean: base.invokerMs, all: summarize(invokerPerAnswer) },
      poll: { mean: pollMean, all: summarize(polls.length ? polls.map(billed) : [0]) },
      poster: { mean: base.posterMs, all: summarize(posterPerAnswer) },
      cost: streamedAnswerCost({ ...base, pollMs: pollMean }),
      breakEvenPollMs: breakEvenPollMs(base),
      ...(lags.length ? { appendLag: distribution(lags) } : {}),
      ...(heldFigures ? { held: heldFigures } : {}),
    };
  };
  const transports = Object.fromEntries(TRANSPORTS.map((name) => [name, figures(raw.samples[name])])) as Record<TransportName, TransportFigures>;

  // Stated AWS figures: a poll is its AWS work plus one Slack append; the invoker adds an AWS call
  // (execute_task, the poll queued) and three Slack calls (status, thread read, stream start); the
  // poster two Slack calls (stop, update) and one AWS call (its claims) — on top of loopback's.
  const agentcore = transports.agentcore;
  const assumedBase = {
    answerMs,
    firstPollQueuedMs: agentcore.firstPollQueued.median,
    pollDelayMs,
    invokerMs: agentcore.invoker.mean + assumptions.awsCallMs + 3 * assumptions.slackCallMs,
    posterMs: agentcore.poster.mean + assumptions.awsCallMs + 2 * assumptions.slackCallMs,
  };
  const assumedPollMs = assumptions.awsCallMs + assumptions.slackCallMs;

  const worstPollMs = Math.max(...TRANSPORTS.map((name) => billed(transports[name].poll.mean)));
  const worstInvokerMs = Math.max(...TRANSPORTS.map((name) => billed(transports[name].invoker.mean)));
  const tenMinutes = taskCost({
    taskSeconds: 600,
    syncBudgetMs: defaults.syncBudgetMs,
    schedule: defaults.schedule,
    pollInvocationMs: worstPollMs,
    invokerOverheadMs: worstInvokerMs,
    pollCallMs: worstPollMs,
    sleepIntervalSeconds: 2,
  });

  return {
    options: raw.options,
    pollDelaySeconds: raw.pollDelaySeconds,
    streamFirstTextMs: raw.streamFirstTextMs,
    modelAnswerSeconds: MODEL_ANSWER_SECONDS,
    transports,
    assumed: {
      ...assumptions,
      invokerMs: assumedBase.invokerMs,
      pollMs: assumedPollMs,
      posterMs: assumedBase.posterMs,
      cost: streamedAnswerCost({ ...assumedBase, pollMs: assumedPollMs }),
      breakEvenPollMs: breakEvenPollMs(assumedBase),
    },
    part5: { timeline: pollTimeline(defaults.schedule), pollMs: worstPollMs, invokerMs: worstInvokerMs, syncBudgetMs: defaults.syncBudgetMs, tenMinutes },
  };
}

export type LiveTarget = { transport: TransportName | 'aws (assumed)'; target: 'sign' | 'first-text' | 'cost'; pass: boolean };

/** PASS/MISS of each target, per transport (and the cost with the stated AWS figures). */
export function liveAnswerVerdicts(result: LiveAnswersResult): LiveTarget[] {
  const list: LiveTarget[] = [];
  for (const transport of TRANSPORTS) {
    const t = result.transports[transport];
    list.push({ transport, target: 'sign', pass: t.sign.p50 <= SIGN_OF_LIFE_TARGET_MS });
    list.push({ transport, target: 'first-text', pass: t.firstText.p50 <= FIRST_TEXT_TARGET_MS });
    list.push({ transport, target: 'cost', pass: t.cost.fraction <= COST_TARGET_FRACTION });
  }
  list.push({ transport: 'aws (assumed)', target: 'cost', pass: result.assumed.cost.fraction <= COST_TARGET_FRACTION });
  return list;
}

// ---------------------------------------------------------------------------------------------
// The measurement (in the child)

/** `count` words in all, `echo:` (the executor's) included, unique to event `n`. */
export function questionFor(n: number, count: number): string {
  return [`question-${n}`, ...Array.from({ length: Math.max(0, count - 2) }, (_, i) => `word${i + 1}`)].join(' ');
}

/** The markdown a stream call carries: `markdown_text`, or its `markdown_text` chunks. */
function shownMarkdown(body: Record<string, unknown>): string {
  if (typeof body.markdown_text === 'string') return body.markdown_text;
  let chunks: unknown = body.chunks;
  if (typeof chunks === 'string') {
    try {
      chunks = JSON.parse(chunks);
    } catch {
      return '';
    }
  }
  if (!Array.isArray(chunks)) return '';
  return chunks.map((chunk: { type?: string; text?: unknown }) => (chunk?.type === 'markdown_text' && typeof chunk.text === 'string' ? chunk.text : '')).join('');
}

/** A Slack call that showed part of the answer (the answers start with `echo:`). */
function showsAnswer(request: FakeSlackRequest): boolean {
  return ['chat.startStream', 'chat.appendStream', 'chat.update', 'chat.postMessage'].includes(request.method) && JSON.stringify(request.body).includes('echo:');
}

/** A Slack call that shows the user something: the agent session going to processing (with its Stop button), a status, a stream, a message. */
function showsSomething(request: FakeSlackRequest): boolean {
  if (request.method === 'agents.sessions.setStatus') return request.body.status === 'processing';
  if (request.method === 'assistant.threads.setStatus') return typeof request.body.status === 'string' && request.body.status !== '';
  return request.method === 'chat.startStream' || request.method === 'chat.postMessage';
}

/** Runs in the child: measures and returns the raw samples. */
export async function measureLiveAnswers(options: LiveAnswersOptions): Promise<LiveAnswersRaw> {
  Object.assign(process.env, PLACEHOLDER_AWS_ENV);
  const slack = await startFakeSlackApi();
  const config = loadExecutionConfig({ ECHO_STREAM_MS: String(options.wordMs) });

  // The executor's words, timed: the echo executor, its `onText` wrapped.
  const produced = new Map<string, { first: number; end?: number; marks: Array<{ at: number; chars: number }> }>();
  const echo = new EchoExecutor(config.ECHO_DELAY_MS, config.ECHO_STREAM_MS);
  const executor: Executor = {
    name: echo.name,
    async execute(params, context) {
      const onText = context.onText;
      if (!onText) return echo.execute(params, context);
      const output = await echo.execute(params, {
        ...context,
        onText: (delta) => {
          const now = fakeSlackNow();
          if (!produced.has(params.text)) produced.set(params.text, { first: now, marks: [] });
          const mark = produced.get(params.text)!;
          mark.marks.push({ at: now, chars: (mark.marks.at(-1)?.chars ?? 0) + delta.length });
          onText(delta);
        },
      });
      const mark = produced.get(params.text);
      if (mark) mark.end = fakeSlackNow();
      return output;
    },
  };
  const runtime = createExecutionRuntime({ config, executor, log: createLogger('execution') });
  const targets = await serveBehindEveryTransport(runtime);

  const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }), { apiUrl: slack.apiUrl });
  const verificationEnv = { RATE_LIMIT_PER_MINUTE: '100000000' };
  const pollDelaySeconds = loadVerificationConfig(verificationEnv).STREAM_POLL_DELAY_S;
  const pipelines = new Map<TransportName, LocalPipeline>();
  const ingresses = new Map<TransportName, { server: Server; url: string }>();
  /** The deliveries of the event under way: which function, and its handler's time. */
  const deliveries: Array<{ queue: PipelineQueue; ms: number; endedAt: number }> = [];
  try {
    for (const name of TRANSPORTS) {
      const agent = targets.agentFor(name);
      const pipeline = createLocalPipeline({ agent, slack: replies, signingSecret: SIGNING_SECRET, env: verificationEnv, log: createLogger('verification') });
      pipelines.set(name, pipeline);
      // Handler time from the queue's own events: 'delivered' just before the handler starts, 'succeeded'/'failed' just after it settles.
      for (const queue of ['tasks', 'polls', 'replies'] as const) {
        const started = new Map<string, number>();
        pipeline.queues[queue].subscribe((event) => {
          if (event.type === 'delivered') started.set(event.messageId, performance.now());
          if (event.type !== 'succeeded' && event.type !== 'failed') return;
          const at = started.get(event.messageId);
          if (at === undefined) return;
          started.delete(event.messageId);
          deliveries.push({ queue, ms: performance.now() - at, endedAt: fakeSlackNow() });
        });
      }
      // slack-events behind HTTP, as API Gateway serves it.
      const ingress = createServer((req, res) => {
        void (async () => {
          const body = await readBody(req, 1_048_576);
          if (body === 'too-large') return void res.writeHead(413).end();
          const headers = Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]));
          const answer = await pipeline.ingress({ headers, body });
          res.writeHead(answer.statusCode, answer.headers).end(answer.body);
        })().catch(() => res.writeHead(500).end());
      });
      ingresses.set(name, { server: ingress, url: `${await listen(ingress)}/slack/events` });
    }

    const oneEvent = async (name: TransportName, n: number): Promise<EventSample> => {
      slack.reset();
      deliveries.length = 0;
      const text = questionFor(n, options.words);
      const expected = `echo: ${text}`;
      // The message being answered, in the channel, so the thread read finds it as on Slack.
      const ts = slack.addMessage({ channel: CHANNEL, user: ASKER, text: `<@${FAKE_BOT_USER_ID}> ${text}` });
      const { body } = slackEventEnvelope('mention', { text, ts, channel: CHANNEL, teamId: TEAM, userId: ASKER, botUserId: FAKE_BOT_USER_ID });
      const posted = fakeSlackNow();
      const ack = await postSignedEvent(ingresses.get(name)!.url, body, SIGNING_SECRET);
      if (ack.status !== 200) throw new Error(`${name}: ingress answered ${ack.status}`);
      await pipelines.get(name)!.whenIdle({ timeoutMs: 60_000 + options.words * options.wordMs });

      const answered = slack.requests.filter((r) => r.answer?.ok);
      const sign = answered.find(showsSomething);
      const firstText = answered.find(showsAnswer);
      const words = produced.get(text);
      produced.delete(text);
      const streams = slack.streams;
      const shownNow = streams[0] ? slack.messageText(streams[0].ts) : undefined;
      if (!sign || !firstText || !words?.end) throw new Error(`${name}: no sign of life, streamed text or executor timing: ${JSON.stringify(slack.requests.map((r) => [r.method, r.answer?.error]))}`);
      if (streams.length !== 1 || streams[0]!.state !== 'stopped' || shownNow !== expected || slack.posts.length !== 0) {
        throw new Error(`${name}: expected one stopped stream showing the answer, got ${JSON.stringify({ streams: streams.map((s) => [s.state, s.text.slice(0, 60)]), shownNow: shownNow?.slice(0, 60), posts: slack.posts.length })}`);
      }
      const durations = (queue: PipelineQueue) => deliveries.filter((d) => d.queue === queue).map((d) => d.ms);
      const invokerEnded = deliveries.find((d) => d.queue === 'tasks')?.endedAt;
      if (invokerEnded === undefined) throw new Error(`${name}: no agent-invoker delivery was timed`);
      // Each Slack call that showed answer text on the stream, with how many characters it showed.
      const showing = answered
        .filter((r) => r.method === 'chat.startStream' || r.method === 'chat.appendStream')
        .map((r) => ({ at: r.answer!.at, chars: shownMarkdown(r.body).length }))
        .filter((call) => call.chars > 0);
      const gbSeconds = deliveries.reduce((sum, d) => sum + (billed(d.ms) / 1000) * FUNCTION_MEMORY_GB[d.queue], 0);
      return {
        appendLagsMs: appendLags(words.marks, showing),
        billedGbSeconds: gbSeconds,
        answerChars: words.marks.at(-1)?.chars ?? 0,
        signMs: sign.answer!.at - posted,
        signMethod: sign.method,
        firstTextMs: firstText.answer!.at - words.first,
        firstTextMethod: firstText.method,
        firstWordMs: words.first - posted,
        streamMs: words.end - words.first,
        firstPollQueuedMs: invokerEnded - words.first,
        doneMs: Math.max(...answered.map((r) => r.answer!.at)) - posted,
        invokerMs: durations('tasks'),
        pollMs: durations('polls'),
        posterMs: durations('replies'),
        appends: answered.filter((r) => r.method === 'chat.appendStream').length,
      };
    };

    const samples = Object.fromEntries(TRANSPORTS.map((name) => [name, [] as EventSample[]])) as Record<TransportName, EventSample[]>;
    let n = 0;
    for (const name of TRANSPORTS) for (let i = 0; i < options.warmupEvents; i += 1) await oneEvent(name, (n += 1));
    // One event per transport per round, in a new order each round.
    for (let round = 0; round < options.eventsPerTransport; round += 1) {
      for (const name of rotate(TRANSPORTS, round)) samples[name].push(await oneEvent(name, (n += 1)));
    }
    return { options, pollDelaySeconds, streamFirstTextMs: config.STREAM_FIRST_TEXT_MS, samples };
  } finally {
    for (const pipeline of pipelines.values()) await pipeline.stop();
    for (const { server: ingress } of ingresses.values()) await close(ingress);
    await targets.close();
    await slack.close();
  }
}

/** The child's entry (bench/support/child-entry.ts). */
export function liveAnswersFromArgv(argv = process.argv.slice(2)): void {
  runChildMeasure<LiveAnswersOptions, unknown>(measureLiveAnswers, argv);
}

export async function runLiveAnswers(options: LiveAnswersOptions & Assumptions & { workDir: string; log: (line: string) => void }): Promise<LiveAnswersResult> {
  const program = await bundleProgram(options.workDir, 'live-answers', __dirname, "import { liveAnswersFromArgv } from './live-answers'; liveAnswersFromArgv();");
  const { log, workDir: _workDir, awsCallMs, slackCallMs, ...childOptions } = options;
  const child = spawnTracked(process.execPath, [program, JSON.stringify(childOptions)], { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let report = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report += chunk.toString()));
  await new Promise<void>((resolve) => child.once('close', () => resolve()));
  const parsed = JSON.parse(report.trim().split('\n').pop() || '{"error":"no report"}') as LiveAnswersRaw & { error?: string };
  if (parsed.error) throw new Error(`live-answers child failed: ${parsed.error}\n${stderr}`);
  const result = summarizeLiveAnswers(parsed, { awsCallMs, slackCallMs }, { syncBudgetMs: loadExecutionConfig({}).SYNC_BUDGET_MS, schedule: pollScheduleOf(loadVerificationConfig({})) });
  for (const name of TRANSPORTS) {
    const t = result.transports[name];
    log(
      `  ${name}: sign of life p50 ${t.sign.p50.toFixed(1)} ms; first text − first word p50 ${t.firstText.p50.toFixed(1)} / p95 ${t.firstText.p95.toFixed(1)} ms; ` +
        `${t.polls.median} polls of ${t.poll.mean.toFixed(1)} billed ms; ${MODEL_ANSWER_SECONDS} s answer ${t.cost.billedMs} billed ms (${(t.cost.fraction * 100).toFixed(1)} % of holding)`,
    );
  }
  for (const name of TRANSPORTS) {
    const t = result.transports[name];
    if (!t.appendLag || !t.held) continue;
    const prices = t.held.cost.model.map((m) => `$${m.pricePerMillion}/M tokens $${m.usd.toFixed(5)} (Lambda ${(m.lambdaShare * 100).toFixed(1)} %)`).join('; ');
    log(
      `  ${name}: Slack behind the model per append p50 ${t.appendLag.p50.toFixed(0)} / p95 ${t.appendLag.p95.toFixed(0)} ms (max ${t.appendLag.all.max.toFixed(0)}); ` +
        `${t.held.gbSeconds.median.toFixed(3)} GB-s per answer = $${t.held.cost.lambdaUsd.toFixed(6)}; the model's output: ${prices}`,
    );
  }
  log(`  assumed AWS: ${result.assumed.cost.billedMs} billed ms (${(result.assumed.cost.fraction * 100).toFixed(1)} % of holding); a poll may bill ≤ ${result.assumed.breakEvenPollMs} ms for ≤ 10 %`);
  return result;
}
