import { expectedAnswer, judgeThread, NO_FAULTS, planSoak, renderReport, runSoak, type SoakPlan } from './soak';
import type { SlackReplies } from '../../src/slack/slack-replies';
import { splitForSlack } from '../../src/slack/split-message';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';

/**
 * The soak (`npm run soak`) must not pass silently: its judge and its whole run are checked here
 * against a Slack that deliberately posts one reply twice and swallows another.
 */
describe('soak: judging a thread', () => {
  const answer = expectedAnswer('what is the  answer?');
  const long = expectedAnswer(Array.from({ length: 120 }, (_, i) => `Sentence ${i} is here to make the answer long.`).join(' ').slice(0, 3_990));
  const chunks = splitForSlack(long);

  it('reads the answer the echo executor gives', () => {
    expect(answer).toBe('echo: what is the answer?');
    expect(chunks).toHaveLength(2);
  });

  it('one answer, or one safe message, is ok', () => {
    expect(judgeThread(answer, [answer])).toMatchObject({ verdict: 'ok', replies: 1, reply: 'answer' });
    expect(judgeThread(answer, [DEFAULT_USER_MESSAGES.executionFailed])).toMatchObject({ verdict: 'ok', replies: 1, reply: 'executionFailed' });
    expect(judgeThread(answer, ['That message is too long for me (4000 characters at most). Could you shorten it?'])).toMatchObject({ verdict: 'ok', reply: 'tooLong' });
  });

  it('an answer in two chunks is one reply', () => {
    expect(judgeThread(long, chunks)).toMatchObject({ verdict: 'ok', replies: 1, reply: 'answer' });
  });

  it('the same answer twice, a chunk twice, or an answer and an apology are duplicated', () => {
    expect(judgeThread(answer, [answer, answer])).toMatchObject({ verdict: 'duplicated', replies: 2 });
    expect(judgeThread(long, [...chunks, chunks[1]!])).toMatchObject({ verdict: 'duplicated', replies: 2 });
    expect(judgeThread(answer, [answer, DEFAULT_USER_MESSAGES.unavailable])).toMatchObject({ verdict: 'duplicated', replies: 2 });
    expect(judgeThread(answer, [DEFAULT_USER_MESSAGES.internalError, DEFAULT_USER_MESSAGES.unavailable])).toMatchObject({ verdict: 'duplicated' });
  });

  it('nothing, half an answer, or only another event’s reply is lost', () => {
    expect(judgeThread(answer, [])).toMatchObject({ verdict: 'lost', replies: 0 });
    expect(judgeThread(long, [chunks[0]!])).toMatchObject({ verdict: 'lost', reply: 'partial answer' });
    expect(judgeThread(answer, ['echo: somebody else'])).toMatchObject({ verdict: 'lost', reply: 'foreign' });
    expect(judgeThread(answer, [answer, 'echo: somebody else'])).toMatchObject({ verdict: 'duplicated' });
  });
});

describe('soak: the plan', () => {
  it('is the same for the same seed, and different for another', () => {
    const strip = (plan: SoakPlan) => plan.events.map(({ ts: _ts, ...rest }) => rest);
    expect(strip(planSoak({ seed: 42, events: 50 }))).toEqual(strip(planSoak({ seed: 42, events: 50 })));
    expect(strip(planSoak({ seed: 42, events: 50 }))).not.toEqual(strip(planSoak({ seed: 43, events: 50 })));
  });

  it('mixes every kind of fault into a default-sized run', () => {
    const { events, outages } = planSoak({ seed: 7, events: 300 });
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['quick', 'slow', 'long', 'fail', 'crash']));
    expect(events.some((e) => e.slackRetries?.concurrent)).toBe(true);
    expect(events.some((e) => e.postFault?.failure.retryAfterSeconds)).toBe(true);
    expect(events.some((e) => (e.postFault?.failure.times ?? 0) >= 4 && e.postFault?.failure.status)).toBe(true);
    // A 5xx before the post took effect, and one after it landed (HTTP 5xx and internal_error alike).
    expect(events.some((e) => e.postFault && !e.postFault.failure.afterEffect && e.postFault.failure.times === undefined && e.postFault.failure.status !== undefined)).toBe(true);
    const landed = events.flatMap((e) => (e.postFault?.failure.afterEffect ? [e.postFault.failure] : []));
    expect(landed.some((failure) => failure.status !== undefined && failure.status >= 500)).toBe(true);
    expect(landed.some((failure) => failure.error === 'internal_error')).toBe(true);
    expect(new Set(events.flatMap((e) => (e.redeliver ? [e.redeliver.queue] : [])))).toEqual(new Set(['tasks', 'polls', 'replies']));
    expect(new Set(events.flatMap((e) => (e.kill ? [e.kill.mode] : [])))).toEqual(new Set(['before', 'after', 'timeout']));
    // SQS takes a send and its answer is lost, on every queue (the worker's hand-offs too), by a reset or a 5xx.
    expect(new Set(events.flatMap((e) => (e.sqsAnswerLost ? [e.sqsAnswerLost.queue] : [])))).toEqual(new Set(['tasks', 'polls', 'replies', 'worker']));
    expect(new Set(events.flatMap((e) => (e.sqsAnswerLost ? [e.sqsAnswerLost.answer] : [])))).toEqual(new Set(['reset', 500, 503]));
    // A hand-off delivered twice: racing the first delivery, or later; only tasks that are handed off (slow ones).
    const twice = events.filter((e) => e.handoffTwice);
    expect(twice.every((e) => e.kind === 'slow')).toBe(true);
    expect(twice.some((e) => e.handoffTwice!.afterMs === 0) && twice.some((e) => e.handoffTwice!.afterMs > 0)).toBe(true);
    // slack-poster is never killed mid-call by default (the documented window of docs/architecture.md §6).
    expect(events.some((e) => e.kill?.queue === 'replies' && e.kill.mode === 'timeout')).toBe(false);
    expect(outages.length).toBeGreaterThanOrEqual(1);
  });
});

describe('soak: a whole run', () => {
  const small = { events: 10, mix: { ...NO_FAULTS, slackRetry: 0.3 }, timeScale: 0.01, spacingMs: 20, maxSettleMs: 20_000 };

  it('passes when every event gets exactly one reply', async () => {
    const result = await runSoak({ ...small, seed: 11 });
    expect(result).toMatchObject({ sent: 10, replied: 10, duplicated: 0, lost: 0, strays: 0, leftWorking: 0, exitCode: 0, settled: true });
    expect(result.outcomes.every((o) => o.requestIds.length === 1)).toBe(true);
  });

  it('answers each thread once when every post lands with a 5xx or internal_error answer (the redelivery finds it)', async () => {
    const result = await runSoak({ ...small, mix: { ...NO_FAULTS, post5xxLanded: 1 }, seed: 14 });
    expect(result.outcomes.every((o) => o.event.postFault?.failure.afterEffect === true)).toBe(true);
    expect(result).toMatchObject({ sent: 10, replied: 10, duplicated: 0, lost: 0, strays: 0, leftWorking: 0, exitCode: 0, settled: true });
    const landedWithError = Object.entries(result.injected).filter(([kind]) => kind.endsWith('after effect')).reduce((sum, [, n]) => sum + n, 0);
    expect(landedWithError).toBe(10);
  });

  it('answers each thread once when SQS takes a send and loses its answer, and when a hand-off is delivered twice', async () => {
    // Half the tasks slow (handed off to the worker); every event's first send to one queue is taken by SQS, then answered with a reset or a 5xx.
    const mix = { ...NO_FAULTS, kinds: { quick: 0.5, slow: 0.5, long: 0, fail: 0, crash: 0 }, sqsAnswerLost: 1, handoffTwice: 1 };
    const result = await runSoak({ ...small, mix, seed: 24 });
    expect(result).toMatchObject({ sent: 10, replied: 10, duplicated: 0, lost: 0, strays: 0, leftWorking: 0, exitCode: 0, settled: true });
    const lost = Object.entries(result.injected).filter(([kind]) => kind.startsWith('SQS took a'));
    expect(lost.reduce((sum, [, n]) => sum + n, 0)).toBeGreaterThanOrEqual(8);
    // (A poll is sent only by a task that is polled for: one whose answer is read from a stream may send none.)
    expect(lost.map(([kind]) => kind.split(' ')[3])).toEqual(expect.arrayContaining(['task', 'reply', 'hand-off']));
    expect(Object.entries(result.injected).filter(([kind]) => kind.startsWith('hand-offs delivered twice')).reduce((sum, [, n]) => sum + n, 0)).toBeGreaterThanOrEqual(3);
  }, 30_000);

  it('catches a reply posted twice and a reply that never reaches Slack', async () => {
    // A Slack stand-in that posts event #3's reply twice and silently drops event #6's.
    const tamper = (replies: SlackReplies, plan: SoakPlan): SlackReplies => ({
      addReaction: (reaction) => replies.addReaction(reaction),
      removeReaction: (reaction) => replies.removeReaction(reaction),
      async post(message, options) {
        if (message.threadTs === plan.events[3]!.ts) await replies.post(message, options);
        if (message.threadTs === plan.events[6]!.ts) return { ts: '1700000000.000001' };
        return replies.post(message, options);
      },
    });
    const result = await runSoak({ ...small, seed: 12, tamper });
    expect(result).toMatchObject({ sent: 10, replied: 8, duplicated: 1, lost: 1, exitCode: 1 });
    expect(result.outcomes[3]!.judgement).toMatchObject({ verdict: 'duplicated', replies: 2 });
    expect(result.outcomes[6]!.judgement).toMatchObject({ verdict: 'lost', replies: 0 });
    // The report names them, with their request ids and log lines.
    const report = renderReport(result);
    expect(report).toContain(`#3 DUPLICATED`);
    expect(report).toContain(`#6 LOST`);
    expect(report).toContain(result.outcomes[6]!.requestIds[0]!);
    expect(report).toMatch(/log .*"reply posted"/);
    expect(report).toMatch(/sent 10 \/ replied 8 \/ duplicated 1 \/ lost 1 \/ left working 0 — FAIL/);
  });

  it('catches a thread left showing the assistant working after its reply (its agent session never left processing)', async () => {
    // The real Slack adapter (sessions, streams and all), except that event #4's session is never moved on.
    const tamper = (replies: SlackReplies, plan: SoakPlan): SlackReplies =>
      new Proxy(replies, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown;
          if (property !== 'setSessionStatus' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return async (session: { threadTs: string; status: string }, ...rest: unknown[]) => {
            if (session.threadTs === plan.events[4]!.ts && session.status !== 'processing') return;
            return (value as (...args: unknown[]) => Promise<void>).call(target, session, ...rest);
          };
        },
      });
    const result = await runSoak({ ...small, seed: 13, tamper });
    expect(result).toMatchObject({ sent: 10, replied: 10, duplicated: 0, lost: 0, leftWorking: 1, exitCode: 1 });
    expect(result.outcomes[4]!.working).toEqual([expect.stringContaining('agent session is still processing')]);
    expect(renderReport(result)).toMatch(/#4 OK .*LEFT WORKING: its agent session is still processing/);
  });
});
