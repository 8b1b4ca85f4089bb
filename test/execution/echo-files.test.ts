import { httpsTransport } from '../support/transports';
import { createHash, randomUUID } from 'node:crypto';
import { crc32, inflateSync } from 'node:zlib';
import { echoFileBytes, echoFilesOf } from '../../src/execution/executors/echo-files';
import { ExecuteTaskProtocol } from '../../src/protocols/execute-task';
import type { AgentStreamStep, Outcome } from '../../src/protocols/outcome';
import { HttpsTransport } from '../../src/transport/https';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { callContext, pollUntilSettled } from '../protocols/support/recording-transport';

/** The chunks of a PNG, each with whether its CRC is right. */
function pngChunks(png: Buffer): Array<{ type: string; data: Buffer; crcOk: boolean }> {
  const chunks = [];
  for (let offset = 8; offset < png.length; ) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    chunks.push({ type, data, crcOk: (crc32(png.subarray(offset + 4, offset + 8 + length)) >>> 0) === png.readUInt32BE(offset + 8 + length) });
    offset += 12 + length;
  }
  return chunks;
}

describe('the echo agent\'s files (#file=<name>, docs/contract.md "Files")', () => {
  it('makes a CSV of a few rows, a text file, and a valid PNG image', () => {
    // Act
    const files = echoFilesOf('make these #file=report.csv #file=notes.txt #file=chart.png');
    // Assess
    expect(files.map(({ name, media_type }) => [name, media_type])).toEqual([
      ['report.csv', 'text/csv'],
      ['notes.txt', 'text/plain'],
      ['chart.png', 'image/png'],
    ]);
    expect(Buffer.from(files[0]!.data!, 'base64').toString().split('\n')[0]).toBe('city,visits,share');
    const png = Buffer.from(files[2]!.data!, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const chunks = pngChunks(png);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(chunks.every((chunk) => chunk.crcOk)).toBe(true);
    // 16 rows of a filter byte and 16 RGB pixels.
    expect(inflateSync(chunks[1]!.data).length).toBe(16 * (1 + 16 * 3));
  });

  it.each([['big.csv', 100_000], ['big.txt', 7], ['big.png', 50_000], ['blob.bin', 1234]])('makes %s exactly %d bytes when asked', (name, size) => {
    // Act
    const bytes = Buffer.from(echoFilesOf(`#file=${name}:${size}`)[0]!.data!, 'base64');
    // Assess
    expect(bytes.length).toBe(size);
    if (name.endsWith('.png')) expect(pngChunks(bytes).map((chunk) => [chunk.type, chunk.crcOk])).toEqual([['IHDR', true], ['IDAT', true], ['pdNg', true], ['IEND', true]]);
  });

  it('makes the same bytes for the same name and size, so a test can make them again', () => {
    expect(echoFileBytes('a.csv', 300).equals(echoFileBytes('a.csv', 300))).toBe(true);
  });
});

describe('an execute_task agent returns files (the echo agent, over real HTTP)', () => {
  let running: RunningRuntime;
  let transport: HttpsTransport;
  const protocol = new ExecuteTaskProtocol();
  beforeAll(async () => {
    running = await startExecutionRuntime({ SYNC_BUDGET_MS: '2000', STREAM_FIRST_TEXT_MS: '30' });
    transport = httpsTransport({ url: running.invocationsUrl, maxAttempts: 1 });
  });
  afterAll(() => running.close());
  const sha = (base64: string) => createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex');

  it('in the final result: the outcome carries the file with its bytes', async () => {
    // Act
    const requestId = randomUUID();
    const outcome = await protocol.start({ requestId, params: { text: 'numbers please #file=report.csv' } }, callContext(transport, requestId));
    // Assess
    expect(outcome).toMatchObject({ kind: 'success', text: 'echo: numbers please #file=report.csv', files: [{ name: 'report.csv', media_type: 'text/csv' }] });
    const [file] = (outcome as { files: Array<{ data: string }> }).files;
    expect(sha(file!.data)).toBe(createHash('sha256').update(echoFileBytes('report.csv')).digest('hex'));
  });

  it('in a polled result, after the task ran past the sync budget', async () => {
    // Prepare
    const requestId = randomUUID();
    const started = await protocol.start({ requestId, params: { text: '#sleep=2300 #file=chart.png' } }, callContext(transport, requestId));
    if (started.kind !== 'pending') throw new Error(`expected a pending task, got ${started.kind}`);
    // Act
    const { outcome } = await pollUntilSettled(protocol, started.handle, callContext(transport, 'poller'));
    // Assess
    expect(outcome).toMatchObject({ kind: 'success', files: [{ name: 'chart.png', media_type: 'image/png' }] });
  });

  it('in the last event of a streamed answer', async () => {
    // Act
    const steps: AgentStreamStep[] = [];
    for await (const step of protocol.stream({ requestId: randomUUID(), params: { text: 'one two #stream=10 #file=notes.txt:2048' } }, callContext(transport, 's'), { holdMs: 10_000 })) steps.push(step);
    // Assess
    const last = steps.at(-1) as Outcome;
    expect(last).toMatchObject({ kind: 'success', files: [{ name: 'notes.txt', media_type: 'text/plain' }] });
    expect(Buffer.from((last as { files: Array<{ data: string }> }).files[0]!.data, 'base64').length).toBe(2048);
  });

  it('refuses a file too large to carry inline, by name, and keeps the answer', async () => {
    // Act
    const requestId = randomUUID();
    const outcome = await protocol.start({ requestId, params: { text: '#file=huge.bin:6000000 #file=ok.txt' } }, callContext(transport, requestId));
    // Assess
    expect(outcome).toMatchObject({ kind: 'success', text: 'echo: #file=huge.bin:6000000 #file=ok.txt', files: [{ name: 'ok.txt' }], filesRefused: [{ name: 'huge.bin', reason: expect.stringContaining('at most 5242880 bytes') }] });
  });
});
