import type { Usage, UsageReading } from '../contract';

/**
 * What an execution protocol makes of a response, in the pipeline's terms (docs/architecture.md §4.3).
 * The pipeline never branches on the protocol or transport: only on these three kinds, and on a
 * failure's category.
 */

/** Enough to poll or cancel a pending task later; JSON-serialisable, it travels in SQS messages. */
export type PendingHandle = {
  /** The execution zone's task id. */
  taskId: string;
  /** Protocol-specific extras (e.g. an A2A context id); strings only. */
  [key: string]: string;
};

/**
 * What went wrong, in the few words the pipeline acts on. Each protocol (and the transport fault
 * mapping in execution-agent.ts) decides the category from what only it can read — contract error
 * codes, A2A errors and task states, HTTP statuses — so the verification zone never looks at a
 * code or a message to choose what to tell the user.
 */
export const FAILURE_CATEGORIES = [
  /** Throttled, rate-limited, too many sessions: it passes by itself. */
  'busy',
  /** The agent or its model cannot be reached or used: transport down, model unavailable, access denied. */
  'unavailable',
  /** The task or the call ran past its time limit. */
  'timed-out',
  /** The task was cancelled before it finished. */
  'cancelled',
  /** The agent refused this input: invalid params, content filtered, input too long, unsupported content. */
  'rejected',
  /** Anything else: an error the agent did not explain, an answer that breaks the protocol. */
  'failed',
] as const;
export type FailureCategory = (typeof FAILURE_CATEGORIES)[number];

export type Failure = {
  kind: 'failure';
  category: FailureCategory;
  /** The raw code (a JSON-RPC error code, `a2a:rejected`, `transport:throttled`, …): for logs and metrics only. */
  code: number | string;
  /** The far side's words: for logs only, never for the user. */
  message: string;
  retryable: boolean;
  /** What the task cost before it failed or was cancelled, when the agent said (docs/contract.md, "Usage"). */
  usage?: Usage;
};

/**
 * An answer. `usage`: what it cost in tokens, when the agent said (docs/contract.md, "Usage");
 * `usageDropped`: why the usage the agent sent was left out — it never costs the answer, and the
 * settlement logs it.
 */
export type SuccessOutcome = { kind: 'success'; text: string; extra: Record<string, unknown>; usage?: Usage; usageDropped?: string };

export type Outcome =
  | SuccessOutcome
  /**
   * Still running. `partial`: text the task produced since the last call (docs/contract.md,
   * "Streaming"); the handle then carries what the next poll needs to get only newer text.
   */
  | { kind: 'pending'; handle: PendingHandle; state?: string; partial?: string }
  | Failure;

export const success = (text: string, extra: Record<string, unknown> = {}, usage: UsageReading = {}): Outcome => ({
  kind: 'success',
  text,
  extra,
  ...('usage' in usage ? { usage: usage.usage } : 'dropped' in usage ? { usageDropped: usage.dropped } : {}),
});
export const pending = (handle: PendingHandle, state?: string, partial?: string): Outcome => ({ kind: 'pending', handle, ...(state ? { state } : {}), ...(partial ? { partial } : {}) });
export const failure = (category: FailureCategory, code: number | string, message: string, retryable: boolean): Failure => ({ kind: 'failure', category, code, message, retryable });

/**
 * A streamed read of a task (docs/contract.md, "Streaming"): text as it is produced, then the last
 * step, an Outcome — success, failure, or pending when the stream ended before the task did (the
 * hold's end, a stream cut off) and the task is to be polled from the handle. Each text step's
 * handle carries what a poll from there needs (the cursor after its text), so a read that stops
 * anywhere can go on by polling; the text is new text only, never what an earlier step gave.
 */
export type TextStep = { kind: 'text'; text: string; handle: PendingHandle };
export type StreamStep = TextStep | Outcome;

export const textStep = (text: string, handle: PendingHandle): TextStep => ({ kind: 'text', text, handle });
