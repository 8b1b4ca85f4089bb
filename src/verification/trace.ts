/**
 * Hops of one request through the pipeline, for the local playground and the demo's table.
 * In Lambda nothing listens; the same facts are in the structured logs, keyed by request_id.
 */
export type TraceHop =
  | 'ingress'
  | 'queued'
  | 'refused'
  /** The task was over a daily token budget: not sent, the user told. */
  | 'budget-refused'
  | 'guardrail-blocked'
  /** The user was shown the assistant is working (a status, a started stream, a placeholder). */
  | 'sign-of-life'
  | 'execute-sent'
  | 'accepted'
  /** Text of the answer shown while it is produced (`chars` so far). */
  | 'streamed'
  | 'poll'
  | 'failed'
  | 'retry'
  | 'reply-queued'
  | 'reply-posted'
  /** The answer's files after its text: `files` the answer had, `shared` into the thread. */
  | 'files-posted'
  | 'dead-lettered'
  /** The agent surface (docs/architecture.md §2.6): a Slack call the intake asked for, feedback, a Stop. */
  | 'slack-action'
  | 'feedback'
  | 'stop'
  /** A Stop pressed by someone other than the one who asked (not an admin): nothing changed. */
  | 'stop-refused'
  | 'stopped'
  /** A question to a person (docs/architecture.md, "Questions"): asked (the task paused), answered (resumed), refused (not theirs, or closed), expired. */
  | 'asked'
  | 'answered'
  | 'answer-refused'
  | 'question-expired';

export type TraceEvent = { requestId: string; hop: TraceHop; at: number; detail?: Record<string, unknown> };

export type Tracer = (event: TraceEvent) => void;

export const noTrace: Tracer = () => undefined;
