import { agentCoreTransport } from '../support/transports';
import { BedrockAgentCoreClient, StopRuntimeSessionCommand } from '@aws-sdk/client-bedrock-agentcore';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { runtimeSessionId } from '../../src/transport/session-id';
import { TransportError } from '../../src/transport/transport';

/**
 * StopRuntimeSession through the agentcore transport (AGENTCORE_STOP_SESSION): the real SDK client
 * against the local AgentCore emulator, which signs and keeps sessions as AgentCore does.
 */
const ARN = 'arn:aws:bedrock-agentcore:us-east-1:000000000000:runtime/stop_test-0000000000';
const credentials = { accessKeyId: 'LOCALSTOP', secretAccessKey: 'local-stop-secret' };
let emulator: AgentCoreEmulator;
let client: BedrockAgentCoreClient;

beforeAll(async () => {
  // No agent behind it: only StopRuntimeSession is called here.
  emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: 'http://127.0.0.1:9' }, credentials: { [credentials.accessKeyId]: credentials.secretAccessKey } });
  client = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
});
afterAll(async () => {
  client.destroy();
  await emulator.close();
});

describe('AgentCoreTransport.stopSession', () => {
  it('names the session as every call of the conversation does, and a session already ended is no fault', async () => {
    const transport = agentCoreTransport({ client, runtimeArn: ARN, timeoutMs: 5_000 });
    await expect(transport.stopSession('T1:C1:1700000000.000100')).resolves.toBeUndefined();
    expect(emulator.stops.at(-1)).toEqual({ runtimeArn: ARN, sessionId: runtimeSessionId('T1:C1:1700000000.000100'), ended: false });
  });

  it('reports any other failure as a TransportError; the agent returns it as a failure, never throws', async () => {
    const send = async (command: unknown): Promise<never> => {
      expect(command).toBeInstanceOf(StopRuntimeSessionCommand);
      throw Object.assign(new Error('not allowed'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } });
    };
    const denied = { send } as unknown as BedrockAgentCoreClient;
    const transport = agentCoreTransport({ client: denied, runtimeArn: ARN });
    await expect(transport.stopSession('key')).rejects.toBeInstanceOf(TransportError);
    const agent = new ExecutionAgent('default', createProtocol('execute-task'), transport);
    expect(agent.stopsSessions).toBe(true);
    expect(await agent.stopSession({ requestId: 'r1', sessionKey: 'key' })).toMatchObject({ kind: 'failure' });
  });
});
