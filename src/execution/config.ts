import { z } from 'zod';
import { ConfigError, envInt, parseEnv } from '../config/env';

export { ConfigError };

/** Execution-zone configuration, read from the environment once at start-up. */
export const ExecutionConfigSchema = z.object({
  EXECUTOR: z.enum(['echo', 'bedrock']).default('echo'),
  ECHO_DELAY_MS: envInt(0),
  BEDROCK_MODEL_ID: z.string().min(1).optional(),
  BEDROCK_SYSTEM_PROMPT: z.string().min(1).optional(),
  BEDROCK_MAX_TOKENS: envInt(2048, 1),
  SYNC_BUDGET_MS: envInt(5_000),
  TASK_TIMEOUT_MS: envInt(600_000, 1),
  TASK_TTL_SECONDS: envInt(86_400, 60),
  TASK_STORE: z.enum(['memory', 'dynamodb']).default('memory'),
  TASK_TABLE_NAME: z.string().min(1).optional(),
  MAX_BODY_BYTES: envInt(1_048_576, 1),
  /**
   * Members in one JSON-RPC batch; a longer batch gets one -32004 error and none of it runs. The
   * verification zone never batches and the conformance kit's largest batch has 4 members, so 50
   * leaves generic JSON-RPC clients room while one body can no longer start thousands of tasks
   * (a 1 MiB body holds ~10,000 small requests).
   */
  MAX_BATCH_LENGTH: envInt(50, 1),
  /**
   * Tasks running at once in this process; the next `execute_task` gets -32004 with
   * `data.retryable: true` and the verification zone sends it again later. A task mostly waits on
   * the model, so what runs out is memory and the model's quota, not CPU: 100 in-flight Converse
   * calls is already more than an on-demand Bedrock quota usually lets through at once (the
   * surplus would only come back as -32010), each holds at most its params (≤ MAX_BODY_BYTES) and
   * the model's answer, so 100 fit in a small host's memory, and 100 stays far below the memory
   * task store's 10,000 records, so tasks running in this process can never fill it on their own.
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
