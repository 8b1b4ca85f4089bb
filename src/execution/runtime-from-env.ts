import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { boundedClientConfig } from '../aws/bounded-client';
import { systemClock } from '../clock';
import { loadExecutionConfig } from './config';
import { BedrockExecutor } from './executors/bedrock-executor';
import { EchoExecutor } from './executors/echo-executor';
import type { Executor } from './executors/executor';
import { createExecutionRuntime, type ExecutionRuntime, type RuntimeParts } from './runtime';
import { DynamoDbTaskStore } from './stores/dynamodb-task-store';
import { MemoryTaskStore } from './stores/memory-task-store';
import type { TaskStore } from './stores/task-store';

/** Builds the runtime the environment describes: executor, task store and limits. */
export function runtimeFromEnv(env: NodeJS.ProcessEnv = process.env, extra: Omit<RuntimeParts, 'config'> = {}): ExecutionRuntime {
  const config = loadExecutionConfig(env);
  const clock = extra.clock ?? systemClock;
  const executor: Executor =
    config.EXECUTOR === 'bedrock'
      ? new BedrockExecutor({
          client: new BedrockRuntimeClient({}),
          modelId: config.BEDROCK_MODEL_ID!,
          systemPrompt: config.BEDROCK_SYSTEM_PROMPT,
          maxTokens: config.BEDROCK_MAX_TOKENS,
        })
      : new EchoExecutor(config.ECHO_DELAY_MS, config.ECHO_STREAM_MS);
  const store: TaskStore =
    config.TASK_STORE === 'dynamodb'
      ? new DynamoDbTaskStore({ client: new DynamoDBClient(boundedClientConfig()), tableName: config.TASK_TABLE_NAME!, clock })
      : new MemoryTaskStore({ clock, maxBytes: config.TASK_STORE_MAX_BYTES });
  return createExecutionRuntime({ config, executor, store, ...extra, clock });
}
