import { createHash, randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb } from '../../test/support/dynalite';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/support/fake-slack-api';
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

export type FakeSqs = { endpoint: string; sent: Array<{ queueUrl: string; body: string; delaySeconds?: number }>; close(): Promise<void> };

/**
 * SQS's AWS JSON 1.0 protocol, as far as the pipeline uses it: SendMessage and SendMessageBatch,
 * with the MD5 of each body the SDK checks. Messages are recorded, never delivered.
 */
export async function startFakeSqs(): Promise<FakeSqs> {
  const sent: FakeSqs['sent'] = [];
  const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
  const answer = (res: ServerResponse, status: number, value: unknown, errorType?: string) => {
    const text = JSON.stringify(value);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
      ...(errorType ? { 'x-amzn-query-error': `${errorType};Sender` } : {}),
    });
    res.end(text);
  };
  const server = createServer((req, res) => {
    void readText(req).then((raw) => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return answer(res, 400, { __type: 'com.amazon.coral.service#SerializationException', message: 'bad JSON' }, 'SerializationException');
      }
      if (target === 'AmazonSQS.SendMessage') {
        const body = String(input.MessageBody ?? '');
        sent.push({ queueUrl: String(input.QueueUrl), body, ...(typeof input.DelaySeconds === 'number' ? { delaySeconds: input.DelaySeconds } : {}) });
        return answer(res, 200, { MessageId: randomUUID(), MD5OfMessageBody: md5(body) });
      }
      if (target === 'AmazonSQS.SendMessageBatch') {
        const entries = (input.Entries ?? []) as Array<{ Id: string; MessageBody: string; DelaySeconds?: number }>;
        for (const entry of entries) sent.push({ queueUrl: String(input.QueueUrl), body: entry.MessageBody, delaySeconds: entry.DelaySeconds });
        return answer(res, 200, { Successful: entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] });
      }
      return answer(res, 400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `${target} is not emulated` }, 'UnsupportedOperation');
    });
  });
  const endpoint = await listen(server);
  return { endpoint, sent, close: () => close(server) };
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
