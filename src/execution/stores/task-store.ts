import type { JsonRpcErrorObject, SuccessResult, TaskStatus } from '../../contract';

/**
 * What the execution zone remembers of one task, by `task_id`. Never holds the task's params
 * (the store keeps those apart, and only for a handoff: see `TaskStore.putParams`).
 */
export type TaskRecord = {
  task_id: string;
  status: TaskStatus;
  /** Set when status is `success`. */
  result?: SuccessResult;
  /** Set when status is `failed`. */
  error?: JsonRpcErrorObject;
  /**
   * SHA-256 (hex) of the canonical params of the `execute_task` that started the task: enough to
   * tell a retry (same params) from a reused id (other params) without keeping the user's text.
   */
  params_hash?: string;
  created_at: number;
  updated_at: number;
  /** Epoch seconds after which the record is gone (DynamoDB TTL). */
  expires_at: number;
};

export type TaskUpdate = Pick<TaskRecord, 'status'> & Partial<Pick<TaskRecord, 'result' | 'error'>>;

export type CreateOutcome = { created: true; record: TaskRecord } | { created: false; record: TaskRecord };

/** A bounded store has no room left that it may free: every record in it is a pending task. */
export class TaskStoreFullError extends Error {
  override name = 'TaskStoreFullError';
  constructor(readonly maxRecords: number) {
    super(`the task store holds ${maxRecords} pending tasks and drops none of them`);
  }
}

/** Task storage: in memory locally, DynamoDB when deployed. All writes are conditional. */
export interface TaskStore {
  /**
   * Creates the record unless a live one answers for it already, which is returned instead: one
   * with the same `task_id`, or — given a `requestKey` (a hash of the JSON-RPC request id) — the
   * live task that key was first created for. Task ids are random, so the request key is how a
   * repeated `execute_task` finds its task. Throws TaskStoreFullError when a bounded store
   * could only make room by dropping a pending task.
   */
  create(record: TaskRecord, requestKey?: string): Promise<CreateOutcome>;
  /** The live record, or undefined when it is unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /** The live task a request key was created for, or undefined. */
  getByRequest(requestKey: string): Promise<TaskRecord | undefined>;
  /** Applies `update` only while the status is one of `from`; undefined when it was not. */
  transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined>;
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
