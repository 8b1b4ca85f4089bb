import { startLocalStack } from '../src/local/local-stack';
import type { Step } from '../src/contract/steps';
import type { Log } from '../src/observability/logger';
import { textStep, type StreamStep } from '../src/protocols/outcome';
import { createSlackWebClient, WebApiSlackReplies } from '../src/slack/slack-replies';
import type { LiveTarget } from '../src/verification/live/live-parts';
import { createLiveReply } from '../src/verification/live/live-reply';
import { holdStream } from '../src/verification/live/stream-hold';
import { MemoryLiveReplies } from '../src/verification/stores/memory-live-replies';
import { fakeSlackNow, startFakeSlackApi, type FakeSlackApi, type FakeSlackRequest } from '../test/support/fake-slack-api';
import { percentile as percentileOf } from './stats';

/** A percentile, NaN when nothing was measured (every sample missing: the target then fails). */
const percentile = (values: readonly number[], p: number) => (values.length ? percentileOf(values, p) : Number.NaN);

/**
 * Part 10: the agent at work (docs/architecture.md §2.5 "Steps", §2.8 "Questions to a person").
 *
 * (a) How long after the agent emits a step its card reaches Slack: a held stream
 * (src/verification/live/stream-hold.ts, its real flush rules and timers) whose agent emits
 * `steps` steps, each in progress and then complete a `stepMs` apart, shown by the live reply
 * (live-steps.ts) with the real @slack/web-api client against the fake Slack API on loopback. Each
 * state change is a sample: the fake Slack's arrival time of the first call whose `task_update`
 * chunk carries that step at that state, minus the moment the agent yielded it.
 *
 * (b) Resume latency: through the whole local stack (both zones, the in-memory queues, https
 * between the zones, replies to the local workspace), `#ask=` pauses a task; the asker's click on
 * Approve (a signed block_actions to the ingress) until the resumed task's answer appears in the
 * thread (the local workspace's time for the message that carries it). One user asks them all in a
 * minute: RATE_LIMIT_PER_MINUTE=0, so none is refused for the rate.
 */
export type StepsQuestionsResult = {
  cards: { tasks: number; steps: number; stepMs: number; samples: number; p50: number; p95: number; max: number; missing: number };
  resume: { rounds: number; p50: number; p95: number; max: number; missing: number };
};
export type StepsQuestionsOptions = { tasks: number; steps: number; stepMs: number; resumeRounds: number; log: (line: string) => void };

/** The card of a step in Slack within a second of the agent emitting it (issue 35). */
export const STEP_CARD_TARGET_MS = 1_000;
/** A click's answer: the resumed task's first text within two seconds, locally (no target in the issue; the bench's). */
export const RESUME_TARGET_MS = 2_000;

const SILENT: Log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const STREAM_CALLS = new Set(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);

/** The agent's stream: each step in progress, then complete, `stepMs` apart, then a short answer; records when each state was yielded. */
function stepsStream(steps: number, stepMs: number, emitted: Map<string, number>): (signal: AbortSignal) => AsyncIterable<StreamStep> {
  return async function* stream(signal) {
    const handle = { taskId: 'bench-task' };
    const shown: Step[] = [];
    for (let n = 1; n <= steps; n++) {
      for (const status of ['in_progress', 'complete'] as const) {
        await new Promise((resolve) => setTimeout(resolve, stepMs));
        if (signal.aborted) return;
        const step: Step = { id: `step-${n}`, title: `Step ${n}`, status };
        const at = shown.findIndex((candidate) => candidate.id === step.id);
        if (at < 0) shown.push(step);
        else shown[at] = step;
        emitted.set(`${step.id}|${status}`, fakeSlackNow());
        yield textStep('', handle, { steps: shown.map((s) => ({ ...s })), planTitle: 'Bench plan' });
      }
    }
    yield textStep('done.', handle);
    yield { kind: 'success', text: 'done.', extra: {} };
  };
}

/** The `id|status` of each task card a stream call carries. */
function cardsOf(request: FakeSlackRequest): string[] {
  const raw = request.body.chunks;
  let chunks: unknown;
  try {
    chunks = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    return [];
  }
  if (!Array.isArray(chunks)) return [];
  return chunks.filter((chunk): chunk is { type: string; id: string; status: string } => chunk?.type === 'task_update').map((chunk) => `${chunk.id}|${chunk.status}`);
}

async function cardsOnce(slack: FakeSlackApi, options: StepsQuestionsOptions, channel: string): Promise<{ delays: number[]; missing: number }> {
  const live = createLiveReply({ slack: new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl })), store: new MemoryLiveReplies(), workingText: 'is working on it…', placeholderText: '…', log: SILENT });
  const target: LiveTarget = { team_id: 'T0FAKE', channel, ts: '1700000000.000100', request_id: `bench-${channel}`, user_id: 'U0ASKER' };
  const emitted = new Map<string, number>();
  await holdStream(stepsStream(options.steps, options.stepMs, emitted), { before: 0, show: (before, delta) => live.show(target, before, delta), showSteps: (steps) => live.showSteps(target, steps) });
  const calls = slack.requests.filter((request) => request.body.channel === channel && STREAM_CALLS.has(request.method));
  const delays: number[] = [];
  let missing = 0;
  for (const [key, at] of emitted) {
    const shown = calls.find((request) => request.at >= at && cardsOf(request).includes(key));
    if (shown) delays.push(shown.at - at);
    else missing++;
  }
  return { delays, missing };
}

async function measureCards(options: StepsQuestionsOptions): Promise<StepsQuestionsResult['cards']> {
  const slack = await startFakeSlackApi();
  const delays: number[] = [];
  let missing = 0;
  try {
    // Five tasks at a time, each in its own channel.
    for (let at = 0; at < options.tasks; at += 5) {
      const runs = await Promise.all(Array.from({ length: Math.min(5, options.tasks - at) }, (_, i) => cardsOnce(slack, options, `C0STEPS${at + i}`)));
      for (const run of runs) {
        delays.push(...run.delays);
        missing += run.missing;
      }
    }
  } finally {
    await slack.close();
  }
  const max = delays.reduce((a, b) => Math.max(a, b), 0);
  const result = { tasks: options.tasks, steps: options.steps, stepMs: options.stepMs, samples: delays.length, p50: percentile(delays, 50), p95: percentile(delays, 95), max, missing };
  options.log(`  step cards: ${result.p50.toFixed(0)} ms p50, ${result.p95.toFixed(0)} ms p95 (max ${max.toFixed(0)}) from the agent's step to its card in Slack; ${missing} of ${delays.length + missing} never shown`);
  return result;
}

async function measureResume(options: StepsQuestionsOptions): Promise<StepsQuestionsResult['resume']> {
  const stack = await startLocalStack({ env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', RATE_LIMIT_PER_MINUTE: '0' }, verificationPort: 0, executionPort: 0, replyWriter: () => undefined, log: SILENT });
  const delays: number[] = [];
  let missing = 0;
  try {
    const workspace = stack.consoleReplies!;
    const waitFor = async <T>(find: () => T | undefined, ms = 10_000): Promise<T | undefined> => {
      const deadline = Date.now() + ms;
      for (let found = find(); Date.now() < deadline; found = find()) {
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return find();
    };
    for (let round = 0; round < options.resumeRounds; round++) {
      const said = await stack.say(`deploy ${round} #ask=Ship it?`);
      const question = await waitFor(() => workspace.posted.find((reply) => reply.threadTs === said.ts && reply.buttons?.some((button) => button.label === 'Approve')));
      const approve = question?.buttons?.find((button) => button.label === 'Approve');
      if (!question || !approve) {
        missing++;
        continue;
      }
      const click = await stack.surface.clickButton(question.ts, approve.actionId);
      const answer = await waitFor(() => workspace.posted.find((reply) => reply.threadTs === said.ts && reply.ts !== question.ts && reply.text.includes('answer: Approve')));
      if (answer) delays.push(Math.max(0, answer.at - click.at));
      else missing++;
    }
  } finally {
    await stack.stop();
  }
  const max = delays.reduce((a, b) => Math.max(a, b), 0);
  const result = { rounds: options.resumeRounds, p50: percentile(delays, 50), p95: percentile(delays, 95), max, missing };
  options.log(`  resume: ${result.p50.toFixed(0)} ms p50, ${result.p95.toFixed(0)} ms p95 (max ${max.toFixed(0)}) from the click to the resumed answer; ${missing} of ${options.resumeRounds} not resumed`);
  return result;
}

export async function runStepsQuestions(options: StepsQuestionsOptions): Promise<StepsQuestionsResult> {
  return { cards: await measureCards(options), resume: await measureResume(options) };
}
