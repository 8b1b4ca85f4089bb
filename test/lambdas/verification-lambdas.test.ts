import type { APIGatewayProxyEvent, SQSEvent } from 'aws-lambda';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { startFakeSecretsManager } from '../support/fake-secrets-manager';
import { startFakeSqs, type FakeSqs } from '../support/fake-sqs';
import { lambdaContext } from '../support/lambda-context';

/**
 * The Lambda handlers as deployed: configuration from the environment, DynamoDB against dynalite,
 * SQS against the fake SQS endpoint (both over HTTP, signed), the execution zone over the https
 * transport on loopback, Slack through @slack/web-api against the fake Slack API. What the
 * handlers send is asserted.
 */
let sqs: FakeSqs;
let db: LocalDynamoDb;
let runtime: RunningRuntime;
let slack: FakeSlackApi;
const SECRET = 'lambda-test-signing-secret';
const saved = { ...process.env };

beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, 'state', 'pk', 'expires_at');
  runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '1000' });
  slack = await startFakeSlackApi();
  sqs = await startFakeSqs();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    STATE_TABLE_NAME: 'state',
    TASK_QUEUE_URL: sqs.queueUrl('tasks'),
    POLL_QUEUE_URL: sqs.queueUrl('polls'),
    REPLY_QUEUE_URL: sqs.queueUrl('replies'),
    ...slackAppEnv(slack, SECRET),
    TRANSPORT: 'https',
    EXECUTION_URL: runtime.invocationsUrl,
    // Streams are held by default (STREAM_HOLD_S 30); a quiet task is let go after a second here, not ten.
    STREAM_QUIET_S: '1',
  });
});
afterAll(async () => {
  process.env = saved;
  await Promise.all([db.close(), runtime.close(), slack.close(), sqs.close()]);
});
beforeEach(() => sqs.reset());

const sentTo = (queue: string) => sqs.messages(queue).map((message) => JSON.parse(message.body));

function apiGatewayEvent(body: string, headers: Record<string, string>): APIGatewayProxyEvent {
  return { body, headers, isBase64Encoded: false, httpMethod: 'POST', path: '/slack/events' } as unknown as APIGatewayProxyEvent;
}

function sqsEvent(bodies: unknown[], receiveCount = 1): SQSEvent {
  return {
    Records: bodies.map((body, index) => ({
      messageId: `msg-${index}`,
      receiptHandle: 'r',
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: String(receiveCount) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: 'us-east-1',
    })),
  } as unknown as SQSEvent;
}

describe('lambdas/verification/slack-events', () => {
  it('queues a verified mention once, however often Slack delivers it, and refuses unsigned requests', async () => {
    const { handler } = await import('../../lambdas/verification/slack-events');
    const { body } = appMentionEnvelope({ text: 'from lambda' });
    const first = await handler(apiGatewayEvent(body, slackSignatureHeaders(SECRET, body)), lambdaContext());
    const retry = await handler(apiGatewayEvent(body, { ...slackSignatureHeaders(SECRET, body), 'X-Slack-Retry-Num': '1' }), lambdaContext());
    const unsigned = await handler(apiGatewayEvent(body, {}), lambdaContext());
    expect([first.statusCode, retry.statusCode, unsigned.statusCode]).toEqual([200, 200, 401]);
    expect(sentTo('tasks')).toEqual([expect.objectContaining({ text: 'from lambda', channel: 'CLOCAL' })]);
  });

  it('decodes a base64 body before checking the signature', async () => {
    const { handler } = await import('../../lambdas/verification/slack-events');
    const { body } = appMentionEnvelope({ text: 'encoded' });
    const event = { ...apiGatewayEvent(Buffer.from(body).toString('base64'), slackSignatureHeaders(SECRET, body)), isBase64Encoded: true };
    expect((await handler(event, lambdaContext())).statusCode).toBe(200);
    expect(sentTo('tasks')).toHaveLength(1);
  });
});

const task = (text: string) => ({
  request_id: globalThis.crypto.randomUUID(),
  event_id: 'Ev1',
  team_id: 'T1',
  user_id: 'U1',
  channel: 'C1',
  ts: '1700000000.000100',
  text,
  received_at: Date.now(),
});

describe('lambdas/verification/agent-invoker', () => {
  it('sends the task to the execution zone and queues the answer; a malformed record fails only itself', async () => {
    const { handler } = await import('../../lambdas/verification/agent-invoker');
    const good = task('ping');
    const result = await handler(sqsEvent([good, { not: 'a task' }]), lambdaContext());
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'msg-1' }]);
    expect(sentTo('replies')).toEqual([expect.objectContaining({ request_id: good.request_id, kind: 'answer', text: 'echo: ping', channel: 'C1' })]);
  });

  it('holds a slow task\'s stream, lets it go when it stays quiet, and queues the first poll with the backoff', async () => {
    const { handler } = await import('../../lambdas/verification/agent-invoker');
    const slow = task('slow #sleep=2500');
    const result = await handler(sqsEvent([slow]), lambdaContext());
    expect(result.batchItemFailures).toEqual([]);
    const polls = sqs.messages('polls');
    expect(polls).toHaveLength(1);
    expect(polls[0]!.delaySeconds).toBe(2);
    expect(JSON.parse(polls[0]!.body)).toMatchObject({ request_id: slow.request_id, attempt: 0, handle: { taskId: expect.stringMatching(/^task-/) } });
  });
});

describe('lambdas/verification/slack-poster', () => {
  it('posts the reply in the thread once, even when SQS delivers it twice', async () => {
    const { handler } = await import('../../lambdas/verification/slack-poster');
    const reply = { request_id: globalThis.crypto.randomUUID(), team_id: 'T1', channel: 'C1', ts: '1700000000.000100', kind: 'answer', text: 'hello from the poster' };
    expect((await handler(sqsEvent([reply]), lambdaContext())).batchItemFailures).toEqual([]);
    expect((await handler(sqsEvent([reply], 2), lambdaContext())).batchItemFailures).toEqual([]);
    expect(slack.posts).toEqual([expect.objectContaining({ channel: 'C1', thread_ts: '1700000000.000100', text: 'hello from the poster' })]);
  });
});

describe('lambdas/verification/slack-poster with SLACK_BOT_TOKEN_ARN', () => {
  it('takes a rotated bot token in a warm container: Slack refuses the old one, the secret is read again', async () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-bot-token-AbCdEf';
    const secrets = await startFakeSecretsManager();
    const rotating = await startFakeSlackApi({ botToken: 'lambda-bot-token-a' });
    const before = { SLACK_BOT_TOKEN: process.env.SLACK_BOT_TOKEN, SLACK_API_URL: process.env.SLACK_API_URL };
    const reply = (text: string) => ({ request_id: globalThis.crypto.randomUUID(), team_id: 'T1', channel: 'C1', ts: '1700000000.000100', kind: 'answer', text });
    try {
      secrets.setSecret(arn, 'lambda-bot-token-a');
      delete process.env.SLACK_BOT_TOKEN;
      Object.assign(process.env, { SLACK_BOT_TOKEN_ARN: arn, SLACK_API_URL: rotating.apiUrl });
      await jest.isolateModulesAsync(async () => {
        const { handler } = await import('../../lambdas/verification/slack-poster');
        expect((await handler(sqsEvent([reply('before the rotation')]), lambdaContext())).batchItemFailures).toEqual([]);

        secrets.setSecret(arn, 'lambda-bot-token-b');
        rotating.rotateToken('lambda-bot-token-b');
        expect((await handler(sqsEvent([reply('after the rotation')]), lambdaContext())).batchItemFailures).toEqual([]);
      });
      expect(rotating.posts.map((p) => p.text)).toEqual(['before the rotation', 'after the rotation']);
      expect(rotating.requests.map((r) => r.headers.authorization)).toEqual(['Bearer lambda-bot-token-a', 'Bearer lambda-bot-token-a', 'Bearer lambda-bot-token-b']);
    } finally {
      delete process.env.SLACK_BOT_TOKEN_ARN;
      Object.assign(process.env, before);
      await Promise.all([secrets.close(), rotating.close()]);
    }
  });
});

describe('lambdas/verification/agent-invoker with EXECUTION_SEND_BOT_TOKEN', () => {
  it('sends the bot token to the execution zone only when the operator opts in, and only to the agent configured for it', async () => {
    const seen: unknown[] = [];
    // The invoker reads a held stream (executeTaskStreamed); a plain call would be executeTask.
    const service = runtime.runtime.service;
    const received = service.executeTask.bind(service);
    const receivedStreamed = service.executeTaskStreamed.bind(service);
    service.executeTask = async (params, id) => {
      seen.push(params.bot_token);
      return received(params, id);
    };
    service.executeTaskStreamed = async (params, id, hold) => {
      seen.push(params.bot_token);
      return receivedStreamed(params, id, hold);
    };
    try {
      await jest.isolateModulesAsync(async () => {
        const { handler } = await import('../../lambdas/verification/agent-invoker');
        await handler(sqsEvent([task('no token')]), lambdaContext());
      });
      process.env.EXECUTION_SEND_BOT_TOKEN = 'true';
      await jest.isolateModulesAsync(async () => {
        const { handler } = await import('../../lambdas/verification/agent-invoker');
        await handler(sqsEvent([task('with token')]), lambdaContext());
      });
      delete process.env.EXECUTION_SEND_BOT_TOKEN;
      // Several agents: only the one whose entry says so gets it; another party's never does.
      const entry = { protocol: 'execute-task', transport: 'https', url: runtime.invocationsUrl, auth: 'none' };
      process.env.EXECUTION_AGENTS = JSON.stringify([{ ...entry, name: 'own', sendBotToken: true, default: true }, { ...entry, name: 'partner', channels: ['C1'] }]);
      await jest.isolateModulesAsync(async () => {
        const { handler } = await import('../../lambdas/verification/agent-invoker');
        await handler(sqsEvent([{ ...task('to the partner'), agent: 'partner' }, { ...task('to our own'), agent: 'own' }]), lambdaContext());
      });
      expect(seen).toEqual([undefined, slack.token, undefined, slack.token]);
    } finally {
      delete process.env.EXECUTION_SEND_BOT_TOKEN;
      delete process.env.EXECUTION_AGENTS;
      service.executeTask = received;
      service.executeTaskStreamed = receivedStreamed;
    }
  });
});
