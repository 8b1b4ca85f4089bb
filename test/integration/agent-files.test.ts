import { createHash } from 'node:crypto';
import { echoFileBytes } from '../../src/execution/executors/echo-files';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { A2A_AGENT_FILE, startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { startFileHost, type FileHost } from '../support/file-host';

/**
 * Files the agent makes land in the thread, exactly once (docs/architecture.md, "Files the agent
 * makes"): the local stack's four verification functions, the real @slack/web-api client against
 * the fake Slack API (its three upload calls), and the echo agent over https (`#file=<name>`) or an
 * @a2a-js/sdk agent returning a file part (A2A 1.0 and 0.3).
 */
const SIGNING_SECRET = 'files-signing-secret-0123456789abcdef';
const CHANNEL = 'C0FILES';
const TEAM = 'T0FAKE';
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let slack: FakeSlackApi;
let runtime: RunningRuntime;
let a2a: A2aTestAgent;
let host: FileHost;
const stacks: LocalStack[] = [];

beforeAll(async () => {
  [slack, runtime, a2a, host] = await Promise.all([startFakeSlackApi(), startExecutionRuntime({ SYNC_BUDGET_MS: '2000' }), startSdkA2aAgent({ legacyCompat: true }), startFileHost()]);
});
afterAll(async () => {
  for (const stack of stacks) await stack.stop();
  await Promise.all([slack.close(), runtime.close(), a2a.close(), host.close()]);
});
beforeEach(() => slack.reset());

async function stackWith(env: Record<string, string>): Promise<LocalStack> {
  const stack = await startLocalStack({
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', ...slackAppEnv(slack, SIGNING_SECRET), POLL_FIRST_DELAY_S: '1', ...env },
    verificationPort: 0,
    timeScale: 0.05,
    log: createLogger('local'),
  });
  stacks.push(stack);
  return stack;
}

/** A message event signed like Slack; resolves once the pipeline is idle. */
async function say(stack: LocalStack, text: string): Promise<string> {
  const ts = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: `<@${FAKE_BOT_USER_ID}> ${text}` });
  const { body } = slackEventEnvelope('mention', { text, ts, channel: CHANNEL, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID });
  const response = await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET);
  expect(response.status).toBe(200);
  await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
  return ts;
}

/** Whether the thread shows this answer: posted, or finished in a live message (a slow task gets a sign of life first). */
const answerShown = (text: string) => slack.posts.some((post) => post.text === text) || slack.streams.some((stream) => stream.text === text) || slack.updates.some((update) => update.text === text);
const warnings = () => slack.posts.filter((post) => post.text.startsWith(':warning:'));

describe('the echo agent over https', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await stackWith({ TRANSPORT: 'https', EXECUTION_URL: runtime.invocationsUrl });
  });

  it('#file=report.csv and #file=chart.png: the answer, then both files in its thread with the agent’s bytes, once each', async () => {
    // Act
    const ts = await say(stack, 'numbers and a chart #file=report.csv #file=chart.png');
    // Assess
    expect(answerShown('echo: numbers and a chart #file=report.csv #file=chart.png')).toBe(true);
    expect(warnings()).toHaveLength(0);
    expect(slack.fileShares.map((share) => [share.filename, share.channel, share.thread_ts])).toEqual([
      ['report.csv', CHANNEL, ts],
      ['chart.png', CHANNEL, ts],
    ]);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(echoFileBytes('report.csv')));
    expect(sha(slack.fileShares[1]!.bytes)).toBe(sha(echoFileBytes('chart.png')));
  });

  it('a task that runs past the sync budget: polled, then its file shared once', async () => {
    await say(stack, 'slowly #sleep=2500 #file=slow.csv');
    expect(slack.fileShares.map((share) => share.filename)).toEqual(['slow.csv']);
  });

  it.each(['files.getUploadURLExternal', 'upload_url', 'files.completeUploadExternal'])('%s lands and answers 503 once: still one file, with its bytes', async (method) => {
    // Prepare
    slack.failNext(method, { status: 503, afterEffect: true });
    // Act
    await say(stack, `a file despite a 503 #file=${method}.csv`);
    // Assess
    expect(slack.injected['http_503 after effect']).toBe(1);
    expect(slack.fileShares).toHaveLength(1);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(echoFileBytes(`${method}.csv`)));
    expect(answerShown(`echo: a file despite a 503 #file=${method}.csv`)).toBe(true);
  });

  it('a redelivered reply message: still one answer, one file', async () => {
    // Prepare
    const sent: string[] = [];
    const unsubscribe = stack.pipeline.queues.replies.subscribe((event) => {
      if (event.type === 'sent') sent.push(event.body);
    });
    await say(stack, 'once only #file=once.csv');
    unsubscribe();
    // Act: the same reply again, as SQS may deliver it
    await stack.pipeline.queues.replies.send(JSON.parse(sent[0]!));
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
    // Assess
    expect(slack.fileShares).toHaveLength(1);
    expect(slack.posts.length + slack.streams.length).toBe(1);
  });

  it.each([
    ['its size', { maxFileBytes: 10 }, 'this workspace does not take files this large'],
    ['its type', { blockedExtensions: ['csv'] }, 'this workspace does not allow files of this type'],
  ])('a file the workspace refuses for %s: one clear line in the thread, the answer stands', async (_what, policy, reason) => {
    // Prepare
    slack.setUploadPolicy(policy);
    // Act
    const ts = await say(stack, 'a refused file #file=refused.csv');
    // Assess
    expect(slack.fileShares).toHaveLength(0);
    expect(answerShown('echo: a refused file #file=refused.csv')).toBe(true);
    expect(warnings().map((post) => [post.text, post.thread_ts])).toEqual([[`:warning: The file \`refused.csv\` was not shared: ${reason}.`, ts]]);
  });

  it('a file past the contract’s inline limit: one line, the other file shared', async () => {
    await say(stack, 'too big #file=huge.bin:6000000 #file=small.txt');
    expect(slack.fileShares.map((share) => share.filename)).toEqual(['small.txt']);
    expect(answerShown('echo: too big #file=huge.bin:6000000 #file=small.txt')).toBe(true);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.text).toMatch(/^:warning: The file `huge.bin` was not shared: data must be at most 5242880 bytes/);
  });
});

describe.each(['1.0', '0.3'])('an @a2a-js/sdk agent speaking A2A %s', (version) => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await stackWith({ TRANSPORT: 'https', EXECUTION_URL: a2a.url, EXECUTION_PROTOCOL: 'a2a', A2A_VERSION: version });
  });

  it.each(['a message', 'a task'])('returns a file part with %s: it lands once in the thread with the agent’s bytes', async (shape) => {
    await say(stack, `make a report #file${shape === 'a task' ? ' #task #delay=50' : ''}`);
    expect(slack.fileShares.map((share) => share.filename)).toEqual([A2A_AGENT_FILE.name]);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(Buffer.from(A2A_AGENT_FILE.bytes)));
  });
});

describe('GUARDRAIL=builtin, output masked (docs/operations.md, "Guardrails")', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await stackWith({ TRANSPORT: 'https', EXECUTION_URL: runtime.invocationsUrl, GUARDRAIL: 'builtin', GUARDRAIL_INPUT_MODE: 'detect', GUARDRAIL_OUTPUT_MODE: 'mask' });
  });

  it('the names of the agent’s files are masked before Slack shows them: shared ones (name and title) and refused ones', async () => {
    await say(stack, 'files #file=taro.yamada@example.com.csv #file=090-1234-5678.bin:6000000');
    expect(slack.fileShares.map((share) => [share.filename, share.title])).toEqual([['[EMAIL-1].csv', '[EMAIL-1].csv']]);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(echoFileBytes('taro.yamada@example.com.csv')));
    expect(warnings().map((post) => post.text)).toEqual([expect.stringMatching(/^:warning: The file `\[PHONE-1\]\.bin` was not shared/)]);
    const calls = slack.requests.map((request) => JSON.stringify(request.body)).join('\n');
    expect(calls).not.toMatch(/taro\.yamada@|090-1234-5678/);
  });
});
