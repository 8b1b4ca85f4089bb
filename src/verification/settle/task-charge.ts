import { boundedUsage, type Usage } from '../../contract';
import type { Log } from '../../observability/logger';

/**
 * What a task is charged (docs/architecture.md §2.7, "Every task pays"): what its agent reported,
 * never past the per-task ceiling (`MAX_TASK_TOKENS`, src/contract/usage.ts), or — when it reported
 * nothing (an agent without usage, a task stopped or failed before its model said) — an estimate
 * from the characters it was sent and the characters it wrote, never zero for a task that reached
 * its agent. A stopped, failed or timed-out task pays as an answered one does.
 */

/**
 * The documented rate of the estimate: a token per 4 characters, the usual rule of thumb for
 * English with the tokenizers of the models this product runs (Claude's, Titan's); text in other
 * scripts runs denser, so the estimate errs low there, never high.
 */
export const CHARS_PER_ESTIMATED_TOKEN = 4;
/** The `model` an estimate is recorded under, so reports tell it from a reported count. */
export const ESTIMATED_MODEL = 'estimate';

/** What the task was sent and wrote, in characters, for the estimate. */
export type TaskCharacters = { input: number; output: number };

/** An estimate from characters: input and output each rounded up, at least one input token. */
export function estimatedUsage(chars: TaskCharacters): Usage {
  return {
    input_tokens: Math.max(1, Math.ceil(Math.max(0, chars.input) / CHARS_PER_ESTIMATED_TOKEN)),
    output_tokens: Math.ceil(Math.max(0, chars.output) / CHARS_PER_ESTIMATED_TOKEN),
    model: ESTIMATED_MODEL,
  };
}

/**
 * The usage a settled task is charged: the reported one, clamped to `maxTaskTokens` (the clamp
 * logged with what was reported), else the estimate; capped at the ceiling too, so no task ever
 * costs more than one ceiling.
 */
export function chargedUsage(reported: Usage | undefined, chars: TaskCharacters, maxTaskTokens: number, log: Log): Usage {
  const usage = reported ?? estimatedUsage(chars);
  const bounded = boundedUsage(usage, maxTaskTokens);
  if (bounded.clamped && reported) {
    log.warn('the agent reported more tokens than one task may cost; charged the ceiling', { reported_tokens: bounded.clamped.reported, max_task_tokens: maxTaskTokens, model: reported.model });
  }
  return bounded.usage;
}
