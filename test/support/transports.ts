import type { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { AgentCoreTransport } from '../../src/transport/agentcore';
import { transportConfigFrom, type TransportConfigOf, type TransportFields } from '../../src/transport/config';
import { HttpsTransport, type HttpsTransportOptions } from '../../src/transport/https';

/**
 * A transport built as a test writes it — its settings and its parts side by side — with the
 * settings parsed by the transport configuration (src/transport/config.ts), so a test gets the
 * same defaults and checks as a deployment, never a second set.
 */
export function httpsTransport(options: Omit<HttpsTransportOptions, 'settings'> & Omit<TransportFields<'https'>, 'auth'> & { url: string }): HttpsTransport {
  const { auth, fetch, sleep, random, log, clock, ...fields } = options;
  const settings = transportConfigFrom({ overrides: { kind: 'https', https: fields } }) as TransportConfigOf<'https'>;
  return new HttpsTransport({ settings, ...(auth ? { auth } : {}), ...(fetch ? { fetch } : {}), ...(sleep ? { sleep } : {}), ...(random ? { random } : {}), ...(log ? { log } : {}), ...(clock ? { clock } : {}) });
}

export function agentCoreTransport(options: { client: BedrockAgentCoreClient } & TransportFields<'agentcore'> & { runtimeArn: string }): AgentCoreTransport {
  const { client, ...fields } = options;
  return new AgentCoreTransport({ client, settings: transportConfigFrom({ overrides: { kind: 'agentcore', agentcore: fields } }) as TransportConfigOf<'agentcore'> });
}
