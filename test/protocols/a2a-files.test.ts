import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { readA2aReply, readA2aStreamEvent } from '../../src/protocols/a2a-dialects';
import { A2aProtocol } from '../../src/protocols/a2a';
import type { A2aVersion } from '../../src/protocols/a2a-dialects';
import type { AgentStreamStep, Outcome } from '../../src/protocols/outcome';
import { HttpsTransport } from '../../src/transport/https';
import { A2A_AGENT_FILE, startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { callContext, pollUntilSettled } from './support/recording-transport';

/**
 * Files an A2A agent returns become the contract's files (docs/contract.md, "Files"): 0.3 FileParts
 * and 1.0 Parts with raw bytes or a url, read from a message, a task's artifacts and a stream.
 */

const csv = Buffer.from('a,b\n1,2\n').toString('base64');
const expectedFile = { name: A2A_AGENT_FILE.name, media_type: A2A_AGENT_FILE.mediaType, data: Buffer.from(A2A_AGENT_FILE.bytes).toString('base64') };

describe('A2A file parts, read in both dialects', () => {
  it.each([
    ['a 0.3 FilePart with bytes', { kind: 'file', file: { name: 'r.csv', mimeType: 'text/csv', bytes: csv } }, { name: 'r.csv', media_type: 'text/csv', data: csv }],
    ['a 0.3 FilePart with a uri', { kind: 'file', file: { name: 'c.png', mimeType: 'image/png', uri: 'https://files.example.com/c.png' } }, { name: 'c.png', media_type: 'image/png', url: 'https://files.example.com/c.png' }],
    ['a 1.0 Part with raw bytes', { raw: csv, filename: 'r.csv', mediaType: 'text/csv' }, { name: 'r.csv', media_type: 'text/csv', data: csv }],
    ['a 1.0 Part with a url, the proto field name', { url: 'https://files.example.com/c.png', filename: 'c.png', media_type: 'image/png' }, { name: 'c.png', media_type: 'image/png', url: 'https://files.example.com/c.png' }],
    ['a part without name nor type', { raw: csv }, { name: 'file 1', media_type: 'application/octet-stream', data: csv }],
  ])('reads %s from a message', (_what, part, file) => {
    // Act
    const reply = readA2aReply({ role: 'agent', parts: [{ text: 'here it is' }, part] });
    // Assess
    expect(reply).toEqual({ kind: 'message', text: 'here it is', files: { files: [file], refused: [] } });
  });

  it('refuses a file part that breaks the rules, by name, and keeps the text', () => {
    // Act
    const reply = readA2aReply({ role: 'agent', parts: [{ text: 'see file' }, { kind: 'file', file: { name: 'a.txt', mimeType: 'text/plain', uri: 'http://plain.example/a.txt' } }] });
    // Assess
    expect(reply).toEqual({ kind: 'message', text: 'see file', files: { files: [], refused: [{ name: 'a.txt', reason: 'url must be an https URL' }] } });
  });

  it("takes a task's files from its artifacts, else from its last agent message", () => {
    const status = { state: 'completed' };
    const fromArtifact = readA2aReply({ status, artifacts: [{ parts: [{ text: 'a' }, { raw: csv, filename: 'a.csv', mediaType: 'text/csv' }] }], history: [{ role: 'agent', parts: [{ raw: csv, filename: 'old.csv', mediaType: 'text/csv' }] }] });
    const fromHistory = readA2aReply({ status, history: [{ role: 'agent', parts: [{ text: 'h' }, { raw: csv, filename: 'h.csv', mediaType: 'text/csv' }] }] });

    expect(fromArtifact).toMatchObject({ files: { files: [{ name: 'a.csv' }] } });
    expect(fromHistory).toMatchObject({ files: { files: [{ name: 'h.csv' }] } });
  });

  it('has no files field for an answer without file parts', () => {
    expect(readA2aReply({ role: 'agent', parts: [{ text: 'plain' }] })).toEqual({ kind: 'message', text: 'plain' });
  });

  it("carries an artifact update's file parts", () => {
    const event = readA2aStreamEvent({ artifactUpdate: { taskId: 't', artifact: { artifactId: 'x', parts: [{ raw: csv, filename: 'a.csv', mediaType: 'text/csv' }] } } });
    expect(event).toMatchObject({ kind: 'artifact', files: [{ name: 'a.csv', media_type: 'text/csv', data: csv }] });
  });
});

describe.each<A2aVersion>(['1.0', '0.3'])('A2A %s, an @a2a-js/sdk agent that returns a file', (version) => {
  let agent: A2aTestAgent;
  let transport: HttpsTransport;
  let streamingAgent: A2aTestAgent;
  let streamingTransport: HttpsTransport;
  beforeAll(async () => {
    agent = await startSdkA2aAgent({ legacyCompat: true });
    transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
    streamingAgent = await startSdkA2aAgent({ legacyCompat: true, streaming: true });
    streamingTransport = httpsTransport({ url: streamingAgent.url, maxAttempts: 1 });
  });
  afterAll(async () => {
    await agent.close();
    await streamingAgent.close();
  });
  const protocol = new A2aProtocol({ version });

  it('with its message: the outcome carries the file, bytes intact', async () => {
    // Act
    const requestId = randomUUID();
    const outcome = await protocol.start({ requestId, params: { text: 'make a report #file' } }, callContext(transport, requestId));
    // Assess
    expect(outcome).toMatchObject({ kind: 'success', text: 'a2a echo: make a report #file', files: [expectedFile] });
    expect(outcome).not.toHaveProperty('filesRefused');
  });

  it("with a task polled to its end: the artifact's file", async () => {
    // Prepare
    const requestId = randomUUID();
    const started = await protocol.start({ requestId, params: { text: '#task #delay=50 #file' } }, callContext(transport, requestId));
    if (started.kind !== 'pending') throw new Error(`expected a pending task, got ${started.kind}`);
    // Act
    const { outcome } = await pollUntilSettled(protocol, started.handle, callContext(transport, 'poller'));
    // Assess
    expect(outcome).toMatchObject({ kind: 'success', text: 'a2a done: #task #delay=50 #file', files: [expectedFile] });
  });

  it('with a streamed task: the last step carries the file', async () => {
    // Act
    const steps: AgentStreamStep[] = [];
    for await (const step of protocol.stream({ requestId: randomUUID(), params: { text: '#task #delay=20 #file', stream: true } }, { transport: streamingTransport, sessionKey: 's' }, { holdMs: 10_000 })) steps.push(step);
    // Assess
    const last = steps.at(-1) as Outcome;
    expect(last).toMatchObject({ kind: 'success', files: [expectedFile] });
  });
});
