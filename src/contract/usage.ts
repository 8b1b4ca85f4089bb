import { z } from 'zod';
import { DEFAULT_MAX_TASK_TOKENS } from './task-ceiling';

/**
 * What a task cost in model tokens (docs/contract.md, "Usage"): optional on a final `success`
 * result — of execute_task, of get_task_result, and as the last event of a streamed answer.
 * The verification zone counts it per team, channel, user and agent; an agent that leaves it out
 * is simply not counted. Both zones share this one shape: the execution zone writes it, and every
 * protocol the verification zone reads (execute_task, A2A) turns what its agent reports into it.
 */

const tokenCount = (field: string) =>
  z.number({ error: `${field} must be a number of tokens` }).int(`${field} must be an integer`).nonnegative(`${field} must not be negative`).max(Number.MAX_SAFE_INTEGER, `${field} is too large`);

export const UsageSchema = z
  .object({
    /**
     * Tokens the model read — the prompt, the thread, the files — other than those read from or
     * written to its prompt cache (as Bedrock and the Anthropic API count them): each of the three
     * counts has its own price, and their sum is all the model read.
     */
    input_tokens: tokenCount('input_tokens'),
    /** Tokens the model wrote. */
    output_tokens: tokenCount('output_tokens'),
    /** Tokens read from the model's prompt cache (billed at a lower price than input). */
    cache_read_tokens: tokenCount('cache_read_tokens').optional(),
    /** Tokens written to the model's prompt cache (billed at a higher price than input). */
    cache_write_tokens: tokenCount('cache_write_tokens').optional(),
    /** The model that answered, as its provider names it (a Bedrock model id, `echo`). */
    model: z.string({ error: 'model must be a string' }).min(1, 'model must not be empty').max(256, 'model must be at most 256 characters').optional(),
  })
  // A later contract may add fields (a reasoning-token count): an agent that sends them is not wrong.
  .loose();

/** The usage of one task, as both zones hold it: only the fields above, never an agent's extras. */
export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  model?: string;
};

/**
 * What the reader of a result made of its `usage`: the usage, nothing (none was sent), or why what
 * was sent was left out. A malformed usage never fails the answer it came with: the answer is
 * what the user waits for, the count is bookkeeping — the caller drops it and logs `dropped`.
 */
export type UsageReading = { usage: Usage } | { dropped: string } | Record<string, never>;

/** Reads a result's `usage` value (undefined: none sent). */
export function readUsage(value: unknown): UsageReading {
  if (value === undefined || value === null) return {};
  const parsed = UsageSchema.safeParse(value);
  if (!parsed.success) return { dropped: parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || 'usage'}: ${issue.message}`).join('; ') };
  return { usage: usageOf(parsed.data) };
}

/** The known fields of a valid usage, with no undefined members (it is logged and serialised as is). */
export function usageOf(fields: z.infer<typeof UsageSchema>): Usage {
  const usage: Usage = { input_tokens: fields.input_tokens, output_tokens: fields.output_tokens };
  if (fields.cache_read_tokens !== undefined) usage.cache_read_tokens = fields.cache_read_tokens;
  if (fields.cache_write_tokens !== undefined) usage.cache_write_tokens = fields.cache_write_tokens;
  if (fields.model !== undefined) usage.model = fields.model;
  return usage;
}

export { DEFAULT_MAX_TASK_TOKENS };

/** All the tokens a usage counts: input, output and both cache counts. */
export function totalTokens(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens + (usage.cache_read_tokens ?? 0) + (usage.cache_write_tokens ?? 0);
}

/**
 * What an agent reported, never trusted past the per-task ceiling (docs/contract.md, "Usage"): a
 * usage over `ceiling` is scaled down to it, each count in proportion (rounded down, the rest on
 * output), and `clamped` says what was reported so the caller logs it. One agent reporting a huge
 * number thus costs a budget at most one task's ceiling, never a team's whole day.
 */
export function boundedUsage(usage: Usage, ceiling: number = DEFAULT_MAX_TASK_TOKENS): { usage: Usage; clamped?: { reported: number } } {
  const reported = totalTokens(usage);
  if (reported <= ceiling) return { usage };
  const scale = (count: number | undefined) => (count === undefined ? undefined : Math.floor((count * ceiling) / reported));
  const bounded: Usage = { input_tokens: scale(usage.input_tokens)!, output_tokens: 0 };
  const cacheRead = scale(usage.cache_read_tokens);
  const cacheWrite = scale(usage.cache_write_tokens);
  if (cacheRead !== undefined) bounded.cache_read_tokens = cacheRead;
  if (cacheWrite !== undefined) bounded.cache_write_tokens = cacheWrite;
  bounded.output_tokens = Math.max(0, ceiling - totalTokens(bounded));
  if (usage.model !== undefined) bounded.model = usage.model;
  return { usage: bounded, clamped: { reported } };
}
