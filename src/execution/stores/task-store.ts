import type { Answer, JsonRpcErrorObject, Question, Step, SuccessResult, TaskStatus } from '../../contract';

/**
 * What the execution zone remembers of one task, by `task_id`. Never holds the task's params
 * (the store keeps those apart, and only for a handoff: see `TaskStore.putParams`).
 */
export type TaskRecord = {
  task_id: string;
  status: TaskStatus;
  /** Set when status is `success`. */
  result?: SuccessResult;
  /** Set when status is `failed`; on a `cancelled` one, -32003 with what it cost (`data.usage`) when that is known. */
  error?: JsonRpcErrorObject;
  /**
   * SHA-256 (hex) of the canonical params of the `execute_task` that started the task: enough to
   * tell a retry (same params) from a reused id (other params) without keeping the user's text.
   * Set by the task service (paramsHashOf, src/execution/params-fingerprint.ts) on the record it
   * creates; the store keeps it with the task.
   */
  params_hash?: string;
  /**
   * A task that streams (`execute_task` with `stream: true`), while it is pending: what it has
   * produced so far (docs/contract.md, "Streaming"). Set, empty, when it starts working.
   */
  partial?: PartialText;
  /** The agent's steps so far (docs/contract.md, "Steps"), and the title over them where it gave one. */
  steps?: Step[];
  plan_title?: string;
  /** Set when status is `input_required`: the question the task waits on (docs/contract.md, "Questions"). */
  question?: Question;
  /** The answers given so far, oldest first: the executor reads them when the task runs again. */
  answers?: Answer[];
  /**
   * Who runs the task and until when: set by `take`, which a runner calls before it runs the
   * executor. Kept after the task ends (it says who ran it), replaced by the next `take`.
   */
  lease?: TaskLease;
  created_at: number;
  updated_at: number;
  /** Epoch seconds after which the record is gone (DynamoDB TTL). */
  expires_at: number;
};

/**
 * The text a streaming task has produced so far. `length` counts every character (UTF-16 code
 * unit) produced; `text` is all of it, or — where the store caps what it keeps
 * (`PartialTextPolicy.maxBytes`) — the part up to the cap, after which only the count moves on.
 */
export type PartialText = { text: string; length: number };

/**
 * A runner's hold on a working task (`TaskStore.take`): a token of its own, and the time (epoch
 * ms, the store's clock) after which another runner may take the task over. Writes that carry
 * `owner` (TaskUpdate) apply only while the token is still the task's.
 */
export type TaskLease = { owner: string; until: number };

/** `accepted`, or `working` with no lease or one that is over at `now`: a runner may take it (TaskStore.take). */
export function takeable(record: TaskRecord, now: number): boolean {
  return record.status === 'accepted' || (record.status === 'working' && (record.lease === undefined || record.lease.until <= now));
}

/** The JSON fields of a record a TaskUpdate writes or drops (null) as a whole. */
export const JSON_FIELDS = ['steps', 'plan_title', 'question', 'answers'] as const;

export type TaskUpdate = Pick<TaskRecord, 'status'> &
  Partial<Pick<TaskRecord, 'result' | 'error'>> & {
    /**
     * The partial text: written as given (`text` left out: the kept text is unchanged, only the
     * count moves), or `null` to drop it (a task that settles or starts again).
     */
    partial?: { text?: string; length: number } | null;
    /** Steps, question, answers: written as given, or `null` to drop them. */
    steps?: Step[] | null;
    plan_title?: string | null;
    question?: Question | null;
    answers?: Answer[] | null;
    /** Applies only while this runner's `take` is the task's last (`lease.owner`): one taken over writes nothing. */
    owner?: string;
  };

/** How the task service writes a streaming task's partial text to a store (TaskStore.partialText). */
export type PartialTextPolicy = {
  /** At most one partial-text write per this many ms while the text grows; one more when it stops. */
  writeIntervalMs: number;
  /** UTF-8 bytes of partial text kept at most; the count goes on past it, the text does not. */
  maxBytes: number;
};

/** A store that says nothing: every change is written at once, nothing is capped. */
export const UNLIMITED_PARTIAL_TEXT: PartialTextPolicy = { writeIntervalMs: 0, maxBytes: Number.POSITIVE_INFINITY };

export type CreateOutcome = { created: true; record: TaskRecord } | { created: false; record: TaskRecord };

/**
 * A bounded store has no room left that it may free: its pending tasks alone fill it, in records
 * (`max` of them) or in the bytes it accounts (`max` bytes: MemoryTaskStoreOptions.maxBytes).
 */
export class TaskStoreFullError extends Error {
  override name = 'TaskStoreFullError';
  constructor(
    readonly limit: 'records' | 'bytes',
    readonly max: number,
  ) {
    super(limit === 'records' ? `the task store holds ${max} pending tasks and drops none of them` : `the pending tasks hold the ${max} bytes the task store keeps, and it drops none of them`);
  }
}

/** Task storage: in memory locally, DynamoDB when deployed. All writes are conditional. */
export interface TaskStore {
  /** How often a streaming task's partial text may be written, and how much of it is kept (default UNLIMITED_PARTIAL_TEXT). */
  readonly partialText?: PartialTextPolicy;
  /**
   * The key `create` and `getByRequest` file a JSON-RPC request id under, typed so `7` and `"7"`
   * differ. Without it the task service uses `requestKeyOf` (src/execution/task-service.ts), a
   * SHA-256 hash: what a store that writes keys outside the process should keep. The memory store
   * keeps them in the process that received the id, and files the id itself.
   */
  requestKeyOf?(requestId: string | number): string;
  /**
   * Creates the record unless a live one answers for it already, which is returned instead: one
   * with the same `task_id`, or — given a `requestKey` (see `requestKeyOf`) — the
   * live task that key was first created for. Task ids are random, so the request key is how a
   * repeated `execute_task` finds its task. Throws TaskStoreFullError when a bounded store
   * could only make room by dropping a pending task.
   */
  create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome>;
  /** The live record, or undefined when it is unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /** The live task a request key was created for, or undefined. */
  getByRequest(requestKey: string): Promise<TaskRecord | undefined>;
  /** Applies `update` only while the status is one of `from` (and `update.owner` holds it); undefined when it was not. */
  transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined>;
  /**
   * Takes a pending task to run it, in one conditional write: `accepted` → `working`, or a
   * `working` task whose lease is over (its runner stopped: a Lambda that died or timed out) or
   * that has none (written before leases) → `working` again, with `lease` as its new holder.
   * `startPartial` (a task that streams): the task gets empty partial text unless it has some (an
   * earlier runner's, which stays). Undefined when the task is unknown, expired, ended, or held
   * by another runner whose lease still lasts: then the caller must not run it.
   */
  take(taskId: string, lease: TaskLease, startPartial?: boolean): Promise<TaskRecord | undefined>;
  /**
   * Keeps a task's params (serialized JSON) for the worker that runs a handed-off task whose
   * params are too large for a queue message (src/execution/handoff-message.ts), until
   * `expiresAt` (epoch seconds: the task's `expires_at`). The only time the store holds a task's
   * text; `deleteParams` erases it once the worker is done. A second put replaces the first.
   */
  putParams(taskId: string, json: string, expiresAt: number): Promise<void>;
  /** The params `putParams` kept, exactly as given; undefined when none are kept, erased or expired. */
  getParams(taskId: string): Promise<string | undefined>;
  /** Erases kept params at once (not at their expiry); nothing kept is fine. */
  deleteParams(taskId: string): Promise<void>;
}
