import { ErrorCode, PENDING_STATUSES } from '../contract';
import type { StreamEvent } from './dispatcher';
import { RpcError } from './rpc-error';
import type { TaskRecord, TaskStore } from './stores/task-store';

/**
 * A streamed answer (docs/contract.md, "Streamed answers") reads its task's text; it never runs
 * the task. The text it hands out is the text the store holds, so every cursor it gives is one a
 * `get_task_result` — on this host or another — can go on from; the task runs on whatever
 * becomes of the stream.
 */

/** How long a streamed answer may last, and what ends it early (the caller went away). */
export type StreamHold = {
  /** When the stream ends with `accepted` and a cursor, on `performance.now()`'s clock. */
  endsAt: number;
  /** Aborted when nobody reads the stream any more: the reader stops at once, the task does not. */
  signal?: AbortSignal;
};

/** What a reader needs of the task service. */
export type TaskTextSource = {
  store: TaskStore;
  /** Calls `wake` whenever this process learns something of the task (text stored, its end); returns how to stop. */
  watch(taskId: string, wake: () => void): () => void;
  /** How long the reader waits for a wake before it reads the store anyway (a task run elsewhere never wakes it). */
  pollMs(taskId: string): number;
  /** The last response of a task that has ended: its `success` result, or the error it ended with. */
  endOf(record: TaskRecord): StreamEvent;
};

/**
 * Text is gathered this long after an event before the next is sent: a model's tokens arrive a
 * few characters at a time, and an event per token would cost the caller more than it shows.
 */
export const STREAM_COALESCE_MS = 100;

/**
 * How long a new task's stream waits for text (or the task's end) before it names the task with
 * an empty `working`: an answer that comes at once streams as it did, and a quiet one is named
 * long before a caller gives up on its quiet (seconds).
 */
export const STREAM_ANNOUNCE_MS = 250;

/**
 * The responses of a streamed answer, from character `from` of the task's text: a `working`
 * response with the text produced since the previous one and the cursor after it, then exactly
 * one last response — the task's end (`success`, or its error), or, at `hold.endsAt`, `accepted`
 * with the cursor the caller polls from. `first` is the run's own answer, when this process runs
 * the task: a `success` or an error in it ends the stream at once. With `announce` (a new task:
 * the caller does not know its id yet), a task that has sent nothing STREAM_ANNOUNCE_MS into the
 * stream opens it with a `working` response without text — its id and cursor —, so a caller that
 * holds a quiet task can let the stream go and poll (docs/contract.md, "Streamed answers");
 * otherwise no response has empty text.
 */
export async function* readTaskText(
  source: TaskTextSource,
  taskId: string,
  from: number,
  hold: StreamHold,
  options: { first?: Promise<StreamEvent | undefined>; announce?: boolean } = {},
): AsyncGenerator<StreamEvent, void, undefined> {
  const { first } = options;
  let announceAt = options.announce === true ? performance.now() + STREAM_ANNOUNCE_MS : undefined;
  const bell = new Bell();
  let ended: StreamEvent | undefined;
  void first?.then((event) => {
    ended = event;
    if (event) bell.ring();
  });
  const unwatch = source.watch(taskId, bell.ring);
  hold.signal?.addEventListener('abort', bell.ring, { once: true });
  let cursor = from;
  let stepsSent: string | undefined;
  let lastSent = Number.NEGATIVE_INFINITY;
  try {
    for (;;) {
      bell.clear();
      if (hold.signal?.aborted) return;
      if (ended) return yield* textBeforeQuestion(source, taskId, cursor, ended);
      const record = await source.store.get(taskId);
      if (hold.signal?.aborted) return;
      if (ended) return yield* textBeforeQuestion(source, taskId, cursor, ended);
      if (!record) return yield { error: new RpcError(ErrorCode.TaskNotFound) };
      if (!PENDING_STATUSES.includes(record.status)) return yield* textBeforeQuestion(source, taskId, cursor, source.endOf(record), record);
      const kept = record.partial?.text ?? '';
      // Steps (docs/contract.md, "Steps") go out whole whenever they changed, with the text or alone.
      const steps = record.steps?.length ? JSON.stringify([record.steps, record.plan_title]) : undefined;
      const newSteps = steps !== undefined && steps !== stepsSent;
      if (kept.length > cursor || newSteps) {
        const text = kept.slice(cursor);
        cursor = Math.max(cursor, kept.length);
        lastSent = performance.now();
        announceAt = undefined;
        stepsSent = steps;
        const stepFields = newSteps ? { steps: record.steps, ...(record.plan_title ? { plan_title: record.plan_title } : {}) } : {};
        yield { result: { status: 'working', task_id: taskId, ...(text ? { text } : {}), cursor: String(cursor), ...stepFields } };
      }
      const left = hold.endsAt - performance.now();
      if (left <= 0) return yield { result: { status: 'accepted', task_id: taskId, cursor: String(cursor) } };
      if (announceAt !== undefined && performance.now() >= announceAt) {
        announceAt = undefined;
        yield { result: { status: 'working', task_id: taskId, cursor: String(cursor) } };
      }
      await bell.wait(Math.min(source.pollMs(taskId), left, announceAt === undefined ? Infinity : Math.max(0, announceAt - performance.now())));
      // Text gathers for a moment after an event rather than go out a word at a time; the task's end is never held back.
      for (let gather = gatherLeft(lastSent, hold); gather > 0 && !ended && !hold.signal?.aborted; gather = gatherLeft(lastSent, hold)) {
        bell.clear();
        await bell.wait(gather);
      }
    }
  } finally {
    unwatch();
    hold.signal?.removeEventListener('abort', bell.ring);
    bell.clear();
  }
}

/**
 * The stream's last response, `end`; when it is a question, first the text the task wrote before
 * it that this stream has not sent (from `cursor`): the agent's words up to its question reach the
 * caller whole, however fast it asked (docs/contract.md, "Questions").
 */
async function* textBeforeQuestion(source: TaskTextSource, taskId: string, cursor: number, end: StreamEvent, known?: TaskRecord): AsyncGenerator<StreamEvent, void, undefined> {
  if ('result' in end && (end.result as { status?: unknown } | undefined)?.status === 'input_required') {
    const record = known ?? (await source.store.get(taskId).catch(() => undefined));
    const kept = record?.status === 'input_required' ? (record.partial?.text ?? '') : '';
    if (kept.length > cursor) yield { result: { status: 'working', task_id: taskId, text: kept.slice(cursor), cursor: String(kept.length) } };
  }
  yield end;
}

/** How much longer text gathers after the event sent at `lastSent`: up to STREAM_COALESCE_MS, never past the hold. */
function gatherLeft(lastSent: number, hold: StreamHold): number {
  return Math.min(lastSent + STREAM_COALESCE_MS, hold.endsAt) - performance.now();
}

/** One waiter woken by a ring, or by its timeout; a ring nobody waited for wakes the next wait at once. */
class Bell {
  private rung = false;
  private waiter: (() => void) | undefined;

  readonly ring = (): void => {
    this.rung = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  };

  clear(): void {
    this.rung = false;
  }

  wait(ms: number): Promise<void> {
    if (this.rung) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiter = done;
    });
  }
}
