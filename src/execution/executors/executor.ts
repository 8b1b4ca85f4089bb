import type { Log } from '../../observability/logger';
import type { ExecuteTaskParams } from '../../contract';

/** What an executor produces: the answer text plus any extra fields for the success result. */
export type ExecutorOutput = { response_text: string } & Record<string, unknown>;

export type ExecutorContext = {
  taskId: string;
  /** Aborted when the task is cancelled, times out, or is handed to another worker. */
  signal: AbortSignal;
  log: Log;
};

/** Runs one task. Throw an RpcError for a failure the caller should see by code. */
export interface Executor {
  readonly name: string;
  execute(params: ExecuteTaskParams, context: ExecutorContext): Promise<ExecutorOutput>;
}
