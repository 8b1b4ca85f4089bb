import { createLogger } from '../../src/observability/logger';
import { failure, pending, success, textStep, type PendingHandle, type StreamStep } from '../../src/protocols/outcome';
import type { SlackLive } from '../../src/slack/slack-live';
import type { SlackReplies } from '../../src/slack/slack-port';
import { createLiveReply } from '../../src/verification/live/live-reply';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';
import { delayAfterHold, FLUSH_RULES, holdMsFor, holdStream, HOLD_MARGIN_MS, type HoldTimer } from '../../src/verification/live/stream-hold';
import { manualClock } from '../support/manual-clock';

/**
 * The held stream's buffer (docs/architecture.md §2.5, "Across the zones"), on a fake clock: a
 * scripted stream whose steps arrive at given times, and a small event loop that moves the clock
 * to the next thing that happens (a step, a timer). No real time passes.
 */

type Event = { at: number; fire: () => void; cancelled?: boolean; fired?: boolean };

function simulation() {
  let now = 0;
  const events: Event[] = [];
  const at = (time: number, fire: () => void): Event => {
    const event: Event = { at: Math.max(time, now), fire };
    events.push(event);
    return event;
  };
  const timer: HoldTimer = {
    now: () => now,
    sleep: (ms) => {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      const event = at(now + ms, resolve);
      return { done, cancel: () => void (event.cancelled = true) };
    },
  };
  /** Steps at their times (ms); an abort ends a waiting read as the agent does: `pending` with the last handle. */
  const stream = (script: ReadonlyArray<readonly [number, StreamStep]>) => {
    const state = { aborted: false, returned: false };
    const open = (signal: AbortSignal): AsyncIterable<StreamStep> => ({
      [Symbol.asyncIterator]: () => {
        let index = 0;
        let lastHandle: PendingHandle = { taskId: 'task-1' };
        let waiting: (() => void) | undefined;
        signal.addEventListener('abort', () => {
          state.aborted = true;
          waiting?.();
        });
        return {
          next: () =>
            new Promise<IteratorResult<StreamStep>>((resolve) => {
              const entry = script[index];
              if (!entry) return resolve({ done: true, value: undefined });
              const event = at(entry[0], () => {
                index += 1;
                if (entry[1].kind === 'text') lastHandle = entry[1].handle;
                resolve({ done: false, value: entry[1] });
              });
              waiting = () => {
                event.cancelled = true;
                resolve({ done: false, value: pending(lastHandle) });
              };
            }),
          return: async () => {
            state.returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    });
    return { open, state };
  };
  /** Runs `work` to its end, moving the clock from one event to the next. */
  const run = async <T>(work: Promise<T>): Promise<T> => {
    let result: { value: T } | undefined;
    void work.then((value) => (result = { value }));
    for (let turn = 0; turn < 100_000; turn += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      if (result) return result.value;
      const next = events.filter((event) => !event.cancelled && !event.fired).sort((a, b) => a.at - b.at)[0];
      if (!next) throw new Error('nothing left to happen, and the hold has not ended');
      now = next.at;
      next.fired = true;
      next.fire();
    }
    throw new Error('too many turns');
  };
  return { timer, stream, run, now: () => now };
}

const handle = (cursor: number): PendingHandle => ({ taskId: 'task-1', cursor: String(cursor) });

/** A stream of `pieces` at their times; each piece's handle carries the cursor after it. */
function script(pieces: ReadonlyArray<readonly [number, string]>, last: readonly [number, StreamStep], from = 0): Array<readonly [number, StreamStep]> {
  let cursor = from;
  return [...pieces.map(([time, text]) => [time, textStep(text, handle((cursor += text.length)))] as const), last];
}

/** The appends a hold asked for, with when. */
function recorder(sim: ReturnType<typeof simulation>) {
  const flushes: Array<{ at: number; before: number; delta: string }> = [];
  return { flushes, show: async (before: number, delta: string) => void flushes.push({ at: sim.now(), before, delta }) };
}

describe('holdStream: the buffer', () => {
  it('appends a few words at a time: the first a quarter second into the hold at least, the next 600 ms apart at least', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open } = sim.stream(script([[300, 'Hello there friend'], [350, ' big'], [400, ' wide'], [450, ' world'], [1_000, ' and'], [1_020, ' more'], [1_040, ' words']], [1_600, success('…')]));

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    // Three words 300 ms in: at once (past the first 250 ms); three more by 450 wait for 600 ms after that append; the next three at 1,500.
    expect(shown.flushes).toEqual([
      { at: 300, before: 0, delta: 'Hello there friend' },
      { at: 900, before: 18, delta: ' big wide world' },
      { at: 1_500, before: 33, delta: ' and more words' },
    ]);
    expect(end).toMatchObject({ outcome: { kind: 'success' }, received: 48, texted: true, flushes: 3 });
  });

  it('takes 40 characters as enough words', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const long = ' supercalifragilisticexpialidocious-and-then-some';
    const { open } = sim.stream(script([[300, 'A'], [310, long]], [2_000, success(`A${long}`)]));

    await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    expect(shown.flushes.map(({ at, delta }) => [at, delta])).toEqual([[310, `A${long}`]]);
  });

  it('appends at least once a second while text trickles in, and never more often than minGapMs', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    // One word every 400 ms: never three words within a quarter second.
    const words = Array.from({ length: 12 }, (_, i) => [400 * (i + 1), ` w${i + 1}`] as const);
    const { open } = sim.stream(script([[0, 'start'], ...words], [400 * 13, success('done')]));

    await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    const times = shown.flushes.map((flush) => flush.at);
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    expect(gaps.every((gap) => gap >= FLUSH_RULES.minGapMs && gap <= FLUSH_RULES.maxGapMs)).toBe(true);
    // Every word shown, in order, once; and no word waited more than a second.
    expect(shown.flushes.map((flush) => flush.delta).join('')).toBe(`start${words.map(([, w]) => w).join('')}`);
    for (const [time, word] of words) {
      const flush = shown.flushes.find((candidate) => candidate.delta.includes(word));
      expect(flush!.at - time).toBeLessThanOrEqual(FLUSH_RULES.maxGapMs);
    }
  });

  it('a word that waits alone goes out within a second, without waiting for the next text', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open } = sim.stream(script([[0, 'one'], [100, ' two']], [4_000, success('one two')]));

    await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    expect(shown.flushes.map(({ at, delta }) => [at, delta])).toEqual([[1_000, 'one two']]);
  });

  it('a success needs no last append (the final answer rewrites the message); a failure shows what came first', async () => {
    const sim = simulation();
    const ok = recorder(sim);
    const answered = sim.stream(script([[300, 'one two three'], [310, ' four']], [320, success('one two three four')]));
    expect((await sim.run(holdStream(answered.open, { before: 0, show: ok.show, timer: sim.timer }))).outcome).toMatchObject({ kind: 'success' });
    expect(ok.flushes.map((flush) => flush.delta)).toEqual(['one two three']);

    const sim2 = simulation();
    const failed = recorder(sim2);
    const broken = sim2.stream(script([[300, 'one two three'], [310, ' four']], [320, failure('failed', -32000, 'boom', false)]));
    expect((await sim2.run(holdStream(broken.open, { before: 0, show: failed.show, timer: sim2.timer }))).outcome).toMatchObject({ kind: 'failure' });
    expect(failed.flushes.map((flush) => flush.delta)).toEqual(['one two three', ' four']);
  });

  it('an answer that ends at once shows nothing before it: it is posted whole', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open } = sim.stream(script([[40, 'echo: quick one']], [45, success('echo: quick one')]));
    await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));
    expect(shown.flushes).toEqual([]);
  });

  it('records the first handle before any text is shown (a Stop can cancel from then on)', async () => {
    const sim = simulation();
    const order: string[] = [];
    const { open } = sim.stream(script([[300, 'one two three']], [310, success('one two three')]));
    await sim.run(holdStream(open, { before: 0, show: async (_, delta) => void order.push(`show ${delta}`), onHandle: async (h) => void order.push(`handle ${h.taskId}`), timer: sim.timer }));
    expect(order).toEqual(['handle task-1', 'show one two three']);
  });
});

describe('holdStream: ends', () => {
  it('ends at the stream’s pending with everything received shown, and the cursor to poll on from', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open } = sim.stream(script([[0, 'one'], [100, ' two']], [150, pending(handle(7))]));

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    expect(shown.flushes.map(({ at, delta }) => [at, delta])).toEqual([[150, 'one two']]);
    expect(end).toMatchObject({ outcome: { kind: 'pending' }, received: 7, handle: handle(7), texted: true });
  });

  it('ends when the task is stopped, asking at most once a second, and aborts the read', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open, state } = sim.stream(script([[0, 'one'], [100, ' two']], [60_000, success('never')]));
    let asked = 0;
    const stopped = async () => {
      asked += 1;
      return sim.now() >= 1_500;
    };

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, stopped, timer: sim.timer }));

    expect(end.outcome).toBeUndefined();
    expect(end.handle).toEqual(handle(7));
    expect(asked).toBe(2);
    expect(sim.now()).toBe(2_000);
    expect(state).toEqual({ aborted: true, returned: true });
  });
});

describe('exactly once across a hold that ends mid-text and the poll that goes on', () => {
  it('every character shows once, in order, through the live reply', async () => {
    // The live reply as the functions use it, against a Slack that records what it shows.
    const clock = manualClock();
    const shownInSlack: string[] = [];
    const slack: SlackLive & Pick<SlackReplies, 'post'> = {
      setStatus: async () => undefined,
      startStream: async (stream) => {
        shownInSlack.push(stream.markdownText ?? '');
        return { ts: '1.1' };
      },
      appendStream: async (_message, text) => void shownInSlack.push(text),
      stopStream: async () => undefined,
      update: async () => undefined,
      post: async () => ({ ts: '1.2' }),
    };
    const live = createLiveReply({ slack, store: new MemoryLiveReplies(clock), workingText: 'working', placeholderText: '…', log: createLogger('test') });
    const target = { team_id: 'T1', channel: 'C1', ts: '1.0', request_id: '00000000-0000-4000-8000-000000000001', user_id: 'U1' };
    const show = (before: number, delta: string) => live.show(target, before, delta);

    // The invoker's hold: ends at its hold with words still in the buffer.
    const first = simulation();
    const invoker = first.stream(script([[0, 'The'], [10, ' quick'], [20, ' brown'], [30, ' fox']], [40, pending(handle(19))]));
    const held = await first.run(holdStream(invoker.open, { before: 0, show, timer: first.timer }));
    expect(held).toMatchObject({ outcome: { kind: 'pending' }, received: 19 });

    // The poll goes on from the cursor: a redelivered poll message repeats its hold, from the same cursor.
    for (let copy = 0; copy < 2; copy += 1) {
      const next = simulation();
      const poll = next.stream(script([[0, ' jumps'], [300, ' over'], [600, ' the dog']], [700, pending(handle(38))], 19));
      const again = await next.run(holdStream(poll.open, { before: held.received, show, timer: next.timer }));
      expect(again.received).toBe(38);
    }

    expect(shownInSlack.join('')).toBe('The quick brown fox jumps over the dog');
  });
});

describe('holdStream: a quiet task is let go', () => {
  it('shows a step change at once — the words before it first, not waiting for more — and keeps holding a task that shows steps', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const seen: Array<{ at: number; steps: string[] }> = [];
    const steps = (status: 'in_progress' | 'complete', n: number) => ({ steps: [{ id: `s${n}`, title: `Step ${n}`, status }] });
    const { open } = sim.stream([
      [300, textStep('One', handle(3))],
      [320, textStep('', handle(3), steps('in_progress', 1))],
      // The same steps again (a repeated event) show nothing.
      [330, textStep('', handle(3), steps('in_progress', 1))],
      [4_000, textStep('', handle(3), steps('complete', 1))],
      [8_000, success('One')],
    ]);

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, showSteps: async (shownSteps) => void seen.push({ at: sim.now(), steps: shownSteps.steps.map((step) => `${step.id}:${step.status}`) }), timer: sim.timer }));

    expect(shown.flushes).toEqual([{ at: 320, before: 0, delta: 'One' }]);
    expect(seen).toEqual([
      { at: 320, steps: ['s1:in_progress'] },
      { at: 4_000, steps: ['s1:complete'] },
    ]);
    // A step 3.7 s after the last one is activity: the hold did not let the task go quiet at 5 s.
    expect(end).toMatchObject({ outcome: { kind: 'success' }, quiet: false });
  });

  it('lets a task that names itself and writes nothing go after quietMs: pending, the request aborted', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open, state } = sim.stream([[50, textStep('', handle(0))], [60_000, success('late')]]);

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    expect(end).toMatchObject({ outcome: { kind: 'pending', handle: handle(0) }, quiet: true, texted: false, flushes: 0 });
    expect(end.heldMs).toBe(FLUSH_RULES.quietMs);
    expect(state.aborted).toBe(true);
  });

  it('shows what came, then lets go once the text stops for quietMs: polling goes on from the last cursor', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open, state } = sim.stream(script([[100, 'thinking about it'], [400, ' now calling a tool']], [40_000, success('thinking about it now calling a tool: done')]));

    const end = await sim.run(holdStream(open, { before: 0, show: shown.show, timer: sim.timer }));

    expect(shown.flushes.map((flush) => flush.delta).join('')).toBe('thinking about it now calling a tool');
    expect(end).toMatchObject({ outcome: { kind: 'pending', handle: handle(36) }, quiet: true, texted: true, received: 36 });
    expect(end.heldMs).toBe(400 + FLUSH_RULES.quietMs);
    expect(state.aborted).toBe(true);
  });

  it('lets a quiet poll stream go with the handle the caller gave, though the stream never named the task', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const { open, state } = sim.stream([[60_000, success('late')]]);

    const end = await sim.run(holdStream(open, { before: 12, handle: handle(12), show: shown.show, timer: sim.timer }));

    expect(end).toMatchObject({ outcome: { kind: 'pending', handle: handle(12) }, quiet: true, received: 12 });
    expect(end.heldMs).toBe(FLUSH_RULES.quietMs);
    expect(state.aborted).toBe(true);
  });

  it('keeps holding while text keeps coming, however long, and a stream that has not named its task is held to its end', async () => {
    const sim = simulation();
    const shown = recorder(sim);
    const steady = Array.from({ length: 30 }, (_, i) => [(i + 1) * 1_000, ` w${i}`] as const);
    const flowing = sim.stream(script(steady, [31_000, success('all')]));
    expect(await sim.run(holdStream(flowing.open, { before: 0, show: shown.show, timer: sim.timer }))).toMatchObject({ outcome: { kind: 'success' }, quiet: false });

    const silent = sim.stream([[25_000, success('no handle, no way to poll: read to the end')]]);
    expect(await sim.run(holdStream(silent.open, { before: 0, show: shown.show, timer: sim.timer }))).toMatchObject({ outcome: { kind: 'success' }, quiet: false });
    expect(silent.state.aborted).toBe(false);
  });
});

describe('how long to hold, and the poll after a hold', () => {
  it('holds for the setting within the function’s time less the margin, or not at all under a second', () => {
    const now = 1_000_000;
    expect(holdMsFor(30_000, now, undefined)).toBe(30_000);
    expect(holdMsFor(30_000, now, now + 27_000)).toBe(27_000 - HOLD_MARGIN_MS);
    expect(holdMsFor(30_000, now, now + 27_000, 5_000)).toBe(5_000);
    expect(holdMsFor(30_000, now, now + HOLD_MARGIN_MS + 500)).toBe(0);
    expect(holdMsFor(0, now, undefined)).toBe(0);
  });

  it('polls again at once after a whole hold with text, soon after a short one, and with the backoff after a quiet one', () => {
    const delays = { flowingSeconds: 2, quietSeconds: 6 };
    expect(delayAfterHold({ texted: true, heldMs: 20_000, quiet: false }, 20_000, delays)).toBe(0);
    expect(delayAfterHold({ texted: true, heldMs: 50, quiet: false }, 20_000, delays)).toBe(2);
    expect(delayAfterHold({ texted: false, heldMs: 20_000, quiet: false }, 20_000, delays)).toBe(6);
    // Text came, then the stream went quiet and was let go: the backoff, not a poll at once into another quiet hold.
    expect(delayAfterHold({ texted: true, heldMs: 15_000, quiet: true }, 20_000, delays)).toBe(6);
  });
});
