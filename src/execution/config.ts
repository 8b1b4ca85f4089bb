import { z } from 'zod';
import { ConfigError, envInt, parseEnv } from '../config/env';
import { MEMORY_TASK_STORE_MAX_BYTES } from './stores/memory-task-store';

export { ConfigError };

/** Execution-zone configuration, read from the environment once at start-up. */
export const ExecutionConfigSchema = z.object({
  EXECUTOR: z.enum(['echo', 'bedrock']).default('echo'),
  ECHO_DELAY_MS: envInt(0),
  /**
   * Milliseconds per word when the echo executor streams its answer (0: it does not, unless a
   * task's text says `#stream=<ms>`): for trying the streaming path locally.
   */
  ECHO_STREAM_MS: envInt(0),
  BEDROCK_MODEL_ID: z.string().min(1).optional(),
  BEDROCK_SYSTEM_PROMPT: z.string().min(1).optional(),
  BEDROCK_MAX_TOKENS: envInt(2048, 1),
  SYNC_BUDGET_MS: envInt(5_000),
  /**
   * An `execute_task` with `stream: true` whose task starts producing text is answered `accepted`
   * with that text this long after the first piece arrived (a small window that gathers a few
   * words), unless it finishes first (docs/contract.md, "Streaming").
   */
  STREAM_FIRST_TEXT_MS: envInt(300),
  /**
   * The longest a streamed answer lasts (docs/contract.md, "Streamed answers"): a stream still
   * open this long after its request ends with `accepted` and a cursor, and the caller polls from
   * there. 14 minutes stays under AgentCore's 15 for a request and, on the function URL, under
   * Lambda's 15-minute limit (a stream also ends before its Lambda's remaining time runs out).
   */
  STREAM_MAX_MS: envInt(840_000, 0, 3_600_000),
  TASK_TIMEOUT_MS: envInt(600_000, 1),
  TASK_TTL_SECONDS: envInt(86_400, 60),
  TASK_STORE: z.enum(['memory', 'dynamodb']).default('memory'),
  TASK_TABLE_NAME: z.string().min(1).optional(),
  /**
   * Bytes the memory task store keeps at most (TASK_STORE=memory), as it counts them: 768 a
   * record, 2 a character of its streamed text, result or error, and of params kept for a
   * handoff. The oldest finished tasks are forgotten first, never a running one; when the running
   * tasks alone hold it, a new task gets -32004 (`data.limit: "task_store_bytes"`). 64 MiB is an
   * eighth of the function URL's 512 MB Lambda, and ~4,000 answers of 2,048 tokens (~8,000
   * characters each); the running tasks' own params are bounded apart (MAX_CONCURRENT_TASKS ×
   * MAX_BODY_BYTES). A deployment keeps tasks in DynamoDB, where this does not apply.
   */
  TASK_STORE_MAX_BYTES: envInt(MEMORY_TASK_STORE_MAX_BYTES, 1),
  /**
   * Largest request body; larger ones get HTTP 413 unparsed. A task carries its attachments'
   * bytes (base64, a third more): the verification zone sends up to ~4 MiB of files over a
   * Lambda function URL (whose request limit, 6 MB, binds first) and up to 32 MiB over AgentCore
   * (payload limit 100 MB), so 48 MiB takes the largest task with room.
   */
  MAX_BODY_BYTES: envInt(50_331_648, 1),
  /**
   * Members in one JSON-RPC batch; a longer batch gets one -32004 error and none of it runs. The
   * verification zone never batches and the conformance kit's largest batch has 4 members, so 50
   * leaves generic JSON-RPC clients room while one body can no longer start thousands of tasks
   * (a 48 MiB body holds ~500,000 small requests).
   */
  MAX_BATCH_LENGTH: envInt(50, 1),
  /**
   * Tasks running at once in this process; the next `execute_task` gets -32004 with
   * `data.retryable: true` and the verification zone sends it again later. A task mostly waits on
   * the model, so what runs out is memory and the model's quota, not CPU: 100 in-flight Converse
   * calls is already more than an on-demand Bedrock quota usually lets through at once (the
   * surplus would only come back as -32010), and 100 stays far below the memory task store's
   * 10,000 records, so tasks running in this process can never fill it on their own. Memory: a
   * task holds its params and the model's answer. Most tasks are a message and a short thread,
   * kilobytes, so 100 fit in a small host's memory. A task with files is bounded by its body (up
   * to MAX_BODY_BYTES, 48 MiB), but at its peak holds a few copies of it: the raw body, the parsed
   * params, the decoded bytes and the SDK's encoded model request, ~4× the body. On a Lambda
   * function URL that is bounded by the 6 MB request limit and one request per instance; a
   * long-lived host (AgentCore, HTTP) that may take many large-file tasks at once needs the
   * memory for them (10 such tasks ≈ 10 × 48 MiB × 4 ≈ 2 GiB) or a lower value here.
   */
  MAX_CONCURRENT_TASKS: envInt(100, 1),
  AGENT_NAME: z.string().min(1).default('slack-zone-execution'),
});
export type ExecutionConfig = z.infer<typeof ExecutionConfigSchema>;

export function loadExecutionConfig(env: NodeJS.ProcessEnv = process.env): ExecutionConfig {
  const config = parseEnv(ExecutionConfigSchema, env, 'execution');
  if (config.EXECUTOR === 'bedrock' && !config.BEDROCK_MODEL_ID) throw new ConfigError('EXECUTOR=bedrock needs BEDROCK_MODEL_ID');
  if (config.TASK_STORE === 'dynamodb' && !config.TASK_TABLE_NAME) throw new ConfigError('TASK_STORE=dynamodb needs TASK_TABLE_NAME');
  return config;
}
