import { MAX_STEPS, StepSchema, type AgentFile, type FilesReading, type Question, type RefusedFile, type Step, type Usage, type UsageReading } from '../contract';

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
 * settlement logs it. `files`: the files the agent made, to upload after the text; `filesRefused`:
 * those it sent that break the contract's rules, each with the line the thread shows (docs/contract.md, "Files").
 */
export type SuccessOutcome = { kind: 'success'; text: string; extra: Record<string, unknown>; usage?: Usage; usageDropped?: string; files?: AgentFile[]; filesRefused?: RefusedFile[]; /** The steps as they ended, where the agent showed any (docs/contract.md, "Steps"). */ steps?: StepsShown };

export type Outcome =
  | SuccessOutcome
  /**
   * Still running. `partial`: text the task produced since the last call (docs/contract.md,
   * "Streaming"); the handle then carries what the next poll needs to get only newer text.
   */
  | { kind: 'pending'; handle: PendingHandle; state?: string; partial?: string; steps?: StepsShown }
  | Failure;

/**
 * What a protocol makes of an answer: an Outcome, or a question to a person. A caller that takes
 * questions asks for them (AgentCallOptions.questions); for any other an agent's question is a
 * failure, as it always was (src/protocols/execution-agent.ts).
 */
export type AgentOutcome = Outcome | InputRequiredOutcome;

/** The agent's steps so far, whole (docs/contract.md, "Steps"), and the title over them where it gave one. */
export type StepsShown = { steps: Step[]; planTitle?: string };

/**
 * The task waits for a person (docs/contract.md, "Questions"): ask `question`, then resume the
 * same task from `handle` with the answer (ExecutionAgent.resume).
 */
export type InputRequiredOutcome = {
  kind: 'input-required';
  handle: PendingHandle;
  question: Question;
  steps?: StepsShown;
  /** What a caller that takes no questions gets instead, in the protocol's own words (default: agent:input-required). */
  unanswered?: Failure;
};
export const inputRequired = (handle: PendingHandle, question: Question, steps?: StepsShown, unanswered?: Failure): InputRequiredOutcome => ({
  kind: 'input-required',
  handle,
  question,
  ...(steps ? { steps } : {}),
  ...(unanswered ? { unanswered } : {}),
});

export const success = (text: string, extra: Record<string, unknown> = {}, usage: UsageReading = {}, files?: FilesReading): Outcome => ({
  kind: 'success',
  text,
  extra,
  ...('usage' in usage ? { usage: usage.usage } : 'dropped' in usage ? { usageDropped: usage.dropped } : {}),
  ...(files?.files.length ? { files: files.files } : {}),
  ...(files?.refused.length ? { filesRefused: files.refused } : {}),
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
export type TextStep = { kind: 'text'; text: string; handle: PendingHandle; steps?: StepsShown };
export type StreamStep = TextStep | Outcome;
/** A streamed read's step as a protocol gives it: its last step may be a question. */
export type AgentStreamStep = TextStep | AgentOutcome;

export const textStep = (text: string, handle: PendingHandle, steps?: StepsShown): TextStep => ({ kind: 'text', text, handle, ...(steps ? { steps } : {}) });

/**
 * The steps of a final answer, read apart as usage is: a success's `steps` are not checked by its
 * schema, so steps that break the contract are left out here — never the answer.
 */
export function finalSteps(answer: { steps?: unknown; plan_title?: unknown }): StepsShown | undefined {
  const steps = StepSchema.array().max(MAX_STEPS).safeParse(answer.steps);
  if (!steps.success) return undefined;
  return stepsShown({ steps: steps.data, ...(typeof answer.plan_title === 'string' ? { plan_title: answer.plan_title } : {}) });
}

/** `outcome` with `steps` when there are any. */
export function withSteps<T extends object>(outcome: T, steps: StepsShown | undefined): T & { steps?: StepsShown } {
  return steps ? { ...outcome, steps } : outcome;
}

/** The steps fields of a contract answer, as an outcome carries them; undefined when it has none. */
export function stepsShown(answer: { steps?: Step[] | undefined; plan_title?: string | undefined }): StepsShown | undefined {
  if (!answer.steps?.length) return undefined;
  return { steps: answer.steps, ...(answer.plan_title ? { planTitle: answer.plan_title } : {}) };
}
