import type { Numbering } from './numbering';

/**
 * The guardrail port (docs/operations.md, "Guardrails"): text that crosses the boundary — a
 * user's words on their way to an execution agent (`input`), an agent's words on their way to
 * Slack (`output`) — is checked once, and answers what was done and what was found, never the
 * found text itself: `findings` count entities by type only, so a finding can be logged and
 * counted without leaking what it found.
 */
export type GuardrailDirection = 'input' | 'output';
export const GUARDRAIL_DIRECTIONS: readonly GuardrailDirection[] = ['input', 'output'];

/** What a direction does with a finding: replace it by a placeholder, refuse the text, or only report it (a rollout). */
export type GuardrailMode = 'mask' | 'block' | 'detect';
export const GUARDRAIL_MODES = ['mask', 'block', 'detect'] as const;

/** `none`: nothing found. `masked`: `text` has placeholders. `blocked`: the text must not pass. `detected`: found, passed unchanged (detect mode). */
export type GuardrailAction = 'none' | 'masked' | 'blocked' | 'detected';

/** Entities found, by type (`EMAIL`, `PHONE`, …, or a custom pattern's name): how many, never which. */
export type GuardrailFindings = Record<string, number>;

export type GuardrailResult = {
  action: GuardrailAction;
  /** What may pass: the masked text, the text as it was (none, detected), or '' (blocked). */
  text: string;
  findings: GuardrailFindings;
  /** Text units the check was billed for (Bedrock: 1 unit per 1,000 characters per policy); absent when free. */
  textUnits?: number;
};

export type GuardrailCheckOptions = {
  /** Ends a check that calls out (Bedrock) when the caller gives up. */
  signal?: AbortSignal;
  /** Milliseconds the caller has left: a call out must answer well within it. */
  remainingMs?: number;
  /**
   * Placeholders already handed out for this conversation or stream, so one entity keeps its
   * number across the pieces of one answer (`[EMAIL-1]` stays `[EMAIL-1]`).
   */
  numbering?: Numbering;
};

export interface Guardrail {
  /** `builtin` or `bedrock`: for logs and metrics. */
  readonly kind: string;
  check(text: string, direction: GuardrailDirection, options?: GuardrailCheckOptions): Promise<GuardrailResult>;
  /** The direction's mode: what a caller does with what the guardrail cannot read (a PDF's bytes). */
  modeOf(direction: GuardrailDirection): GuardrailMode;
  /**
   * For a stream (src/guardrail/stream-masker.ts): the index in `text` — text not yet released,
   * possibly ending mid-word — from which a match could still grow with what comes next. Text
   * before it can be checked and shown now.
   */
  holdFrom(text: string): number;
  /**
   * For a stream: after its first window, a check is made only once this many characters can be
   * released — a guardrail billed per call (Bedrock: at least one text unit each) checks a
   * stream in a few windows, not at every append. 0 or absent: every release is checked.
   */
  readonly streamWindowChars?: number;
}

/** A check that could not be made (Bedrock unreachable, too slow, refused): the caller decides, and never passes the text unchecked. */
export class GuardrailUnavailableError extends Error {
  override name = 'GuardrailUnavailableError';
  constructor(message: string, readonly retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function countFindings(types: Iterable<string>): GuardrailFindings {
  const findings: GuardrailFindings = {};
  for (const type of types) findings[type] = (findings[type] ?? 0) + 1;
  return findings;
}
