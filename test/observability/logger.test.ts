import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLogger, isSecretKey, redactingReplacer, redactString, REDACTED, RESERVED_LOG_KEYS, taskLogger, type Log } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { failure } from '../../src/protocols/outcome';
import type { Queue } from '../../src/queue/queue';
import { InProcessTransport } from '../../src/transport/in-process';
import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { createAsyncResult } from '../../src/verification/poll/async-result';
import type { PollMessage } from '../../src/verification/queues/polls-queue';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { userMessages } from '../../src/verification/messages/user-messages';

/** Every line Powertools writes (stdout and stderr) while `run` runs, sync or async. */
async function captureOutput(run: () => unknown): Promise<string[]> {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

const previousLevel = process.env.POWERTOOLS_LOG_LEVEL;
beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
});
afterAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = previousLevel;
});

describe('logger redaction', () => {
  it('masks secrets by key and by shape, and keeps the task ids on every line', async () => {
    const log = taskLogger(createLogger('test'), { request_id: 'r-1', task_id: 't-1', event_id: 'Ev1', correlation_id: 'c-1' });
    const lines = await captureOutput(() => {
      log.info('calling', {
        bot_token: 'xoxb-123-456-abcdef',
        headers: { Authorization: 'Bearer abc.def.ghi', 'X-Slack-Signature': 'v0=deadbeef' },
        note: 'token xoxp-999-888 leaked in text; Authorization: Bearer sekrit',
        signing_secret: '8f742231b10e8888abcd99yyyzzz85a5',
        input_tokens: 12,
      });
      log.error('failed', { error: new Error('bad token xoxb-1-2-3') });
    });
    const text = lines.join('');
    for (const secret of ['xoxb-123-456-abcdef', 'abc.def.ghi', 'deadbeef', '999-888', 'sekrit', '8f742231b10e8888abcd99yyyzzz85a5', 'xoxb-1-2-3']) {
      expect(text).not.toContain(secret);
    }
    for (const line of parsed(lines)) {
      expect(line).toMatchObject({ request_id: 'r-1', task_id: 't-1', event_id: 'Ev1', correlation_id: 'c-1' });
    }
    expect(lines).toHaveLength(2);
    expect(parsed(lines)[0]!.input_tokens).toBe(12);
  });

  it('leaves ordinary values alone', () => {
    expect(redactingReplacer('text', 'hello world')).toBe('hello world');
    expect(redactingReplacer('task_id', 'task-1')).toBe('task-1');
  });

  it.each([
    // camelCase and PascalCase credentials (SDK credential objects, config objects)
    'botToken',
    'signingSecret',
    'sessionToken',
    'secretAccessKey',
    'accessToken',
    'refreshToken',
    'clientSecret',
    'dbPassword',
    'openAiApiKey',
    'SessionToken',
    'SecretAccessKey',
    // snake, kebab and upper case
    'bot_token',
    'SLACK_BOT_TOKEN',
    'SLACK_SIGNING_SECRET',
    'aws_secret_access_key',
    'x-api-key',
    'X-Amz-Security-Token',
    'X-Amz-Credential',
    'set-cookie',
    'token',
    'password',
    'SecretString',
  ])('redacts the value of the key %s', (key) => {
    expect(isSecretKey(key)).toBe(true);
    expect(redactingReplacer(key, 'value-that-must-not-leak')).toBe(REDACTED);
  });

  it.each([
    // model settings and usage: counts of tokens, not tokens
    'max_tokens',
    'maxTokens',
    'BEDROCK_MAX_TOKENS',
    'inputTokens',
    'outputTokens',
    'totalTokens',
    'input_tokens',
    'tokenCount',
    'token_count',
    'tokens',
    // pagination cursors and other harmless neighbours
    'nextToken',
    'NextToken',
    'secret_arn',
    'bearerSecretArn',
    'signingSecretGenerated',
    'AccessKeyId',
    'text',
  ])('keeps the value of the key %s', (key) => {
    expect(isSecretKey(key)).toBe(false);
    expect(redactingReplacer(key, 4096)).toBe(4096);
  });

  it('keeps model settings and token usage in a real log line', async () => {
    const lines = await captureOutput(() =>
      createLogger('test').info('converse done', {
        BEDROCK_MAX_TOKENS: 2048,
        inferenceConfig: { maxTokens: 1024, max_tokens: 1024 },
        usage: { inputTokens: 11, outputTokens: 22, totalTokens: 33 },
        tokenCount: 7,
      }),
    );
    expect(parsed(lines)[0]).toMatchObject({
      BEDROCK_MAX_TOKENS: 2048,
      inferenceConfig: { maxTokens: 1024, max_tokens: 1024 },
      usage: { inputTokens: 11, outputTokens: 22, totalTokens: 33 },
      tokenCount: 7,
    });
  });

  it('masks camelCase credentials nested in objects, as the AWS SDK and Slack configs name them', async () => {
    const lines = await captureOutput(() =>
      createLogger('test').info('client config', {
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG', sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE' },
        slack: { botToken: 'not-shaped-like-a-token-1', signingSecret: 'not-shaped-like-a-token-2' },
        auth: { accessToken: 'opaque-access-token' },
      }),
    );
    const text = lines.join('');
    for (const secret of ['wJalrXUtnFEMI', 'IQoJb3JpZ2luX2VjEXAMPLE', 'not-shaped-like-a-token-1', 'not-shaped-like-a-token-2', 'opaque-access-token']) {
      expect(text).not.toContain(secret);
    }
  });

  it.each([
    ['an app-level token', 'connect with xapp-1-A0123456789-1234567890123-abcdef0123456789', 'xapp-1-A0123456789'],
    ['a bot token', 'xoxb-1234-5678-AbCdEf', '1234-5678-AbCdEf'],
    ['a user token', 'user xoxp-1234-5678-9012-abcdef', '1234-5678-9012'],
    ['a refresh token', 'refresh with xoxe-1-My0xLTEyMzQ1', 'My0xLTEyMzQ1'],
    ['a rotating token', 'xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAx', 'Mi0yLTEyMzQ1Njc4OTAx'],
    ['a client token', 'xoxc-1234-5678-abcdef', '1234-5678-abcdef'],
    ['a URL-encoded d cookie', 'd=xoxd-abc%2Bdef%2Fghi%3D', 'abc%2Bdef'],
  ])('masks %s inside any string', (_name, text, secret) => {
    const redacted = redactString(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(REDACTED);
  });

  it('masks the credentials of a presigned URL and keeps the rest of it', () => {
    const url =
      'https://bucket.s3.amazonaws.com/key.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIAEXAMPLE%2F20250101%2Fus-east-1%2Fs3%2Faws4_request' +
      '&X-Amz-Date=20250101T000000Z&X-Amz-Expires=300&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEJr%2F%2F%2F%2FEXAMPLE&X-Amz-SignedHeaders=host' +
      '&X-Amz-Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
    const redacted = redactString(`GET ${url} failed`);
    for (const secret of ['ASIAEXAMPLE', 'IQoJb3JpZ2luX2VjEJr', '0123456789abcdef0123']) expect(redacted).not.toContain(secret);
    expect(redacted).toContain('X-Amz-Security-Token=[REDACTED]');
    expect(redacted).toContain('X-Amz-Credential=[REDACTED]');
    expect(redacted).toContain('X-Amz-Signature=[REDACTED]');
    // What says where the request went stays readable.
    expect(redacted).toContain('https://bucket.s3.amazonaws.com/key.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&');
    expect(redacted).toContain('X-Amz-Date=20250101T000000Z&X-Amz-Expires=300&');
    expect(redacted).toContain('X-Amz-SignedHeaders=host');
    expect(redacted).toMatch(/ failed$/);
  });

  it('masks a temporary credential in a header dump and secret query parameters in any URL', () => {
    expect(redactString('x-amz-security-token: IQoJb3JpZ2luX2Vj, host: a')).toBe('x-amz-security-token: [REDACTED], host: a');
    expect(redactString('https://a.example/cb?state=s1&access_token=opaque123&max_tokens=5')).toBe('https://a.example/cb?state=s1&access_token=[REDACTED]&max_tokens=5');
    expect(redactString('https://a.example/?apiKey=k1#frag')).toBe('https://a.example/?apiKey=[REDACTED]#frag');
    expect(redactString('a = b & c = d, 50% off?')).toBe('a = b & c = d, 50% off?');
  });
});

describe('reserved log keys', () => {
  it('are exactly the keys the installed Powertools Logger reserves', () => {
    // Read from the library itself so an upgrade that reserves another key fails here.
    const constants = readFileSync(join(dirname(require.resolve('@aws-lambda-powertools/logger')), 'constants.js'), 'utf8');
    const listed = /const ReservedKeys = \[([^\]]*)\]/.exec(constants)?.[1];
    expect(listed).toBeDefined();
    const reserved = [...listed!.matchAll(/'([^']+)'/g)].map((match) => match[1]).sort();
    expect(reserved).toEqual([...RESERVED_LOG_KEYS].sort());
  });

  it('are dropped by plain Powertools, which is why the pipeline must not use them', async () => {
    const lines = await captureOutput(() => new Logger({ serviceName: 'plain' }).warn('task failed', { code: -32000, message: 'disk full on worker 7' }));
    expect(lines.join('')).not.toContain('disk full on worker 7');
  });

  it('keep their value under extra_<key> in the project logger, without a reserved-key warning', async () => {
    const lines = await captureOutput(() => {
      // Code typed as Log cannot write these keys (below); a loosely typed object still can.
      const loose: Record<string, unknown> = { message: 'disk full on worker 7', level: 'x', timestamp: 1, service: 's', sampling_rate: 0.5, code: -32000 };
      createLogger('test').warn('task failed', loose, { error: new Error('boom') });
    });
    expect(lines).toHaveLength(1);
    expect(parsed(lines)[0]).toMatchObject({
      level: 'WARN',
      message: 'task failed',
      service: 'test',
      code: -32000,
      extra_message: 'disk full on worker 7',
      extra_level: 'x',
      extra_timestamp: 1,
      extra_service: 's',
      extra_sampling_rate: 0.5,
      error: { name: 'Error', message: 'boom' },
    });
  });

  it('are refused at compile time for code that logs through Log', () => {
    const log: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    // npx tsc --noEmit fails on an unused @ts-expect-error, so these lines fail the build if the guard goes.
    // @ts-expect-error a failure's text must not be logged as `message`
    log.warn('task failed', { message: 'disk full' });
    const details = { code: 1, level: 'high' };
    // @ts-expect-error nor any other reserved key, in an object built elsewhere
    log.info('x', details);
    log.warn('task failed', { error_message: 'disk full', error: new Error('e') });
  });
});

/** A queue that keeps what is sent to it. */
function recordingQueue<T>(name: string): Queue<T> & { sent: T[] } {
  const sent: T[] = [];
  return { name, sent, send: async (message) => void sent.push(message), sendBatch: async (messages) => void sent.push(...messages.map((entry) => entry.message)) };
}

describe('a failure’s detail, written the way the pipeline writes it, reaches the log line', () => {
  const taskMessage = (text: string): TaskMessage => ({ team_id: 'T1', channel: 'C1', ts: '1700000000.000100', request_id: randomUUID(), event_id: 'Ev1', user_id: 'U1', text, received_at: Date.now() });
  const delivery = (body: unknown, receiveCount = 1) => ({ messageId: randomUUID(), body: JSON.stringify(body), receiveCount, attributes: {} });
  const schedule = { firstDelaySeconds: 1, factor: 2, maxDelaySeconds: 4, deadlineSeconds: 60 };

  function pipeline(agent: ExecutionAgent) {
    const polls = recordingQueue<PollMessage>('polls');
    const replies = recordingQueue<ReplyMessage>('replies');
    const options = { agent, polls, replies, messages: userMessages(), schedule, maxReceiveCount: 3, log: createLogger('verification') };
    return { polls, replies, invoker: createAgentInvoker(options), poller: createAsyncResult(options) };
  }

  it('a task the execution zone fails: its words are in the execution zone’s line, the invoker’s and the poller’s', async () => {
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '20' }), log: createLogger('execution') });
    const { invoker, poller, polls } = pipeline(new ExecutionAgent('default', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch)));

    const lines = parsed(
      await captureOutput(async () => {
        await invoker(delivery(taskMessage('now #fail')), {}); // fails within the sync budget
        await invoker(delivery(taskMessage('later #sleep=60 #fail')), {}); // accepted, fails while polled
        await new Promise((resolve) => setTimeout(resolve, 250));
        await poller(delivery(polls.sent[0]), {});
      }),
    );

    const failed = lines.filter((line) => line.message === 'task failed');
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ service: 'execution', code: -32000, error_message: 'The echo executor was asked to fail' }),
        expect.objectContaining({ service: 'verification', category: 'failed', code: -32000, error_message: 'The echo executor was asked to fail' }),
        expect.objectContaining({ service: 'verification', category: 'failed', code: -32000, error_message: 'The echo executor was asked to fail', polls: 1 }),
      ]),
    );
    expect(failed.filter((line) => line.service === 'verification')).toHaveLength(2);
    expect(lines.map((line) => line.message)).not.toContainEqual(expect.stringMatching(/reserved key/));
  });

  it('a transient failure: its words are in the invoker’s and the poller’s retry lines', async () => {
    const busy = failure('busy', 'transport:throttled', 'HTTP 429 from the agent: slow down', true);
    const agent = { name: 'stub', protocol: 'execute-task', transport: 'in-process', start: async () => busy, poll: async () => busy } as unknown as ExecutionAgent;
    const { invoker, poller } = pipeline(agent);
    const poll: PollMessage = { team_id: 'T1', channel: 'C1', ts: '1700000000.000100', request_id: randomUUID(), event_id: 'Ev1', user_id: 'U1', handle: { taskId: 'task-1' }, attempt: 0, accepted_at: Date.now(), received_at: Date.now() };

    const lines = parsed(
      await captureOutput(async () => {
        await expect(invoker(delivery(taskMessage('hello')), {})).rejects.toThrow();
        await poller(delivery(poll), {});
      }),
    );

    const detail = { category: 'busy', code: 'transport:throttled', error_message: 'HTTP 429 from the agent: slow down' };
    expect(lines).toContainEqual(expect.objectContaining({ message: 'transient failure; the task will be retried', ...detail, receive_count: 1 }));
    expect(lines).toContainEqual(expect.objectContaining({ message: 'transient failure while polling; polling on', ...detail, task_id: 'task-1' }));
  });
});
