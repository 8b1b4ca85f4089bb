import type { Log } from '../../observability/logger';
import type { Answer, ExecuteTaskParams, Step, Usage } from '../../contract';

/**
 * What an executor produces: the answer text plus any extra fields for the success result;
 * `usage`, what the answer cost in tokens (docs/contract.md, "Usage"), when it knows.
 */
export type ExecutorOutput = { response_text: string; usage?: Usage } & Record<string, unknown>;

export type ExecutorContext = {
  taskId: string;
  /**
   * Aborted when the task is cancelled, times out, or is handed to another worker. Made when
   * first read (the task service passes a class whose `signal` is a getter): read it only where
   * there is something to abort, and copy the context field by field, not with a spread.
   */
  signal: AbortSignal;
  log: Log;
  /**
   * Given when the caller shows text as it is produced (`execute_task` with `stream: true`): the
   * executor calls it with each new piece of text as it produces it. The pieces, concatenated in
   * order, must be exactly the `response_text` it returns — the caller shows them as a prefix of
   * the final answer. An executor that cannot stream may ignore it.
   */
  onText?: (delta: string) => void;
  /**
   * Shows a step (docs/contract.md, "Steps"): call it again with the same id as its status moves
   * on. Always given; a caller that shows no steps loses nothing but the view.
   */
  onStep?: (step: Step, planTitle?: string) => void;
  /**
   * The answers to the questions this task asked so far, oldest first (docs/contract.md,
   * "Questions"): an executor that needs one it has not got throws InputRequired
   * (src/execution/executors/input-required.ts), and runs again once it is answered.
   */
  answers?: readonly Answer[];
  /**
   * What the task has cost so far (cumulative: each call replaces the last). A task that fails or
   * is cancelled before it returns is charged this (docs/contract.md, "Usage"): an executor that
   * spends tokens before it can fail or be stopped should report them as it goes.
   */
  used?: (usage: Usage) => void;
};

/** Runs one task. Throw an RpcError for a failure the caller should see by code. */
export interface Executor {
  readonly name: string;
  execute(params: ExecuteTaskParams, context: ExecutorContext): Promise<ExecutorOutput>;
}
