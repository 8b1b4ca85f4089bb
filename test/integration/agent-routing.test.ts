import { createServer, type Server } from 'node:http';
import { readBody } from '../../src/execution/hosts/http-host';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { closeServer, listenOnLoopback } from '../support/http';

/**
 * Several execution agents behind one assistant (issue 27; docs/architecture.md §4.3, "Routing"),
 * end to end: the local stack's four functions, the real @slack/web-api client against the fake
 * Slack API, and three agents on loopback —
 * - "general", the default: the project's runtime over https;
 * - "legal": an @a2a-js/sdk agent (protocol a2a), answering in #legal and to `legal:`, posted as
 *   "Legal" with :scales:;
 * - "sre": the project's runtime behind a recorder (every JSON-RPC call it receives is kept),
 *   answering in #incidents and to `sre:`, posted as "SRE Bot" with :fire:. It accepts a task that
 *   takes longer than 100 ms, so its polls can be followed.
 */
const SIGNING_SECRET = 'agent-routing-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const GENERAL_CHANNEL = 'C0GENERAL';
const LEGAL_CHANNEL = 'C0LEGAL';
const INCIDENTS_CHANNEL = 'C0INCIDENTS';

type RecordedCall = { method: string; params: Record<string, unknown> };

/** A runtime on loopback behind a server that keeps every JSON-RPC call before passing it on. */
async function startRecordingAgent(env: Record<string, string>): Promise<{ url: string; calls: RecordedCall[]; close(): Promise<void> }> {
  const runtime: RunningRuntime = await startExecutionRuntime(env);
  const calls: RecordedCall[] = [];
  const server: Server = createServer(async (request, response) => {
    const body = (await readBody(request, 1_000_000)) as Buffer;
    calls.push(JSON.parse(body.toString()) as RecordedCall);
    const answer = await fetch(runtime.invocationsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(body), signal: AbortSignal.timeout(10_000) });
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
  });
  const base = await listenOnLoopback(server);
  return {
    url: `${base}/invocations`,
    calls,
    close: async () => {
      await closeServer(server);
      await runtime.close();
    },
  };
}

let slack: FakeSlackApi;
let stack: LocalStack;
let general: Awaited<ReturnType<typeof startRecordingAgent>>;
let sre: Awaited<ReturnType<typeof startRecordingAgent>>;
let legal: A2aTestAgent;

function agentsConfig(): unknown[] {
  return [
    { name: 'general', protocol: 'execute-task', transport: 'https', url: general.url, default: true },
    { name: 'legal', protocol: 'a2a', transport: 'https', url: legal.url, channels: [LEGAL_CHANNEL], prefix: 'legal', displayName: 'Legal', icon: ':scales:' },
    { name: 'sre', protocol: 'execute-task', transport: 'https', url: sre.url, channels: [INCIDENTS_CHANNEL], prefix: 'sre', displayName: 'SRE Bot', icon: ':fire:' },
  ];
}

function stackEnv(agents: unknown[]): NodeJS.ProcessEnv {
  return { POWERTOOLS_LOG_LEVEL: 'SILENT', ...slackAppEnv(slack, SIGNING_SECRET), EXECUTION_AGENTS: JSON.stringify(agents), POLL_FIRST_DELAY_S: '1' };
}

beforeAll(async () => {
  slack = await startFakeSlackApi();
  general = await startRecordingAgent({ SYNC_BUDGET_MS: '5000' });
  sre = await startRecordingAgent({ SYNC_BUDGET_MS: '100' });
  legal = await startSdkA2aAgent();
  stack = await startLocalStack({ env: stackEnv(agentsConfig()), verificationPort: 0, timeScale: 0.05, log: createLogger('local') });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
  await Promise.all([general?.close(), sre?.close(), legal?.close()]);
});

beforeEach(() => {
  slack.reset();
  general.calls.length = 0;
  sre.calls.length = 0;
  legal.requests.length = 0;
});

/** A mention signed like Slack, in `channel` (in a thread with `threadTs`); resolves once the pipeline is idle. */
async function mention(channel: string, text: string, threadTs?: string): Promise<string> {
  const ts = slack.addMessage({ channel, user: 'U0ALICE', text: `<@${FAKE_BOT_USER_ID}> ${text}`, ...(threadTs ? { thread_ts: threadTs } : {}) });
  const { body } = slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID, ...(threadTs ? { threadTs } : {}) });
  const response = await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET);
  expect(response.status).toBe(200);
  await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
  return ts;
}

/** The texts each agent was asked, in order. */
const generalTexts = () => general.calls.filter((call) => call.method === 'execute_task').map((call) => call.params.text);
const sreTexts = () => sre.calls.filter((call) => call.method === 'execute_task').map((call) => call.params.text);
const legalTexts = () =>
  legal.requests
    .filter((request) => request.body.method === 'SendMessage' || request.body.method === 'message/send')
    .map((request) => {
      const message = (request.body.params as { message: { parts: Array<{ text?: string }> } }).message;
      return message.parts.map((part) => part.text ?? '').join('');
    });

/** What each agent was asked, in order: one look at all three, so "only that agent" is one assertion. */
const asked = () => ({ general: generalTexts(), legal: legalTexts(), sre: sreTexts() });

/** Who each message the app created in the thread was posted as (chat.postMessage, chat.startStream). */
function authorsIn(threadTs: string): Array<{ method: string; username?: unknown; icon_emoji?: unknown }> {
  return slack.requests
    .filter((request) => (request.method === 'chat.postMessage' || request.method === 'chat.startStream') && request.body.thread_ts === threadTs && request.answer?.ok)
    .map((request) => ({ method: request.method, username: request.body.username, icon_emoji: request.body.icon_emoji }));
}

/** The text of the app's last post in the thread. */
const answerIn = (threadTs: string) => slack.posts.filter((post) => post.thread_ts === threadTs).at(-1)?.text;

describe('routing between execution agents, end to end', () => {
  it('a message in a routed channel reaches only its agent, and the answer is posted under its display name and icon', async () => {
    const ts = await mention(LEGAL_CHANNEL, 'may we ship this clause?');

    expect(asked()).toEqual({ general: [], legal: ['may we ship this clause?'], sre: [] });
    expect(answerIn(ts)).toBe('a2a echo: may we ship this clause?');
    const authors = authorsIn(ts);
    expect(authors.length).toBeGreaterThan(0);
    expect(authors.every((author) => author.username === 'Legal' && author.icon_emoji === ':scales:')).toBe(true);
  });

  it('a message elsewhere reaches the default agent, posted as the app itself', async () => {
    const ts = await mention(GENERAL_CHANNEL, 'hello');

    expect(asked()).toEqual({ general: ['hello'], legal: [], sre: [] });
    expect(answerIn(ts)).toBe('echo: hello');
    expect(authorsIn(ts)).toEqual([{ method: 'chat.postMessage', username: undefined, icon_emoji: undefined }]);
  });

  it('a prefixed message reaches the named agent, wherever it is, without the prefix', async () => {
    const ts = await mention(LEGAL_CHANNEL, 'SRE:  the disk is full');

    expect(asked()).toEqual({ general: [], legal: [], sre: ['the disk is full'] });
    expect(answerIn(ts)).toBe('echo: the disk is full');
    expect(authorsIn(ts)).toEqual([expect.objectContaining({ username: 'SRE Bot', icon_emoji: ':fire:' })]);
  });

  it("a follow-up in a thread stays with the thread's agent, unless it names another by prefix", async () => {
    const parent = await mention(GENERAL_CHANNEL, 'legal: is this contract fine?');
    await mention(GENERAL_CHANNEL, 'and the second clause?', parent);

    expect(asked()).toEqual({ general: [], legal: ['is this contract fine?', 'and the second clause?'], sre: [] });

    // Another agent named by prefix takes the thread from here on.
    await mention(GENERAL_CHANNEL, 'sre: is the server up?', parent);
    await mention(GENERAL_CHANNEL, 'and the database?', parent);
    expect(asked()).toEqual({ general: [], legal: ['is this contract fine?', 'and the second clause?'], sre: ['is the server up?', 'and the database?'] });
  });

  it('the polls of an accepted task reach the agent that accepted it, and only that agent', async () => {
    const ts = await mention(INCIDENTS_CHANNEL, 'look into it #sleep=600');

    const methods = sre.calls.map((call) => call.method);
    expect(methods[0]).toBe('execute_task');
    // Accepted (it takes longer than the 100 ms the sre runtime answers in), then polled there until done.
    expect(methods.filter((method) => method === 'get_task_result').length).toBeGreaterThan(0);
    expect(general.calls).toEqual([]);
    expect(legal.requests).toEqual([]);
    expect(answerIn(ts)).toBe('echo: look into it #sleep=600');
    const authors = authorsIn(ts);
    expect(authors.length).toBeGreaterThan(0);
    expect(authors.every((author) => author.username === 'SRE Bot')).toBe(true);
  });

  it('the playground lists the agents and their channels, and a message said there in a routed channel reaches its agent', async () => {
    const state = (await (await fetch(`${stack.playgroundUrl}api/state`)).json()) as { agents: Array<{ name: string; channels: string[]; prefix?: string; default: boolean }> };
    expect(state.agents).toEqual([
      { name: 'general', channels: [], default: true },
      { name: 'legal', channels: [LEGAL_CHANNEL], prefix: 'legal', default: false },
      { name: 'sre', channels: [INCIDENTS_CHANNEL], prefix: 'sre', default: false },
    ]);

    const said = await fetch(`${stack.playgroundUrl}api/say`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'from the playground', channel: INCIDENTS_CHANNEL }) });
    expect(said.status).toBe(200);
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(asked()).toEqual({ general: [], legal: [], sre: ['from the playground'] });

    const refused = await fetch(`${stack.playgroundUrl}api/say`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'x', channel: '#incidents' }) });
    expect(refused.status).toBe(400);
  });

  it.each([
    ['a channel claimed by two agents', (list: Array<Record<string, unknown>>) => [list[0], list[1], { ...list[2], channels: [LEGAL_CHANNEL] }], /EXECUTION_AGENTS\[2\]\.channels: channel C0LEGAL is claimed by agents "legal" and "sre"/],
    ['two defaults', (list: Array<Record<string, unknown>>) => [list[0], { ...list[1], default: true }, list[2]], /exactly one agent must have "default": true \(found 2: "general", "legal"\)/],
    ['an empty prefix', (list: Array<Record<string, unknown>>) => [list[0], { ...list[1], prefix: '' }, list[2]], /EXECUTION_AGENTS\[1\]\.prefix: prefix must be one word/],
    ['a prefix used twice', (list: Array<Record<string, unknown>>) => [list[0], list[1], { ...list[2], prefix: 'LEGAL' }], /EXECUTION_AGENTS\[2\]\.prefix: prefix "legal:" is used by agents "legal" and "sre"/],
  ])('a configuration with %s is refused at start, naming its place', async (_what, change, message) => {
    const bad = change(agentsConfig() as Array<Record<string, unknown>>);
    await expect(startLocalStack({ env: stackEnv(bad), verificationPort: 0, log: createLogger('local') })).rejects.toThrow(message);
  });
});
