import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { ProtocolFailure } from '../../src/protocols/json-rpc-exchange';
import { SimpleA2aProtocol, categoryOfSimpleA2aError } from '../../src/protocols/simple-a2a';
import { startLegacyAgent, type LegacyTestAgent } from '../support/legacy-agent';
import { HttpsTransport } from '../../src/transport/https';
import { callContext } from './support/recording-transport';

describe('SimpleA2aProtocol against a legacy agent', () => {
  let agent: LegacyTestAgent;
  let transport: HttpsTransport;
  const protocol = new SimpleA2aProtocol();

  beforeAll(async () => {
    agent = await startLegacyAgent();
    transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
  });
  afterAll(() => agent.close());

  const start = (text: string, requestId = randomUUID()) => protocol.start({ requestId, params: { text, channel: 'C1', user_id: 'U1' } }, callContext(transport, requestId));

  it('sends {task_id: request id, input: the execute_task params}', async () => {
    // Prepare
    const requestId = randomUUID();

    // Act
    await start('hello', requestId);

    // Assess
    expect(agent.requests.at(-1)).toEqual({ task_id: requestId, input: { text: 'hello', channel: 'C1', user_id: 'U1' } });
  });

  it('passes the thread’s earlier messages and the attachments in input.messages and input.attachments, as given', async () => {
    // Prepare
    const requestId = randomUUID();
    const messages = [
      { role: 'user' as const, text: 'Can you summarise the report?', user_id: 'U1', ts: '1.2' },
      { role: 'assistant' as const, text: 'Sure: revenue is up 4%.', ts: '1.3' },
    ];
    const attachments = [{ name: 'notes.txt', mimetype: 'text/plain', size: 5, data: Buffer.from('hello').toString('base64') }];
    const params = { text: 'and the costs?', team_id: 'T1', channel: 'C1', thread_ts: '1.2', user_id: 'U1', messages, attachments };

    // Act
    const outcome = await protocol.start({ requestId, params }, callContext(transport, requestId));

    // Assess
    expect(agent.requests.at(-1)).toEqual({ task_id: requestId, input: params });
    expect(outcome).toMatchObject({ kind: 'success', text: 'legacy: and the costs?' });
  });

  it('answers with output.text and keeps the other output fields as extra', async () => {
    expect(await start('hello')).toEqual({ kind: 'success', text: 'legacy: hello', extra: { model: 'legacy-test' } });
  });

  it('reads output.usage as an A2A agent\'s (Bedrock\'s names here), and reports none when the agent gives none', async () => {
    expect(await start('count #usage')).toMatchObject({ kind: 'success', text: 'legacy: count #usage', usage: { input_tokens: 6, output_tokens: 3, model: 'legacy-model' } });
    expect(await start('hello')).not.toHaveProperty('usage');
  });

  it.each([
    ['output.response when there is no text', '#response', 'legacy response: #response'],
    ['output.result when there is neither text nor response', '#result', 'legacy result: #result'],
    ['the output as JSON when no field holds the text', '#json', '{"answer":42,"unit":"none"}'],
  ])('answers with %s', async (_what, text, answer) => {
    expect(await start(text)).toMatchObject({ kind: 'success', text: answer });
  });

  it('turns status error into simple-a2a:error with the agent’s reason, not retryable', async () => {
    expect(await start('#error')).toEqual({ kind: 'failure', category: 'failed', code: 'simple-a2a:error', message: 'the legacy agent could not answer', retryable: false });
  });

  it('reads a throttled legacy agent as busy, from the words of its error', async () => {
    expect(await start('#error=Rate limit exceeded, slow down')).toEqual({ kind: 'failure', category: 'busy', code: 'simple-a2a:error', message: 'Rate limit exceeded, slow down', retryable: false });
  });

  it('refuses an answer for another task id', async () => {
    expect(await start('#wrong-id')).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.IdMismatch, retryable: false });
  });

  it('refuses a body that is not JSON, and an empty one', async () => {
    expect(await start('#garbage')).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.Malformed, retryable: false });
    expect(await start('#empty')).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.Empty, retryable: false });
  });

  it('leaves HTTP failures to the transport’s verdict', async () => {
    const outcome = await new ExecutionAgent('legacy', protocol, transport).start({ text: '#http500' }, { requestId: randomUUID() });

    expect(outcome).toMatchObject({ kind: 'failure', category: 'unavailable', code: 'transport:server', retryable: true });
  });

  it('reads an HTTP 429 from the agent as busy', async () => {
    const outcome = await new ExecutionAgent('legacy', protocol, transport).start({ text: '#http429' }, { requestId: randomUUID() });

    expect(outcome).toMatchObject({ kind: 'failure', category: 'busy', code: 'transport:throttled', retryable: true });
  });

  it('cannot poll (the format has no way to) and cancels as a no-op without a request', async () => {
    const sentBefore = agent.requests.length;

    const polled = await protocol.poll({ taskId: 't' }, callContext(transport, 'r'));
    await protocol.cancel({ taskId: 't' }, callContext(transport, 'r'));

    expect(polled).toMatchObject({ kind: 'failure', category: 'failed', code: 'simple-a2a:no-polling', retryable: false });
    expect(agent.requests).toHaveLength(sentBefore);
  });
});

describe('categoryOfSimpleA2aError', () => {
  it.each([
    ['Throttled by the model provider', 'busy'],
    ['rate-limited: try later', 'busy'],
    ['Too many requests', 'busy'],
    ['the model is overloaded', 'busy'],
    ['request timed out after 30s', 'timed-out'],
    ['Timeout', 'timed-out'],
    ['model unavailable', 'unavailable'],
    ['cannot reach the backend', 'unavailable'],
    ['input too long for the model', 'rejected'],
    ['blocked by the content filter', 'rejected'],
    ['the legacy agent could not answer', 'failed'],
    ['KeyError: output', 'failed'],
  ])('%j → %s', (reason, category) => {
    expect(categoryOfSimpleA2aError(reason)).toBe(category);
  });
});
