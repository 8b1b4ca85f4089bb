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
import { executionAgentsFrom } from '../src/protocols/agent-config';
import type { ExecutionAgent } from '../src/protocols/execution-agent';
import { createSlackWebClient, WebApiSlackReplies } from '../src/slack/slack-replies';
import { DEFAULT_STREAM_HOLD_S, DEFAULT_STREAM_QUIET_S } from '../src/transport/config';
import { loadVerificationConfig } from '../src/verification/config';
import { FUNCTION_TIMEOUT_SECONDS, type PipelineQueue } from '../src/verification/pipeline-settings';
import { FLUSH_RULES, holdMsFor } from '../src/verification/live/stream-hold';
import { startSdkA2aAgent, streamedWords, type A2aTestAgent } from '../test/support/a2a-agents';
import { FAKE_BOT_USER_ID, fakeSlackNow, startFakeSlackApi, type FakeSlackRequest } from '../test/support/fake-slack-api';
import { LAMBDA_MEMORY_MB } from '../tools/cost-model';
import { BEDROCK_MODELS, PRICES, type ModelPrice } from '../tools/prices';
import { percentile, rotate, summarize, type Summary } from './stats';
import { PLACEHOLDER_AWS_ENV, close, listen } from './support/net';
import { bundleProgram, measuredEnv, spawnTracked } from './support/processes';
import { TRANSPORTS, serveBehindEveryTransport, type TransportName } from './support/transport-targets';

/**
 * Part 7: live answers through held streams (issue 26; docs/architecture.md §2.5), in real time
 * (timeScale 1), for each transport to the execution runtime and for an A2A agent that streams.
 *
 * A signed `app_mention` is POSTed over HTTP to the slack-events function of a local pipeline
 * (`createLocalPipeline`: the four verification functions with in-memory queues and stores, the real
 * @slack/web-api client against the fake Slack Web API on loopback). agent-invoker sends
 * `execute_task` with `stream: true` and holds the stream (STREAM_HOLD_S, 30 s by default),
 * appending to Slack as text comes (FLUSH_RULES); slack-poster puts the final answer in place.
 * The agents:
 *   - in-process, https, agentcore: one execution runtime whose echo executor streams its answer
 *     word by word (ECHO_STREAM_MS). The executor's words are timed by a wrapping executor around
 *     the echo executor (it wraps `onText`), passed to `createExecutionRuntime`: no hook in the runtime.
 *   - a2a: an @a2a-js/sdk agent (test/support/a2a-agents.ts) whose card says it streams, reached as
 *     a deployment would be (EXECUTION_PROTOCOL=a2a, TRANSPORT=https, EXECUTION_URL=its endpoint),
 *     read with `SendStreamingMessage`; it streams the same number of words at the same pace
 *     (`#stream #words=<n> #delay=<ms>`), and its `onAnswerText` hook times each word as it is published.
 * Per event: the first visible sign; the first answer text in Slack against the agent's first
 * word; how far behind the model each Slack call that showed text was; the gaps between those
 * calls; the final answer in place against the last word; every function's handler time (the
 * queues' own delivered → succeeded/failed events, and slack-events' own call), billed as Lambda
 * bills; and how many of agent-invoker and async-result held the answer at once.
 *
 * Two runs per agent: `held` at the default settings (the targets), and `hand-over` with
 * STREAM_HOLD_S=1, so the same answer crosses several holds — agent-invoker's, then async-result's
 * from the cursor — and "one function at a time" is checked where it can fail.
 * Everything runs in one child process (bundled with esbuild, logs at the default level to
 * /dev/null), so every timestamp is on one clock.
 */
const ROOT = join(__dirname, '..');
const SIGNING_SECRET = 'bench-live-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const CHANNEL = 'C0LIVEBENCH';
const ASKER = 'U0ASKER';

/** The agents part 7 measures: the runtime over each transport, and an A2A agent that streams (over https). */
export const LIVE_AGENTS = [...TRANSPORTS, 'a2a'] as const;
export type LiveAgent = (typeof LIVE_AGENTS)[number];
export const LIVE_AGENT_LABELS: Readonly<Record<LiveAgent, string>> = { 'in-process': 'in-process', https: 'https', agentcore: 'agentcore', a2a: 'A2A (https)' };

export type Scenario = 'held' | 'hand-over';
/** STREAM_HOLD_S of the hand-over runs: an answer of a few seconds crosses several holds. */
export const HAND_OVER_HOLD_S = 1;

/** Issue 13's target, kept. */
export const SIGN_OF_LIFE_TARGET_MS = 1000;
/** Issue 26's targets. */
export const TARGETS = {
  /** First answer text in Slack ≤ the agent's first word + this (p50 / p95). */
  firstTextP50Ms: 500,
  firstTextP95Ms: 1000,
  /** Slack behind the model, sampled at every call that showed text (p95). */
  behindP95Ms: 1000,
  /** The final answer complete after the agent's last word (p95). */
  finalP95Ms: 1000,
  /** The largest gap between consecutive Slack calls that showed text, per answer (p95 over answers). */
  stepP95Ms: 1000,
  /** agent-invoker and async-result deliveries holding one answer at once, at most. */
  atOnce: 1,
} as const;
/** The answer the held-stream model prices (seconds of streaming). */
export const MODEL_ANSWER_SECONDS = 60;
/** About four characters a token (English). */
export const CHARS_PER_TOKEN = 4;
/** The Bedrock models priced next to the Lambda cost (tools/prices.ts): the cheapest, the deployment's default, a large one. */
export const PRICED_MODEL_IDS = ['amazon.nova-micro-v1:0', 'us.anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'] as const;

export type LiveAnswersOptions = {
  eventsPerTransport: number;
  warmupEvents: number;
  /** Events per agent with STREAM_HOLD_S = HAND_OVER_HOLD_S. */
  handOverEvents: number;
  /** Words in each answer (`echo:` included). */
  words: number;
  /** ECHO_STREAM_MS (and the A2A agent's #delay): ms per word. */
  wordMs: number;
};

/** What one event measured (ms; absolute times are the fake Slack API's clock). */
export type EventSample = {
  /** POST of the signed event → the first Slack call that showed something. */
  signMs: number;
  signMethod: string;
  /** The agent's first word → the first Slack call that showed answer text. */
  firstTextMs: number;
  firstTextMethod: string;
  /** POST → the agent's first word. */
  firstWordMs: number;
  /** The agent's first word → its last. */
  streamMs: number;
  /** POST → the final answer in place (the last Slack call that wrote the answer). */
  doneMs: number;
  /** The agent's last word → the final answer in place: (POST → final) − (POST → last word). */
  finalLagMs: number;
  /** Per Slack call that showed answer text: how far it was behind the model (appendLags). */
  appendLagsMs: number[];
  /** The gaps between consecutive Slack calls that showed text, the final answer's included (stepGaps). */
  stepGapsMs: number[];
  /** First word → the end of agent-invoker's delivery. */
  invokerEndMs: number;
  /** Handler time of slack-events (its ingress call) and of each delivery, per function. */
  ingressMs: number;
  invokerMs: number[];
  pollMs: number[];
  posterMs: number[];
  /** Most agent-invoker + async-result deliveries holding the answer at once (atOnce: a delivery that queued the next poll holds no more). */
  holdingAtOnce: number;
  /** Most running at once, delivered → settled, and for how long two or more ran (the sender's tail after it queued the next poll). */
  runningAtOnce: number;
  overlapMs: number;
  /** Accepted chat.appendStream calls. */
  appends: number;
  /** Characters the agent produced (the answer). */
  answerChars: number;
};

// ---------------------------------------------------------------------------------------------
// The arithmetic (pure; test/bench/live-answers.test.ts pins it down)

/** Lambda bills each invocation's duration rounded up to the millisecond. */
export const billed = (ms: number) => Math.ceil(ms);

/** The mean billed ms of a set of invocations. */
export function meanBilled(durations: readonly number[]): number {
  if (durations.length === 0) throw new RangeError('mean of no invocations');
  return durations.reduce((sum, ms) => sum + billed(ms), 0) / durations.length;
}

/** The memory each verification function is deployed with, GB (tools/cost-model.ts's LAMBDA_MEMORY_MB, which a test keeps equal to CDK's). */
export const FUNCTION_MEMORY_GB: Readonly<Record<PipelineQueue | 'ingress', number>> = {
  ingress: LAMBDA_MEMORY_MB.slackEvents / 1024,
  tasks: LAMBDA_MEMORY_MB.agentInvoker / 1024,
  polls: LAMBDA_MEMORY_MB.asyncResult / 1024,
  replies: LAMBDA_MEMORY_MB.slackPoster / 1024,
};

/** Billed GB-seconds of one answer: every invocation's billed ms at its function's memory. */
export function answerGbSeconds(sample: Pick<EventSample, 'ingressMs' | 'invokerMs' | 'pollMs' | 'posterMs'>, memoryGb = FUNCTION_MEMORY_GB): number {
  const gbs = (ms: readonly number[], gb: number) => ms.reduce((sum, value) => sum + (billed(value) / 1000) * gb, 0);
  return gbs([sample.ingressMs], memoryGb.ingress) + gbs(sample.invokerMs, memoryGb.tasks) + gbs(sample.pollMs, memoryGb.polls) + gbs(sample.posterMs, memoryGb.replies);
}

/** Invocations of one answer (slack-events, agent-invoker, each poll, slack-poster). */
export function answerInvocations(sample: Pick<EventSample, 'invokerMs' | 'pollMs' | 'posterMs'>): number {
  return 1 + sample.invokerMs.length + sample.pollMs.length + sample.posterMs.length;
}

/** Lambda's charge (arm64, tools/prices.ts): GB-seconds plus requests. */
export function lambdaUsd(gbSeconds: number, invocations: number): number {
  return gbSeconds * PRICES.lambdaArmGbSecond.usd + invocations * PRICES.lambdaRequest.usd;
}

/** The models priced next to the Lambda cost, from tools/prices.ts. */
export function pricedModels(ids: readonly string[] = PRICED_MODEL_IDS, models: readonly ModelPrice[] = BEDROCK_MODELS): ModelPrice[] {
  return ids.map((id) => {
    const model = models.find((m) => m.id === id);
    if (!model) throw new Error(`tools/prices.ts has no price for ${id}`);
    return model;
  });
}

export type ModelCost = { model: string; usdPerMillionOutput: number; usd: number; lambdaShare: number };

/** What the answer's output tokens (characters ÷ CHARS_PER_TOKEN) cost each model, and Lambda's cost as a share of it. */
export function modelCosts(answerChars: number, lambda: number, models: readonly ModelPrice[] = pricedModels()): ModelCost[] {
  const tokens = answerChars / CHARS_PER_TOKEN;
  return models.map((m) => {
    const usd = tokens * m.output.usd;
    return { model: m.name, usdPerMillionOutput: m.output.usd * 1e6, usd, lambdaShare: lambda / usd };
  });
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

/** The gaps between consecutive times (the Slack calls that showed text, in order). */
export function stepGaps(times: readonly number[]): number[] {
  const gaps: number[] = [];
  for (let i = 1; i < times.length; i += 1) gaps.push(times[i]! - times[i - 1]!);
  return gaps;
}

export type DeliveryEvent = { kind: 'delivered' | 'settled'; id: string; at: number } | { kind: 'handed-over'; at: number };

/**
 * How many of one answer's follow-up deliveries (agent-invoker, async-result) ran at once, from
 * the queues' events in order: `delivered` starts one, `settled` (succeeded or failed) ends it,
 * `handed-over` (a poll queued) ends the hold of every delivery running — a function's last step is
 * queueing the next poll, after which it holds nothing. `holding`: the most holding at once;
 * `running`: the most between delivered and settled; `overlapMs`: how long two or more ran.
 */
export function atOnce(events: readonly DeliveryEvent[]): { holding: number; running: number; overlapMs: number } {
  const holding = new Set<string>();
  const running = new Set<string>();
  let maxHolding = 0;
  let maxRunning = 0;
  let overlapMs = 0;
  let overlapSince: number | undefined;
  for (const event of events) {
    if (event.kind === 'delivered') {
      holding.add(event.id);
      running.add(event.id);
    } else if (event.kind === 'settled') {
      holding.delete(event.id);
      running.delete(event.id);
    } else holding.clear();
    maxHolding = Math.max(maxHolding, holding.size);
    maxRunning = Math.max(maxRunning, running.size);
    if (running.size >= 2 && overlapSince === undefined) overlapSince = event.at;
    if (running.size < 2 && overlapSince !== undefined) {
      overlapMs += event.at - overlapSince;
      overlapSince = undefined;
    }
  }
  return { holding: maxHolding, running: maxRunning, overlapMs };
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

/** The holds that follow an answer (ms): agent-invoker's, then each async-result's, as the deployment bounds them. */
export type Holds = { invokerMs: number; pollMs: number };

/**
 * STREAM_HOLD_S within each function's Lambda timeout less HOLD_MARGIN_MS (`holdMsFor`, the
 * functions' own rule): agent-invoker 60 s → 30 s; async-result 30 s → 20 s.
 */
export function deployedHolds(holdS = DEFAULT_STREAM_HOLD_S, timeouts = FUNCTION_TIMEOUT_SECONDS): Holds {
  return { invokerMs: holdMsFor(holdS * 1000, 0, timeouts.agentInvoker * 1000), pollMs: holdMsFor(holdS * 1000, 0, timeouts.asyncResult * 1000) };
}

export type HeldAnswerInputs = {
  /** How long the agent streams: its first word → its last. */
  answerMs: number;
  holds: Holds;
  /** Whether async-result holds the stream again (the protocol reads a poll as a stream); if not, plain polls follow, `pollDelayMs` apart. */
  pollsHold: boolean;
  /** STREAM_POLL_DELAY_S in ms: between plain polls while text flows. */
  pollDelayMs: number;
  /** agent-invoker's billed ms beyond the text it holds (its start, the first text's wait, the settlement). */
  invokerOverheadMs: number;
  /** A held poll: its billed ms beyond its hold; a plain poll: its billed ms. */
  pollMs: number;
  /** slack-poster and slack-events, billed ms per answer. */
  posterMs: number;
  ingressMs: number;
};

export type HeldAnswerCost = {
  answerMs: number;
  polls: number;
  invokerBilledMs: number;
  pollsBilledMs: number;
  posterBilledMs: number;
  ingressBilledMs: number;
  gbSeconds: number;
  invocations: number;
  lambdaUsd: number;
};

/**
 * One answer streamed for `answerMs`, followed one function at a time: agent-invoker holds up to
 * its hold, then each async-result holds up to its own from the cursor (at once: the hold ran its
 * length), until the answer ends; or, when polls are not held, plain polls every `pollDelayMs` +
 * a poll until one finds the answer done (the first at once, the hold having run its length).
 */
export function heldAnswerCost(inputs: HeldAnswerInputs, memoryGb = FUNCTION_MEMORY_GB): HeldAnswerCost {
  const { answerMs, holds } = inputs;
  const invokerBilledMs = billed(Math.min(answerMs, holds.invokerMs) + inputs.invokerOverheadMs);
  const rest = Math.max(0, answerMs - holds.invokerMs);
  const pollBills: number[] = [];
  if (rest > 0 && inputs.pollsHold) {
    if (!(holds.pollMs > 0)) throw new RangeError('a held poll needs a hold');
    const full = Math.floor(rest / holds.pollMs);
    for (let i = 0; i < full; i += 1) pollBills.push(billed(holds.pollMs + inputs.pollMs));
    if (rest - full * holds.pollMs > 0) pollBills.push(billed(rest - full * holds.pollMs + inputs.pollMs));
  } else if (rest > 0) {
    if (!(inputs.pollDelayMs > 0)) throw new RangeError('the poll delay must be positive');
    // Poll k starts (k − 1)·(D + p) after the invoker's hold; the first at or after the answer's end finds it done.
    const polls = 1 + Math.ceil(rest / (inputs.pollDelayMs + inputs.pollMs));
    for (let i = 0; i < polls; i += 1) pollBills.push(billed(inputs.pollMs));
  }
  const pollsBilledMs = pollBills.reduce((sum, ms) => sum + ms, 0);
  const posterBilledMs = billed(inputs.posterMs);
  const ingressBilledMs = billed(inputs.ingressMs);
  const gbSeconds = (invokerBilledMs * memoryGb.tasks + pollsBilledMs * memoryGb.polls + posterBilledMs * memoryGb.replies + ingressBilledMs * memoryGb.ingress) / 1000;
  const invocations = 3 + pollBills.length;
  return { answerMs, polls: pollBills.length, invokerBilledMs, pollsBilledMs, posterBilledMs, ingressBilledMs, gbSeconds, invocations, lambdaUsd: lambdaUsd(gbSeconds, invocations) };
}

/**
 * agent-invoker's billed ms beyond the text it held, per answer, from answers it held whole:
 * its billed ms less the answer's first word → last.
 */
export function invokerOverheadMs(samples: ReadonlyArray<Pick<EventSample, 'invokerMs' | 'streamMs'>>): number {
  if (samples.length === 0) throw new RangeError('no answers');
  return percentile(samples.map((s) => s.invokerMs.reduce((sum, ms) => sum + billed(ms), 0) - s.streamMs), 50);
}

/**
 * A poll's billed ms beyond the text it held, from answers that crossed holds: the polls' billed
 * ms less the stretch of the answer after agent-invoker ended (first word → invoker's end … last
 * word), per poll; never below 0 (the hand-over's own latency is not billed).
 */
export function pollOverheadMs(samples: ReadonlyArray<Pick<EventSample, 'pollMs' | 'streamMs' | 'invokerEndMs'>>): number {
  let billedMs = 0;
  let covered = 0;
  let polls = 0;
  for (const s of samples) {
    if (s.pollMs.length === 0) continue;
    billedMs += s.pollMs.reduce((sum, ms) => sum + billed(ms), 0);
    covered += Math.max(0, s.streamMs - s.invokerEndMs);
    polls += s.pollMs.length;
  }
  if (polls === 0) throw new RangeError('no polls');
  return Math.max(0, (billedMs - covered) / polls);
}

export type LiveAnswersRaw = {
  options: LiveAnswersOptions;
  pollDelaySeconds: number;
  samples: Record<Scenario, Record<LiveAgent, EventSample[]>>;
};

export type AgentFigures = {
  events: number;
  sign: Distribution & { methods: Record<string, number> };
  firstText: Distribution & { methods: Record<string, number> };
  firstWord: Summary;
  stream: Summary;
  done: Summary;
  /** Last word → final answer in place. */
  final: Distribution;
  /** Slack behind the model at each showing call (all events' calls). */
  behind: Distribution;
  /** Each answer's largest gap between showing calls. */
  step: Distribution;
  appends: Summary;
  polls: Summary;
  holdingAtOnce: number;
  runningAtOnce: number;
  overlapMs: Summary;
  /** Billed ms per answer, per function. */
  billedMs: { ingress: Summary; invoker: Summary; polls: Summary; poster: Summary };
  gbSeconds: Summary;
  invocations: Summary;
  answerChars: Summary;
  /** The median answer's Lambda charge and its output tokens at each priced model. */
  lambdaUsd: number;
  model: ModelCost[];
};

export type LiveAnswersResult = {
  options: LiveAnswersOptions;
  pollDelaySeconds: number;
  holdS: number;
  quietS: number;
  flush: typeof FLUSH_RULES;
  holds: Holds;
  modelAnswerSeconds: number;
  agents: Record<Scenario, Record<LiveAgent, AgentFigures>>;
  /** A MODEL_ANSWER_SECONDS answer, per agent: held by the deployment's holds, with this run's overheads, next to the model's output cost. */
  sixty: Record<LiveAgent, { inputs: HeldAnswerInputs; cost: HeldAnswerCost; model: ModelCost[] }>;
};

export function figuresOf(samples: readonly EventSample[]): AgentFigures {
  if (samples.length === 0) throw new RangeError('no events measured');
  const perAnswer = (pick: (s: EventSample) => readonly number[]) => summarize(samples.map((s) => pick(s).reduce((sum, ms) => sum + billed(ms), 0)));
  const gbSeconds = summarize(samples.map((s) => answerGbSeconds(s)));
  const invocations = summarize(samples.map(answerInvocations));
  const answerChars = summarize(samples.map((s) => s.answerChars));
  const lambda = lambdaUsd(gbSeconds.median, invocations.median);
  const steps = samples.map((s) => Math.max(0, ...s.stepGapsMs));
  return {
    events: samples.length,
    sign: { ...distribution(samples.map((s) => s.signMs)), methods: tally(samples.map((s) => s.signMethod)) },
    firstText: { ...distribution(samples.map((s) => s.firstTextMs)), methods: tally(samples.map((s) => s.firstTextMethod)) },
    firstWord: summarize(samples.map((s) => s.firstWordMs)),
    stream: summarize(samples.map((s) => s.streamMs)),
    done: summarize(samples.map((s) => s.doneMs)),
    final: distribution(samples.map((s) => s.finalLagMs)),
    behind: distribution(samples.flatMap((s) => s.appendLagsMs)),
    step: distribution(steps),
    appends: summarize(samples.map((s) => s.appends)),
    polls: summarize(samples.map((s) => s.pollMs.length)),
    holdingAtOnce: Math.max(...samples.map((s) => s.holdingAtOnce)),
    runningAtOnce: Math.max(...samples.map((s) => s.runningAtOnce)),
    overlapMs: summarize(samples.map((s) => s.overlapMs)),
    billedMs: { ingress: perAnswer((s) => [s.ingressMs]), invoker: perAnswer((s) => s.invokerMs), polls: perAnswer((s) => s.pollMs), poster: perAnswer((s) => s.posterMs) },
    gbSeconds,
    invocations,
    answerChars,
    lambdaUsd: lambda,
    model: modelCosts(answerChars.median, lambda),
  };
}

/** From the raw samples: every figure of part 7 and the 60-second model. */
export function summarizeLiveAnswers(raw: LiveAnswersRaw): LiveAnswersResult {
  const holds = deployedHolds();
  const agents = Object.fromEntries(
    (['held', 'hand-over'] as const).map((scenario) => [scenario, Object.fromEntries(LIVE_AGENTS.map((name) => [name, figuresOf(raw.samples[scenario][name])]))]),
  ) as Record<Scenario, Record<LiveAgent, AgentFigures>>;
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const sixty = Object.fromEntries(
    LIVE_AGENTS.map((name) => {
      const held = raw.samples.held[name];
      const handOver = raw.samples['hand-over'][name];
      // Async-result held the stream again when a poll outlasted half its hold (a plain poll takes milliseconds).
      const pollsHold = handOver.some((s) => s.pollMs.some((ms) => ms >= (HAND_OVER_HOLD_S * 1000) / 2));
      const polls = handOver.flatMap((s) => s.pollMs);
      const inputs: HeldAnswerInputs = {
        answerMs: MODEL_ANSWER_SECONDS * 1000,
        holds,
        pollsHold,
        pollDelayMs: raw.pollDelaySeconds * 1000,
        invokerOverheadMs: Math.max(0, invokerOverheadMs(held)),
        pollMs: pollsHold ? pollOverheadMs(handOver) : polls.length ? meanBilled(polls) : 0,
        posterMs: mean(held.map((s) => s.posterMs.reduce((sum, ms) => sum + billed(ms), 0))),
        ingressMs: mean(held.map((s) => billed(s.ingressMs))),
      };
      const cost = heldAnswerCost(inputs);
      // The same answer at the measured pace (characters per ms of streaming), for 60 s.
      const charsPerMs = mean(held.map((s) => s.answerChars / s.streamMs));
      return [name, { inputs, cost, model: modelCosts(charsPerMs * inputs.answerMs, cost.lambdaUsd) }];
    }),
  ) as LiveAnswersResult['sixty'];
  return {
    options: raw.options,
    pollDelaySeconds: raw.pollDelaySeconds,
    holdS: DEFAULT_STREAM_HOLD_S,
    quietS: DEFAULT_STREAM_QUIET_S,
    flush: FLUSH_RULES,
    holds,
    modelAnswerSeconds: MODEL_ANSWER_SECONDS,
    agents,
    sixty,
  };
}

export type LiveTargetName = 'sign' | 'first-text' | 'behind' | 'final' | 'step' | 'one-at-a-time';
export const LIVE_TARGET_NAMES: readonly LiveTargetName[] = ['sign', 'first-text', 'behind', 'final', 'step', 'one-at-a-time'];
export type LiveTarget = { agent: LiveAgent; target: LiveTargetName; pass: boolean };

/** PASS/MISS of each target, per agent, at the default settings (one-at-a-time: over the hand-over runs too). */
export function liveAnswerVerdicts(result: LiveAnswersResult): LiveTarget[] {
  const list: LiveTarget[] = [];
  for (const target of LIVE_TARGET_NAMES) {
    for (const agent of LIVE_AGENTS) {
      const t = result.agents.held[agent];
      const pass = (() => {
        switch (target) {
          case 'sign':
            return t.sign.p50 <= SIGN_OF_LIFE_TARGET_MS;
          case 'first-text':
            return t.firstText.p50 <= TARGETS.firstTextP50Ms && t.firstText.p95 <= TARGETS.firstTextP95Ms;
          case 'behind':
            return t.behind.p95 <= TARGETS.behindP95Ms;
          case 'final':
            return t.final.p95 <= TARGETS.finalP95Ms;
          case 'step':
            return t.step.p95 <= TARGETS.stepP95Ms;
          case 'one-at-a-time':
            return Math.max(t.holdingAtOnce, result.agents['hand-over'][agent].holdingAtOnce) <= TARGETS.atOnce;
        }
      })();
      list.push({ agent, target, pass });
    }
  }
  return list;
}

// ---------------------------------------------------------------------------------------------
// The measurement (in the child)

/** `count` words in all, `echo:` (the executor's) included, unique to event `n`. */
export function questionFor(n: number, count: number): string {
  return [`question-${n}`, ...Array.from({ length: Math.max(0, count - 2) }, (_, i) => `word${i + 1}`)].join(' ');
}

/** What the A2A agent is asked: stream `count` words, one every `wordMs` (test/support/a2a-agents.ts's directives), unique to event `n`. */
export function a2aQuestionFor(n: number, count: number, wordMs: number): string {
  return `question-${n} #stream #words=${count} #delay=${wordMs}`;
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

/** The Slack calls that may write the answer. */
const WRITES = ['chat.startStream', 'chat.appendStream', 'chat.stopStream', 'chat.update', 'chat.postMessage'];

/** A Slack call that showed part of the answer (`prefix`: how every answer starts). */
function showsAnswer(request: FakeSlackRequest, prefix: string): boolean {
  return WRITES.includes(request.method) && JSON.stringify(request.body).includes(prefix);
}

/** A Slack call that shows the user something: the agent session going to processing (with its Stop button), a status, a stream, a message. */
function showsSomething(request: FakeSlackRequest): boolean {
  if (request.method === 'agents.sessions.setStatus') return request.body.status === 'processing';
  if (request.method === 'assistant.threads.setStatus') return typeof request.body.status === 'string' && request.body.status !== '';
  return request.method === 'chat.startStream' || request.method === 'chat.postMessage';
}

type Produced = { marks: Array<{ at: number; chars: number }> };

/** Runs in the child: measures and returns the raw samples. */
export async function measureLiveAnswers(options: LiveAnswersOptions): Promise<LiveAnswersRaw> {
  Object.assign(process.env, PLACEHOLDER_AWS_ENV);
  const slack = await startFakeSlackApi();
  const config = loadExecutionConfig({ ECHO_STREAM_MS: String(options.wordMs) });

  // The agents' words, timed as they produce them, by question.
  const produced = new Map<string, Produced>();
  const mark = (question: string, delta: string) => {
    const now = fakeSlackNow();
    const entry = produced.get(question) ?? { marks: [] };
    produced.set(question, entry);
    entry.marks.push({ at: now, chars: (entry.marks.at(-1)?.chars ?? 0) + delta.length });
  };
  // The echo executor, its `onText` wrapped.
  const echo = new EchoExecutor(config.ECHO_DELAY_MS, config.ECHO_STREAM_MS);
  const executor: Executor = {
    name: echo.name,
    async execute(params, context) {
      const onText = context.onText;
      if (!onText) return echo.execute(params, context);
      return echo.execute(params, {
        ...context,
        onText: (delta) => {
          mark(params.text, delta);
          onText(delta);
        },
      });
    },
  };
  const runtime = createExecutionRuntime({ config, executor, log: createLogger('execution') });
  const targets = await serveBehindEveryTransport(runtime);
  // The A2A agent: its card says it streams; its words are timed by its hook as it publishes them.
  const a2a: A2aTestAgent = await startSdkA2aAgent({ streaming: true, onAnswerText: mark });
  const agentFor = (name: LiveAgent, env: Record<string, string>): ExecutionAgent => {
    if (name !== 'a2a') return targets.agentFor(name, env);
    const agent = executionAgentsFrom({ env: { ...process.env, EXECUTION_PROTOCOL: 'a2a', TRANSPORT: 'https', EXECUTION_URL: a2a.url, ...env } }, { log: createLogger('transport') }).default;
    if (agent.protocol !== 'a2a' || agent.transport !== 'https' || !agent.streams) throw new Error(`a2a: configured a2a over https with streams, got ${agent.protocol} over ${agent.transport}`);
    return agent;
  };

  const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }), { apiUrl: slack.apiUrl });
  const verificationEnv = { RATE_LIMIT_PER_MINUTE: '100000000' };
  const pollDelaySeconds = loadVerificationConfig(verificationEnv).STREAM_POLL_DELAY_S;
  type Harness = { pipeline: LocalPipeline; server: Server; url: string };
  const harnesses = new Map<string, Harness>();
  /** The event under way: its deliveries (which function, its handler's time), the follow-ups' events, slack-events' time. */
  const deliveries: Array<{ queue: PipelineQueue; ms: number; endedAt: number }> = [];
  const followUps: DeliveryEvent[] = [];
  let ingressMs = 0;
  try {
    for (const scenario of ['held', 'hand-over'] as const) {
      for (const name of LIVE_AGENTS) {
        const agent = agentFor(name, scenario === 'hand-over' ? { STREAM_HOLD_S: String(HAND_OVER_HOLD_S) } : {});
        const pipeline = createLocalPipeline({ agent, slack: replies, signingSecret: SIGNING_SECRET, env: verificationEnv, log: createLogger('verification') });
        // Handler time from the queue's own events: 'delivered' just before the handler starts, 'succeeded'/'failed' just after it settles.
        for (const queue of ['tasks', 'polls', 'replies'] as const) {
          const started = new Map<string, number>();
          pipeline.queues[queue].subscribe((event) => {
            const now = performance.now();
            const followUp = queue !== 'replies';
            if (event.type === 'sent' && queue === 'polls') followUps.push({ kind: 'handed-over', at: now });
            if (event.type === 'delivered') {
              started.set(event.messageId, now);
              if (followUp) followUps.push({ kind: 'delivered', id: event.messageId, at: now });
            }
            if (event.type !== 'succeeded' && event.type !== 'failed') return;
            if (followUp) followUps.push({ kind: 'settled', id: event.messageId, at: now });
            const at = started.get(event.messageId);
            if (at === undefined) return;
            started.delete(event.messageId);
            deliveries.push({ queue, ms: now - at, endedAt: fakeSlackNow() });
          });
        }
        // slack-events behind HTTP, as API Gateway serves it; its handler timed.
        const server = createServer((req, res) => {
          void (async () => {
            const body = await readBody(req, 1_048_576);
            if (body === 'too-large') return void res.writeHead(413).end();
            const headers = Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]));
            const started = performance.now();
            const answer = await pipeline.ingress({ headers, body });
            ingressMs = performance.now() - started;
            res.writeHead(answer.statusCode, answer.headers).end(answer.body);
          })().catch(() => res.writeHead(500).end());
        });
        harnesses.set(`${scenario}/${name}`, { pipeline, server, url: `${await listen(server)}/slack/events` });
      }
    }

    const oneEvent = async (scenario: Scenario, name: LiveAgent, n: number): Promise<EventSample> => {
      const harness = harnesses.get(`${scenario}/${name}`)!;
      slack.reset();
      deliveries.length = 0;
      followUps.length = 0;
      ingressMs = 0;
      const text = name === 'a2a' ? a2aQuestionFor(n, options.words, options.wordMs) : questionFor(n, options.words);
      const expected = name === 'a2a' ? streamedWords(options.words).join(' ') : `echo: ${text}`;
      const prefix = name === 'a2a' ? 'a2a:' : 'echo:';
      // The message being answered, in the channel, so the thread read finds it as on Slack.
      const ts = slack.addMessage({ channel: CHANNEL, user: ASKER, text: `<@${FAKE_BOT_USER_ID}> ${text}` });
      const { body } = slackEventEnvelope('mention', { text, ts, channel: CHANNEL, teamId: TEAM, userId: ASKER, botUserId: FAKE_BOT_USER_ID });
      const posted = fakeSlackNow();
      const ack = await postSignedEvent(harness.url, body, SIGNING_SECRET);
      if (ack.status !== 200) throw new Error(`${name}: ingress answered ${ack.status}`);
      await harness.pipeline.whenIdle({ timeoutMs: 60_000 + options.words * options.wordMs });

      const answered = slack.requests.filter((r) => r.answer?.ok);
      const sign = answered.find(showsSomething);
      const firstText = answered.find((r) => showsAnswer(r, prefix));
      const words = produced.get(text);
      produced.delete(text);
      const streams = slack.streams;
      const shownNow = streams[0] ? slack.messageText(streams[0].ts) : undefined;
      const first = words?.marks[0];
      const last = words?.marks.at(-1);
      if (!sign || !firstText || !first || !last) throw new Error(`${scenario}/${name}: no sign of life, streamed text or agent timing: ${JSON.stringify(slack.requests.map((r) => [r.method, r.answer?.error]))}`);
      if (streams.length !== 1 || streams[0]!.state !== 'stopped' || shownNow !== expected || slack.posts.length !== 0 || last.chars !== expected.length) {
        throw new Error(`${scenario}/${name}: expected one stopped stream showing the answer, got ${JSON.stringify({ streams: streams.map((s) => [s.state, s.text.slice(0, 60)]), shownNow: shownNow?.slice(0, 60), posts: slack.posts.length, produced: last.chars, expected: expected.length })}`);
      }
      const durations = (queue: PipelineQueue) => deliveries.filter((d) => d.queue === queue).map((d) => d.ms);
      const invokerEnded = deliveries.find((d) => d.queue === 'tasks')?.endedAt;
      if (invokerEnded === undefined) throw new Error(`${scenario}/${name}: no agent-invoker delivery was timed`);
      // Each Slack call that showed answer text on the stream, with how many characters it showed.
      const showing = answered
        .filter((r) => r.method === 'chat.startStream' || r.method === 'chat.appendStream')
        .map((r) => ({ at: r.answer!.at, chars: shownMarkdown(r.body).length }))
        .filter((call) => call.chars > 0);
      // The final answer in place: the last call that wrote the answer.
      const done = Math.max(...answered.filter((r) => WRITES.includes(r.method)).map((r) => r.answer!.at));
      const once = atOnce(followUps);
      return {
        signMs: sign.answer!.at - posted,
        signMethod: sign.method,
        firstTextMs: firstText.answer!.at - first.at,
        firstTextMethod: firstText.method,
        firstWordMs: first.at - posted,
        streamMs: last.at - first.at,
        doneMs: done - posted,
        finalLagMs: done - last.at,
        appendLagsMs: appendLags(words.marks, showing),
        stepGapsMs: stepGaps([...showing.map((call) => call.at), done]),
        invokerEndMs: invokerEnded - first.at,
        ingressMs,
        invokerMs: durations('tasks'),
        pollMs: durations('polls'),
        posterMs: durations('replies'),
        holdingAtOnce: once.holding,
        runningAtOnce: once.running,
        overlapMs: once.overlapMs,
        appends: answered.filter((r) => r.method === 'chat.appendStream').length,
        answerChars: last.chars,
      };
    };

    const empty = () => Object.fromEntries(LIVE_AGENTS.map((name) => [name, [] as EventSample[]])) as Record<LiveAgent, EventSample[]>;
    const samples: Record<Scenario, Record<LiveAgent, EventSample[]>> = { held: empty(), 'hand-over': empty() };
    let n = 0;
    for (const name of LIVE_AGENTS) for (let i = 0; i < options.warmupEvents; i += 1) await oneEvent('held', name, (n += 1));
    // One event per agent per round, in a new order each round.
    for (let round = 0; round < options.eventsPerTransport; round += 1) {
      for (const name of rotate(LIVE_AGENTS, round)) samples.held[name].push(await oneEvent('held', name, (n += 1)));
    }
    for (let round = 0; round < options.handOverEvents; round += 1) {
      for (const name of rotate(LIVE_AGENTS, round)) samples['hand-over'][name].push(await oneEvent('hand-over', name, (n += 1)));
    }
    return { options, pollDelaySeconds, samples };
  } finally {
    for (const { pipeline, server } of harnesses.values()) {
      await pipeline.stop();
      await close(server);
    }
    await a2a.close();
    await targets.close();
    await slack.close();
  }
}

/** The child's entry (bench/support/child-entry.ts). */
export function liveAnswersFromArgv(argv = process.argv.slice(2)): void {
  runChildMeasure<LiveAnswersOptions, unknown>(measureLiveAnswers, argv);
}

export async function runLiveAnswers(options: LiveAnswersOptions & { workDir: string; log: (line: string) => void }): Promise<LiveAnswersResult> {
  const program = await bundleProgram(options.workDir, 'live-answers', __dirname, "import { liveAnswersFromArgv } from './live-answers'; liveAnswersFromArgv();");
  const { log, workDir: _workDir, ...childOptions } = options;
  const child = spawnTracked(process.execPath, [program, JSON.stringify(childOptions)], { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let report = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report += chunk.toString()));
  await new Promise<void>((resolve) => child.once('close', () => resolve()));
  const parsed = JSON.parse(report.trim().split('\n').pop() || '{"error":"no report"}') as LiveAnswersRaw & { error?: string };
  if (parsed.error) throw new Error(`live-answers child failed: ${parsed.error}\n${stderr}`);
  const result = summarizeLiveAnswers(parsed);
  for (const scenario of ['held', 'hand-over'] as const) {
    for (const name of LIVE_AGENTS) {
      const t = result.agents[scenario][name];
      log(
        `  ${scenario} ${name}: first text − first word p50 ${t.firstText.p50.toFixed(0)} / p95 ${t.firstText.p95.toFixed(0)} ms; behind p95 ${t.behind.p95.toFixed(0)} ms; ` +
          `final − last word p95 ${t.final.p95.toFixed(0)} ms; largest step p95 ${t.step.p95.toFixed(0)} / max ${t.step.all.max.toFixed(0)} ms; ` +
          `${t.polls.median} polls; at once ${t.holdingAtOnce} (running ${t.runningAtOnce}); ${t.gbSeconds.median.toFixed(3)} GB-s`,
      );
    }
  }
  for (const name of LIVE_AGENTS) {
    const s = result.sixty[name];
    log(`  ${MODEL_ANSWER_SECONDS} s answer, ${name}: ${s.cost.invokerBilledMs} + ${s.cost.polls} polls ${s.cost.pollsBilledMs} ms; ${s.cost.gbSeconds.toFixed(2)} GB-s = $${s.cost.lambdaUsd.toFixed(6)}`);
  }
  return result;
}
