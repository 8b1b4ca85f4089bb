import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { A2aProtocol } from '../../src/protocols/a2a';
import { readA2aReply, readA2aStreamEvent } from '../../src/protocols/a2a-dialects';
import { usageOfA2aMetadata } from '../../src/protocols/a2a-usage';
import { startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { callContext, pollUntilSettled } from './support/recording-transport';

describe('usage in A2A metadata (src/protocols/a2a-usage.ts)', () => {
  it("reads `usage` in the contract's names", () => {
    expect(usageOfA2aMetadata({ usage: { input_tokens: 5, output_tokens: 7, model: 'm' } })).toEqual({ usage: { input_tokens: 5, output_tokens: 7, model: 'm' } });
  });

  it("reads `usage` in Bedrock Converse's names", () => {
    const metadata = { usage: { inputTokens: 5, outputTokens: 7, totalTokens: 42, cacheReadInputTokens: 20, cacheWriteInputTokens: 10, modelId: 'anthropic.claude-test-v1:0' } };
    expect(usageOfA2aMetadata(metadata)).toEqual({ usage: { input_tokens: 5, output_tokens: 7, cache_read_tokens: 20, cache_write_tokens: 10, model: 'anthropic.claude-test-v1:0' } });
  });

  it("reads `usage` in the Anthropic API's names", () => {
    const metadata = { usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 20, cache_creation_input_tokens: 10 } };
    expect(usageOfA2aMetadata(metadata)).toEqual({ usage: { input_tokens: 5, output_tokens: 7, cache_read_tokens: 20, cache_write_tokens: 10 } });
  });

  it("reads Google ADK's adk_usage_metadata: cached prompt tokens apart from input, thoughts as output", () => {
    const metadata = { adk_app_name: 'helper', adk_usage_metadata: { promptTokenCount: 975, cachedContentTokenCount: 900, candidatesTokenCount: 11, thoughtsTokenCount: 90, totalTokenCount: 1076 } };
    expect(usageOfA2aMetadata(metadata)).toEqual({ usage: { input_tokens: 75, output_tokens: 101, cache_read_tokens: 900 } });
  });

  it('says nothing when no metadata has a usage, and drops a malformed one with the reason', () => {
    expect(usageOfA2aMetadata(undefined, { adk_app_name: 'helper' }, 'not a map')).toEqual({});
    expect(usageOfA2aMetadata({ usage: { inputTokens: 'ten', outputTokens: 1 } })).toEqual({ dropped: expect.stringMatching(/^input_tokens: /) });
    expect(usageOfA2aMetadata({ adk_usage_metadata: { promptTokenCount: 3 } })).toEqual({ dropped: expect.stringMatching(/^adk_usage_metadata: output_tokens: /) });
  });

  it('takes the first metadata that has a usage', () => {
    expect(usageOfA2aMetadata({}, { usage: { input_tokens: 1, output_tokens: 2 } }, { usage: { input_tokens: 3, output_tokens: 4 } })).toEqual({ usage: { input_tokens: 1, output_tokens: 2 } });
  });

  it("reads a completed task's own metadata, its status message's, or its last agent message's", () => {
    const task = (metadata: Record<string, unknown>) => ({ kind: 'task', id: 't1', status: { state: 'completed' }, artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: 'done' }] }], ...metadata });
    expect(readA2aReply(task({ metadata: { usage: { input_tokens: 1, output_tokens: 2 } } }))).toMatchObject({ kind: 'task', answer: 'done', usage: { usage: { input_tokens: 1, output_tokens: 2 } } });
    expect(readA2aReply({ ...task({}), status: { state: 'completed', message: { role: 'agent', parts: [], metadata: { usage: { input_tokens: 3, output_tokens: 4 } } } } })).toMatchObject({ usage: { usage: { input_tokens: 3, output_tokens: 4 } } });
    expect(readA2aReply(task({ history: [{ role: 'agent', parts: [{ kind: 'text', text: 'hm' }], metadata: { usage: { input_tokens: 5, output_tokens: 6 } } }] }))).toMatchObject({ usage: { usage: { input_tokens: 5, output_tokens: 6 } } });
    expect(readA2aReply(task({}))).not.toHaveProperty('usage');
  });

  it("reads a message reply's metadata and a final status update's", () => {
    expect(readA2aReply({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'hi' }], metadata: { usage: { input_tokens: 1, output_tokens: 1 } } })).toMatchObject({ kind: 'message', usage: { usage: { input_tokens: 1, output_tokens: 1 } } });
    expect(readA2aStreamEvent({ kind: 'status-update', taskId: 't1', status: { state: 'completed' }, final: true, metadata: { usage: { input_tokens: 8, output_tokens: 9 } } })).toMatchObject({ kind: 'status', usage: { usage: { input_tokens: 8, output_tokens: 9 } } });
  });
});

describe('usage from a real @a2a-js/sdk agent, through the A2A protocol', () => {
  let agent: A2aTestAgent;
  beforeAll(async () => {
    agent = await startSdkA2aAgent({ legacyCompat: true });
  });
  afterAll(() => agent.close());

  it.each(['1.0', '0.3'] as const)('A2A %s: a message reply with ADK usage metadata, and a polled task with usage metadata', async (version) => {
    // Prepare
    const protocol = new A2aProtocol({ version });
    const transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
    const start = (text: string) => {
      const requestId = randomUUID();
      return protocol.start({ requestId, params: { text } }, callContext(transport, requestId));
    };

    // Act
    const message = await start('count me #usage');
    const plain = await start('do not count me');
    const accepted = await start('count the task #task #delay=50 #usage');
    if (accepted.kind !== 'pending') throw new Error(`expected the task to be pending, got ${accepted.kind}`);
    const { outcome: task } = await pollUntilSettled(protocol, accepted.handle, callContext(transport, 'poller'));

    // Assess
    expect(message).toMatchObject({ kind: 'success', text: 'a2a echo: count me #usage', usage: { input_tokens: 10, output_tokens: 7, cache_read_tokens: 30 } });
    expect(plain).toEqual(expect.objectContaining({ kind: 'success' }));
    expect(plain).not.toHaveProperty('usage');
    expect(task).toMatchObject({ kind: 'success', text: 'a2a done: count the task #task #delay=50 #usage', usage: { input_tokens: 12, output_tokens: 5 } });
  });
});
