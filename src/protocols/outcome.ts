/**
 * What an execution protocol makes of a response, in the pipeline's terms (ARCHITECTURE §4).
 * The pipeline never branches on the protocol or transport: only on these three kinds.
 */

/** Enough to poll or cancel a pending task later; JSON-serialisable, it travels in SQS messages. */
export type PendingHandle = {
  /** The execution zone's task id. */
  taskId: string;
  /** Protocol-specific extras (e.g. an A2A context id); strings only. */
  [key: string]: string;
};

export type Outcome =
  | { kind: 'success'; text: string; extra: Record<string, unknown> }
  | { kind: 'pending'; handle: PendingHandle; state?: string }
  | { kind: 'failure'; code: number | string; message: string; retryable: boolean };

export const success = (text: string, extra: Record<string, unknown> = {}): Outcome => ({ kind: 'success', text, extra });
export const pending = (handle: PendingHandle, state?: string): Outcome => ({ kind: 'pending', handle, ...(state ? { state } : {}) });
export const failure = (code: number | string, message: string, retryable: boolean): Outcome => ({ kind: 'failure', code, message, retryable });
