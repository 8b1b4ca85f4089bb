import { hash, randomFillSync, randomUUID } from 'node:crypto';
import {
  ErrorCode,
  PENDING_STATUSES,
  UNFINISHED_STATUSES,
  type Answer,
  type CancelTaskResult,
  type InputRequiredResult,
  type ResumeTaskParams,
  type ExecuteTaskParams,
  type ExecuteTaskResult,
  type GetTaskResultResult,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type SuccessResult,
  type TaskStatus,
  QuestionSchema,
  type Usage,
} from '../contract';
import { systemClock, type Clock } from '../clock';
import type { Log } from '../observability/logger';
import { DeadlineQueue, type Deadline } from './deadlines';
import type { Executor, ExecutorContext, ExecutorOutput } from './executors/executor';
import { paramsHashOf } from './params-fingerprint';
import type { StreamEvent, StreamedAnswer } from './dispatcher';
import { PartialTextWriter } from './partial-text';
import { InputRequired } from './executors/input-required';
import { checkAnswer } from './answer-check';
import { StepWriter } from './step-writer';
import { RpcError } from './rpc-error';
import { TaskStoreFullError, takeable, type CreateOutcome, type TaskLease, type TaskRecord, type TaskStore } from './stores/task-store';
import { TaskContext, TaskControl, TaskLog, debugEnabled } from './task-control';
import { STREAM_COALESCE_MS, readTaskText, type StreamHold, type TaskTextSource } from './task-stream';

/**
 * Hands an accepted task to a worker that outlives this process's response (Lambda hosts).
 * `expiresAt` is the task record's `expires_at` (epoch seconds): anything kept for the worker
 * need not outlive it.
 */
export type TaskHandoff = (task: { taskId: string; params: ExecuteTaskParams; expiresAt: number }) => Promise<void>;

/** The params of a handed-off task, or where to load them (undefined: they are gone). */
export type HandedOffParams = ExecuteTaskParams | (() => Promise<ExecuteTaskParams | undefined>);

/**
 * What a worker did with a handed-off task: ran it; found it ended, expired or unknown; found it
 * held by another runner whose lease still lasts (and ran nothing); or failed it, its params gone.
 */
export type HandedOffOutcome = 'ran' | 'not-pending' | 'held' | 'no-params';

/** How long a lease outlasts the task's time limit: time to record how the task ended (the worker Lambda's timeout is the task timeout + 60 s too). */
export const LEASE_MARGIN_MS = 60_000;

export type TaskServiceOptions = {
  store: TaskStore;
  executor: Executor;
  log: Log;
  /** Answer with the final result if the task finishes within this budget, else `accepted`. */
  syncBudgetMs: number;
  /**
   * A task started with `stream: true` that produces text is answered `accepted`, with its text,
   * this long after the first piece arrived, unless it finishes first (default 300). Not with a
   * handoff: the local attempt's text would not be the worker's.
   */
  streamFirstTextMs?: number;
  /** A task running longer than this fails with -32001 Timeout. */
  taskTimeoutMs: number;
  /**
   * How long a runner holds a task it took (TaskStore.take) before another may take it over: a
   * worker that died mid-run is replaced by the queue's redelivery once this is over. Default
   * `taskTimeoutMs` + LEASE_MARGIN_MS, so a run that is still alive never loses its task.
   */
  leaseMs?: number;
  /** How long task records (and repeated-id memory) live. */
  ttlSeconds: number;
  /**
   * Tasks this process runs at once (from `execute_task`, until each settles); past it a new task
   * is refused with -32004 and `data.retryable: true`. Unbounded when unset.
   */
  maxConcurrentTasks?: number;
  /**
   * Where accepted tasks finish. Without a handoff they run on in this process (HTTP hosts,
   * AgentCore). With one, the local attempt stops at the budget and the worker re-runs the task.
   */
  handoff?: TaskHandoff;
  clock?: Clock;
};

type Outcome = { ok: true; result: SuccessResult | InputRequiredResult } | { ok: false; error: RpcError };

/** The characters of a cursor: a character count, in decimal. */
const CURSOR = /^\d{1,15}$/;

/**
 * How often a streamed answer reads the store of a task this process runs: a safety net only,
 * since the run wakes it whenever its text is stored and when it ends.
 */
const LOCAL_TASK_POLL_MS = 1_000;

/** The log fields of an `execute_task` before its task id is known. */
type RequestFields = { correlation_id?: string; request_id?: string };

const requestFields = (params: ExecuteTaskParams, requestId: JsonRpcId): RequestFields => ({
  correlation_id: params.correlation_id,
  request_id: requestId === null ? undefined : String(requestId),
});

/**
 * The execution zone's task semantics behind `execute_task`, `get_task_result` and
 * `cancel_task`. Methods resolve with a contract result or throw an RpcError.
 */
export class TaskService {
  private readonly running = new Map<string, TaskControl>();
  /** Slots taken by `execute_task` calls: reserved before the store is touched, freed when the task settles. */
  private slotsTaken = 0;
  private readonly busyListeners: Array<(busy: boolean) => void> = [];
  private readonly clock: Clock;
  /**
   * The sync budget, the first-text window and the task timeout: deadlines most tasks end before,
   * so they are entries in a queue with one timer each rather than a timer per task.
   */
  private readonly budgets: DeadlineQueue;
  private readonly firstTexts: DeadlineQueue;
  private readonly timeouts: DeadlineQueue;
  private debugOn = false;
  private debugCheckedAt = Number.NEGATIVE_INFINITY;

  /** Where the store files a request id (TaskStore.requestKeyOf, else a SHA-256 hash). */
  private readonly requestKeyOf: (requestId: string | number) => string;
  private readonly leaseMs: number;
  /** Lease owners: this service's random token and a count of its runs. */
  private readonly runnerToken = randomUUID();
  private runs = 0;
  /** The streamed answers reading each task's text in this process (task-stream.ts), woken when it changes. */
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly textSource: TaskTextSource;

  constructor(private readonly options: TaskServiceOptions) {
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? options.taskTimeoutMs + LEASE_MARGIN_MS;
    this.requestKeyOf = options.store.requestKeyOf ? options.store.requestKeyOf.bind(options.store) : requestKeyOf;
    this.budgets = new DeadlineQueue(options.syncBudgetMs);
    this.firstTexts = new DeadlineQueue(options.streamFirstTextMs ?? 300);
    this.timeouts = new DeadlineQueue(options.taskTimeoutMs);
    // A task run elsewhere (a worker) is read as often as the store may have changed, and no more often than events are sent.
    const remotePollMs = Math.max(STREAM_COALESCE_MS, options.store.partialText?.writeIntervalMs ?? 0);
    this.textSource = {
      store: options.store,
      watch: (taskId, wake) => this.watch(taskId, wake),
      pollMs: (taskId) => (this.running.has(taskId) ? LOCAL_TASK_POLL_MS : remotePollMs),
      endOf: (record) => {
        try {
          return { result: endedAnswer(record) };
        } catch (error) {
          return { error };
        }
      },
    };
  }

  /** True while at least one task runs in this process (drives AgentCore's HealthyBusy). */
  get busy(): boolean {
    return this.running.size > 0;
  }

  onBusyChange(listener: (busy: boolean) => void): void {
    this.busyListeners.push(listener);
  }

  async executeTask(params: ExecuteTaskParams, requestId: JsonRpcId): Promise<ExecuteTaskResult> {
    return this.admit(params, requestId, {
      repeat: (record) => executeAnswerFor(record, params.stream === true),
      start: (taskId, expiresAt, log) => this.start(taskId, params, expiresAt, log),
    });
  }

  /**
   * `execute_task` answered with a stream (docs/contract.md, "Streamed answers"): the task starts
   * as for `executeTask` (with `stream: true`: its text is written to the store as it comes), and
   * the answer reads that text until the task ends or `hold` is over. Refusals (capacity, a reused
   * id) throw before any stream; a repeated id of a pending task streams its text from the start,
   * of an ended one answers its result at once. The stream only reads: the task runs on without it.
   */
  async executeTaskStreamed(params: ExecuteTaskParams, requestId: JsonRpcId, hold: StreamHold): Promise<StreamedAnswer> {
    const streaming = { ...params, stream: true };
    return this.admit<StreamedAnswer>(streaming, requestId, {
      repeat: (record) => (PENDING_STATUSES.includes(record.status) ? { events: readTaskText(this.textSource, record.task_id, 0, hold, { announce: true }) } : { result: endedAnswer(record) }),
      start: async (taskId, expiresAt, log) => {
        // The run's own answer ends the stream as soon as it is a success or an error (a hand-off that failed, too); `accepted` is no end.
        const first = this.start(taskId, streaming, expiresAt, log, true).then(
          (answer): StreamEvent | undefined => (answer.status === 'accepted' ? undefined : { result: answer }),
          (error: unknown): StreamEvent => ({ error }),
        );
        return { events: readTaskText(this.textSource, taskId, 0, hold, { first, announce: true }) };
      },
    });
  }

  /**
   * A new task for `execute_task`, or the answer of its repeated id: a slot, then a record; the
   * task starts with `start`, and a live task the request id already names answers with `repeat`
   * (once its params are found the same).
   */
  private async admit<T>(
    params: ExecuteTaskParams,
    requestId: JsonRpcId,
    answer: { repeat: (record: TaskRecord) => T; start: (taskId: string, expiresAt: number, log: Log) => Promise<T> },
  ): Promise<T> {
    const requestKey = requestId === null ? undefined : this.requestKeyOf(requestId);
    const paramsHash = paramsHashOf(params);
    const repeat = (record: TaskRecord, log: Log): T => {
      checkRepeat(record, paramsHash, log);
      return answer.repeat(record);
    };
    if (!this.reserveSlot()) {
      // At capacity nothing new starts, but a repeated id still learns where its task stands.
      const existing = requestKey === undefined ? undefined : await this.options.store.getByRequest(requestKey);
      if (existing && !isTransientFailure(existing)) return repeat(existing, TaskLog.of(this.options.log, params, requestId, existing.task_id));
      throw this.overCapacity('concurrent_tasks', this.options.maxConcurrentTasks!, requestFields(params, requestId));
    }
    let slotHandedOver = false;
    try {
      // A new task record under a random id, or the live task the request key already names.
      const now = this.clock.now();
      const record: TaskRecord = {
        task_id: newTaskId(),
        status: 'accepted',
        created_at: now,
        updated_at: now,
        expires_at: Math.floor(now / 1000) + this.options.ttlSeconds,
        params_hash: paramsHash,
      };
      let created: CreateOutcome;
      try {
        created = await this.options.store.create(record, requestKey);
      } catch (error) {
        if (error instanceof TaskStoreFullError) throw this.overCapacity(error.limit === 'records' ? 'task_store' : 'task_store_bytes', error.max, requestFields(params, requestId));
        throw error;
      }
      const taskId = created.record.task_id;
      // Built when it first writes: a task that finishes quietly never assembles its log keys.
      const log = TaskLog.of(this.options.log, params, requestId, taskId);
      if (!created.created) {
        const retried =
          sameParams(created.record, paramsHash) &&
          isTransientFailure(created.record) &&
          (await this.options.store.transition(taskId, ['failed'], { status: 'accepted', partial: null }));
        if (!retried) return repeat(created.record, log);
        // The caller retries a task that failed for a passing reason (model throttled): run it again.
        log.info('repeated execute_task id of a transiently failed task: running it again', { code: created.record.error?.code });
      }
      slotHandedOver = true;
      return await answer.start(taskId, created.record.expires_at, log);
    } finally {
      if (!slotHandedOver) this.releaseSlot();
    }
  }

  /**
   * Runs a task that holds a slot, answering within the sync budget or with `accepted`; the slot
   * is freed when it settles. A task that streams (`stream: true`, no handoff) may be answered
   * `accepted` earlier, with the text it has produced, STREAM_FIRST_TEXT_MS after its first piece.
   *
   * The budget and the first-text window are deadlines in queues (no timer of their own); the
   * first of the task's end and a deadline decides the answer, and drops the other deadlines.
   * For a streamed answer (`streamed`) neither applies — its stream reads the text, and the
   * promise settles with the task — except the budget of a hand-off, when the task moves to the worker.
   */
  private start(taskId: string, params: ExecuteTaskParams, expiresAt: number, log: Log, streamed = false, answers?: readonly Answer[]): Promise<ExecuteTaskResult> {
    const control = new TaskControl();
    // With a handoff this is an attempt: the task stays `accepted` for the worker to take, and
    // the worker runs it again, so its text need not be this attempt's: only the worker streams.
    const hold: RunHold = this.options.handoff ? undefined : { lease: this.newLease(), taken: false };
    const writer = params.stream === true && hold ? this.writerFor(taskId, log, hold.lease) : undefined;
    const completion = this.run(taskId, params, control, log, hold, writer, undefined, answers);
    return new Promise<ExecuteTaskResult>((resolve, reject) => {
      let settled: Outcome | undefined;
      let answered = false;
      let text: Deadline | undefined;
      const answer = (): boolean => {
        if (answered) return false;
        answered = true;
        if (budget) this.budgets.cancel(budget);
        if (text) this.firstTexts.cancel(text);
        return true;
      };
      const onDeadline = (first: 'budget' | 'text') => {
        if (answer()) this.acceptedAnswer(first, taskId, params, expiresAt, log, control, writer, () => settled).then(resolve, reject);
      };
      const budget = streamed && !this.options.handoff ? undefined : this.budgets.add(() => onDeadline('budget'));
      completion.then(
        (outcome) => {
          settled = outcome;
          this.releaseSlot();
          if (!answer()) return;
          if (outcome.ok) resolve(outcome.result);
          else reject(outcome.error);
        },
        (error: unknown) => {
          this.releaseSlot();
          if (answer()) reject(error);
        },
      );
      if (!streamed) {
        writer?.onFirstText(() => {
          if (!answered) text = this.firstTexts.add(() => onDeadline('text'));
        });
      }
    });
  }

  /** The answer of a task still running when its budget (or its first-text window) ran out. */
  private async acceptedAnswer(
    first: 'budget' | 'text',
    taskId: string,
    params: ExecuteTaskParams,
    expiresAt: number,
    log: Log,
    control: TaskControl,
    writer: PartialTextWriter | undefined,
    settled: () => Outcome | undefined,
  ): Promise<ExecuteTaskResult> {
    if (this.options.handoff) {
      control.abort(new HandoffSignal());
      await this.options.handoff({ taskId, params, expiresAt });
      log.info('task handed off to a worker');
      return { status: 'accepted', task_id: taskId };
    }
    if (!writer) {
      log.info('task accepted: running on past the sync budget');
      return { status: 'accepted', task_id: taskId };
    }
    // The store must hold every character this answer hands out, or a poll on another host could not go on from its cursor.
    const stored = await writer.flush();
    const outcome = settled();
    if (outcome) return answerOf(outcome);
    log.info(first === 'text' ? 'streaming task accepted with its first text' : 'streaming task accepted: running on past the sync budget', { chars: stored.text.length });
    return { status: 'accepted', task_id: taskId, ...partialAnswer(stored.text, 0) };
  }

  private reserveSlot(): boolean {
    const max = this.options.maxConcurrentTasks;
    if (max !== undefined && this.slotsTaken >= max) return false;
    this.slotsTaken += 1;
    return true;
  }

  private releaseSlot(): void {
    this.slotsTaken -= 1;
  }

  private overCapacity(limit: keyof typeof OVER_CAPACITY, max: number, request: RequestFields): RpcError {
    const what = OVER_CAPACITY[limit](max);
    this.options.log.warn('over capacity: refusing a new task', { ...request, limit, max });
    return new RpcError(ErrorCode.OverCapacity, `Over capacity: ${what}; try again shortly`, { retryable: true, limit, max });
  }

  /**
   * Runs a task that another process accepted and handed off (the Lambda worker side), once: the
   * worker takes the task first (TaskStore.take: `accepted` → `working` with this run's lease),
   * and a task another runner holds is left alone (`held`): the same hand-off delivered twice
   * runs the executor once. A runner that died holds its task until its lease is over; the next
   * delivery then takes it over. Params given as a loader are loaded only for a task still
   * pending and not held; a pending task whose params are gone cannot run and fails with -32603
   * rather than leave its caller polling until it expires.
   */
  async runHandedOff(taskId: string, source: HandedOffParams): Promise<HandedOffOutcome> {
    let log: Log = new TaskLog(this.options.log, typeof source === 'function' ? undefined : source.correlation_id, undefined, taskId);
    const record = await this.options.store.get(taskId);
    if (!record || !PENDING_STATUSES.includes(record.status)) {
      log.info('handed-off task is no longer pending: skipping', { status: record?.status });
      return 'not-pending';
    }
    if (!takeable(record, this.clock.now())) return heldElsewhere(log, record);
    const params = typeof source === 'function' ? await source() : source;
    if (!params) {
      log.error('handed-off task has no params to run with: failing it');
      await this.options.store.transition(taskId, PENDING_STATUSES, { status: 'failed', error: RpcError.internal().toErrorObject() });
      return 'no-params';
    }
    if (typeof source === 'function') log = new TaskLog(this.options.log, params.correlation_id, undefined, taskId);
    const lease = this.newLease();
    const taken = await this.options.store.take(taskId, lease, params.stream === true);
    if (!taken) {
      const current = await this.options.store.get(taskId);
      if (current && PENDING_STATUSES.includes(current.status)) return heldElsewhere(log, current);
      log.info('handed-off task is no longer pending: skipping', { status: current?.status });
      return 'not-pending';
    }
    // A task an earlier worker streamed from is run again (its worker stopped half-way): streaming
    // afresh would hand callers a second, different beginning, so this attempt only answers.
    const streamedBefore = (taken.partial?.length ?? 0) > 0;
    if (params.stream === true && streamedBefore) log.warn('handed-off task streamed in an earlier attempt: running it again without streaming');
    if (record.status === 'working') log.warn('handed-off task was working under a runner that stopped (its lease is over, or it had none): running it again', { lease_until: record.lease?.until });
    const writer = params.stream === true && !streamedBefore ? this.writerFor(taskId, log, lease) : undefined;
    await this.run(taskId, params, new TaskControl(), log, { lease, taken: true }, writer, taken);
    return 'ran';
  }

  /** A lease for a run starting now: a token no other run has, until the task's limit and a margin are over. */
  private newLease(): TaskLease {
    this.runs += 1;
    return { owner: `${this.runnerToken}-${this.runs}`, until: this.clock.now() + this.leaseMs };
  }

  private writerFor(taskId: string, log: Log, lease: TaskLease): PartialTextWriter {
    return new PartialTextWriter({ taskId, store: this.options.store, log, clock: this.clock, owner: lease.owner, onStored: () => this.notify(taskId) });
  }

  /**
   * The task's state. While it is pending, a task that streams (or a caller that sends a cursor)
   * gets the text produced after `cursor` (from the start without one) and the cursor to send
   * next: the character count it has now had, in decimal.
   */
  async getTaskResult(taskId: string, cursor?: string): Promise<GetTaskResultResult> {
    if (cursor !== undefined && !CURSOR.test(cursor)) throw invalidCursor('cursor must be a cursor this task gave: a character count in decimal');
    const record = await this.options.store.get(taskId);
    if (!record) throw new RpcError(ErrorCode.TaskNotFound);
    switch (record.status) {
      case 'accepted':
      case 'working': {
        if (!record.partial && cursor === undefined) return { status: record.status, task_id: taskId, ...stepsOf(record) };
        const position = cursor === undefined ? 0 : Number(cursor);
        const produced = record.partial?.length ?? 0;
        if (position > produced) throw invalidCursor(`cursor ${cursor} is past the ${produced} characters this task has produced`);
        return { status: record.status, task_id: taskId, ...partialAnswer(record.partial?.text ?? '', position), ...stepsOf(record) };
      }
      case 'input_required':
      case 'success':
      case 'cancelled':
      case 'failed':
        return endedAnswer(record);
    }
  }

  /**
   * `get_task_result` answered with a stream (docs/contract.md, "Streamed answers"): the text after
   * `cursor` as the task produces it, until it ends or `hold` is over. What `getTaskResult` would
   * refuse (a bad cursor, an unknown task) or answer at once (an ended task) is answered so.
   */
  async getTaskResultStreamed(taskId: string, cursor: string | undefined, hold: StreamHold): Promise<StreamedAnswer> {
    const now = await this.getTaskResult(taskId, cursor);
    if (now.status === 'success' || now.status === 'input_required') return { result: now };
    return { events: readTaskText(this.textSource, taskId, cursor === undefined ? 0 : Number(cursor), hold) };
  }

  /** Calls `wake` whenever this process stores text of the task or the task ends; returns how to stop. */
  private watch(taskId: string, wake: () => void): () => void {
    let wakes = this.watchers.get(taskId);
    if (!wakes) this.watchers.set(taskId, (wakes = new Set()));
    wakes.add(wake);
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0 && this.watchers.get(taskId) === wakes) this.watchers.delete(taskId);
    };
  }

  private notify(taskId: string): void {
    const wakes = this.watchers.get(taskId);
    if (wakes) for (const wake of [...wakes]) wake();
  }

  /**
   * `resume_task` (docs/contract.md, "Questions"): the answer to the question the task waits on,
   * recorded with a conditional write (`input_required` → `accepted`) so that of two resumes with
   * the same answer — a double click, a retry, a redelivery — one runs the task and the other gets
   * its state, as a repeated `execute_task` id does. The task then runs again under the same id,
   * its executor given every answer so far, and is answered as `execute_task` answers.
   */
  async resumeTask(params: ResumeTaskParams): Promise<ExecuteTaskResult> {
    const { task_id: taskId, answer } = params;
    const record = await this.options.store.get(taskId);
    if (!record) throw new RpcError(ErrorCode.TaskNotFound);
    if (record.status !== 'input_required' || !record.question) {
      // Answered already (this answer, or it ended meanwhile): where the task stands now.
      if (record.answers?.some((given) => given.question_id === answer.question_id)) return executeAnswerFor(record, params.stream === true);
      if (record.status === 'cancelled') throw new RpcError(ErrorCode.TaskCancelled);
      throw new RpcError(ErrorCode.InvalidParams, undefined, [{ path: 'task_id', message: `the task is ${record.status}, not waiting for an answer` }]);
    }
    checkAnswer(record.question, answer);
    const kept = await this.options.store.getParams(taskId);
    const log = new TaskLog(this.options.log, undefined, undefined, taskId);
    if (!kept) {
      log.error('paused task has no params to resume with: failing it');
      await this.options.store.transition(taskId, ['input_required'], { status: 'failed', error: RpcError.internal().toErrorObject(), question: null });
      throw RpcError.internal();
    }
    if (!this.reserveSlot()) throw this.overCapacity('concurrent_tasks', this.options.maxConcurrentTasks!, {});
    let slotHandedOver = false;
    try {
      const answers: Answer[] = [...(record.answers ?? []), answer];
      const resumed = await this.options.store.transition(taskId, ['input_required'], { status: 'accepted', question: null, answers, partial: null });
      if (!resumed) {
        const now = await this.options.store.get(taskId);
        if (!now) throw new RpcError(ErrorCode.TaskNotFound);
        return executeAnswerFor(now, params.stream === true);
      }
      const original = JSON.parse(kept) as ExecuteTaskParams;
      const task: ExecuteTaskParams = { ...original, ...(params.stream === undefined ? {} : { stream: params.stream }) };
      log.info('task resumed with an answer', { question_id: answer.question_id });
      slotHandedOver = true;
      // The answers go with the run: a handoff front's attempt takes no record to read them from.
      return await this.start(taskId, task, record.expires_at, TaskLog.of(this.options.log, task, null, taskId), false, answers);
    } finally {
      if (!slotHandedOver) this.releaseSlot();
    }
  }

  /**
   * A task whose executor asked a question (InputRequired): its params are kept for the resume
   * (TaskStore.putParams, until the task expires), then it is `input_required` with the question
   * and its steps. A task cancelled meanwhile stays cancelled.
   */
  private async pause(
    taskId: string,
    params: ExecuteTaskParams,
    asked: InputRequired,
    run: { from: readonly TaskStatus[]; owner: string | undefined; steps: StepWriter | undefined; taken: TaskRecord | undefined; log: Log },
  ): Promise<Outcome> {
    const parsed = QuestionSchema.safeParse(asked.question);
    await run.steps?.flush();
    run.steps?.stop();
    if (!parsed.success) {
      run.log.error('executor asked a malformed question: failing the task', { issues: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') });
      const error = RpcError.internal();
      await this.options.store.transition(taskId, run.from, { status: 'failed', error: error.toErrorObject(), owner: run.owner, ...(params.stream === true ? { partial: null } : {}) });
      return { ok: false, error };
    }
    const question = parsed.data;
    const expiresAt = run.taken?.expires_at ?? (await this.options.store.get(taskId))?.expires_at ?? Math.floor(this.clock.now() / 1000) + this.options.ttlSeconds;
    await this.options.store.putParams(taskId, JSON.stringify(params), expiresAt);
    // Its partial text stays while it waits, for a streamed read to send what it has not yet sent
    // before the question; the resume clears it (the resumed run's text starts again from the first character).
    const paused = await this.options.store.transition(taskId, run.from, { status: 'input_required', question, owner: run.owner });
    if (!paused) return this.notTaken(taskId);
    run.log.info('task paused on a question', { question_id: question.id });
    return { ok: true, result: { status: 'input_required', task_id: taskId, question, ...stepsOf(paused) } };
  }

  async cancelTask(taskId: string): Promise<CancelTaskResult> {
    const record = await this.options.store.get(taskId);
    if (!record) throw new RpcError(ErrorCode.TaskNotFound);
    if (UNFINISHED_STATUSES.includes(record.status)) {
      // A task paused on a question is cancelled as a running one is (Stop, or its question expired).
      // What it cost until now, when it runs here: charged with the cancel (docs/contract.md, "Usage").
      const usage = this.running.get(taskId)?.usage;
      const cancelled = await this.options.store.transition(taskId, UNFINISHED_STATUSES, { status: 'cancelled', partial: null, question: null, ...(usage ? { error: cancelledError(usage) } : {}) });
      this.running.get(taskId)?.abort(new RpcError(ErrorCode.TaskCancelled));
      if (cancelled) {
        this.notify(taskId);
        this.options.log.info('task cancelled', { task_id: taskId });
        return { status: 'cancelled', task_id: taskId, ...(usage ? { usage } : {}) };
      }
    }
    // Finished before (or while) we tried: answer with its final state.
    const final = await this.options.store.get(taskId);
    if (!final) throw new RpcError(ErrorCode.TaskNotFound);
    if (final.status === 'cancelled') return { status: 'cancelled', task_id: taskId, ...usageField(final.error) };
    if (final.status === 'success') return final.result ?? { status: 'success', response_text: '' };
    if (final.status === 'failed') throw failureOf(final);
    return { status: 'cancelled', task_id: taskId };
  }

  /**
   * Runs the executor once, under the task timeout, and records how it ended. With a writer the
   * executor streams (`onText`) and its text so far is written to the record as it grows.
   *
   * A run with a lease takes its task first, unless it has already (a task started with
   * `stream: true` gets partial text then, so polls give it a cursor), and writes only while the
   * lease is its own. Without one (the handoff front's attempt) the task stays `accepted`, for
   * the worker to take, and the attempt settles it only from there.
   */
  private async run(taskId: string, params: ExecuteTaskParams, control: TaskControl, log: Log, hold: RunHold, writer?: PartialTextWriter, taken?: TaskRecord, answers?: readonly Answer[]): Promise<Outcome> {
    this.setRunning(taskId, control);
    const steps = hold ? new StepWriter({ taskId, store: this.options.store, log, owner: hold.lease.owner, onStored: () => this.notify(taskId) }) : undefined;
    const timeout = this.timeouts.add(() => control.abort(new RpcError(ErrorCode.Timeout, `Task exceeded its time limit of ${this.options.taskTimeoutMs} ms`)));
    const debug = this.debugLogging();
    const started = debug ? this.clock.now() : 0;
    const from = hold ? WORKING : ACCEPTED;
    const owner = hold?.lease.owner;
    try {
      // Not taken: cancelled (or gone) since it was accepted, so it must not run.
      if (hold && !hold.taken) taken = await this.options.store.take(taskId, hold.lease, params.stream === true);
      if (hold && !taken) return await this.notTaken(taskId);
      const output = await this.execute(params, control, new TaskContext(taskId, control, log, writer?.append, steps?.add, taken?.answers ?? answers));
      await steps?.flush();
      steps?.stop();
      const result = { ...successOf(output), ...(steps && !('steps' in output) ? steps.current : {}) };
      if (writer) {
        // The end of the stream: its last pieces reach the store before the result replaces them.
        await writer.flush();
        writer.stop();
      }
      await this.options.store.transition(taskId, from, params.stream === true ? { status: 'success', result, partial: null, owner } : { status: 'success', result, owner });
      // Debug, not info: one line per task halves the runtime's throughput; the verification zone logs each answer.
      if (debug) log.debug('task succeeded', { duration_ms: this.clock.now() - started, executor: this.options.executor.name });
      return { ok: true, result };
    } catch (caught) {
      if (caught instanceof InputRequired && !control.aborted) {
        // The text written just before the question reaches the store first: a streamed read sends it before the question.
        await writer?.flush().catch((error: unknown) => log.warn('the text before a question could not be stored; the question goes on', { error: error as Error }));
        writer?.stop();
        return await this.pause(taskId, params, caught, { from, owner, steps, taken, log });
      }
      writer?.stop();
      steps?.stop();
      const reason = control.aborted ? control.reason : caught;
      if (reason instanceof HandoffSignal) return { ok: false, error: new RpcError(ErrorCode.InternalError) };
      const raised = reason instanceof RpcError ? reason : RpcError.internal(reason);
      // What it used until it failed goes with the error it answers (docs/contract.md, "Usage").
      const error = control.usage ? RpcError.fromErrorObject(withUsage(raised.toErrorObject(), control.usage)) : raised;
      if (raised.code === ErrorCode.InternalError) log.error('task failed unexpectedly', { error: reason as Error });
      else log.warn('task failed', { code: error.code, error_message: error.message });
      if (error.code !== ErrorCode.TaskCancelled) {
        await this.options.store.transition(taskId, from, { status: 'failed', error: error.toErrorObject(), owner, ...(params.stream === true ? { partial: null } : {}) });
      } else if (control.usage) {
        // Cancelled elsewhere (another process took the cancel): what it cost until it stopped goes on its record.
        await this.options.store.transition(taskId, ['cancelled'], { status: 'cancelled', error: error.toErrorObject() });
      }
      return { ok: false, error };
    } finally {
      writer?.stop();
      steps?.stop();
      this.timeouts.cancel(timeout);
      this.setRunning(taskId, undefined);
      // Its end is in the store: a streamed answer reading the task sends it.
      this.notify(taskId);
    }
  }

  /** The outcome of a task this service accepted but could not take: how it ended (a cancel, most likely). */
  private async notTaken(taskId: string): Promise<Outcome> {
    const record = await this.options.store.get(taskId);
    if (record?.status === 'success') return { ok: true, result: record.result ?? { status: 'success', response_text: '' } };
    if (record?.status === 'cancelled' || record?.status === 'failed') return { ok: false, error: failureOf(record) };
    return { ok: false, error: RpcError.internal() };
  }

  /**
   * The executor's output, or the reason the task was aborted, whichever comes first: an executor
   * that ignores its signal cannot hold the task past its timeout or cancel.
   */
  private execute(params: ExecuteTaskParams, control: TaskControl, context: ExecutorContext): Promise<ExecutorOutput> {
    return new Promise((resolve, reject) => {
      if (control.aborted) return reject(control.reason);
      control.onAbort = reject;
      this.options.executor.execute(params, context).then(resolve, reject);
    });
  }

  /**
   * Whether the runtime's log writes debug lines, asked at most once a second: asking Powertools
   * reads the environment, which costs more than the echo task the answer is for.
   */
  private debugLogging(): boolean {
    const now = performance.now();
    if (now - this.debugCheckedAt >= 1000) {
      this.debugOn = debugEnabled(this.options.log);
      this.debugCheckedAt = now;
    }
    return this.debugOn;
  }

  private setRunning(taskId: string, control: TaskControl | undefined): void {
    const wasBusy = this.busy;
    if (control) this.running.set(taskId, control);
    else this.running.delete(taskId);
    if (wasBusy !== this.busy) for (const listener of this.busyListeners) listener(this.busy);
  }
}

/**
 * A run's hold on its task: a lease, taken already or to take first; or none, for the handoff
 * front's own attempt, which leaves the task `accepted` for the worker to take.
 */
type RunHold = { lease: TaskLease; taken: boolean } | undefined;

const WORKING: readonly ['working'] = ['working'];
const ACCEPTED: readonly ['accepted'] = ['accepted'];

/** The message of each -32004 the service gives (`data.limit`), for its `max`. */
const OVER_CAPACITY = {
  concurrent_tasks: (max: number) => `${max} tasks are running`,
  task_store: (max: number) => `the task store holds ${max} pending tasks`,
  task_store_bytes: (max: number) => `the running tasks hold the ${max} bytes the task store keeps`,
};

/** A handed-off task another runner holds: left to it, and logged (the queue brings the message back later). */
function heldElsewhere(log: Log, record: TaskRecord): HandedOffOutcome {
  log.info('handed-off task is held by another worker: skipping, the message comes back after its visibility timeout', { status: record.status, lease_until: record.lease?.until });
  return 'held';
}

/** Stops a local attempt whose task moved to a worker; never recorded as the task's outcome. */
class HandoffSignal extends Error {
  override name = 'HandoffSignal';
}

/** The success result of an executor's output: its fields after `status: 'success'`, any `status` of its own left out. */
function successOf(output: ExecutorOutput): SuccessResult {
  if (!('status' in output)) return { status: 'success', ...output };
  const { status: _executorStatus, ...fields } = output;
  return { status: 'success', ...fields };
}

/** Random bytes for task ids, drawn 4 KiB at a time (as node's randomUUID does) rather than per id. */
const RANDOM_POOL_BYTES = 4096;
const TASK_ID_BYTES = 16;
let randomPool: Buffer | undefined;
let randomOffset = RANDOM_POOL_BYTES;

/**
 * A new task id: 128 random bits, so knowing a request id (a Slack event's, in logs and session
 * ids) tells nobody the task id that polls or cancels its task. A repeated request id finds its
 * task through the store's request key instead.
 */
export function newTaskId(): string {
  if (randomOffset + TASK_ID_BYTES > RANDOM_POOL_BYTES) {
    randomPool ??= Buffer.allocUnsafeSlow(RANDOM_POOL_BYTES);
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const id = `task-${randomPool!.toString('hex', randomOffset, randomOffset + TASK_ID_BYTES)}`;
  randomOffset += TASK_ID_BYTES;
  return id;
}

/** What the store files a task under for its request id: a hash, typed so `7` and `"7"` differ. */
export function requestKeyOf(requestId: string | number): string {
  return hash('sha256', `${typeof requestId}:${requestId}`, 'hex');
}

/** A repeated id must carry the params it started its task with; records kept before hashes were pass. */
function sameParams(record: TaskRecord, paramsHash: string): boolean {
  return record.params_hash === undefined || record.params_hash === paramsHash;
}

/**
 * A repeated `execute_task` id is answered with its task's state (`executeAnswerFor`, or a stream
 * of it), unless its params differ: -32005.
 */
function checkRepeat(record: TaskRecord, paramsHash: string, log: Log): void {
  if (!sameParams(record, paramsHash)) {
    log.warn('repeated execute_task id with different params: refused');
    throw new RpcError(ErrorCode.RequestIdConflict, 'Request id reused with different params: a repeated execute_task id must carry the params of its first request', {
      retryable: false,
    });
  }
  log.info('repeated execute_task id: answering with the existing task', { status: record.status });
}

/**
 * A repeated id's answer: its task's state. A repeat with `stream: true` of a task that is still
 * pending gets the text it has produced so far, from the start (the caller did not get the first answer).
 */
function executeAnswerFor(record: TaskRecord, stream: boolean): ExecuteTaskResult {
  switch (record.status) {
    case 'accepted':
    case 'working':
      return { status: 'accepted', task_id: record.task_id, ...(stream && record.partial ? partialAnswer(record.partial.text, 0) : {}) };
    case 'input_required':
    case 'success':
    case 'cancelled':
    case 'failed':
      return endedAnswer(record);
  }
}

/**
 * What a task that has ended (or waits on a question) answers, to `execute_task` and
 * `get_task_result` alike: its result, its question, or the error it ended with.
 */
function endedAnswer(record: TaskRecord): SuccessResult | InputRequiredResult {
  if (record.status === 'input_required' && record.question) return { status: 'input_required', task_id: record.task_id, question: record.question, ...stepsOf(record) };
  if (record.status === 'success') return record.result ?? { status: 'success', response_text: '' };
  throw failureOf(record);
}

/** A failure the executor marked as worth retrying (e.g. the model was throttled). */
function isTransientFailure(record: TaskRecord): boolean {
  const data = record.error?.data as { retryable?: unknown } | undefined;
  return record.status === 'failed' && data?.retryable === true;
}

/** The `text` after `position` of the kept partial text (left out when there is none) and the cursor after it. */
function partialAnswer(kept: string, position: number): { text?: string; cursor: string } {
  const text = position < kept.length ? kept.slice(position) : '';
  return { ...(text ? { text } : {}), cursor: String(position + text.length) };
}

function invalidCursor(message: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, undefined, [{ path: 'cursor', message }]);
}

/** The answer of a task that settled within an `execute_task` call. */
function answerOf(outcome: Outcome): ExecuteTaskResult {
  if (outcome.ok) return outcome.result;
  throw outcome.error;
}

/** The error a failed or cancelled task answers with: the one it keeps (with its `data.usage`), else -32003 or -32603. */
function failureOf(record: TaskRecord): RpcError {
  if (record.error) return RpcError.fromErrorObject(record.error);
  return record.status === 'cancelled' ? new RpcError(ErrorCode.TaskCancelled) : RpcError.internal();
}

/**
 * A task that fails or is cancelled is charged what it used (docs/contract.md, "Usage"): its error
 * carries the usage in `data.usage`, next to whatever data the error had.
 */
function withUsage(error: JsonRpcErrorObject, usage: Usage | undefined): JsonRpcErrorObject {
  if (!usage) return error;
  const data = typeof error.data === 'object' && error.data !== null && !Array.isArray(error.data) ? error.data : {};
  return { ...error, data: { ...data, usage } };
}

/** What a cancelled task keeps, so `get_task_result` and a repeated `cancel_task` answer with its usage. */
function cancelledError(usage: Usage): JsonRpcErrorObject {
  return withUsage(new RpcError(ErrorCode.TaskCancelled).toErrorObject(), usage);
}

/** `{ usage }` from a kept error's data, when it has one. */
function usageField(error: JsonRpcErrorObject | undefined): { usage?: Usage } {
  const usage = (error?.data as { usage?: Usage } | undefined)?.usage;
  return usage ? { usage } : {};
}

/** The steps a record holds (docs/contract.md, "Steps"), as fields of an answer; none: no fields. */
function stepsOf(record: TaskRecord): { steps?: TaskRecord['steps']; plan_title?: string } {
  return { ...(record.steps?.length ? { steps: record.steps } : {}), ...(record.plan_title ? { plan_title: record.plan_title } : {}) };
}
