import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope, type SlackEventKind } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi, type FakeSlackFile } from '../support/fake-slack-api';

/**
 * A conversation-aware assistant end to end (docs/contract.md, "Thread context", "Attachments"):
 * the local stack's four verification functions, the real @slack/web-api client against the fake
 * Slack API (threads through `conversations.replies`, files behind the bot token), and a real
 * execution runtime over https on loopback — behind a recorder that keeps every `execute_task`
 * body exactly as the execution zone received it.
 */
const SIGNING_SECRET = 'conversation-signing-secret-0123456789';
const CHANNEL = 'C0CONVO';
const TEAM = 'T0FAKE';

// The smallest valid PNG (1×1) and a one-page PDF header: real signatures, checked by their bytes.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

type ExecuteBody = { method: string; params: Record<string, unknown> & { messages?: Array<Record<string, unknown>>; attachments?: Array<Record<string, unknown>> } };

let slack: FakeSlackApi;
let stack: LocalStack;
let runtimeServer: Server;
let recorder: Server;
const received: ExecuteBody[] = [];
const rawBodies: string[] = [];

beforeAll(async () => {
  slack = await startFakeSlackApi();
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000' }), log: createLogger('execution') });
  runtimeServer = createExecutionHttpServer(runtime);
  await new Promise<void>((resolve) => runtimeServer.listen(0, '127.0.0.1', resolve));
  const runtimeUrl = `http://127.0.0.1:${(runtimeServer.address() as AddressInfo).port}/invocations`;
  // What the execution zone receives, byte for byte, before the runtime answers it.
  recorder = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      rawBodies.push(body);
      const parsed = JSON.parse(body) as ExecuteBody;
      if (parsed.method === 'execute_task') received.push(parsed);
      void fetch(runtimeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
  stack = await startLocalStack({
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...slackAppEnv(slack, SIGNING_SECRET),
      TRANSPORT: 'https',
      EXECUTION_URL: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/invocations`,
      POLL_FIRST_DELAY_S: '1',
      // A stalled download ends with the read budget, well before the stall.
      SLACK_READ_BUDGET_MS: '2000',
    },
    verificationPort: 0,
    timeScale: 0.05,
    log: createLogger('local'),
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
  for (const server of [recorder, runtimeServer]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
});

beforeEach(() => {
  slack.reset();
  received.length = 0;
  rawBodies.length = 0;
});

/** Sends a message event signed like Slack and waits for the pipeline to post its answer. */
async function say(kind: SlackEventKind, text: string, options: { threadTs?: string; files?: FakeSlackFile[]; user?: string; channel?: string } = {}): Promise<{ ts: string; status: number }> {
  const ts = slack.addMessage({ channel: options.channel ?? CHANNEL, user: options.user ?? 'U0ALICE', text: kind === 'mention' ? `<@${FAKE_BOT_USER_ID}> ${text}` : text, ...(options.threadTs ? { thread_ts: options.threadTs } : {}), ...(options.files ? { files: options.files } : {}) });
  const { body } = slackEventEnvelope(kind, { text, ts, channel: options.channel ?? CHANNEL, teamId: TEAM, userId: options.user ?? 'U0ALICE', botUserId: FAKE_BOT_USER_ID, ...(options.threadTs ? { threadTs: options.threadTs } : {}), ...(options.files ? { files: options.files } : {}) });
  const response = await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET);
  if (response.status === 200) await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
  return { ts, status: response.status };
}

const lastPost = () => slack.posts[slack.posts.length - 1]!;

describe('thread context', () => {
  it('a three-turn thread reaches the executor in order, with the right roles and authors, without the current message', async () => {
    const first = await say('mention', 'What is the capital of France?');
    expect(lastPost().text).toBe('echo: What is the capital of France?');
    await say('mention', 'And of Italy?', { threadTs: first.ts, user: 'U0BOB' });
    const third = await say('mention', 'Which is bigger? #context', { threadTs: first.ts });

    const task = received[received.length - 1]!;
    expect(task.params.text).toBe('Which is bigger? #context');
    expect(task.params.messages).toEqual([
      { role: 'user', text: 'What is the capital of France?', user_id: 'U0ALICE', ts: first.ts },
      { role: 'assistant', text: 'echo: What is the capital of France?', ts: expect.any(String) },
      { role: 'user', text: 'And of Italy?', user_id: 'U0BOB', ts: expect.any(String) },
      { role: 'assistant', text: 'echo: And of Italy?', ts: expect.any(String) },
    ]);
    // Oldest first, and none at or after the message being answered.
    const stamps = task.params.messages!.map((message) => Number(message.ts));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(stamps.every((stamp) => stamp < Number(third.ts))).toBe(true);
    expect(lastPost()).toMatchObject({ thread_ts: first.ts, text: 'echo: Which is bigger? #context\ncontext: 4 turns (user, assistant, user, assistant)' });
  });

  it('a thread of 1,000 messages is read in pages and cut to the newest, with a note', async () => {
    const parent = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: 'the start of a long thread' });
    for (let index = 1; index < 1000; index += 1) slack.addMessage({ channel: CHANNEL, user: index % 2 ? 'U0BOB' : 'U0ALICE', text: `line ${index}`, thread_ts: parent });
    await say('mention', 'summarise #context', { threadTs: parent });

    const reads = slack.requests.filter((request) => request.method === 'conversations.replies');
    expect(reads.length).toBe(5);
    const messages = received[0]!.params.messages!;
    expect(messages).toHaveLength(50);
    // The newest 49 and the thread's first message.
    expect(messages[0]).toMatchObject({ text: 'the start of a long thread' });
    expect(messages[messages.length - 1]).toMatchObject({ text: 'line 999' });
    expect(lastPost().text).toContain('context: 50 turns');
    expect(lastPost().text).toContain('ℹ️ I read only the latest 50 earlier messages of this thread.');
  });

  it('a later page refused (rate limited) still gives the context read so far, and says the newest part is missing', async () => {
    const parent = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: 'the start' });
    for (let index = 1; index < 450; index += 1) slack.addMessage({ channel: CHANNEL, user: 'U0BOB', text: `line ${index}`, thread_ts: parent });
    slack.failWhen('conversations.replies', (body) => typeof body.cursor === 'string' && body.cursor !== '', { retryAfterSeconds: 120 });
    await say('mention', 'what happened? #context', { threadTs: parent });

    const messages = received[0]!.params.messages!;
    expect(messages[0]).toMatchObject({ text: 'the start' });
    // The newest of what was read: the first page ends at line 199.
    expect(messages[messages.length - 1]).toMatchObject({ text: 'line 199' });
    expect(lastPost().text).toContain("ℹ️ This thread is too long for me to read to its end; I answered from 50 of its earlier messages, not the most recent ones.");
  });

  it('a rate-limited read answers without the context and says so', async () => {
    const parent = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: 'hello' });
    slack.failNext('conversations.replies', { retryAfterSeconds: 120 });
    await say('mention', 'still there? #context', { threadTs: parent });

    expect(received[0]!.params.messages).toBeUndefined();
    expect(lastPost().text).toBe("echo: still there? #context\ncontext: 0 turns ()\n\nℹ️ I couldn't read the earlier messages of this thread, so I answered this message on its own.");
  });

  it('a thread whose first message was deleted still answers, with what is left', async () => {
    const parent = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: 'a secret plan' });
    slack.addMessage({ channel: CHANNEL, user: 'U0BOB', text: 'tell me more', thread_ts: parent });
    slack.deleteMessage(CHANNEL, parent);
    await say('mention', 'what was it? #context', { threadTs: parent });

    expect(received[0]!.params.messages).toEqual([{ role: 'user', text: 'tell me more', user_id: 'U0BOB', ts: expect.any(String) }]);
    expect(lastPost().text).toContain('context: 1 turns (user)');
  });
});

describe('follow-ups without a mention', () => {
  it('answers a reply in a thread the bot answered in, and not in a thread it never answered', async () => {
    const first = await say('mention', 'Start a thread');
    const answered = slack.posts.length;
    await say('thread-reply', 'and a follow-up #context', { threadTs: first.ts });
    expect(slack.posts.length).toBe(answered + 1);
    expect(lastPost()).toMatchObject({ thread_ts: first.ts, text: 'echo: and a follow-up #context\ncontext: 2 turns (user, assistant)' });

    const elsewhere = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text: 'people talking' });
    await say('thread-reply', 'just chatting', { threadTs: elsewhere });
    expect(slack.posts.length).toBe(answered + 1);
  });

  it('answers a mention in a thread once, though Slack sends it twice (app_mention and message)', async () => {
    const first = await say('mention', 'Start a thread to mention in');
    const answered = slack.posts.length;
    const text = `<@${FAKE_BOT_USER_ID}> once more?`;
    const ts = slack.addMessage({ channel: CHANNEL, user: 'U0ALICE', text, thread_ts: first.ts });
    for (const kind of ['mention', 'thread-reply'] as const) {
      const { body } = slackEventEnvelope(kind, { text: kind === 'mention' ? 'once more?' : text, ts, threadTs: first.ts, channel: CHANNEL, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID });
      expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
    }
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    expect(slack.posts.slice(answered).map((post) => post.text)).toEqual(['echo: once more?']);
  });

  it('does not answer a reply addressed to someone else, nor the message event of a mention', async () => {
    const first = await say('mention', 'Start another thread');
    const answered = slack.posts.length;
    await say('thread-reply', '<@U0BOB> what do you think?', { threadTs: first.ts });
    // Slack sends a mention twice: as app_mention and as a message; only the first is a task.
    await say('thread-reply', `<@${FAKE_BOT_USER_ID}> are you there?`, { threadTs: first.ts });
    expect(slack.posts.length).toBe(answered);
    expect(received).toHaveLength(1);
  });
});

describe('files', () => {
  it('a mention with two images and a PDF reaches the executor with the right bytes, and the bot token never does', async () => {
    const first = slack.addFile({ name: 'one.png', mimetype: 'image/png', bytes: PNG });
    const second = slack.addFile({ name: 'two.png', mimetype: 'image/png', bytes: PNG });
    const pdf = slack.addFile({ name: 'report.pdf', mimetype: 'application/pdf', bytes: PDF });
    await say('mention', 'what do you see?', { files: [first, second, pdf] });

    const attachments = received[0]!.params.attachments!;
    expect(attachments.map(({ name, mimetype, size }) => ({ name, mimetype, size }))).toEqual([
      { name: 'one.png', mimetype: 'image/png', size: PNG.length },
      { name: 'two.png', mimetype: 'image/png', size: PNG.length },
      { name: 'report.pdf', mimetype: 'application/pdf', size: PDF.length },
    ]);
    expect(Buffer.from(attachments[2]!.data as string, 'base64').equals(PDF)).toBe(true);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(lastPost().text).toBe(
      [
        'echo: what do you see?',
        `attachment: one.png image/png ${PNG.length} bytes sha256=${sha(PNG)}`,
        `attachment: two.png image/png ${PNG.length} bytes sha256=${sha(PNG)}`,
        `attachment: report.pdf application/pdf ${PDF.length} bytes sha256=${sha(PDF)}`,
      ].join('\n'),
    );
    // Downloads carried the token; what crossed to the execution zone carries neither it nor a Slack URL.
    expect(slack.downloads.map((download) => download.authorized)).toEqual([true, true, true]);
    for (const body of rawBodies) {
      expect(body).not.toContain(slack.token);
      expect(body).not.toContain('/files-pri/');
    }
  });

  it('a direct message that carries a file (file_share) is a task', async () => {
    const notes = slack.addFile({ name: 'notes.txt', mimetype: 'text/plain', bytes: Buffer.from('remember the milk\n') });
    await say('dm', '', { files: [notes], channel: 'D0DIRECT' });

    expect(received[0]!.params).toMatchObject({ text: 'Please look at the attached files.', channel: 'D0DIRECT' });
    expect(lastPost()).toMatchObject({ channel: 'D0DIRECT', text: expect.stringContaining('attachment: notes.txt text/plain 18 bytes') });
  });

  it('files that cannot be sent are named in the answer with the reason, and the answer still comes', async () => {
    const fake = slack.addFile({ name: 'fake.png', mimetype: 'image/png', bytes: PDF });
    const big = slack.addFile({ name: 'huge.pdf', mimetype: 'application/pdf', bytes: PDF, size: 50 * 1024 * 1024 });
    const gone = slack.addFile({ name: 'gone.pdf', mimetype: 'application/pdf', bytes: PDF });
    const slow = slack.addFile({ name: 'slow.pdf', mimetype: 'application/pdf', bytes: PDF });
    const good = slack.addFile({ name: 'good.png', mimetype: 'image/png', bytes: PNG });
    slack.failFile(gone.id, { status: 404 });
    slack.failFile(slow.id, { stallMs: 20_000 });
    await say('mention', 'look at these', { files: [fake, big, gone, slow, good] });

    expect(received[0]!.params.attachments!.map((attachment) => attachment.name)).toEqual(['good.png']);
    const text = lastPost().text;
    expect(text).toMatch(/^echo: look at these\nattachment: good\.png image\/png/);
    expect(text).toContain('fake.png (its content is not a PNG file)');
    expect(text).toContain('huge.pdf (it is larger than 4.5 MB)');
    expect(text).toContain('gone.pdf (Slack no longer serves it)');
    expect(text).toContain('slow.pdf (it took too long to download)');
    // The 50 MB file was never fetched.
    expect(slack.downloads.map((download) => download.id)).not.toContain(big.id);
    // The stalled download was cut by the read budget (2 s), not the 20 s stall: it is named as too slow, not attached.
  }, 30_000);

  it('30 images: the first 20 go, the rest are named', async () => {
    const images = Array.from({ length: 30 }, (_, index) => slack.addFile({ name: `img${index}.png`, mimetype: 'image/png', bytes: PNG }));
    await say('mention', 'thirty', { files: images });
    expect(received[0]!.params.attachments).toHaveLength(20);
    expect(lastPost().text).toContain('img29.png (only the first 20 images of a message are read)');
  });

});
