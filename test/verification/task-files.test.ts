import { ATTACHMENT_TYPES } from '../../src/contract';
import type { Log } from '../../src/observability/logger';
import type { SlackCallOptions } from '../../src/slack/slack-replies';
import { FileDownloadError, type FileDownloadFailure, type SlackConversations } from '../../src/slack/slack-conversations';
import { DEFAULT_ATTACHMENT_LIMITS, type AttachmentLimits } from '../../src/verification/invoke/attachment-limits';
import type { TaskFile } from '../../src/verification/queues/task-file';
import { resolveType, taskFiles } from '../../src/verification/invoke/task-files';

const MIB = 1024 * 1024;
const limits: AttachmentLimits = { ...DEFAULT_ATTACHMENT_LIMITS, maxTotalBytes: 32 * MIB };

const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n', 'latin1');
const png = (n: number) => Buffer.concat([PNG_BYTES, Buffer.from(`image ${n}`)]);

type Download = { url: string; limits: { maxBytes: number; expectsHtml?: boolean }; options?: SlackCallOptions };
type Serve = (url: string) => Promise<Buffer> | Buffer;

/** A SlackConversations that serves bytes by URL and records every download (a unit-test stub). */
function stubSlack(serve: Serve) {
  const downloads: Download[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const slack: SlackConversations = {
    readThread: async () => {
      throw new Error('not used here');
    },
    downloadFile: async (url, fileLimits, options) => {
      downloads.push({ url, limits: fileLimits, ...(options ? { options } : {}) });
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await serve(url);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return { slack, downloads, maxInFlight: () => maxInFlight };
}

const silentLog = (): Log & { warn: jest.Mock } => ({ debug: () => undefined, info: () => undefined, warn: jest.fn(), error: () => undefined });

const file = (id: string, extra: Partial<TaskFile> = {}): TaskFile => ({
  id,
  name: `${id}.png`,
  mimetype: 'image/png',
  filetype: 'png',
  size: 100,
  url: `https://files.slack.com/files-pri/T1-${id}/download/${id}`,
  ...extra,
});

describe('resolveType', () => {
  it('reads a Markdown file Slack calls text/plain as text/markdown', () => {
    expect(resolveType({ mimetype: 'text/plain', name: 'notes.md' })).toEqual({ type: ATTACHMENT_TYPES['text/markdown'], mimetype: 'text/markdown' });
    expect(resolveType({ mimetype: 'text/plain', filetype: 'markdown', name: 'README' })).toEqual({ type: ATTACHMENT_TYPES['text/markdown'], mimetype: 'text/markdown' });
  });

  it('reads a PDF declared as application/octet-stream by its extension', () => {
    expect(resolveType({ mimetype: 'application/octet-stream', name: 'report.PDF' })).toEqual({ type: ATTACHMENT_TYPES['application/pdf'], mimetype: 'application/pdf' });
    expect(resolveType({ mimetype: '', filetype: 'csv', name: 'data' })).toEqual({ type: ATTACHMENT_TYPES['text/csv'], mimetype: 'text/csv' });
  });

  it('keeps a supported mimetype, without its parameters', () => {
    expect(resolveType({ mimetype: 'text/plain; charset=utf-8', name: 'log.txt' })).toEqual({ type: ATTACHMENT_TYPES['text/plain'], mimetype: 'text/plain' });
    expect(resolveType({ mimetype: 'image/png', filetype: 'png', name: 'photo.jpg' })).toEqual({ type: ATTACHMENT_TYPES['image/png'], mimetype: 'image/png' });
    // Only plain text is refined by the name: a text file named .pdf stays text.
    expect(resolveType({ mimetype: 'text/plain', name: 'fake.pdf' })).toEqual({ type: ATTACHMENT_TYPES['text/plain'], mimetype: 'text/plain' });
  });

  it('gives undefined for a type it does not support', () => {
    expect(resolveType({ mimetype: 'application/zip', filetype: 'zip', name: 'archive.zip' })).toBeUndefined();
    expect(resolveType({ mimetype: 'application/octet-stream', name: 'setup.exe' })).toBeUndefined();
    expect(resolveType({ mimetype: 'application/octet-stream', name: 'no-extension' })).toBeUndefined();
    // An unsupported mimetype is not overridden by a friendly extension.
    expect(resolveType({ mimetype: 'application/x-msdownload', name: 'virus.pdf' })).toBeUndefined();
  });
});

describe('taskFiles', () => {
  it('downloads each file with its size limit and returns base64 whose bytes are the source, in the message order', async () => {
    const sources = new Map<string, Buffer>([
      ['https://files.slack.com/a', png(1)],
      ['https://files.slack.com/b', PDF_BYTES],
      ['https://files.slack.com/c', png(3)],
    ]);
    // The first file arrives last, the last first: the result still follows the message.
    const delays = new Map([['https://files.slack.com/a', 30], ['https://files.slack.com/b', 15], ['https://files.slack.com/c', 0]]);
    const { slack, downloads } = stubSlack(async (url) => {
      await new Promise((resolve) => setTimeout(resolve, delays.get(url)));
      return sources.get(url)!;
    });
    const files = [
      file('A', { url: 'https://files.slack.com/a', size: 999 }),
      file('B', { name: 'report.pdf', mimetype: 'application/pdf', filetype: 'pdf', url: 'https://files.slack.com/b' }),
      file('C', { url: 'https://files.slack.com/c' }),
    ];
    const options = { deadline: 123 };
    const result = await taskFiles(files, { slack, limits, log: silentLog() }, options);

    expect(result.skipped).toEqual([]);
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(['A.png', 'report.pdf', 'C.png']);
    for (const [index, attachment] of result.attachments.entries()) {
      const source = sources.get(files[index]!.url!)!;
      expect(Buffer.from(attachment.data, 'base64').equals(source)).toBe(true);
      // The size is what was fetched, not what Slack declared.
      expect(attachment.size).toBe(source.length);
    }
    expect(result.attachments.map((attachment) => attachment.mimetype)).toEqual(['image/png', 'application/pdf', 'image/png']);
    expect(downloads.map((download) => [download.url, download.limits.maxBytes])).toEqual([
      ['https://files.slack.com/a', limits.maxImageBytes],
      ['https://files.slack.com/b', limits.maxDocumentBytes],
      ['https://files.slack.com/c', limits.maxImageBytes],
    ]);
    expect(downloads.every((download) => download.options === options)).toBe(true);
  });

  it('tells the download an HTML file may answer in HTML, and no other file', async () => {
    const { slack, downloads } = stubSlack((url) => (url.endsWith('page') ? Buffer.from('<html><body>hi</body></html>') : Buffer.from('plain words')));
    const result = await taskFiles(
      [
        file('H', { name: 'page.html', mimetype: 'text/html', filetype: 'html', url: 'https://files.slack.com/page', size: 28 }),
        file('T', { name: 'notes.txt', mimetype: 'text/plain', filetype: 'text', url: 'https://files.slack.com/notes' }),
      ],
      { slack, limits, log: silentLog() },
      {},
    );
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(['page.html', 'notes.txt']);
    expect(downloads.map((download) => download.limits.expectsHtml)).toEqual([true, false]);
  });

  it("skips an HTML file whose download is not the size Slack declared: Slack's sign-in page, not the file", async () => {
    const signIn = Buffer.from('<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>');
    const { slack } = stubSlack(() => signIn);
    const result = await taskFiles([file('H', { name: 'page.html', mimetype: 'text/html', filetype: 'html', size: 5_000 })], { slack, limits, log: silentLog() }, {});
    expect(result.attachments).toEqual([]);
    expect(result.skipped).toEqual([{ name: 'page.html', reason: 'Slack did not let me download it (the app may be missing the files:read scope)' }]);
  });

  it('takes the first 20 of 30 images and skips the other 10 with a reason naming the limit', async () => {
    const { slack, downloads } = stubSlack((url) => png(Number(url.split('/').pop())));
    const files = Array.from({ length: 30 }, (_, index) => file(`F${index}`, { url: `https://files.slack.com/${index}` }));
    const result = await taskFiles(files, { slack, limits, log: silentLog() }, {});
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(files.slice(0, 20).map((f) => f.name));
    expect(result.skipped).toEqual(files.slice(20).map((f) => ({ name: f.name, reason: 'only the first 20 images of a message are read' })));
    expect(downloads).toHaveLength(20);
  });

  it('counts documents apart from images', async () => {
    const { slack } = stubSlack((url) => (url.includes('doc') ? PDF_BYTES : png(0)));
    const files = [
      ...Array.from({ length: 6 }, (_, index) => file(`D${index}`, { name: `d${index}.pdf`, mimetype: 'application/pdf', url: `https://files.slack.com/doc${index}` })),
      file('I0', { url: 'https://files.slack.com/img' }),
    ];
    const result = await taskFiles(files, { slack, limits, log: silentLog() }, {});
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(['d0.pdf', 'd1.pdf', 'd2.pdf', 'd3.pdf', 'd4.pdf', 'I0.png']);
    expect(result.skipped).toEqual([{ name: 'd5.pdf', reason: 'only the first 5 documents of a message are read' }]);
  });

  it('skips a file declared larger than its limit without downloading it', async () => {
    const { slack, downloads } = stubSlack(() => PDF_BYTES);
    const result = await taskFiles(
      [file('BIG', { name: 'huge.pdf', mimetype: 'application/pdf', size: 50 * MIB, url: 'https://files.slack.com/huge' })],
      { slack, limits, log: silentLog() },
      {},
    );
    expect(result).toEqual({ attachments: [], skipped: [{ name: 'huge.pdf', reason: 'it is larger than 4.5 MB' }] });
    expect(downloads).toHaveLength(0);
  });

  it('skips the files past maxTotalBytes (declared sizes) without downloading them', async () => {
    const { slack, downloads } = stubSlack((url) => png(url.length));
    const small = { ...limits, maxTotalBytes: 1000 };
    const result = await taskFiles(
      [file('A', { size: 600, url: 'https://files.slack.com/a' }), file('B', { size: 600, url: 'https://files.slack.com/b' }), file('C', { size: 300, url: 'https://files.slack.com/c' })],
      { slack, limits: small, log: silentLog() },
      {},
    );
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(['A.png', 'C.png']);
    expect(result.skipped).toEqual([{ name: 'B.png', reason: 'the files of one message may add up to 0 MB' }]);
    expect(downloads.map((download) => download.url)).toEqual(['https://files.slack.com/a', 'https://files.slack.com/c']);
  });

  it('names the total limit in megabytes', async () => {
    const { slack } = stubSlack(() => png(0));
    const result = await taskFiles(
      [file('A', { size: 3 * MIB }), file('B', { size: 3 * MIB })],
      { slack, limits: { ...limits, maxTotalBytes: 4_000_000 }, log: silentLog() },
      {},
    );
    expect(result.skipped).toEqual([{ name: 'B.png', reason: 'the files of one message may add up to 4 MB' }]);
  });

  it('skips a file whose real size puts the total over maxTotalBytes though its declared size did not', async () => {
    const big = Buffer.concat([PNG_BYTES, Buffer.alloc(900)]);
    const { slack } = stubSlack((url) => (url.endsWith('/a') ? big : png(2)));
    const result = await taskFiles(
      [file('A', { size: 10, url: 'https://files.slack.com/a' }), file('B', { size: 10, url: 'https://files.slack.com/b' })],
      { slack, limits: { ...limits, maxTotalBytes: 910 }, log: silentLog() },
      {},
    );
    // Whichever download finished second is the one over the total.
    expect(result.attachments).toHaveLength(1);
    expect(result.skipped).toEqual([{ name: expect.stringMatching(/^[AB]\.png$/), reason: 'the files of one message may add up to 0 MB' }]);
    expect(result.skipped[0]!.name).not.toBe(result.attachments[0]!.name);
    expect(result.attachments[0]!.size).toBeLessThanOrEqual(910);
  });

  it.each<[FileDownloadFailure | 'plain error', string]>([
    ['not-found', 'Slack no longer serves it'],
    ['refused', 'Slack did not let me download it (the app may be missing the files:read scope)'],
    ['timed-out', 'it took too long to download'],
    ['too-large', 'it is larger than its size limit'],
    ['not-allowed-url', 'it is not hosted by Slack'],
    ['plain error', 'it could not be downloaded'],
  ])('skips a file whose download fails with %s, keeping the others', async (failure, reason) => {
    const { slack } = stubSlack((url) => {
      if (!url.endsWith('/bad')) return png(1);
      throw failure === 'plain error' ? new Error('socket hang up') : new FileDownloadError(failure, 'test failure');
    });
    const log = silentLog();
    const result = await taskFiles([file('BAD', { url: 'https://files.slack.com/bad' }), file('OK', { url: 'https://files.slack.com/ok' })], { slack, limits, log }, {});
    expect(result.skipped).toEqual([{ name: 'BAD.png', reason }]);
    expect(result.attachments.map((attachment) => attachment.name)).toEqual(['OK.png']);
    expect(log.warn).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ file_id: 'BAD', reason: failure === 'plain error' ? 'failed' : failure }));
  });

  it('skips a PDF whose bytes are a PNG', async () => {
    const { slack } = stubSlack(() => png(0));
    const result = await taskFiles([file('X', { name: 'report.pdf', mimetype: 'application/pdf', filetype: 'pdf' })], { slack, limits, log: silentLog() }, {});
    expect(result).toEqual({ attachments: [], skipped: [{ name: 'report.pdf', reason: 'its content is not a PDF file' }] });
  });

  it('skips a file Slack no longer serves and an unsupported type without downloading them', async () => {
    const { slack, downloads } = stubSlack(() => png(0));
    const { url: _dropped, ...withoutUrl } = file('GONE');
    const result = await taskFiles([withoutUrl, file('Z', { name: 'tools.zip', mimetype: 'application/zip', filetype: 'zip' })], { slack, limits, log: silentLog() }, {});
    expect(result).toEqual({
      attachments: [],
      skipped: [
        { name: 'GONE.png', reason: 'Slack no longer serves it' },
        { name: 'tools.zip', reason: 'that file type is not supported' },
      ],
    });
    expect(downloads).toHaveLength(0);
  });

  it('names a file without a name by its id', async () => {
    const { slack } = stubSlack(() => png(0));
    const result = await taskFiles([file('F123', { name: '', mimetype: 'application/zip' })], { slack, limits, log: silentLog() }, {});
    expect(result.skipped).toEqual([{ name: 'F123', reason: 'that file type is not supported' }]);
  });

  it('never has more than 4 downloads in flight', async () => {
    const { slack, downloads, maxInFlight } = stubSlack(async (url) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return png(Number(url.split('/').pop()));
    });
    const files = Array.from({ length: 12 }, (_, index) => file(`F${index}`, { url: `https://files.slack.com/${index}` }));
    const result = await taskFiles(files, { slack, limits, log: silentLog() }, {});
    expect(result.attachments).toHaveLength(12);
    expect(downloads).toHaveLength(12);
    expect(maxInFlight()).toBeLessThanOrEqual(4);
    expect(maxInFlight()).toBeGreaterThan(1);
  });

  it('returns nothing for no files', async () => {
    const { slack, downloads } = stubSlack(() => png(0));
    expect(await taskFiles([], { slack, limits, log: silentLog() }, {})).toEqual({ attachments: [], skipped: [] });
    expect(downloads).toHaveLength(0);
  });
});
