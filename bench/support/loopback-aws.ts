import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb } from '../../test/support/dynalite';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/support/fake-slack-api';
import { startFakeSqs, type FakeSqs } from '../../test/support/fake-sqs';
import { PLACEHOLDER_AWS_ENV, RUNTIME_ARN, close, listen } from './net';

/**
 * Everything a bundled Lambda talks to, on 127.0.0.1, so a bundle can handle a real first event
 * without AWS: DynamoDB (dynalite, a real implementation of the API), an SQS endpoint that
 * answers SendMessage/SendMessageBatch as SQS does, the AgentCore emulator in front of a real
 * execution runtime (echo executor), and the fake Slack Web API. Bundles find them through the
 * SDK's standard endpoint variables (AWS_ENDPOINT_URL_<SERVICE>) and SLACK_API_URL.
 */
export { PLACEHOLDER_AWS_ENV, RUNTIME_ARN } from './net';
export const STATE_TABLE = 'bench-state';
export const TASK_TABLE = 'bench-tasks';

export type LoopbackAws = {
  /** Environment a bundle needs to reach the fakes (endpoints, placeholder credentials). */
  env: Record<string, string>;
  runtime: ExecutionRuntime;
  runtimeUrl: string;
  emulator: AgentCoreEmulator;
  slack: FakeSlackApi;
  sqs: FakeSqs;
  dynamoDb: DynamoDBClient;
  close(): Promise<void>;
};

export async function startLoopbackAws(): Promise<LoopbackAws> {
  const started: Array<() => Promise<void>> = [];
  try {
    const dynamo = await startLocalDynamoDb();
    started.push(dynamo.close);
    const sqs = await startFakeSqs();
    started.push(sqs.close);
    const slack = await startFakeSlackApi();
    started.push(() => slack.close());
    // A short sync budget: a task that sleeps is `accepted` at once, as a long model call would be.
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '50' }), log: createLogger('bench-runtime') });
    const runtimeServer = createExecutionHttpServer(runtime);
    const runtimeUrl = await listen(runtimeServer);
    started.push(() => close(runtimeServer));
    const emulator = await startAgentCoreEmulator({ runtimes: { [RUNTIME_ARN]: runtimeUrl } });
    started.push(() => emulator.close());

    await createTable(dynamo.client, STATE_TABLE, 'pk');
    await createTable(dynamo.client, TASK_TABLE, 'task_id');

    const env = {
      ...PLACEHOLDER_AWS_ENV,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: emulator.endpoint,
      SLACK_API_URL: slack.apiUrl,
    };
    return {
      env,
      runtime,
      runtimeUrl,
      emulator,
      slack,
      sqs,
      dynamoDb: dynamo.client,
      close: async () => {
        await closeAll(started);
      },
    };
  } catch (error) {
    await closeAll(started);
    throw error;
  }
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const closer of closers.reverse()) await closer().catch(() => undefined);
}
