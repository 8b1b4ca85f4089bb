import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { executeTaskRequest } from '../src/contract';
import { appMentionEnvelope } from '../src/local/slack-event-builder';
import { DynamoDbTaskStore } from '../src/execution/stores/dynamodb-task-store';
import { slackSignatureHeaders } from '../src/verification/intake/slack-signature';
import { pairedDifferences, pairedRatios, rotate, summarize, type Summary } from './stats';
import { PLACEHOLDER_AWS_ENV, RUNTIME_ARN, STATE_TABLE, TASK_TABLE, startLoopbackAws, type LoopbackAws } from './support/loopback-aws';
import { pinned, spawnTracked } from './support/processes';

/**
 * Part 1: cold start of every Lambda bundle, built as cdk/constructs/zone-function.ts has CDK's
 * NodejsFunction build it (see `bundle`), with every dependency inside, @aws-sdk included, next to
 * a minimal Bolt AwsLambdaReceiver handler bundled the same way. Each run is a fresh `node` process
 * (the harness) that requires the bundle and hands its handler one event; the figure is the whole
 * process, spawn to exit.
 *
 * Two kinds of first event:
 *  - offline: nothing leaves the process. slack-events and Bolt answer a signed url_verification;
 *    the SQS-fed verification functions get an empty batch (a real record would need AWS); the
 *    execution functions handle a real execute_task / hand-off record (echo executor, memory store).
 *  - loopback: a real record for every function, its AWS and Slack calls answered on 127.0.0.1
 *    (dynalite, an SQS endpoint, the AgentCore emulator in front of a real runtime, the fake Slack
 *    Web API), so the first SDK calls (credentials, signing, HTTP agent) are in the figure.
 *    Bolt gets a signed app_mention (its listener needs no network).
 */

const ROOT = join(__dirname, '..');
const HARNESS = join(__dirname, 'support', 'lambda-harness.cjs');
const SIGNING_SECRET = 'bench-signing-secret-0123456789abcdef';
const BOT_USER_ID = 'UBENCHBOT';
const BOT_ID = 'BBENCHBOT';
const BOT_TOKEN = 'bench-bot-token-not-a-real-one';
const CHILD_CORE = 1;

export type Mode = 'offline' | 'loopback';

export type BundleName = 'slack-events' | 'agent-invoker' | 'async-result' | 'slack-poster' | 'execution-url' | 'execution-worker' | 'bolt' | `probe:${string}`;

type BundleSpec = {
  name: BundleName;
  /** A file of the project, or inline source (probes). */
  entry: string;
  contents?: string;
  /** AWS SDK clients the function may call, and on which code path (config decides which one runs). */
  mayCall: Record<string, string>;
  env(mode: Mode, world: LoopbackAws | undefined): Record<string, string>;
  /** A fresh event for one run (signatures carry the time, event ids must be new). */
  event(mode: Mode, world: LoopbackAws | undefined): Promise<{ event: unknown; what: string }>;
  /** Why a handler's answer is wrong, or undefined when it is the expected one. */
  check(result: unknown, mode: Mode): string | undefined;
  /** Loopback mode: what the fakes must have seen (a batch can succeed while a record's call failed). */
  verify?(world: LoopbackAws, event: unknown): Promise<string | undefined>;
};

const lastSent = (world: LoopbackAws, queue: string) => [...world.sqs.sent].reverse().find((m) => m.queueUrl.endsWith(`/${queue}`));
const recordBody = (event: unknown) => JSON.parse((event as { Records: Array<{ body: string }> }).Records[0]!.body) as Record<string, unknown>;

export type BundleInfo = {
  name: BundleName;
  entry: string;
  bytes: number;
  gzipBytes: number;
  awsClients: Array<{ name: string; bytes: number }>;
  unexpectedClients: string[];
  mayCall: Record<string, string>;
  /** The biggest packages in the bundle, by bytes of output. */
  topPackages: Array<{ name: string; bytes: number }>;
};

export type ColdStartResult = {
  rounds: number;
  bundles: BundleInfo[];
  /** What each bundle's first event was, per mode. */
  events: Record<Mode, Partial<Record<BundleName, string>>>;
  /** Whole-process wall time, ms: bare node and each bundle, per mode. */
  bare: Record<Mode, Summary>;
  wall: Record<Mode, Partial<Record<BundleName, Summary>>>;
  /** Wall time over bare node, paired per round, ms. */
  overBare: Record<Mode, Partial<Record<BundleName, Summary>>>;
  /** Inside the process: require of the bundle, and the first event. */
  requireMs: Record<Mode, Partial<Record<BundleName, Summary>>>;
  firstEventMs: Record<Mode, Partial<Record<BundleName, Summary>>>;
  /** One-purpose handlers: what slack-events' load time is made of (offline event, over bare node). */
  probes: Array<{ name: string; label: string; bytes: number; gzipBytes: number; overBare: Summary; rounds: number }>;
  /** (slack-events − bare) / (bolt − bare), paired per round. */
  slackEventsVsBolt: Record<Mode, Summary>;
};

const sqsRecord = (body: string) => ({
  messageId: randomUUID(),
  receiptHandle: 'bench-receipt-handle',
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: String(Date.now()),
    SenderId: 'AIDABENCH',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:bench',
  awsRegion: 'us-east-1',
});

function apiGatewayEvent(body: string) {
  return {
    resource: '/slack/events',
    path: '/slack/events',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) },
    multiValueHeaders: {},
    queryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId: randomUUID(), stage: 'prod', httpMethod: 'POST', path: '/prod/slack/events' },
    body,
    isBase64Encoded: false,
  };
}

function functionUrlEvent(body: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: { http: { method: 'POST', path: '/', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' }, requestId: randomUUID(), stage: '$default' },
    body,
    isBase64Encoded: false,
  };
}

const urlVerification = () => JSON.stringify({ token: 'bench', challenge: `challenge-${randomUUID()}`, type: 'url_verification' });
const mention = () => appMentionEnvelope({ text: 'what is the weather like?', botUserId: BOT_USER_ID, teamId: 'TBENCH', channel: 'CBENCH', userId: 'UBENCHUSER' }).body;

const statusOk = (result: unknown) => {
  const status = (result as { statusCode?: number } | undefined)?.statusCode;
  return status === 200 ? undefined : `expected HTTP 200, got ${JSON.stringify(result)?.slice(0, 300)}`;
};
const batchOk = (result: unknown) => {
  const failures = (result as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures;
  return Array.isArray(failures) && failures.length === 0 ? undefined : `expected no batch item failures, got ${JSON.stringify(result)?.slice(0, 300)}`;
};

function queueUrls(world: LoopbackAws | undefined): Record<'TASK_QUEUE_URL' | 'POLL_QUEUE_URL' | 'REPLY_QUEUE_URL' | 'WORKER_QUEUE_URL', string> {
  // With the fake SQS, queue URLs point at it: the SDK sends to the queue URL's host.
  const base = world ? `${world.sqs.endpoint}/123456789012` : 'https://sqs.us-east-1.amazonaws.com/123456789012';
  return { TASK_QUEUE_URL: `${base}/bench-tasks`, POLL_QUEUE_URL: `${base}/bench-polls`, REPLY_QUEUE_URL: `${base}/bench-replies`, WORKER_QUEUE_URL: `${base}/bench-worker` };
}

const slackThread = () => ({ team_id: 'TBENCH', channel: 'CBENCH', ts: `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}` });

export const SPECS: BundleSpec[] = [
  {
    name: 'slack-events',
    entry: 'lambdas/verification/slack-events.ts',
    mayCall: {
      'client-dynamodb': 'event-id claims and rate-limit counters',
      'client-sqs': 'task and reply queues',
      'client-secrets-manager': 'signing secret from SLACK_SIGNING_SECRET_ARN',
    },
    env: (_mode, world) => ({ SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_BOT_USER_ID: BOT_USER_ID, STATE_TABLE_NAME: STATE_TABLE, ...queueUrls(world) }),
    event: async (mode) =>
      mode === 'offline'
        ? { event: apiGatewayEvent(urlVerification()), what: 'signed url_verification (API Gateway proxy event)' }
        : { event: apiGatewayEvent(mention()), what: 'signed app_mention: claim + rate limit (DynamoDB) and enqueue (SQS)' },
    check: (result, mode) => statusOk(result) ?? (mode === 'offline' && !String((result as { body?: string }).body).includes('challenge') ? 'no challenge in the answer' : undefined),
    verify: async (world, event) => {
      const eventId = (JSON.parse((event as { body: string }).body) as { event_id: string }).event_id;
      return lastSent(world, 'bench-tasks')?.body.includes(eventId) ? undefined : 'the task was not queued';
    },
  },
  {
    name: 'agent-invoker',
    entry: 'lambdas/verification/agent-invoker.ts',
    mayCall: {
      'client-bedrock-agentcore': 'agentcore transport (TRANSPORT=agentcore, the default)',
      'client-sqs': 'poll and reply queues',
      'client-secrets-manager': 'bot token (thread context, files, live answers) or bearer token (https transport) from an ARN',
      'client-dynamodb': 'the record of each task\'s live message (live answers)',
      'client-bedrock-runtime': 'the guardrail (GUARDRAIL=bedrock): ApplyGuardrail on each task input and the live previews',
    },
    env: (_mode, world) => ({ TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: RUNTIME_ARN, SLACK_BOT_TOKEN: world?.slack.token ?? BOT_TOKEN, STATE_TABLE_NAME: STATE_TABLE, ...queueUrls(world) }),
    event: async (mode) => {
      if (mode === 'offline') return { event: { Records: [] }, what: 'empty SQS batch (a record would call AgentCore)' };
      const body = JSON.stringify({ ...slackThread(), request_id: randomUUID(), event_id: `Ev${Date.now()}`, user_id: 'UBENCHUSER', text: 'hello from the bench', received_at: Date.now() });
      return { event: { Records: [sqsRecord(body)] }, what: 'one task record: execute_task over AgentCore (emulator → runtime) and the reply enqueued' };
    },
    check: (result) => batchOk(result),
    verify: async (world, event) => {
      const reply = lastSent(world, 'bench-replies');
      const sent = reply && (JSON.parse(reply.body) as { request_id?: string; kind?: string; text?: string });
      const requestId = recordBody(event).request_id;
      return sent?.request_id === requestId && sent?.kind === 'answer' && sent?.text === 'echo: hello from the bench' ? undefined : `no answer queued: ${reply?.body}`;
    },
  },
  {
    name: 'async-result',
    entry: 'lambdas/verification/async-result.ts',
    mayCall: {
      'client-bedrock-agentcore': 'agentcore transport (TRANSPORT=agentcore, the default)',
      'client-sqs': 'poll and reply queues',
      'client-secrets-manager': 'bot token (live answers) or bearer token (https transport) from an ARN',
      'client-dynamodb': 'the record of each task\'s live message (live answers)',
      'client-bedrock-runtime': 'the guardrail (GUARDRAIL=bedrock): ApplyGuardrail on the live previews and the steps an agent shows',
    },
    env: (_mode, world) => ({ TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: RUNTIME_ARN, SLACK_BOT_TOKEN: world?.slack.token ?? BOT_TOKEN, STATE_TABLE_NAME: STATE_TABLE, ...queueUrls(world) }),
    event: async (mode, world) => {
      if (mode === 'offline' || !world) return { event: { Records: [] }, what: 'empty SQS batch (a record would call AgentCore)' };
      const taskId = await pendingTask(world);
      const body = JSON.stringify({ ...slackThread(), request_id: randomUUID(), event_id: 'EvBENCH', user_id: 'UBENCHUSER', handle: { taskId }, attempt: 0, accepted_at: Date.now(), received_at: Date.now() });
      return { event: { Records: [sqsRecord(body)] }, what: 'one poll record of a running task: get_task_result over AgentCore, next poll enqueued' };
    },
    check: (result) => batchOk(result),
    verify: async (world, event) => {
      const poll = lastSent(world, 'bench-polls');
      const sent = poll && (JSON.parse(poll.body) as { request_id?: string; attempt?: number });
      const failed = world.emulator.invocations.some((invocation) => invocation.status !== 200);
      return !failed && sent?.request_id === recordBody(event).request_id && sent?.attempt === 1 ? undefined : `no next poll queued after a clean call: ${poll?.body}`;
    },
  },
  {
    name: 'slack-poster',
    entry: 'lambdas/verification/slack-poster.ts',
    mayCall: {
      'client-dynamodb': 'per-chunk post claims (no duplicate post on redelivery)',
      'client-secrets-manager': 'bot token from SLACK_BOT_TOKEN_ARN',
      'client-bedrock-runtime': 'the guardrail (GUARDRAIL=bedrock): ApplyGuardrail on the final answer, file names and kept text',
    },
    env: (_mode, world) => ({ SLACK_BOT_TOKEN: world?.slack.token ?? BOT_TOKEN, STATE_TABLE_NAME: STATE_TABLE }),
    event: async (mode) => {
      if (mode === 'offline') return { event: { Records: [] }, what: 'empty SQS batch (a record would call Slack and DynamoDB)' };
      const body = JSON.stringify({ ...slackThread(), request_id: randomUUID(), kind: 'answer', text: 'echo: hello from the bench', received_at: Date.now() });
      return { event: { Records: [sqsRecord(body)] }, what: 'one reply record: claim (DynamoDB) and chat.postMessage (fake Slack API)' };
    },
    check: (result) => batchOk(result),
    verify: async (world, event) => {
      const ts = recordBody(event).ts;
      return world.slack.posts.some((post) => post.thread_ts === ts && post.text === 'echo: hello from the bench') ? undefined : 'nothing was posted to the fake Slack API';
    },
  },
  {
    name: 'execution-url',
    entry: 'lambdas/execution/function-url.ts',
    mayCall: {
      'client-bedrock-runtime': 'bedrock executor (EXECUTOR=bedrock)',
      'client-dynamodb': 'task store (TASK_STORE=dynamodb)',
      'client-sqs': 'hand-off of accepted tasks to the worker',
    },
    env: (mode, world) => ({ EXECUTOR: 'echo', ...(mode === 'loopback' ? { TASK_STORE: 'dynamodb', TASK_TABLE_NAME: TASK_TABLE } : {}), WORKER_QUEUE_URL: queueUrls(world).WORKER_QUEUE_URL }),
    event: async (mode) => ({
      event: functionUrlEvent(JSON.stringify(executeTaskRequest({ text: 'hello from the bench', channel: 'CBENCH' }))),
      what: mode === 'offline' ? 'execute_task via function URL (echo executor, memory task store)' : 'execute_task via function URL (echo executor, DynamoDB task store)',
    }),
    check: (result) => statusOk(result) ?? (String((result as { body?: string }).body).includes('"success"') ? undefined : `no success result: ${JSON.stringify(result).slice(0, 300)}`),
  },
  {
    name: 'execution-worker',
    entry: 'lambdas/execution/worker.ts',
    mayCall: {
      'client-bedrock-runtime': 'bedrock executor (EXECUTOR=bedrock)',
      'client-dynamodb': 'task store (TASK_STORE=dynamodb)',
    },
    env: (mode) => ({ EXECUTOR: 'echo', ...(mode === 'loopback' ? { TASK_STORE: 'dynamodb', TASK_TABLE_NAME: TASK_TABLE } : {}) }),
    event: async (mode, world) => {
      const taskId = `task-${randomUUID().replace(/-/g, '')}`;
      const body = JSON.stringify({ task_id: taskId, params: { text: 'hello from the bench' } });
      if (mode === 'offline' || !world) return { event: { Records: [sqsRecord(body)] }, what: 'one hand-off record of an unknown task (memory store): looked up and skipped' };
      const now = Date.now();
      await new DynamoDbTaskStore({ client: world.dynamoDb, tableName: TASK_TABLE }).create({ task_id: taskId, status: 'accepted', created_at: now, updated_at: now, expires_at: Math.floor(now / 1000) + 3600 });
      return { event: { Records: [sqsRecord(body)] }, what: 'one hand-off record of an accepted task: run (echo) and recorded in DynamoDB' };
    },
    check: (result) => batchOk(result),
    verify: async (world, event) => {
      const taskId = String(recordBody(event).task_id);
      const record = await new DynamoDbTaskStore({ client: world.dynamoDb, tableName: TASK_TABLE }).get(taskId);
      return record?.status === 'success' ? undefined : `the task ended ${record?.status ?? 'missing'}`;
    },
  },
  {
    name: 'bolt',
    entry: 'bench/peers/bolt-handler.ts',
    mayCall: {},
    env: () => ({ SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_BOT_ID: BOT_ID, SLACK_BOT_USER_ID: BOT_USER_ID }),
    event: async (mode) =>
      mode === 'offline'
        ? { event: apiGatewayEvent(urlVerification()), what: 'signed url_verification (API Gateway proxy event)' }
        : { event: apiGatewayEvent(mention()), what: 'signed app_mention, acked by a no-op listener (no network)' },
    check: (result) => statusOk(result),
  },
];


/**
 * What slack-events' load time is made of: one-purpose handlers bundled the same way, each
 * loading one of its dependencies as the function does (clients built at module scope) and
 * answering the same signed url_verification. The first is the issue's reference point.
 */
const PROBE_SOURCES: Array<{ name: string; label: string; contents: string }> = [
  {
    name: 'crypto-sqs',
    label: 'node:crypto + @aws-sdk/client-sqs (the issue’s reference handler)',
    contents: `import { createHmac } from 'node:crypto';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
const sqs = new SQSClient({});
export const handler = async (event: { body: string; headers: Record<string, string> }) => {
  const signature = 'v0=' + createHmac('sha256', process.env.SLACK_SIGNING_SECRET ?? '').update('v0:' + event.headers['x-slack-request-timestamp'] + ':' + event.body).digest('hex');
  if (signature !== event.headers['x-slack-signature'] || !sqs || !SendMessageCommand) return { statusCode: 401, body: '' };
  return { statusCode: 200, body: JSON.stringify({ challenge: JSON.parse(event.body).challenge }) };
};`,
  },
  {
    name: 'zod',
    label: 'zod (`import { z } from "zod"`, as src/ does)',
    contents: `import { z } from 'zod';
const Envelope = z.object({ type: z.string(), challenge: z.string().optional() }).loose();
export const handler = async (event: { body: string }) => ({ statusCode: Envelope.safeParse(JSON.parse(event.body)).success ? 200 : 400, body: '' });`,
  },
  {
    name: 'zod-mini',
    label: 'zod/mini (the tree-shakable variant), same schema',
    contents: `import * as z from 'zod/mini';
const Envelope = z.looseObject({ type: z.string(), challenge: z.optional(z.string()) });
export const handler = async (event: { body: string }) => ({ statusCode: Envelope.safeParse(JSON.parse(event.body)).success ? 200 : 400, body: '' });`,
  },
  {
    name: 'powertools',
    label: '@aws-lambda-powertools/logger + metrics',
    contents: `import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
const log = new Logger({ serviceName: 'probe' });
const metrics = new Metrics({ namespace: 'Probe', serviceName: 'probe' });
export const handler = async () => { log.debug('probe'); metrics.publishStoredMetrics(); return { statusCode: 200, body: '' }; };`,
  },
  {
    name: 'middy',
    label: '@middy/core',
    contents: `import middy from '@middy/core';
export const handler = middy(async () => ({ statusCode: 200, body: '' }));`,
  },
  {
    name: 'dynamodb',
    label: '@aws-sdk/client-dynamodb',
    contents: `import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
const client = new DynamoDBClient({});
export const handler = async () => ({ statusCode: client && PutItemCommand ? 200 : 500, body: '' });`,
  },
  {
    name: 'secrets-manager',
    label: '@aws-sdk/client-secrets-manager',
    contents: `import { SecretsManagerClient, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
const client = new SecretsManagerClient({});
export const handler = async () => ({ statusCode: client && GetSecretValueCommand ? 200 : 500, body: '' });`,
  },
  // How to reach DynamoDB, SQS and Secrets Manager from the ack path: each option loads its client
  // and signs (or builds) one DynamoDB PutItem, nothing sent — the calls themselves are in the loopback figures.
  {
    name: 'own-client',
    label: 'this project’s AWS JSON client (src/aws/aws-json-client.ts; src/aws/sigv4.ts: the SDK’s @smithy/signature-v4, loaded at the first signature; src/aws/endpoints.ts: the SDK’s partition table), DynamoDB and SQS clients built, one PutItem signed and its regional endpoint resolved — what slack-events uses',
    contents: `import { signRequest } from './src/aws/sigv4';
import { DYNAMODB } from './src/aws/aws-json-client';
import { DynamoDb } from './src/aws/dynamodb';
import { sqsClient } from './src/queue/sqs-queue';
const clients = [new DynamoDb(), sqsClient()];
export const handler = async (event: { body: string }) => {
  const { regionalEndpoint } = await import('./src/aws/endpoints');
  const headers = await signRequest(
    { method: 'POST', url: new URL(regionalEndpoint(DYNAMODB.endpointPrefix, 'us-east-1', { fips: false, dualStack: false }, DYNAMODB.endpointRules)), headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body: event.body },
    { service: 'dynamodb', region: 'us-east-1', credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' } },
  );
  return { statusCode: headers.authorization && clients.length === 2 ? 200 : 500, body: '' };
};`,
  },
  {
    name: 'smithy-sigv4',
    label: 'the SDK’s own smaller pieces: @smithy/signature-v4 + protocol-http + hash-node, one PutItem signed (a client on them would add its HTTP)',
    contents: `import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Hash } from '@smithy/hash-node';
const signer = new SignatureV4({ service: 'dynamodb', region: 'us-east-1', sha256: Hash.bind(null, 'sha256'), credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' } });
export const handler = async (event: { body: string }) => {
  const signed = await signer.sign(new HttpRequest({ method: 'POST', protocol: 'https:', hostname: 'dynamodb.us-east-1.amazonaws.com', path: '/', headers: { host: 'dynamodb.us-east-1.amazonaws.com', 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body: event.body }));
  return { statusCode: signed.headers.authorization ? 200 : 500, body: '' };
};`,
  },
  {
    name: 'aws4fetch',
    label: 'aws4fetch (WebCrypto signing, fetch’s Request), one PutItem signed',
    contents: `import { AwsClient } from 'aws4fetch';
const aws = new AwsClient({ accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '', service: 'dynamodb', region: 'us-east-1' });
export const handler = async (event: { body: string }) => {
  const request = await aws.sign('https://dynamodb.us-east-1.amazonaws.com/', { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body: event.body });
  return { statusCode: request.headers.get('authorization') ? 200 : 500, body: '' };
};`,
  },
  {
    name: 'aws-lite',
    label: '@aws-lite/client + @aws-lite/dynamodb, client created (it signs only as it sends)',
    contents: `import awsLite from '@aws-lite/client';
import dynamodb from '@aws-lite/dynamodb';
const aws = awsLite({ region: 'us-east-1', plugins: [dynamodb], autoloadPlugins: false });
export const handler = async () => ({ statusCode: (await aws).DynamoDB ? 200 : 500, body: '' });`,
  },
  {
    name: 'sdk-all',
    label: 'the three SDK clients slack-events builds (DynamoDB, SQS, Secrets Manager)',
    contents: `import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { SecretsManagerClient, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
const clients = [new DynamoDBClient({}), new SQSClient({}), new SecretsManagerClient({}), PutItemCommand, SendMessageCommand, GetSecretValueCommand];
export const handler = async () => ({ statusCode: clients.length === 6 ? 200 : 500, body: '' });`,
  },
];

export const PROBES: BundleSpec[] = [
  ...PROBE_SOURCES.map(({ name, contents }): BundleSpec => ({
    name: `probe:${name}`,
    entry: `(probe) ${name}`,
    contents,
    mayCall: {},
    env: () => ({ SLACK_SIGNING_SECRET: SIGNING_SECRET }),
    event: async () => ({ event: apiGatewayEvent(urlVerification()), what: 'signed url_verification' }),
    check: (result) => statusOk(result),
  })),
  // slack-events itself in the same rounds, as deployed and without the source-map support the construct turns on.
  { ...SPECS.find((spec) => spec.name === 'slack-events')!, name: 'probe:slack-events' },
  {
    ...SPECS.find((spec) => spec.name === 'slack-events')!,
    name: 'probe:slack-events-no-source-maps',
    env: (mode, world) => ({ ...SPECS.find((spec) => spec.name === 'slack-events')!.env(mode, world), NODE_OPTIONS: '' }),
  },
];

export const PROBE_LABELS: Record<string, string> = {
  ...Object.fromEntries(PROBE_SOURCES.map(({ name, label }) => [`probe:${name}`, label])),
  'probe:slack-events': 'slack-events, the whole function, as deployed (for scale, in the same rounds)',
  'probe:slack-events-no-source-maps': 'slack-events, the whole function, without NODE_OPTIONS=--enable-source-maps',
};

/** A task that runs on (echo, sleeping an hour) in the loopback runtime, for polls to find pending. */
let pendingTaskId: string | undefined;
async function pendingTask(world: LoopbackAws): Promise<string> {
  if (pendingTaskId) return pendingTaskId;
  const answer = await world.runtime.dispatch(JSON.stringify(executeTaskRequest({ text: 'keep running #sleep=3600000' })));
  const taskId = (JSON.parse(answer ?? '{}') as { result?: { task_id?: string } }).result?.task_id;
  if (!taskId) throw new Error(`could not start a pending task: ${answer}`);
  pendingTaskId = taskId;
  return taskId;
}

async function cancelPendingTask(world: LoopbackAws): Promise<void> {
  if (!pendingTaskId) return;
  await world.runtime.service.cancelTask(pendingTaskId).catch(() => undefined);
  pendingTaskId = undefined;
}

/**
 * Bundles one entry as cdk/constructs/zone-function.ts has NodejsFunction bundle it: esbuild,
 * platform node, target node22, cjs, minified, `mainFields: ['module', 'main']` (the SDK's ESM
 * builds, so unused code can go), external source map, nothing external. The function runs with
 * NODE_OPTIONS=--enable-source-maps, as the construct sets it.
 */
export async function bundle(entry: string, outfile: string, contents?: string): Promise<Metafile> {
  const result = await build({
    ...(contents === undefined ? { entryPoints: [join(ROOT, entry)] } : { stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: `${entry}.ts` } }),
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: 'external',
    sourcesContent: false,
    treeShaking: true,
    metafile: true,
    logLevel: 'error',
    absWorkingDir: ROOT,
    // Probe sources resolve from the repository's root, like the functions; the packages only a
    // probe loads (aws4fetch, @aws-lite) are the bench's own (bench/package.json), found here after
    // the root's node_modules.
    nodePaths: [join(ROOT, 'bench', 'node_modules')],
  });
  return result.metafile;
}

/** SDK clients (bytes of output each) and the biggest packages, from esbuild's metafile. */
export function analyzeMetafile(metafile: Metafile): { awsClients: Array<{ name: string; bytes: number }>; topPackages: Array<{ name: string; bytes: number }> } {
  const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith('.js'))?.[1];
  if (!output) throw new Error('esbuild produced no JavaScript output');
  const clients = new Map<string, number>();
  const packages = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    if (bytesInOutput === 0) continue;
    const pkg = packageOf(path);
    packages.set(pkg, (packages.get(pkg) ?? 0) + bytesInOutput);
    const client = /node_modules\/@aws-sdk\/(client-[^/]+)\//.exec(path)?.[1];
    if (client) clients.set(client, (clients.get(client) ?? 0) + bytesInOutput);
  }
  const sorted = (map: Map<string, number>) => [...map].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
  return { awsClients: sorted(clients), topPackages: sorted(packages).slice(0, 8) };
}

/** The npm package a bundled file comes from, or `(project)` for our own sources. */
export function packageOf(path: string): string {
  const parts = path.split('node_modules/');
  if (parts.length < 2) return '(project)';
  const rest = parts[parts.length - 1]!.split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
}

type RunOutcome = { wallMs: number; requireMs: number; firstMs: number; warmMs: number[] };

async function runOnce(bundlePath: string, eventFile: string, env: Record<string, string>, warm = 0): Promise<{ wallMs: number; report: Record<string, unknown>; output: string }> {
  const { command, args } = pinned(CHILD_CORE, process.execPath, [HARNESS, bundlePath, eventFile, String(warm)]);
  const started = process.hrtime.bigint();
  const child = spawnTracked(command, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  let output = '';
  let report = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report += chunk.toString()));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const wallMs = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
  });
  await closed;
  const parsed = report.trim() ? (JSON.parse(report.trim().split('\n').pop()!) as Record<string, unknown>) : { error: `no report; exit ${child.exitCode}` };
  return { wallMs, report: parsed, output };
}

async function runBare(env: Record<string, string>): Promise<number> {
  const { command, args } = pinned(CHILD_CORE, process.execPath, ['-e', '0']);
  const started = process.hrtime.bigint();
  const child = spawnTracked(command, args, { env, stdio: 'ignore' });
  return new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
  });
}

const LAMBDA_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  ...PLACEHOLDER_AWS_ENV,
  // What Lambda sets, so Powertools and the SDK behave as they would there.
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  NODE_ENV: 'production',
  // cdk/constructs/zone-function.ts sets it on every function, so stack traces name the sources.
  NODE_OPTIONS: '--enable-source-maps',
};

/** Builds bundles once and runs them, one fresh process per event, against the loopback fakes. */
class BundleRunner {
  readonly events: ColdStartResult['events'] = { offline: {}, loopback: {} };
  private readonly paths = new Map<BundleName, string>();

  private constructor(
    private readonly workDir: string,
    private readonly world: LoopbackAws,
  ) {}

  static async start(workDir: string): Promise<BundleRunner> {
    await mkdir(workDir, { recursive: true });
    return new BundleRunner(workDir, await startLoopbackAws());
  }

  async build(spec: BundleSpec): Promise<BundleInfo> {
    const outfile = join(this.workDir, `${spec.name.replace(':', '-')}.js`);
    const metafile = await bundle(spec.entry, outfile, spec.contents);
    const code = await readFile(outfile);
    const { awsClients, topPackages } = analyzeMetafile(metafile);
    const unexpectedClients = awsClients.map((c) => c.name).filter((name) => !(name in spec.mayCall));
    this.paths.set(spec.name, outfile);
    return { name: spec.name, entry: spec.entry, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, awsClients, unexpectedClients, mayCall: spec.mayCall, topPackages };
  }

  async run(spec: BundleSpec, mode: Mode, warm = 0): Promise<RunOutcome> {
    if (!this.paths.has(spec.name)) await this.build(spec);
    const path = this.paths.get(spec.name)!;
    const { event, what } = await spec.event(mode, this.world);
    this.events[mode][spec.name] = what;
    const eventFile = join(this.workDir, `${spec.name.replace(':', '-')}.${mode}.event.json`);
    await writeFile(eventFile, JSON.stringify({ event }));
    const env = { ...LAMBDA_ENV, ...(mode === 'loopback' ? this.world.env : {}), ...spec.env(mode, mode === 'loopback' ? this.world : undefined) };
    const { wallMs, report, output } = await runOnce(path, eventFile, env, warm);
    if (typeof report.error === 'string') throw new Error(`${spec.name} (${mode}) failed: ${report.error}\n${output}`);
    const problem = spec.check(report.result, mode) ?? (mode === 'loopback' && spec.verify ? await spec.verify(this.world, event) : undefined);
    if (problem) throw new Error(`${spec.name} (${mode}) answered wrongly: ${problem}\n${output}`);
    return { wallMs, requireMs: Number(report.requireMs), firstMs: Number(report.firstMs), warmMs: (report.warmMs as number[]) ?? [] };
  }

  bare(): Promise<number> {
    return runBare(LAMBDA_ENV);
  }

  async stop(): Promise<void> {
    await cancelPendingTask(this.world);
    await this.world.close();
  }
}

export type ColdStartOptions = { rounds: number; probeRounds: number; workDir: string; log: (line: string) => void };

export async function runColdStart(options: ColdStartOptions): Promise<ColdStartResult> {
  const { rounds, log } = options;
  const runner = await BundleRunner.start(options.workDir);
  try {
    const bundles: BundleInfo[] = [];
    for (const spec of SPECS) {
      const info = await runner.build(spec);
      bundles.push(info);
      log(`  bundled ${spec.name}: ${info.bytes} B (${info.gzipBytes} B gzip), SDK clients: ${info.awsClients.map((c) => c.name).join(', ') || 'none'}`);
    }

    const modes: Mode[] = ['offline', 'loopback'];
    const wall: Record<Mode, Map<BundleName, number[]>> = { offline: new Map(), loopback: new Map() };
    const requireMs: Record<Mode, Map<BundleName, number[]>> = { offline: new Map(), loopback: new Map() };
    const firstMs: Record<Mode, Map<BundleName, number[]>> = { offline: new Map(), loopback: new Map() };
    const bare: Record<Mode, number[]> = { offline: [], loopback: [] };
    const push = (map: Map<BundleName, number[]>, key: BundleName, value: number) => map.set(key, [...(map.get(key) ?? []), value]);

    // One untimed pass: the page cache holds every bundle, and each event is known to be handled.
    for (const mode of modes) for (const spec of SPECS) await runner.run(spec, mode);
    await runner.bare();

    for (let round = 0; round < rounds; round += 1) {
      for (const mode of rotate(modes, round)) {
        // Bare node and every bundle, in a new order each round, so drift hits all of them alike.
        const order: Array<BundleSpec | 'bare'> = rotate(['bare', ...SPECS], round);
        for (const item of order) {
          if (item === 'bare') {
            bare[mode].push(await runner.bare());
            continue;
          }
          const outcome = await runner.run(item, mode);
          push(wall[mode], item.name, outcome.wallMs);
          push(requireMs[mode], item.name, outcome.requireMs);
          push(firstMs[mode], item.name, outcome.firstMs);
        }
      }
      log(`  round ${round + 1}/${rounds}: slack-events ${fmt(wall.offline.get('slack-events')!.at(-1)!)} ms, Bolt ${fmt(wall.offline.get('bolt')!.at(-1)!)} ms, bare node ${fmt(bare.offline.at(-1)!)} ms (offline, whole process)`);
    }

    const probes: ColdStartResult['probes'] = [];
    if (options.probeRounds > 0) {
      const probeInfo = new Map<BundleName, BundleInfo>();
      for (const probe of PROBES) {
        probeInfo.set(probe.name, await runner.build(probe));
        await runner.run(probe, 'offline');
      }
      const probeWall = new Map<BundleName, number[]>();
      const probeBare: number[] = [];
      for (let round = 0; round < options.probeRounds; round += 1) {
        for (const item of rotate<BundleSpec | 'bare'>(['bare', ...PROBES], round)) {
          if (item === 'bare') probeBare.push(await runner.bare());
          else push(probeWall, item.name, (await runner.run(item, 'offline')).wallMs);
        }
      }
      for (const probe of PROBES) {
        const info = probeInfo.get(probe.name)!;
        probes.push({
          name: probe.name,
          label: PROBE_LABELS[probe.name] ?? probe.name,
          bytes: info.bytes,
          gzipBytes: info.gzipBytes,
          overBare: summarize(pairedDifferences(probeWall.get(probe.name)!, probeBare)),
          rounds: options.probeRounds,
        });
      }
      log(`  probes: ${probes.map((p) => `${p.name.slice('probe:'.length)} ${fmt(p.overBare.median)} ms`).join(', ')} (over bare node)`);
    }

    const nothing: Summary = { median: NaN, min: NaN, max: NaN, n: 0 };
    const result: ColdStartResult = {
      rounds,
      bundles,
      events: runner.events,
      bare: { offline: summarize(bare.offline), loopback: summarize(bare.loopback) },
      wall: { offline: {}, loopback: {} },
      overBare: { offline: {}, loopback: {} },
      requireMs: { offline: {}, loopback: {} },
      firstEventMs: { offline: {}, loopback: {} },
      probes,
      slackEventsVsBolt: { offline: nothing, loopback: nothing },
    };
    for (const mode of modes) {
      for (const spec of SPECS) {
        const samples = wall[mode].get(spec.name)!;
        result.wall[mode][spec.name] = summarize(samples);
        result.overBare[mode][spec.name] = summarize(pairedDifferences(samples, bare[mode]));
        result.requireMs[mode][spec.name] = summarize(requireMs[mode].get(spec.name)!);
        result.firstEventMs[mode][spec.name] = summarize(firstMs[mode].get(spec.name)!);
      }
      const ours = pairedDifferences(wall[mode].get('slack-events')!, bare[mode]);
      const bolt = pairedDifferences(wall[mode].get('bolt')!, bare[mode]);
      result.slackEventsVsBolt[mode] = summarize(pairedRatios(ours, bolt));
    }
    return result;
  } finally {
    await runner.stop();
  }
}

/**
 * Warm handler times of bundled functions on the loopback fakes: one process, one first event,
 * then `runs` more of the same record. The poll-cost part bills polls with these.
 */
export async function measureWarmHandlers(names: readonly BundleName[], runs: number, workDir: string): Promise<Partial<Record<BundleName, Summary>>> {
  const runner = await BundleRunner.start(workDir);
  try {
    const warm: Partial<Record<BundleName, Summary>> = {};
    for (const name of names) {
      const spec = SPECS.find((s) => s.name === name);
      if (!spec) throw new Error(`no bundle named ${name}`);
      warm[name] = summarize((await runner.run(spec, 'loopback', runs)).warmMs);
    }
    return warm;
  } finally {
    await runner.stop();
  }
}

const fmt = (ms: number) => ms.toFixed(0);
