import type { Log } from '../../src/observability/logger';
import type { SlackCallOptions } from '../../src/slack/slack-replies';
import { FileDownloadError, type SlackConversations, type SlackThreadMessage, type ThreadRead } from '../../src/slack/slack-conversations';
import { DEFAULT_ATTACHMENT_LIMITS } from '../../src/verification/invoke/attachment-limits';
import type { TaskFile } from '../../src/verification/queues/task-file';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { readTaskInputs, type TaskInputReading } from '../../src/verification/invoke/task-inputs';
import { fill, userMessages } from '../../src/verification/messages/user-messages';
import { manualClock } from '../support/manual-clock';

const messages = userMessages();
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

const task = (extra: Partial<TaskMessage> = {}): TaskMessage => ({
  team_id: 'T1',
  channel: 'C1',
  ts: '100.5',
  thread_ts: '100.0',
  request_id: '0b6f1f4e-8d2a-4c1e-9f3b-2a7d5c9e1f00',
  event_id: 'Ev1',
  user_id: 'U1',
  text: 'and now?',
  received_at: 0,
  bot_user_id: 'UBOT',
  ...extra,
});

const pngFile = (id: string, extra: Partial<TaskFile> = {}): TaskFile => ({ id, name: `${id}.png`, mimetype: 'image/png', size: PNG.length, url: `https://files.slack.com/${id}`, ...extra });

type Calls = {
  readThread: Array<{ thread: { channel: string; threadTs: string; before: string }; limits: { maxPages: number }; options?: SlackCallOptions }>;
  downloads: Array<{ url: string; options?: SlackCallOptions }>;
};

/** A SlackConversations that records its calls; `readThread` and `downloadFile` are given per test. */
function stubSlack(handlers: { readThread?: () => Promise<ThreadRead>; downloadFile?: (url: string) => Promise<Buffer> }) {
  const calls: Calls = { readThread: [], downloads: [] };
  const slack: SlackConversations = {
    readThread: async (thread, limits, options) => {
      calls.readThread.push({ thread, limits, ...(options ? { options } : {}) });
      if (!handlers.readThread) throw new Error('readThread was not expected');
      return handlers.readThread();
    },
    downloadFile: async (url, _limits, options) => {
      calls.downloads.push({ url, ...(options ? { options } : {}) });
      if (!handlers.downloadFile) throw new Error('downloadFile was not expected');
      return handlers.downloadFile(url);
    },
  };
  return { slack, calls };
}

const silentLog = (): Log & { warn: jest.Mock } => ({ debug: () => undefined, info: () => undefined, warn: jest.fn(), error: () => undefined });

const reading = (slack: SlackConversations, extra: Partial<TaskInputReading> = {}): TaskInputReading => ({
  slack,
  thread: { maxMessages: 20, maxChars: 10_000, maxPages: 3 },
  attachments: { ...DEFAULT_ATTACHMENT_LIMITS, maxTotalBytes: 32 * 1024 * 1024 },
  budgetMs: 10_000,
  messages,
  log: silentLog(),
  ...extra,
});

const earlier: SlackThreadMessage[] = [
  { ts: '100.0', text: '<@UBOT> how big is the bucket?', user: 'U1' },
  { ts: '100.1', text: 'About 2 TB.', user: 'UBOT', bot_id: 'B1' },
];

describe('readTaskInputs', () => {
  it('reads the thread and downloads the files at the same time, and returns both without notes', async () => {
    let threadDone = false;
    let threadDoneWhenDownloadStarted: boolean | undefined;
    const { slack, calls } = stubSlack({
      readThread: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        threadDone = true;
        return { messages: earlier, read: earlier.length, complete: true };
      },
      downloadFile: async () => {
        threadDoneWhenDownloadStarted = threadDone;
        return PNG;
      },
    });
    const inputs = await readTaskInputs(task({ files: [pngFile('F1')] }), reading(slack), {});

    expect(threadDoneWhenDownloadStarted).toBe(false);
    expect(calls.readThread).toHaveLength(1);
    expect(calls.readThread[0]!.thread).toEqual({ channel: 'C1', threadTs: '100.0', before: '100.5' });
    expect(calls.readThread[0]!.limits).toEqual({ maxPages: 3, keepNewest: 20 });
    expect(calls.downloads.map((download) => download.url)).toEqual(['https://files.slack.com/F1']);
    expect(inputs).toEqual({
      messages: [
        { role: 'user', text: 'how big is the bucket?', user_id: 'U1', ts: '100.0' },
        { role: 'assistant', text: 'About 2 TB.', ts: '100.1' },
      ],
      attachments: [{ name: 'F1.png', mimetype: 'image/png', size: PNG.length, data: PNG.toString('base64') }],
      notes: [],
    });
  });

  it('goes without the thread and says so when readThread throws', async () => {
    const { slack } = stubSlack({
      readThread: async () => {
        throw Object.assign(new Error('missing_scope'), { code: 'slack_webapi_platform_error' });
      },
      downloadFile: async () => PNG,
    });
    const log = silentLog();
    const inputs = await readTaskInputs(task({ files: [pngFile('F1')] }), reading(slack, { log }), {});
    expect(inputs).not.toHaveProperty('messages');
    expect(inputs.attachments).toHaveLength(1);
    expect(inputs.notes).toEqual([messages.threadUnread]);
    expect(log.warn).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ error_message: 'missing_scope', code: 'slack_webapi_platform_error' }));
  });

  it('says the thread was trimmed when the limits left messages out', async () => {
    const read = Array.from({ length: 5 }, (_, index): SlackThreadMessage => ({ ts: `100.0${index}`, text: `message ${index}`, user: 'U2' }));
    const { slack } = stubSlack({ readThread: async () => ({ messages: read, read: read.length, complete: true }) });
    const inputs = await readTaskInputs(task(), reading(slack, { thread: { maxMessages: 2, maxChars: 10_000, maxPages: 3 } }), {});
    expect(inputs.messages).toHaveLength(2);
    expect(inputs.messages?.at(-1)?.ts).toBe('100.04');
    expect(inputs.notes).toEqual([fill(messages.threadTrimmed, { kept: 2 })]);
    expect(inputs.notes[0]).toBe('I read only the latest 2 earlier messages of this thread.');
  });

  it('says the newest part is missing when the read stopped before the end of the thread (page limit, a later page refused)', async () => {
    const { slack } = stubSlack({ readThread: async () => ({ messages: earlier, read: 600, complete: false }) });
    const inputs = await readTaskInputs(task(), reading(slack), {});
    expect(inputs.messages).toHaveLength(2);
    expect(inputs.notes).toEqual([fill(messages.threadPartial, { kept: 2 })]);
  });

  it('says the thread was trimmed when the read kept only the newest of a complete thread', async () => {
    const { slack } = stubSlack({ readThread: async () => ({ messages: earlier, read: 300, complete: true }) });
    const inputs = await readTaskInputs(task(), reading(slack), {});
    expect(inputs.notes).toEqual([fill(messages.threadTrimmed, { kept: 2 })]);
  });

  it('leaves messages out when the thread holds nothing said before', async () => {
    const { slack } = stubSlack({ readThread: async () => ({ messages: [], read: 0, complete: true }) });
    const inputs = await readTaskInputs(task(), reading(slack), {});
    expect(inputs).toEqual({ notes: [] });
  });

  it('gives one note listing every skipped file with its reason, with *, _, ~ and ` taken out of the names', async () => {
    const { slack } = stubSlack({
      downloadFile: async (url) => {
        if (url.endsWith('gone')) throw new FileDownloadError('not-found', 'HTTP 404');
        return PNG;
      },
    });
    const files = [
      pngFile('OK'),
      pngFile('Z', { name: 'my_*secret*~plan`.zip', mimetype: 'application/zip', filetype: 'zip' }),
      pngFile('G', { name: 'old_chart.png', url: 'https://files.slack.com/gone' }),
    ];
    const inputs = await readTaskInputs(task({ thread_ts: undefined, files }), reading(slack), {});
    expect(inputs.attachments?.map((attachment) => attachment.name)).toEqual(['OK.png']);
    expect(inputs.notes).toEqual([fill(messages.filesSkipped, { files: 'mysecretplan.zip (that file type is not supported); oldchart.png (Slack no longer serves it)' })]);
    expect(inputs.notes[0]).toBe("I couldn't read mysecretplan.zip (that file type is not supported); oldchart.png (Slack no longer serves it).");
  });

  it('gives both notes when the thread could not be read and a file was skipped', async () => {
    const { slack } = stubSlack({
      readThread: async () => {
        throw new Error('ratelimited');
      },
      downloadFile: async () => Buffer.from('%PDF-1.4'),
    });
    const inputs = await readTaskInputs(task({ files: [pngFile('P')] }), reading(slack), {});
    expect(inputs).not.toHaveProperty('attachments');
    expect(inputs.notes).toEqual([messages.threadUnread, fill(messages.filesSkipped, { files: 'P.png (its content is not a PNG file)' })]);
  });

  it('does not read the thread of a message that is not in a thread', async () => {
    const { slack, calls } = stubSlack({ downloadFile: async () => PNG });
    const inputs = await readTaskInputs(task({ thread_ts: undefined, files: [pngFile('F1')] }), reading(slack), {});
    expect(calls.readThread).toHaveLength(0);
    expect(inputs).not.toHaveProperty('messages');
    expect(inputs.attachments).toHaveLength(1);
    expect(inputs.notes).toEqual([]);
  });

  it('does not read the thread when thread context is off (maxMessages 0), nor download without files', async () => {
    const { slack, calls } = stubSlack({});
    const inputs = await readTaskInputs(task(), reading(slack, { thread: { maxMessages: 0, maxChars: 10_000, maxPages: 3 } }), {});
    expect(calls.readThread).toHaveLength(0);
    expect(calls.downloads).toHaveLength(0);
    expect(inputs).toEqual({ notes: [] });
  });

  it('gives the reads at most a third of the time left before the call\'s deadline', async () => {
    const start = 1_700_000_000_000;
    const { slack, calls } = stubSlack({ readThread: async () => ({ messages: earlier, read: earlier.length, complete: true }), downloadFile: async () => PNG });
    await readTaskInputs(task({ files: [pngFile('F1')] }), reading(slack, { budgetMs: 10_000 }), { deadline: start + 3_000 }, manualClock(start));
    const deadlines = [calls.readThread[0]!.options?.deadline, calls.downloads[0]!.options?.deadline];
    for (const deadline of deadlines) {
      expect(deadline).toBeGreaterThan(start);
      expect(deadline).toBeLessThanOrEqual(start + 1_000);
    }
    expect(calls.readThread[0]!.options?.signal).toBeInstanceOf(AbortSignal);
  });

  it('gives the reads budgetMs when the call has no deadline, or when the budget is the smaller', async () => {
    const start = 1_700_000_000_000;
    const { slack, calls } = stubSlack({ readThread: async () => ({ messages: earlier, read: earlier.length, complete: true }) });
    await readTaskInputs(task(), reading(slack, { budgetMs: 4_000 }), {}, manualClock(start));
    await readTaskInputs(task(), reading(slack, { budgetMs: 4_000 }), { deadline: start + 60_000 }, manualClock(start));
    expect(calls.readThread.map((call) => call.options?.deadline)).toEqual([start + 4_000, start + 4_000]);
  });

  it('passes the caller\'s abort on to the reads', async () => {
    const controller = new AbortController();
    let abortedBefore: boolean | undefined;
    const { slack, calls } = stubSlack({
      readThread: async () => {
        abortedBefore = calls.readThread[0]!.options?.signal?.aborted;
        controller.abort();
        return { messages: earlier, read: earlier.length, complete: true };
      },
    });
    await readTaskInputs(task(), reading(slack), { signal: controller.signal });
    expect(abortedBefore).toBe(false);
    expect(calls.readThread[0]!.options?.signal?.aborted).toBe(true);
  });
});
