import {
  appendLags,
  breakEvenPollMs,
  heldAnswerCost,
  billed,
  distribution,
  liveAnswerVerdicts,
  meanBilled,
  questionFor,
  streamedAnswerCost,
  streamedPolls,
  summarizeLiveAnswers,
  tally,
  type EventSample,
  type LiveAnswersRaw,
  type StreamCostInputs,
} from '../../bench/live-answers';
import { renderResults } from '../../bench/report';
import { words } from '../../src/execution/executors/echo-executor';
import { DEFAULT_POLL_SCHEDULE } from '../../src/verification/poll-schedule';

/** Part 7's arithmetic only: no timing is asserted. */

const inputs = (overrides: Partial<StreamCostInputs> = {}): StreamCostInputs => ({
  answerMs: 60_000,
  firstPollQueuedMs: 350,
  pollDelayMs: 1000,
  invokerMs: 320.4,
  pollMs: 10,
  posterMs: 12.2,
  ...overrides,
});

describe('billing', () => {
  it('rounds each invocation up to the millisecond, then averages', () => {
    expect(billed(7.01)).toBe(8);
    expect(billed(7)).toBe(7);
    expect(meanBilled([7.01, 8.9, 3])).toBe((8 + 9 + 3) / 3);
    expect(() => meanBilled([])).toThrow(RangeError);
  });
});

describe('streamedPolls', () => {
  it('counts the polls until the first one that starts at or after the answer ends (poll k at a + k·D + (k−1)·p)', () => {
    // Polls start at 1350, 2360, 3370 ms: the third is the first after a 2.5 s answer.
    expect(streamedPolls({ answerMs: 2500, firstPollQueuedMs: 350, pollDelayMs: 1000, pollMs: 10 })).toBe(3);
    // An answer that ends exactly as a poll starts is found done by that poll.
    expect(streamedPolls({ answerMs: 2360, firstPollQueuedMs: 350, pollDelayMs: 1000, pollMs: 10 })).toBe(2);
    expect(streamedPolls({ answerMs: 2361, firstPollQueuedMs: 350, pollDelayMs: 1000, pollMs: 10 })).toBe(3);
  });

  it('makes one poll for an answer that ends before the first poll', () => {
    expect(streamedPolls({ answerMs: 1000, firstPollQueuedMs: 350, pollDelayMs: 1000, pollMs: 10 })).toBe(1);
    expect(streamedPolls({ answerMs: 1350, firstPollQueuedMs: 350, pollDelayMs: 1000, pollMs: 10 })).toBe(1);
  });

  it('spaces polls by the delay plus the poll itself, so slower polls are fewer', () => {
    // 60 s: 1 + ⌈58,650 / 1,010⌉ = 60 polls at 10 ms; 1 + ⌈58,650 / 1,200⌉ = 50 at 200 ms.
    expect(streamedPolls(inputs())).toBe(60);
    expect(streamedPolls(inputs({ pollMs: 200 }))).toBe(50);
  });

  it('refuses a delay that is not positive', () => {
    expect(() => streamedPolls(inputs({ pollDelayMs: 0 }))).toThrow(RangeError);
  });
});

describe('streamedAnswerCost', () => {
  it('bills the invoker once, every poll, and the poster once, against the answer’s whole duration', () => {
    // Act
    const cost = streamedAnswerCost(inputs());
    // Assess: 321 + 60 × 10 + 13 = 934 ms of 60,000
    expect(cost).toEqual({
      answerMs: 60_000,
      polls: 60,
      invokerBilledMs: 321,
      pollsBilledMs: 600,
      posterBilledMs: 13,
      billedMs: 934,
      holdingBilledMs: 60_000,
      fraction: 934 / 60_000,
      ratio: 60_000 / 934,
    });
  });

  it('misses a tenth when each poll bills a fifth of its interval', () => {
    // 321 + 50 × 200 + 13 = 10,334 ms: 17 % of the holding function.
    const cost = streamedAnswerCost(inputs({ pollMs: 200 }));
    expect(cost.billedMs).toBe(10_334);
    expect(cost.fraction).toBeGreaterThan(0.1);
  });
});

describe('breakEvenPollMs', () => {
  it('is the most a poll may bill with the answer within the fraction, and one more misses', () => {
    // Arrange
    const { pollMs: _measured, ...base } = inputs();
    // Act
    const most = breakEvenPollMs(base);
    // Assess
    expect(streamedAnswerCost({ ...base, pollMs: most }).fraction).toBeLessThanOrEqual(0.1);
    expect(streamedAnswerCost({ ...base, pollMs: most + 1 }).fraction).toBeGreaterThan(0.1);
    // About D / 9 less what the invoker and poster take.
    expect(most).toBeGreaterThan(90);
    expect(most).toBeLessThan(1000 / 9);
  });

  it('is 0 when the invoker alone is over the fraction', () => {
    const { pollMs: _measured, ...base } = inputs({ invokerMs: 7000 });
    expect(breakEvenPollMs(base)).toBe(0);
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

describe('questionFor', () => {
  it('makes the echoed answer exactly the asked number of words, unique per event', () => {
    expect(words(`echo: ${questionFor(7, 50)}`)).toHaveLength(50);
    expect(questionFor(1, 50)).not.toBe(questionFor(2, 50));
  });
});

const sample = (overrides: Partial<EventSample> = {}): EventSample => ({
  signMs: 20,
  signMethod: 'assistant.threads.setStatus',
  firstTextMs: 310,
  firstTextMethod: 'chat.startStream',
  firstWordMs: 30,
  streamMs: 2500,
  firstPollQueuedMs: 330,
  doneMs: 3500,
  invokerMs: [320.2],
  pollMs: [9.1, 10, 11.5],
  posterMs: [12.5],
  appends: 2,
  ...overrides,
});

const raw = (): LiveAnswersRaw => ({
  options: { eventsPerTransport: 3, warmupEvents: 1, words: 50, wordMs: 50 },
  pollDelaySeconds: 1,
  streamFirstTextMs: 300,
  samples: { 'in-process': [sample(), sample(), sample()], https: [sample(), sample(), sample()], agentcore: [sample(), sample(), sample()] },
});

const defaults = { syncBudgetMs: 5000, schedule: DEFAULT_POLL_SCHEDULE };
const assumptions = { awsCallMs: 100, slackCallMs: 100 };

describe('summarizeLiveAnswers', () => {
  it('feeds the model with mean billed ms: invoker and poster per answer, async-result per poll', () => {
    // Act
    const result = summarizeLiveAnswers(raw(), assumptions, defaults);
    // Assess
    const t = result.transports.https;
    expect(t.invoker.mean).toBe(321);
    expect(t.poll.mean).toBe((10 + 10 + 12) / 3);
    expect(t.poster.mean).toBe(13);
    expect(t.polls).toEqual({ median: 3, min: 3, max: 3, n: 3 });
    // The model agrees with the measured count for the measured answers.
    expect(t.predictedPolls).toBe(3);
    expect(t.cost).toEqual(streamedAnswerCost({ answerMs: 60_000, firstPollQueuedMs: 330, pollDelayMs: 1000, invokerMs: 321, pollMs: 32 / 3, posterMs: 13 }));
    expect(t.sign.methods).toEqual({ 'assistant.threads.setStatus': 3 });
  });

  it('prices the stated AWS figures: a poll is an AWS call plus a Slack call; the invoker and poster add theirs to what was measured', () => {
    const { assumed } = summarizeLiveAnswers(raw(), assumptions, defaults);
    expect(assumed.pollMs).toBe(200);
    expect(assumed.invokerMs).toBe(321 + 100 + 300);
    expect(assumed.posterMs).toBe(13 + 100 + 200);
    expect(assumed.cost.polls).toBe(50);
    expect(assumed.cost.billedMs).toBe(721 + 50 * 200 + 313);
  });

  it('recomputes part 5’s 10-minute task on the unchanged schedule with the larger per-poll and invoker figures', () => {
    const { part5 } = summarizeLiveAnswers(raw(), assumptions, defaults);
    expect(part5.timeline.slice(0, 5)).toEqual([2, 6, 14, 30, 62]);
    expect(part5.pollMs).toBe(11);
    expect(part5.invokerMs).toBe(321);
    // 14 polls after acceptance, as part 5 counts them.
    expect(part5.tenMinutes.asyncResult.polls).toBe(14);
    expect(part5.tenMinutes.asyncResult.billedMs).toBe(5000 + 321 + 14 * 11);
  });
});

describe('liveAnswerVerdicts', () => {
  const verdict = (result: ReturnType<typeof summarizeLiveAnswers>, transport: string, target: string) => liveAnswerVerdicts(result).find((v) => v.transport === transport && v.target === target)!.pass;

  it('passes at exactly the targets, and misses just past them (p50)', () => {
    // Arrange: two of three agentcore events at (then just past) the limits, so the p50 is there.
    const withAgentcore = (agentcore: EventSample[]) => summarizeLiveAnswers({ ...raw(), samples: { ...raw().samples, agentcore } }, assumptions, defaults);
    const atLimit = withAgentcore([sample({ signMs: 1000, firstTextMs: 1000 }), sample({ signMs: 1000, firstTextMs: 1000 }), sample()]);
    const past = withAgentcore([sample({ signMs: 1000.5, firstTextMs: 1000.5 }), sample({ signMs: 1000.5, firstTextMs: 1000.5 }), sample()]);
    // Assess
    expect(verdict(atLimit, 'agentcore', 'sign')).toBe(true);
    expect(verdict(atLimit, 'agentcore', 'first-text')).toBe(true);
    expect(verdict(past, 'agentcore', 'sign')).toBe(false);
    expect(verdict(past, 'agentcore', 'first-text')).toBe(false);
    expect(verdict(past, 'https', 'sign')).toBe(true);
  });

  it('judges the cost per transport, and with the stated AWS figures', () => {
    const result = summarizeLiveAnswers(raw(), assumptions, defaults);
    expect(verdict(result, 'in-process', 'cost')).toBe(true);
    // 11,034 of 60,000 ms with 200 ms polls.
    expect(verdict(result, 'aws (assumed)', 'cost')).toBe(false);
    expect(liveAnswerVerdicts(result)).toHaveLength(3 * 3 + 1);
  });
});

describe('report', () => {
  it('renders part 7 with its targets', () => {
    const markdown = renderResults({ quick: false, startedAt: new Date(0), durationSeconds: 60, loadAverageAtStart: [0, 0, 0], failures: [], liveAnswers: summarizeLiveAnswers(raw(), assumptions, defaults) });
    expect(markdown).toContain('## 7. Live answers');
    expect(markdown.match(/^\| 7 \|/gm)).toHaveLength(10);
    expect(markdown).toContain('still ≥ 100×');
  });
});

describe('held streams', () => {
  it('measures each showing call against the model’s oldest character in it', () => {
    // The model: 10 characters at 0 ms, 10 more at 100, 10 more at 200.
    const marks = [
      { at: 0, chars: 10 },
      { at: 100, chars: 20 },
      { at: 200, chars: 30 },
    ];
    // Slack: the first 10 shown at 250, the next 20 at 600.
    expect(appendLags(marks, [{ at: 250, chars: 10 }, { at: 600, chars: 20 }])).toEqual([250, 500]);
  });

  it('prices an answer’s GB-seconds next to its output tokens at each price', () => {
    // 15 GB-s (512 MB for 30 s) against 6,000 characters (1,500 tokens).
    const cost = heldAnswerCost(15, 6_000);
    expect(cost.lambdaUsd).toBeCloseTo(0.00025, 6);
    expect(cost.model.map((m) => m.pricePerMillion)).toEqual([15, 4, 0.24]);
    expect(cost.model[0]!.usd).toBeCloseTo(0.0225, 6);
    expect(cost.model[0]!.lambdaShare).toBeCloseTo(0.0111, 3);
  });
});
