import type { Log, LogExtra } from '../observability/logger';
import type { Answer, ExecuteTaskParams, JsonRpcId, Step, Usage } from '../contract';
import type { ExecutorContext } from './executors/executor';

/**
 * How a running task is stopped (cancel, timeout, handoff), without an AbortController until
 * someone needs a signal: most tasks end before anything could abort them, and Node's
 * AbortController (an EventTarget) costs more than the echo task it would guard. `signal` makes
 * one on first use, already aborted if the task was; `abort` aborts it if it exists and tells
 * `onAbort` (the task's own wait on its executor).
 */
export class TaskControl {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  /** Called once, with the reason, when the task is aborted. */
  onAbort: ((reason: unknown) => void) | undefined;
  /** What the executor reported it has cost so far (ExecutorContext.used): charged if the task fails or is cancelled. */
  usage: Usage | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    this.onAbort?.(reason);
  }
}

/** An executor's context whose `signal` is made only when the executor reads it. */
export class TaskContext implements ExecutorContext {
  constructor(
    readonly taskId: string,
    private readonly control: TaskControl,
    readonly log: Log,
    readonly onText: ((delta: string) => void) | undefined,
    readonly onStep?: (step: Step, planTitle?: string) => void,
    readonly answers?: readonly Answer[],
  ) {}

  get signal(): AbortSignal {
    return this.control.signal;
  }

  used(usage: Usage): void {
    this.control.usage = usage;
  }
}

/** Powertools' DEBUG threshold; a Log that does not say its level is taken to write debug lines. */
const DEBUG_LEVEL = 8;

/** Whether `log` writes debug lines now: asked before building a debug line's fields. */
export function debugEnabled(log: Log): boolean {
  const level = (log as { level?: unknown }).level;
  return typeof level !== 'number' || level <= DEBUG_LEVEL;
}

/**
 * `taskLogger(parent, { correlation_id, request_id, task_id })` (src/observability/logger.ts) for
 * one task, built when it first writes a line: the same lines, with the same keys in the same
 * order, but a task that logs nothing costs one small object.
 */
export class TaskLog implements Log {
  private keys: Record<string, unknown> | undefined;

  constructor(
    private readonly parent: Log,
    private readonly correlationId: string | undefined,
    private readonly requestId: JsonRpcId | undefined,
    private readonly taskId: string | undefined,
  ) {}

  static of(parent: Log, params: Pick<ExecuteTaskParams, 'correlation_id'>, requestId: JsonRpcId, taskId?: string): TaskLog {
    return new TaskLog(parent, params.correlation_id, requestId, taskId);
  }

  /** The parent's level (Powertools' threshold number), so `debugEnabled` sees through a task log. */
  get level(): unknown {
    return (this.parent as { level?: unknown }).level;
  }

  debug(message: string, ...extra: LogExtra[]): void {
    this.parent.debug(message, this.stamp(), ...extra);
  }

  info(message: string, ...extra: LogExtra[]): void {
    this.parent.info(message, this.stamp(), ...extra);
  }

  warn(message: string, ...extra: LogExtra[]): void {
    this.parent.warn(message, this.stamp(), ...extra);
  }

  error(message: string, ...extra: LogExtra[]): void {
    this.parent.error(message, this.stamp(), ...extra);
  }

  private stamp(): LogExtra {
    if (!this.keys) {
      const keys: Record<string, unknown> = {};
      if (this.correlationId !== undefined) keys.correlation_id = this.correlationId;
      if (this.requestId !== undefined && this.requestId !== null) keys.request_id = String(this.requestId);
      if (this.taskId !== undefined) keys.task_id = this.taskId;
      this.keys = keys;
    }
    return this.keys as LogExtra;
  }
}
