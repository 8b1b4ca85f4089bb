import { agentCoreTransport } from '../support/transports';
import type { ServerResponse } from 'node:http';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { TransportError } from '../../src/transport/transport';
import { eventually } from '../support/http';
import { caught, closedBy, executeTask, finalResponse, gate, json, progressResponse, readAll, sseEvent, startSse, startTestServer, writeInPieces, type TestServer } from './fixtures';

/**
 * The agentcore transport reading streamed answers: the real SDK client, the local AgentCore
 * emulator passing the agent's Server-Sent Events through as they come (as AgentCore does), and an
 * agent on loopback that streams as the test asks by the request's text.
 */

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/streaming-AbCdEf1234';
const key = { sessionKey: 'f47ac10b-58cc-4372-a567-0e02b2c3d480' };

describe('AgentCoreTransport.stream → real SDK client → AgentCore emulator → an agent that streams', () => {
  let agent: TestServer;
  let emulator: AgentCoreEmulator;
  let client: BedrockAgentCoreClient;
  let held = gate();
  let openClosed: Promise<void> | undefined;
  const behaviours: Record<string, (res: ServerResponse) => Promise<void> | void> = {
    '#held': async (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      await held.opened;
      res.write(': keep-alive\n\n');
      res.end(sseEvent(finalResponse));
    },
    '#pieces': async (res) => {
      startSse(res);
      await writeInPieces(res, Buffer.from(`${sseEvent(progressResponse(1))}: keep-alive\r\n\r\n${sseEvent({ text: 'é🌍' })}${sseEvent(finalResponse)}`), 5);
      res.end();
    },
    '#plain': (res) => json(res, 200, finalResponse),
    '#stall': (res) => {
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
    },
    '#open': (res) => {
      openClosed = closedBy(res);
      startSse(res);
      res.write(sseEvent(progressResponse(1)));
      res.write(sseEvent(progressResponse(2)));
    },
    '#crash': (res) => json(res, 500, { error: 'boom' }),
  };

  beforeAll(async () => {
    agent = await startTestServer((req, res) => behaviours[(JSON.parse(req.body) as { params: { text: string } }).params.text]!(res));
    emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: agent.url }, credentials: { AKIDLOCAL: 'local-secret' } });
    client = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await emulator.close();
    await agent.close();
  });

  const transport = (timeoutMs?: number) => agentCoreTransport({ client, runtimeArn: ARN, ...(timeoutMs === undefined ? {} : { timeoutMs }) });

  it('asks for text/event-stream, and yields each event as the agent sends it, before the stream ends', async () => {
    held = gate();
    const events = transport().stream(executeTask('#held', 'r'), key)[Symbol.asyncIterator]();

    expect(await events.next()).toEqual({ done: false, value: JSON.stringify(progressResponse(1)) });
    // The agent holds the rest back: the first event came through the emulator on its own.
    held.open();
    expect(await events.next()).toEqual({ done: false, value: JSON.stringify(finalResponse) });
    expect((await events.next()).done).toBe(true);
    expect(agent.requests.at(-1)!.headers.accept).toBe('text/event-stream');
    expect(emulator.invocations.at(-1)).toMatchObject({ status: 200, signingService: 'bedrock-agentcore' });
    // The session was busy while the stream lasted, and is idle again.
    expect(emulator.liveSessions().find((session) => session.runtimeArn === ARN)).toMatchObject({ inFlight: 0 });
  });

  it('reassembles events the agent wrote in pieces', async () => {
    expect(await readAll(transport().stream(executeTask('#pieces'), key))).toEqual([JSON.stringify(progressResponse(1)), '{"text":"é🌍"}', JSON.stringify(finalResponse)]);
  });

  it('yields an answer that is not a stream once', async () => {
    expect(await readAll(transport().stream(executeTask('#plain'), key))).toEqual([JSON.stringify(finalResponse)]);
  });

  it('with timeoutMs, a stream that goes quiet ends with a retryable timeout', async () => {
    const events = transport(300).stream(executeTask('#stall'), key)[Symbol.asyncIterator]();
    await events.next();

    const error = await caught<TransportError>(() => events.next());

    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'timeout', retryable: true, details: { transport: 'agentcore' } });
  });

  it('leaving the iteration early aborts the request, and AgentCore (the emulator) ends the agent\'s', async () => {
    openClosed = undefined;
    for await (const data of transport().stream(executeTask('#open'), key)) {
      expect(data).toBe(JSON.stringify(progressResponse(1)));
      break;
    }

    await eventually(() => (openClosed ? true : undefined));
    await openClosed;
  });

  it('an agent that fails before streaming is a RuntimeClientError, as for send', async () => {
    await expect(readAll(transport().stream(executeTask('#crash'), key))).rejects.toMatchObject({ reason: 'runtime', retryable: true, details: { status: 424 } });
  });
});
