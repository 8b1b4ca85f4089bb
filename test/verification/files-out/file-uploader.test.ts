import { createHash } from 'node:crypto';
import type { AgentFile } from '../../../src/contract';
import { fetchAllowedFile, parseHostAllowlist } from '../../../src/net/safe-file-fetch';
import { SlackApiError } from '../../../src/slack/slack-api-error';
import type { SlackUploads } from '../../../src/slack/slack-uploads';
import { WebApiUploads } from '../../../src/slack/web-api/uploads';
import { createSlackWebClient } from '../../../src/slack/web-api/web-client';
import { DynamoDbFileUploadStates } from '../../../src/verification/files-out/dynamodb-upload-states';
import { FileUploadBusyError, FileUploader, type UploadTarget } from '../../../src/verification/files-out/file-uploader';
import { refusedFileLine } from '../../../src/verification/files-out/file-refusals';
import { MemoryFileUploadStates } from '../../../src/verification/files-out/memory-upload-states';
import type { FileUploadStates } from '../../../src/verification/files-out/upload-states';
import type { ClaimStore } from '../../../src/verification/stores/claim-store';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { MemoryClaimStore } from '../../../src/verification/stores/memory-claim-store';
import { useStateTable } from '../../support/dynalite';
import { startFakeSlackApi, type FakeSlackApi } from '../../support/fake-slack-api';
import { startFileHost, type FileHost } from '../../support/file-host';
import { manualClock } from '../../support/manual-clock';

/**
 * The uploader against the fake Slack API through the real @slack/web-api client (three calls, as
 * Slack takes them), with its upload states and claims in memory and in DynamoDB (dynalite):
 * each file lands in the thread once, whatever fails in between.
 */

const stateTable = useStateTable();
const clock = manualClock();
const CSV = Buffer.from('city,visits\nParis,3\nLima,5\n');
const csvFile: AgentFile = { name: 'report.csv', media_type: 'text/csv', data: CSV.toString('base64') };
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type Stores = { states: FileUploadStates; claims: ClaimStore };
const storeKinds: Array<[string, () => Stores]> = [
  ['memory', () => ({ states: new MemoryFileUploadStates(clock), claims: new MemoryClaimStore({ clock }) })],
  ['DynamoDB (dynalite)', () => ({ states: new DynamoDbFileUploadStates({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'upload#', clock }), claims: new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock }) })],
];

describe.each(storeKinds)('FileUploader, its state in %s', (_kind, makeStores) => {
  let slack: FakeSlackApi;
  let host: FileHost;
  let uploads: SlackUploads;
  let stores: Stores;
  let n = 0;
  let target: UploadTarget;

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    host = await startFileHost();
    uploads = new WebApiUploads(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }));
  });
  afterAll(async () => {
    await slack.close();
    await host.close();
  });
  beforeEach(() => {
    slack.reset();
    host.requests.splice(0);
    stores = makeStores();
    n += 1;
    target = { taskKey: `task-${_kind.length}-${n}`, channel: 'C0FILES', threadTs: `1800000000.00${n}` };
  });

  const uploader = (slackUploads: SlackUploads = uploads) =>
    new FileUploader({
      slack: slackUploads,
      ...stores,
      fetchUrl: (url, options) => fetchAllowedFile(url, { allowlist: parseHostAllowlist('files.test'), maxBytes: 1_000_000, timeoutMs: 5_000, resolve: async () => [{ address: '127.0.0.1', family: 4 }], allowPrivateAddresses: true, ca: host.ca, ...options }),
    });
  const calls = (method: string) => slack.requests.filter((request) => request.method === method).length;

  it('shares a file in the thread with its bytes, in three calls, and sends no token with the bytes', async () => {
    // Act
    const [outcome] = await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(outcome).toEqual({ name: 'report.csv', status: 'shared', fileId: expect.stringMatching(/^F/), again: false });
    expect(slack.fileShares).toEqual([expect.objectContaining({ filename: 'report.csv', title: 'report.csv', channel: target.channel, thread_ts: target.threadTs })]);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(CSV));
    expect(slack.requests.map((request) => request.method)).toEqual(['files.getUploadURLExternal', 'upload_url', 'files.completeUploadExternal']);
    expect(slack.requests.find((request) => request.method === 'files.getUploadURLExternal')!.body).toMatchObject({ filename: 'report.csv', length: String(CSV.length) });
    expect([...slack.uploads.values()][0]!.tokenSent).toBe(false);
  });

  it.each([
    ['files.getUploadURLExternal', 2, 1],
    ['upload_url', 1, 2],
  ])('%s lands and answers 503 once: the file is still shared once, with its bytes', async (method, slots, posts) => {
    // Prepare
    slack.failNext(method, { status: 503, afterEffect: true });
    // Act
    const [outcome] = await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(outcome).toMatchObject({ status: 'shared' });
    expect(slack.injected['http_503 after effect']).toBe(1);
    expect(slack.fileShares).toHaveLength(1);
    expect(sha(slack.fileShares[0]!.bytes)).toBe(sha(CSV));
    expect(slack.uploads.size).toBe(slots);
    expect(calls('upload_url')).toBe(posts);
  });

  it('files.completeUploadExternal lands and answers 503 once: the attempt fails, the redelivery finds the file shared and does not share it again', async () => {
    // Prepare
    slack.failNext('files.completeUploadExternal', { status: 503, afterEffect: true });
    // Act
    const first = await uploader()
      .uploadAll(target, [csvFile])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const [again] = await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(first).toBeInstanceOf(SlackApiError);
    expect(again).toMatchObject({ status: 'shared', again: false });
    expect(slack.fileShares).toHaveLength(1);
    expect(calls('files.completeUploadExternal')).toBe(1);
    expect(calls('files.info')).toBe(1);
    expect(calls('files.getUploadURLExternal')).toBe(1);
  });

  it('files.completeUploadExternal answers 503 without landing: the redelivery shares the file, once', async () => {
    // Prepare
    slack.failNext('files.completeUploadExternal', { status: 503 });
    // Act
    await expect(uploader().uploadAll(target, [csvFile])).rejects.toBeInstanceOf(SlackApiError);
    await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(slack.fileShares).toHaveLength(1);
    expect(calls('files.getUploadURLExternal')).toBe(1);
    expect(calls('upload_url')).toBe(1);
  });

  it('a redelivered message after the file was shared: nothing is called again, the outcome says so', async () => {
    // Prepare
    await uploader().uploadAll(target, [csvFile]);
    const before = slack.requests.length;
    // Act
    const [again] = await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(again).toEqual({ name: 'report.csv', status: 'shared', fileId: slack.fileShares[0]!.file_id, again: true });
    expect(slack.requests.length).toBe(before);
    expect(slack.fileShares).toHaveLength(1);
  });

  it('a handler killed between the bytes and the share: the next attempt goes on from there, and the file is shared once', async () => {
    // Prepare: the first attempt dies before its share reaches Slack.
    const dying: SlackUploads = {
      startUpload: (file, options) => uploads.startUpload(file, options),
      sendBytes: (url, bytes, options) => uploads.sendBytes(url, bytes, options),
      isShared: (file, options) => uploads.isShared(file, options),
      share: async () => {
        throw new Error('the function was killed');
      },
    };
    await expect(uploader(dying).uploadAll(target, [csvFile])).rejects.toThrow('the function was killed');
    // Act
    const [outcome] = await uploader().uploadAll(target, [csvFile]);
    // Assess
    expect(outcome).toMatchObject({ status: 'shared', again: false });
    expect(slack.fileShares).toHaveLength(1);
    expect(calls('files.getUploadURLExternal')).toBe(1);
    expect(calls('upload_url')).toBe(1);
  });

  it('another attempt holding the file: busy, nothing called', async () => {
    // Prepare
    await stores.claims.acquire(`files-out:${target.taskKey}:0`, { token: 'other-attempt', leaseSeconds: 60, ttlSeconds: 3600 });
    // Act
    const error = await uploader()
      .uploadAll(target, [csvFile])
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    // Assess
    expect(error).toBeInstanceOf(FileUploadBusyError);
    expect(slack.requests).toHaveLength(0);
  });

  it.each([
    ['its size', { maxFileBytes: 10 }, 'this workspace does not take files this large'],
    ['its type', { blockedExtensions: ['csv'] }, 'this workspace does not allow files of this type'],
    ['uploads off', { uploads: 'disabled' as const }, 'this workspace does not allow file uploads'],
    ['images only', { uploads: 'images-only' as const }, 'this workspace allows only images to be uploaded'],
  ])('a file the workspace refuses for %s: one refusal with the reason, kept for a redelivery, each file tried on its own', async (_what, policy, reason) => {
    // Prepare
    slack.setUploadPolicy(policy);
    const png: AgentFile = { name: 'chart.png', media_type: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64') };
    // Act
    const outcomes = await uploader().uploadAll(target, [csvFile, png]);
    const again = await uploader().uploadAll(target, [csvFile, png]);
    // Assess
    expect(outcomes[0]).toEqual({ name: 'report.csv', status: 'refused', reason, again: false });
    expect(again[0]).toEqual({ name: 'report.csv', status: 'refused', reason, again: true });
    expect(refusedFileLine({ name: 'report.csv', reason })).toBe(`:warning: The file \`report.csv\` was not shared: ${reason}.`);
    expect(slack.fileShares.filter((share) => share.filename === 'report.csv')).toHaveLength(0);
    expect(calls('files.getUploadURLExternal')).toBe(2);
  });

  it('a URL file from an allowed host: fetched without credentials and shared with its bytes', async () => {
    // Act
    const [outcome] = await uploader().uploadAll(target, [{ name: 'big.bin', media_type: 'application/octet-stream', url: host.urlFor('files.test', '/file/big.bin?bytes=4096') }]);
    // Assess
    expect(outcome).toMatchObject({ status: 'shared' });
    expect(slack.fileShares[0]!.bytes.length).toBe(4096);
    expect(host.requests).toHaveLength(1);
    expect(host.requests[0]!.headers).not.toHaveProperty('authorization');
  });

  it('a URL file off the allow-list: refused with a reason, nothing fetched, nothing uploaded', async () => {
    // Act
    const [outcome] = await uploader().uploadAll(target, [{ name: 'x.csv', media_type: 'text/csv', url: host.urlFor('elsewhere.test', '/file/x.csv') }]);
    // Assess
    expect(outcome).toEqual({ name: 'x.csv', status: 'refused', reason: 'its address is not on the list of hosts files may come from', again: false });
    expect(host.requests).toHaveLength(0);
    expect(slack.requests).toHaveLength(0);
  });
});
