import { failure, pending, type AgentOutcome, type AgentStreamStep, type PendingHandle, type StepsShown } from '../../protocols/outcome';

/**
 * Holding a task's stream (docs/architecture.md §2.5, "Across the zones"): agent-invoker and
 * async-result read a streamed `execute_task` / `get_task_result` for a bounded time and show its
 * text in Slack as it comes. Text is buffered so each append carries a few words and Slack's rate
 * limits hold: a flush when the buffer has FLUSH_RULES.minWords words (or minChars characters)
 * and minGapMs have passed since the last one, and at least once every maxGapMs while text is
 * waiting. The hold's start counts as the last flush, with the shorter firstGapMs: the first text
 * shows a quarter second in, and an answer that ends within it is posted whole. minGapMs is
 * 600 ms — at most 100 appends a minute for one answer, Slack's floor for chat.appendStream
 * (Tier 4); chat.update, the fallback where Slack refuses a stream, is Tier 3 (50+ a minute), so
 * a long answer there may meet a 429: its previews stop and the final answer replaces the message. Each flush is `show(before, delta)`: the live reply
 * applies it once, by character count, so a hold that ends mid-text and the poll that goes on
 * from its cursor never show a character twice.
 *
 * The hold ends with the stream's last step (success, failure, or pending at the hold's end — then
 * the buffer is flushed, so polling goes on exactly where the stream stopped), or when `stopped`
 * says the user pressed Stop (asked at most once every stopCheckMs): the request is aborted.
 *
 * A hold follows text while it flows, not a task that is thinking: once the stream has named the
 * task, quietMs (STREAM_QUIET_S, 5 s by default) without new text (from the hold's start, or
 * from the last text) lets the stream go
 * — the request is aborted, the task runs on — and the hold ends pending, so polling follows the
 * quiet task at its backoff and the poll that finds text flowing holds again. A task that never
 * writes (a long tool call, a model slow to start) costs one quiet period of a function, not the
 * whole hold. 5 s is the runtime's sync budget (what the plain call held the invoker) and sits
 * above most models' first-token time, so an answer that is coming is read from its first word.
 */
export const FLUSH_RULES = { minWords: 3, minChars: 40, firstGapMs: 250, minGapMs: 600, maxGapMs: 1_000, stopCheckMs: 1_000, quietMs: 5_000 } as const;
export type FlushRules = { readonly [K in keyof typeof FLUSH_RULES]: number };

/** Real time for the buffer (monotonic, as timers are); tests give a fake one. */
export type HoldTimer = {
  now(): number;
  /** Resolves after `ms`; `cancel` clears the timer. */
  sleep(ms: number): { done: Promise<void>; cancel(): void };
};

export const realHoldTimer: HoldTimer = {
  now: () => performance.now(),
  sleep: (ms) => {
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))));
    return { done, cancel: () => clearTimeout(timer) };
  },
};

export type HoldHow = {
  /** Characters of the agent's text received before this hold (the poll message's `streamed`). */
  before: number;
  /** Shows `delta`, the agent's text from character `before` on (LiveReplyService.show). */
  show(before: number, delta: string): Promise<void>;
  /**
   * Shows the agent's steps (LiveReplyService.showSteps): called at once when they change, after
   * the text before them is flushed — a step is not held back for words (docs/architecture.md §2.5, "Steps").
   */
  showSteps?(steps: StepsShown): Promise<void>;
  /** True once the user stopped the task. */
  stopped?: () => Promise<boolean>;
  /** The task's handle when the caller knows it already (a poll): a quiet stream can be let go before it names the task. */
  handle?: PendingHandle;
  /** Called once, with the first handle the stream gives (before its text is shown): a Stop can cancel from then on. */
  onHandle?: (handle: PendingHandle) => Promise<void>;
  /** The function's own signal: ends the read with it. */
  signal?: AbortSignal;
  timer?: HoldTimer;
  rules?: FlushRules;
};

export type HoldEnd = {
  /** The stream's last step (a question too, for a caller that takes them); undefined when the hold ended because the task was stopped. */
  outcome: AgentOutcome | undefined;
  /** Characters of the agent's text received in all, `before` included. */
  received: number;
  /** The latest handle (its cursor after the last text received). */
  handle: PendingHandle | undefined;
  /** Whether text came during this hold. */
  texted: boolean;
  /** How long the hold lasted, ms. */
  heldMs: number;
  /** Flushes made (appends asked of Slack). */
  flushes: number;
  /** Whether the hold let a quiet stream go (quietMs without text) before its end. */
  quiet: boolean;
};

/** A hold shorter than this is not worth a streamed read: the call is a plain one. */
export const MIN_HOLD_MS = 1_000;
/**
 * What a hold leaves of the function's time: the read may run past its hold by the protocol's
 * grace (5 s, for an agent that does not end it), and then the text is flushed and the outcome
 * settled or the next poll queued.
 */
export const HOLD_MARGIN_MS = 10_000;

/** How long to hold: the setting, within the function's time (`deadline`, epoch ms on `now`'s clock) and `limitMs`; 0 = no hold. */
export function holdMsFor(settingMs: number, now: number, deadline: number | undefined, limitMs = Infinity): number {
  const left = deadline === undefined ? Infinity : deadline - now - HOLD_MARGIN_MS;
  const ms = Math.floor(Math.min(settingMs, left, limitMs));
  return ms >= MIN_HOLD_MS ? ms : 0;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Reads `open(signal)` as described above; never throws (a fault is the stream's failure outcome). */
export async function holdStream(open: (signal: AbortSignal) => AsyncIterable<AgentStreamStep>, how: HoldHow): Promise<HoldEnd> {
  const timer = how.timer ?? realHoldTimer;
  const rules = how.rules ?? FLUSH_RULES;
  const started = timer.now();
  const own = new AbortController();
  const signal = how.signal ? AbortSignal.any([how.signal, own.signal]) : own.signal;
  const iterator = open(signal)[Symbol.asyncIterator]();

  let received = how.before;
  let buffer = '';
  let bufferFrom = how.before;
  // The first text too waits for a few words or a quarter second into the hold: an answer that
  // ends at once is posted whole, with no live message first.
  let lastFlush = started;
  let lastStopCheck = started;
  let lastText = started;
  let handle: PendingHandle | undefined = how.handle;
  let texted = false;
  let flushes = 0;
  let next: Promise<IteratorResult<AgentStreamStep>> | undefined;
  let finished = false;

  const flush = async () => {
    if (!buffer) return;
    const delta = buffer;
    const from = bufferFrom;
    buffer = '';
    bufferFrom = from + delta.length;
    lastFlush = timer.now();
    flushes += 1;
    await how.show(from, delta);
  };
  /** When the buffer is due (absolute time), if it holds anything. */
  const dueAt = (): number | undefined => {
    if (!buffer) return undefined;
    const enough = words(buffer) >= rules.minWords || buffer.length >= rules.minChars;
    return lastFlush + (enough ? (flushes === 0 ? rules.firstGapMs : rules.minGapMs) : rules.maxGapMs);
  };
  const end = (outcome: AgentOutcome | undefined, quiet = false): HoldEnd => ({ outcome, received, handle, texted, heldMs: timer.now() - started, flushes, quiet });
  const isNew = stepsChange();
  // New steps: the text before them first, then the steps, at once. A step is the agent at work as
  // text is: the quiet period counts from it too, so a task that shows steps is held.
  const steps = async (shown: StepsShown | undefined) => {
    if (!how.showSteps || !isNew(shown)) return;
    lastText = timer.now();
    await flush();
    await how.showSteps(shown);
  };

  try {
    for (;;) {
      const due = dueAt();
      if (due !== undefined && timer.now() >= due) await flush();
      if (how.stopped && timer.now() - lastStopCheck >= rules.stopCheckMs) {
        lastStopCheck = timer.now();
        // A failed read of the Stop mark is no Stop: the next check, or the settlement, sees it.
        if (await how.stopped().catch(() => false)) return end(undefined);
      }
      if (handle && timer.now() - lastText >= rules.quietMs) {
        // Quiet: let the stream go (aborted below) and poll from what was received.
        await flush();
        return end(pending(handle), true);
      }
      next ??= iterator.next();
      const wakeAt = Math.min(dueAt() ?? Infinity, how.stopped ? lastStopCheck + rules.stopCheckMs : Infinity, handle ? lastText + rules.quietMs : Infinity);
      const result = await nextOrWake(next, wakeAt, timer);
      if (result === 'wake') continue;
      next = undefined;
      if (result.done) {
        finished = true;
        await flush();
        return end(handle ? { kind: 'pending', handle } : failure('failed', 'agent:stream-unfinished', 'the streamed read ended without an outcome', true));
      }
      const step = result.value;
      if (step.kind === 'text') {
        if (!handle && how.onHandle) await how.onHandle(step.handle);
        handle = step.handle;
        if (step.text) {
          buffer += step.text;
          received += step.text.length;
        }
        await steps(step.steps);
        if (!step.text) continue;
        texted = true;
        lastText = timer.now();
        continue;
      }
      finished = true;
      if (step.kind === 'pending') {
        if (!handle && how.onHandle) await how.onHandle(step.handle);
        handle = step.handle;
        await steps(step.steps);
      }
      // Polling may go on from the cursor: everything received is shown first. A success needs
      // no last append: the final answer rewrites the live message whole.
      if (step.kind !== 'success') await flush();
      return end(step);
    }
  } catch (error) {
    // The hold's own work failed (recording the handle): the read is aborted below, and the task is tried again.
    return end(failure('failed', 'agent:stream-read', `the streamed read failed: ${(error as Error).message}`, true));
  } finally {
    // Stopped (or the function's own error): abort the request, then let the read end.
    if (!finished) await abandonRead(own, iterator, next, timer);
  }
}

/** The read's next step, or `'wake'` once `wakeAt` comes first (Infinity: no timer). */
async function nextOrWake(next: Promise<IteratorResult<AgentStreamStep>>, wakeAt: number, timer: HoldTimer): Promise<IteratorResult<AgentStreamStep> | 'wake'> {
  if (wakeAt === Infinity) return next;
  const sleep = timer.sleep(wakeAt - timer.now());
  const result = await Promise.race([next, sleep.done.then(() => 'wake' as const)]);
  sleep.cancel();
  return result;
}

/** Remembers the steps last shown: true for steps other than those (docs/architecture.md §2.5, "Steps"). */
function stepsChange(): (shown: StepsShown | undefined) => shown is StepsShown {
  let seen = '';
  return (shown): shown is StepsShown => {
    if (!shown) return false;
    const now = JSON.stringify(shown);
    if (now === seen) return false;
    seen = now;
    return true;
  };
}

/** Aborts a read the hold is done with, and gives it a second to end (its pending step, its `return`). */
async function abandonRead(own: AbortController, iterator: AsyncIterator<AgentStreamStep>, next: Promise<IteratorResult<AgentStreamStep>> | undefined, timer: HoldTimer): Promise<void> {
  own.abort(new Error('the hold ended'));
  const closing = (async () => {
    await next?.catch(() => undefined);
    await iterator.return?.();
  })().catch(() => undefined);
  const grace = timer.sleep(1_000);
  await Promise.race([closing, grace.done]);
  grace.cancel();
}

/**
 * The SQS delay of the poll after a hold that ended pending: at once when text flowed and the
 * hold ran (at least half) its length — the stream was cut by the hold, not by the agent, and the
 * next poll holds it again; `flowingSeconds` (STREAM_POLL_DELAY_S) when text flowed but the read
 * ended early (an agent that answers a stream with one plain answer must not be polled in a
 * tight loop); `quietSeconds` (the backoff) when no text came, or the hold let a quiet stream go.
 */
export function delayAfterHold(held: Pick<HoldEnd, 'texted' | 'heldMs' | 'quiet'>, holdMs: number, delays: { flowingSeconds: number; quietSeconds: number }): number {
  if (!held.texted || held.quiet) return delays.quietSeconds;
  return held.heldMs >= holdMs / 2 ? 0 : delays.flowingSeconds;
}
