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
  AGENT_NAME: z.string().min(1).default('slack-zone-execution'),
});
export type ExecutionConfig = z.infer<typeof ExecutionConfigSchema>;

export function loadExecutionConfig(env: NodeJS.ProcessEnv = process.env): ExecutionConfig {
  const config = parseEnv(ExecutionConfigSchema, env, 'execution');
  if (config.EXECUTOR === 'bedrock' && !config.BEDROCK_MODEL_ID) throw new ConfigError('EXECUTOR=bedrock needs BEDROCK_MODEL_ID');
  if (config.TASK_STORE === 'dynamodb' && !config.TASK_TABLE_NAME) throw new ConfigError('TASK_STORE=dynamodb needs TASK_TABLE_NAME');
  return config;
}
