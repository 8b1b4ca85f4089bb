import { httpsTransport } from '../support/transports';
import type { ServerResponse } from 'node:http';
import { HttpsTransport, type HttpsTransportOptions } from '../../src/transport/https';
import { TransportError } from '../../src/transport/transport';
import { eventually } from '../support/http';
import { caught, closedBy, executeTask, finalResponse, gate, json, progressResponse, readAll, recordingSleep, sseEvent, startSse, startTestServer, writeInPieces, type SeenRequest, type TestServer } from './fixtures';

/**
 * The https transport reading streamed answers (docs/contract.md, "Streaming") from a real HTTP
 * server on loopback that writes its Server-Sent Events in pieces, holds them back, goes quiet or
 * breaks off, as the test asks by the request's text.
 */

const key = { sessionKey: 'a1b2c3d4-0000-4000-8000-000000000002' };

describe('HttpsTransport.stream against a loopback server that streams', () => {
  let server: TestServer;
  let held = gate();
  /** Resolves when the client of the `#open` stream has gone. */
  let openClosed: Promise<void> | undefined;
  /** What the server does, by the text of the task it was sent. */
  const behaviours: Record<string, (res: ServerResponse, req: SeenRequest) => Promise<void> | void> = {
    '#held': async (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      await held.opened;
      res.end(sseEvent(finalResponse));
    },
    '#pieces': async (res) => {
      startSse(res);
      const stream =
        ': keep-alive\r\n\r\n' +
        'data: {"text":"héllo 🌍"}\r\n\r\n' +
        'event: message\nid: 7\ndata: {"n":2}\n\n' +
        ': keep-alive\n\n' +
        'data: {"multi":\ndata: "line"}\r\r' +
        'data: {"cut":';
      // Seven bytes at a time: events, line ends (\r\n too), the é and the 🌍 all split across chunks.
      await writeInPieces(res, Buffer.from(stream, 'utf8'), 7);
      res.end();
    },
    '#plain': (res) => json(res, 200, finalResponse),
    '#nothing': (res) => void res.writeHead(204).end(),
    '#stall': (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
    },
    '#kept-alive': async (res) => {
      startSse(res);
      for (let i = 0; i < 15; i++) {
        res.write(': keep-alive\n\n');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      res.end(sseEvent(finalResponse));
    },
    '#open': (res) => {
      openClosed = closedBy(res);
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      res.write(sseEvent(progressResponse(2)));
    },
    '#huge': async (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      await writeInPieces(res, Buffer.from(`data: "${'x'.repeat(5000)}"\n\n`), 1000);
      res.end();
    },
    '#broken': async (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      await new Promise<void>((resolve) => res.write('data: {"half', () => resolve()));
      res.destroy();
    },
    '#refused': (res) => json(res, 500, { error: 'boom' }),
    '#flaky': (res, req) => (server.requests.filter((seen) => seen.body === req.body).length === 1 ? json(res, 503, { error: 'cold' }) : void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseEvent(finalResponse))),
  };

  beforeAll(async () => {
    server = await startTestServer((req, res) => {
      const text = (JSON.parse(req.body) as { params: { text: string } }).params.text;
      return behaviours[text]!(res, req);
    });
  });
  afterAll(() => server.close());

  const transport = (options: Partial<Parameters<typeof httpsTransport>[0]> = {}) => httpsTransport({ url: `${server.url}/invocations`, ...options });

  it('asks for events or JSON, and yields each event as soon as it is complete, before the stream ends', async () => {
    held = gate();
    const events = transport().stream(executeTask('#held', 'r'), { ...key, correlationId: 'corr-7' })[Symbol.asyncIterator]();

    const first = await events.next();
    // The server still holds the rest back: the first event came on its own.
    expect(first).toEqual({ done: false, value: JSON.stringify(progressResponse(1)) });
    held.open();
    expect(await events.next()).toEqual({ done: false, value: JSON.stringify(finalResponse) });
    expect(await events.next()).toEqual({ done: true, value: undefined });
    expect(server.requests.at(-1)!.headers).toMatchObject({ accept: 'text/event-stream, application/json', 'content-type': 'application/json', 'x-correlation-id': 'corr-7' });
  });

  it('reassembles events split across TCP chunks: CR, LF and CRLF line ends, multi-byte characters, several data lines; comments and event names are dropped, and so is an event the stream ends in', async () => {
    expect(await readAll(transport().stream(executeTask('#pieces'), key))).toEqual(['{"text":"héllo 🌍"}', '{"n":2}', '{"multi":\n"line"}']);
  });

  it('yields a plain JSON answer once, and nothing for no content', async () => {
    expect(await readAll(transport().stream(executeTask('#plain'), key))).toEqual([JSON.stringify(finalResponse)]);
    expect(await readAll(transport().stream(executeTask('#nothing'), key))).toEqual([]);
  });

  it('a stream that goes quiet past timeoutMs ends with a retryable timeout, after the events it did send', async () => {
    const events = transport({ timeoutMs: 300 }).stream(executeTask('#stall'), key)[Symbol.asyncIterator]();
    expect((await events.next()).value).toBe(JSON.stringify(progressResponse(1)));

    const error = await caught<TransportError>(() => events.next());

    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'timeout', retryable: true, details: { transport: 'https' } });
    expect(error.message).toMatch(/nothing more from the execution endpoint for 300 ms/);
  });

  it('keep-alive comments keep a quiet stream open: timeoutMs is per chunk, not for the whole answer', async () => {
    expect(await readAll(transport({ timeoutMs: 1000 }).stream(executeTask('#kept-alive'), key))).toEqual([JSON.stringify(finalResponse)]);
  });

  it('leaving the iteration early aborts the request: the server sees the connection close', async () => {
    const seen: string[] = [];
    for await (const data of transport().stream(executeTask('#open'), key)) {
      seen.push(data);
      break;
    }

    expect(seen).toEqual([JSON.stringify(progressResponse(1))]);
    await eventually(() => (openClosed ? true : undefined));
    await openClosed;
  });

  it("the caller's signal ends a stream in flight: a retryable timeout that says it was cancelled", async () => {
    const controller = new AbortController();
    const events = transport().stream(executeTask('#stall'), { ...key, signal: controller.signal })[Symbol.asyncIterator]();
    await events.next();
    controller.abort();

    await expect(events.next()).rejects.toMatchObject({ reason: 'timeout', retryable: true, message: expect.stringMatching(/cancelled/) });
  });

  it('an event larger than maxResponseBytes is refused (too-large), however it is cut', async () => {
    const events = transport({ maxResponseBytes: 2000 }).stream(executeTask('#huge'), key)[Symbol.asyncIterator]();
    expect((await events.next()).done).toBe(false);

    await expect(events.next()).rejects.toMatchObject({ reason: 'too-large', retryable: false });
  });

  it('a stream cut off mid-event is a retryable connection fault; the half event is never yielded', async () => {
    const seen: string[] = [];
    const error = await caught<TransportError>(async () => {
      for await (const data of transport().stream(executeTask('#broken'), key)) seen.push(data);
    });

    expect(seen).toEqual([JSON.stringify(progressResponse(1))]);
    expect(error).toMatchObject({ reason: 'connection', retryable: true });
  });

  it('a refusal before the stream starts is the same TransportError as for send', async () => {
    await expect(readAll(transport({ maxAttempts: 1 }).stream(executeTask('#refused'), key))).rejects.toMatchObject({ reason: 'server', details: { status: 500 } });
  });

  it('retries a transient refusal before the stream starts, as send does', async () => {
    const { sleep, delays } = recordingSleep();

    expect(await readAll(transport({ sleep, maxAttempts: 2 }).stream(executeTask('#flaky', 'flaky-1'), key))).toEqual([JSON.stringify(finalResponse)]);
    expect(delays).toHaveLength(1);
  });
});
