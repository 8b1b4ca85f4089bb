import {
  a2aQuestionFor,
  answerGbSeconds,
  answerInvocations,
  appendLags,
  atOnce,
  billed,
  deployedHolds,
  distribution,
  FUNCTION_MEMORY_GB,
  heldAnswerCost,
  invokerOverheadMs,
  LIVE_AGENTS,
  lambdaUsd,
  liveAnswerVerdicts,
  meanBilled,
  modelCosts,
  pollOverheadMs,
  pricedModels,
  questionFor,
  stepGaps,
  summarizeLiveAnswers,
  tally,
  type EventSample,
  type HeldAnswerInputs,
  type LiveAgent,
  type LiveAnswersRaw,
  type LiveTargetName,
} from '../../bench/live-answers';
import { renderResults } from '../../bench/report';
import { words } from '../../src/execution/executors/echo-executor';
import { streamedWords } from '../support/a2a-agents';
import { LAMBDA_MEMORY_MB } from '../../tools/cost-model';
import { PRICES } from '../../tools/prices';

/** Part 7's arithmetic only: no timing is asserted. */

describe('billing', () => {
  it('rounds each invocation up to the millisecond, then averages', () => {
    expect(billed(7.01)).toBe(8);
    expect(billed(7)).toBe(7);
    expect(meanBilled([7.01, 8.9, 3])).toBe((8 + 9 + 3) / 3);
    expect(() => meanBilled([])).toThrow(RangeError);
  });

  it('takes each function’s memory from the cost model’s table of what CDK deploys', () => {
    expect(FUNCTION_MEMORY_GB).toEqual({
      ingress: LAMBDA_MEMORY_MB.slackEvents / 1024,
      tasks: LAMBDA_MEMORY_MB.agentInvoker / 1024,
      polls: LAMBDA_MEMORY_MB.asyncResult / 1024,
      replies: LAMBDA_MEMORY_MB.slackPoster / 1024,
    });
  });

  it('bills each invocation of an answer rounded up, at its function’s memory', () => {
    const memory = { ingress: 0.5, tasks: 1, polls: 0.25, replies: 0.125 };
    // 2 ms × 0.5 + 3,001 × 1 + (1,001 + 500) × 0.25 + 8 × 0.125 = 3,378.25 GB-ms
    expect(answerGbSeconds({ ingressMs: 1.2, invokerMs: [3000.4], pollMs: [1000.1, 500], posterMs: [7.5] }, memory)).toBeCloseTo(3.37825, 9);
    expect(answerInvocations({ invokerMs: [1], pollMs: [1, 2], posterMs: [1] })).toBe(5);
  });

  it('prices GB-seconds and requests at tools/prices.ts', () => {
    expect(lambdaUsd(2, 3)).toBeCloseTo(2 * PRICES.lambdaArmGbSecond.usd + 3 * PRICES.lambdaRequest.usd, 15);
    expect(lambdaUsd(0, 1_000_000)).toBeCloseTo(0.2, 12);
  });
});

describe('model prices', () => {
  it('picks the named models from tools/prices.ts, in order, and refuses one it does not price', () => {
    const models = [
      { id: 'a', name: 'A', input: { usd: 1, per: 't', source: 's', checked: 'd' }, output: { usd: 2e-6, per: 't', source: 's', checked: 'd' } },
      { id: 'b', name: 'B', input: { usd: 1, per: 't', source: 's', checked: 'd' }, output: { usd: 1e-5, per: 't', source: 's', checked: 'd' } },
    ];
    expect(pricedModels(['b', 'a'], models).map((m) => m.name)).toEqual(['B', 'A']);
    expect(() => pricedModels(['c'], models)).toThrow(/no price for c/);
    expect(pricedModels().map((m) => m.name)).toEqual(['Amazon Nova Micro', 'Claude 3.5 Haiku', 'Claude Sonnet 4.5']);
  });

  it('prices the answer’s output tokens (characters ÷ 4) and Lambda’s share of them', () => {
    const [model] = pricedModels(['amazon.nova-micro-v1:0']);
    // 400 characters: 100 tokens.
    const [cost] = modelCosts(400, 0.00001, [model!]);
    expect(cost!.usd).toBeCloseTo(100 * model!.output.usd, 15);
    expect(cost!.usdPerMillionOutput).toBeCloseTo(0.14, 9);
    expect(cost!.lambdaShare).toBeCloseTo(0.00001 / (100 * model!.output.usd), 9);
  });
});

describe('what Slack showed', () => {
  it('measures each showing call against the model’s oldest character in it', () => {
    // The model: 10 characters at 0 ms, 10 more at 100, 10 more at 200.
    const marks = [
      { at: 0, chars: 10 },
      { at: 100, chars: 20 },
      { at: 200, chars: 30 },
    ];
    // Slack: the first 10 shown at 250, the next 20 at 600.
    expect(appendLags(marks, [{ at: 250, chars: 10 }, { at: 600, chars: 20 }])).toEqual([250, 500]);
    // Shown in one call: behind by the first character's wait.
    expect(appendLags(marks, [{ at: 900, chars: 30 }])).toEqual([900]);
  });

  it('takes the gaps between consecutive showing calls', () => {
    expect(stepGaps([0, 250, 850, 1500])).toEqual([250, 600, 650]);
    expect(stepGaps([42])).toEqual([]);
  });
});

describe('atOnce', () => {
  it('counts a delivery that queued the next poll as holding nothing, and its tail as running', () => {
    const result = atOnce([
      { kind: 'delivered', id: 'invoker', at: 0 },
      { kind: 'handed-over', at: 1000 },
      { kind: 'delivered', id: 'poll-1', at: 1001 },
      { kind: 'settled', id: 'invoker', at: 1004 },
      { kind: 'handed-over', at: 2000 },
      { kind: 'delivered', id: 'poll-2', at: 2000 },
      { kind: 'settled', id: 'poll-1', at: 2002 },
      { kind: 'settled', id: 'poll-2', at: 2500 },
    ]);
    expect(result).toEqual({ holding: 1, running: 2, overlapMs: 3 + 2 });
  });

  it('finds two deliveries holding at once when nothing was handed over', () => {
    const result = atOnce([
      { kind: 'delivered', id: 'invoker', at: 0 },
      { kind: 'delivered', id: 'redelivered', at: 500 },
      { kind: 'settled', id: 'invoker', at: 800 },
      { kind: 'settled', id: 'redelivered', at: 900 },
    ]);
    expect(result).toEqual({ holding: 2, running: 2, overlapMs: 300 });
  });

  it('is 1 for an answer the invoker held alone', () => {
    expect(atOnce([{ kind: 'delivered', id: 'invoker', at: 0 }, { kind: 'settled', id: 'invoker', at: 3000 }])).toEqual({ holding: 1, running: 1, overlapMs: 0 });
  });
});

describe('the held-stream model', () => {
  it('bounds each hold by its function’s Lambda timeout less the margin', () => {
    // agent-invoker 60 s, async-result 30 s, less 10 s each.
    expect(deployedHolds(30)).toEqual({ invokerMs: 30_000, pollMs: 20_000 });
    expect(deployedHolds(10)).toEqual({ invokerMs: 10_000, pollMs: 10_000 });
    expect(deployedHolds(100)).toEqual({ invokerMs: 50_000, pollMs: 20_000 });
    expect(deployedHolds(30, { slackEvents: 10, agentInvoker: 15, asyncResult: 10, slackPoster: 60 })).toEqual({ invokerMs: 5_000, pollMs: 0 });
  });

  const inputs = (overrides: Partial<HeldAnswerInputs> = {}): HeldAnswerInputs => ({
    answerMs: 60_000,
    holds: { invokerMs: 30_000, pollMs: 20_000 },
    pollsHold: true,
    pollDelayMs: 2000,
    invokerOverheadMs: 300.4,
    pollMs: 20,
    posterMs: 7,
    ingressMs: 2,
    ...overrides,
  });
  const memory = { ingress: 0.5, tasks: 1, polls: 0.25, replies: 0.25 };

  it('holds 30 s in the invoker, then 20 s and the last 10 s in async-result, one at a time', () => {
    const cost = heldAnswerCost(inputs(), memory);
    expect(cost).toMatchObject({ polls: 2, invokerBilledMs: 30_301, pollsBilledMs: 20_020 + 10_020, posterBilledMs: 7, ingressBilledMs: 2, invocations: 5 });
    expect(cost.gbSeconds).toBeCloseTo((30_301 + 30_040 * 0.25 + 7 * 0.25 + 2 * 0.5) / 1000, 9);
    expect(cost.lambdaUsd).toBeCloseTo(lambdaUsd(cost.gbSeconds, 5), 15);
  });

  it('makes no poll for an answer within the invoker’s hold, and no half-empty one when holds divide the rest', () => {
    expect(heldAnswerCost(inputs({ answerMs: 3000 }), memory)).toMatchObject({ polls: 0, invokerBilledMs: 3301, pollsBilledMs: 0 });
    expect(heldAnswerCost(inputs({ answerMs: 70_000 }), memory)).toMatchObject({ polls: 2, pollsBilledMs: 2 * 20_020 });
  });

  it('follows the rest with plain polls, delay + poll apart, when polls are not held', () => {
    // 1 + ⌈30,000 / 2,010⌉ = 16 polls of 10 ms.
    const cost = heldAnswerCost(inputs({ pollsHold: false, pollMs: 10 }), memory);
    expect(cost).toMatchObject({ polls: 16, pollsBilledMs: 160, invocations: 19 });
    expect(() => heldAnswerCost(inputs({ pollsHold: false, pollDelayMs: 0 }), memory)).toThrow(RangeError);
    expect(() => heldAnswerCost(inputs({ holds: { invokerMs: 30_000, pollMs: 0 } }), memory)).toThrow(RangeError);
  });

  it('takes the invoker’s overhead as its billed ms beyond the answer it held (median)', () => {
    expect(invokerOverheadMs([{ invokerMs: [3200.5], streamMs: 2900 }])).toBe(301);
    expect(invokerOverheadMs([{ invokerMs: [3000], streamMs: 2900 }, { invokerMs: [3300], streamMs: 2900 }, { invokerMs: [3250], streamMs: 2900 }])).toBe(350);
    expect(() => invokerOverheadMs([])).toThrow(RangeError);
  });

  it('takes a poll’s overhead as the polls’ billed ms beyond the answer after the invoker, per poll, never below 0', () => {
    // 1,011 + 1,005 + 301 = 2,317 billed against 2,900 − 950 = 1,950 ms of answer: 367 / 3.
    expect(pollOverheadMs([{ pollMs: [1010.2, 1005, 300.1], streamMs: 2900, invokerEndMs: 950 }, { pollMs: [], streamMs: 2900, invokerEndMs: 3000 }])).toBeCloseTo(367 / 3, 9);
    expect(pollOverheadMs([{ pollMs: [100], streamMs: 2900, invokerEndMs: 950 }])).toBe(0);
    expect(() => pollOverheadMs([{ pollMs: [], streamMs: 2900, invokerEndMs: 3000 }])).toThrow(RangeError);
  });
});

describe('distribution and tally', () => {
  it('takes p50 and p95 by nearest rank', () => {
    const values = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
    expect(distribution(values)).toEqual({ p50: 5, p95: 10, all: { median: 5.5, min: 1, max: 10, n: 10 } });
  });

  it('counts each value', () => {
    expect(tally(['a', 'b', 'a'])).toEqual({ a: 2, b: 1 });
  });
});

describe('the questions', () => {
  it('makes the echoed answer exactly the asked number of words, unique per event', () => {
    expect(words(`echo: ${questionFor(7, 60)}`)).toHaveLength(60);
    expect(questionFor(1, 60)).not.toBe(questionFor(2, 60));
  });

  it('asks the A2A agent for the same number of words at the same pace', () => {
    expect(a2aQuestionFor(3, 60, 50)).toBe('question-3 #stream #words=60 #delay=50');
    expect(streamedWords(60)).toHaveLength(60);
  });
});

const sample = (overrides: Partial<EventSample> = {}): EventSample => ({
  signMs: 20,
  signMethod: 'agents.sessions.setStatus',
  firstTextMs: 250,
  firstTextMethod: 'chat.startStream',
  firstWordMs: 30,
  streamMs: 2900,
  doneMs: 3000,
  finalLagMs: 70,
  appendLagsMs: [250, 600, 650],
  stepGapsMs: [600, 600, 300],
  invokerEndMs: 2950,
  ingressMs: 1.5,
  invokerMs: [3200.4],
  pollMs: [],
  posterMs: [6.5],
  holdingAtOnce: 1,
  runningAtOnce: 1,
  overlapMs: 0,
  appends: 4,
  answerChars: 400,
  ...overrides,
});

/** A hand-over answer: the invoker held 1 s, then three polls held the rest. */
const handOverSample = (overrides: Partial<EventSample> = {}) => sample({ invokerMs: [1000.2], invokerEndMs: 950, pollMs: [1010.2, 1005, 300.1], holdingAtOnce: 1, runningAtOnce: 2, overlapMs: 2, ...overrides });

const raw = (held: Partial<Record<LiveAgent, EventSample[]>> = {}, handOver: Partial<Record<LiveAgent, EventSample[]>> = {}): LiveAnswersRaw => ({
  options: { eventsPerTransport: 3, warmupEvents: 1, handOverEvents: 1, words: 60, wordMs: 50 },
  pollDelaySeconds: 2,
  samples: {
    held: Object.fromEntries(LIVE_AGENTS.map((a) => [a, held[a] ?? [sample(), sample(), sample()]])) as Record<LiveAgent, EventSample[]>,
    // The A2A agent's polls are plain reads: a few ms each.
    'hand-over': Object.fromEntries(LIVE_AGENTS.map((a) => [a, handOver[a] ?? [a === 'a2a' ? handOverSample({ pollMs: [5.2, 6, 7] }) : handOverSample()]])) as Record<LiveAgent, EventSample[]>,
  },
});

describe('summarizeLiveAnswers', () => {
  it('gathers each agent’s figures at the defaults', () => {
    const t = summarizeLiveAnswers(raw()).agents.held.https;
    expect(t.behind).toEqual(distribution([250, 600, 650, 250, 600, 650, 250, 600, 650]));
    expect(t.step.p95).toBe(600);
    expect(t.final.p50).toBe(70);
    expect(t.billedMs.invoker.median).toBe(3201);
    expect(t.gbSeconds.median).toBeCloseTo(answerGbSeconds(sample()), 12);
    expect(t.invocations.median).toBe(3);
    expect(t.model).toEqual(modelCosts(400, lambdaUsd(answerGbSeconds(sample()), 3)));
    expect(t.sign.methods).toEqual({ 'agents.sessions.setStatus': 3 });
  });

  it('models a 60-second answer from the deployment’s holds and this run’s overheads, held polls or plain ones as measured', () => {
    const { sixty, holds } = summarizeLiveAnswers(raw());
    expect(holds).toEqual({ invokerMs: 30_000, pollMs: 20_000 });
    const https = sixty.https;
    expect(https.inputs).toMatchObject({ answerMs: 60_000, pollsHold: true, invokerOverheadMs: 3201 - 2900, pollMs: (1011 + 1005 + 301 - 1950) / 3, posterMs: 7, ingressMs: 2 });
    expect(https.cost.polls).toBe(2);
    // 400 characters in 2.9 s, for 60 s: 400 / 2,900 × 60,000 characters.
    expect(https.model[0]!.usd).toBeCloseTo(((400 / 2900) * 60_000 * pricedModels()[0]!.output.usd) / 4, 12);
    const a2a = sixty.a2a;
    expect(a2a.inputs).toMatchObject({ pollsHold: false, pollMs: (6 + 6 + 7) / 3, pollDelayMs: 2000 });
    expect(a2a.cost.polls).toBe(1 + Math.ceil(30_000 / (2000 + 19 / 3)));
  });
});

describe('liveAnswerVerdicts', () => {
  const verdict = (r: LiveAnswersRaw, agent: LiveAgent, target: LiveTargetName) => liveAnswerVerdicts(summarizeLiveAnswers(r)).find((v) => v.agent === agent && v.target === target)!.pass;
  /** Three agentcore answers: two of them `at`, so p50 and p95 both land on it; `spare` the third. */
  const agentcore = (at: Partial<EventSample>, spare: Partial<EventSample> = {}) => raw({ agentcore: [sample(at), sample(at), sample(spare)] });

  it('passes the first text at + 0.5 s (p50) and + 1 s (p95), and misses just past either', () => {
    expect(verdict(agentcore({ firstTextMs: 500 }, { firstTextMs: 1000 }), 'agentcore', 'first-text')).toBe(true);
    expect(verdict(agentcore({ firstTextMs: 500.5 }, { firstTextMs: 100 }), 'agentcore', 'first-text')).toBe(false);
    expect(verdict(agentcore({ firstTextMs: 100 }, { firstTextMs: 1000.5 }), 'agentcore', 'first-text')).toBe(false);
    expect(verdict(agentcore({ firstTextMs: 100 }, { firstTextMs: 1000.5 }), 'https', 'first-text')).toBe(true);
  });

  it('judges the lag behind the model, the final answer and the steps at 1 s (p95)', () => {
    expect(verdict(agentcore({ appendLagsMs: [1000] }), 'agentcore', 'behind')).toBe(true);
    expect(verdict(agentcore({}, { appendLagsMs: [1000.5] }), 'agentcore', 'behind')).toBe(false);
    expect(verdict(agentcore({ finalLagMs: 1000 }), 'agentcore', 'final')).toBe(true);
    expect(verdict(agentcore({}, { finalLagMs: 1000.5 }), 'agentcore', 'final')).toBe(false);
    expect(verdict(agentcore({ stepGapsMs: [1000, 200] }), 'agentcore', 'step')).toBe(true);
    expect(verdict(agentcore({}, { stepGapsMs: [200, 1000.5] }), 'agentcore', 'step')).toBe(false);
    expect(verdict(agentcore({ signMs: 1000 }), 'agentcore', 'sign')).toBe(true);
    expect(verdict(agentcore({ signMs: 1000.5 }), 'agentcore', 'sign')).toBe(false);
  });

  it('misses one function at a time when two deliveries held one answer, at the defaults or across holds', () => {
    expect(verdict(raw(), 'a2a', 'one-at-a-time')).toBe(true);
    expect(verdict(raw({}, { a2a: [handOverSample({ holdingAtOnce: 2 })] }), 'a2a', 'one-at-a-time')).toBe(false);
    expect(verdict(raw({ https: [sample(), sample({ holdingAtOnce: 2 })] }), 'https', 'one-at-a-time')).toBe(false);
    expect(liveAnswerVerdicts(summarizeLiveAnswers(raw()))).toHaveLength(6 * LIVE_AGENTS.length);
  });
});

describe('report', () => {
  it('renders part 7 with one row per target, each agent in it', () => {
    const markdown = renderResults({ quick: false, startedAt: new Date(0), durationSeconds: 60, loadAverageAtStart: [1, 2, 3], failures: [], liveAnswers: summarizeLiveAnswers(raw({ https: [sample({ finalLagMs: 1500 })] })) });
    expect(markdown).toContain('## 7. Live answers');
    const rows = markdown.match(/^\| 7 \|.*$/gm)!;
    expect(rows).toHaveLength(8);
    for (const row of rows) for (const label of ['in-process', 'https', 'agentcore', 'A2A (https)']) expect(row).toContain(label);
    expect(rows.find((row) => row.includes('final answer complete'))).toMatch(/https \+1,500 \/ \+1,500 ms \(MISS\).*\*\*MISS\*\*/);
    expect(markdown).toContain('1.00 / 2.00 / 3.00');
  });
});
