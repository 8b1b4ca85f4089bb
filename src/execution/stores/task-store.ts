import type { JsonRpcErrorObject, SuccessResult, TaskStatus } from '../../contract';

/** What the execution zone remembers of one task, by `task_id`. Never holds the task's params. */
export type TaskRecord = {
  task_id: string;
  status: TaskStatus;
  /** Set when status is `success`. */
  result?: SuccessResult;
  /** Set when status is `failed`. */
  error?: JsonRpcErrorObject;
  created_at: number;
  updated_at: number;
  /** Epoch seconds after which the record is gone (DynamoDB TTL). */
  expires_at: number;
};

export type TaskUpdate = Pick<TaskRecord, 'status'> & Partial<Pick<TaskRecord, 'result' | 'error'>>;

export type CreateOutcome = { created: true; record: TaskRecord } | { created: false; record: TaskRecord };

/** Task storage: in memory locally, DynamoDB when deployed. All writes are conditional. */
export interface TaskStore {
  /** Creates the record unless a live one with the same id exists, which is returned instead. */
  create(record: TaskRecord): Promise<CreateOutcome>;
  /** The live record, or undefined when it is unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /** Applies `update` only while the status is one of `from`; undefined when it was not. */
  transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined>;
}
