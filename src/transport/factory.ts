import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { ConfigError } from '../config/env';
import type { Log } from '../observability/logger';
import { AgentCoreTransport } from './agentcore';
import { regionOfArn } from '../aws/arn';
import type { TransportConfig } from './config';
import { HttpsTransport, type HttpsAuth } from './https';
import { InProcessTransport, type BodyHandler, type StreamBodyHandler } from './in-process';
import { isLoopbackUrl } from '../net/loopback';
import { secretsManagerSecret, staticSecret, type SecretSource } from '../secrets/secret-source';
import type { Sleep } from './retry';
import type { SigV4Credentials } from './sigv4-signer';
import type { Transport } from './transport';

/**
 * Builds the transport a parsed configuration describes (src/transport/config.ts parses it).
 * The clients and credentials a transport needs are injected, so tests and the local stack
 * point the real clients at loopback servers.
 */
export type TransportDeps = {
  /** The execution dispatcher's body handler; only `in-process` uses it, and it needs it. */
  inProcess?: BodyHandler;
  /** Its streamed form (`runtime.dispatchStream`), for streamed reads in process; without it a stream is the one answer. */
  inProcessStream?: StreamBodyHandler;
  agentCoreClient?: BedrockAgentCoreClient;
  fetch?: typeof fetch;
  /** For SigV4 (https) and for the AgentCore client built here; default: the SDK's chain. */
  credentials?: SigV4Credentials;
  /** Overrides EXECUTION_BEARER_TOKEN / EXECUTION_BEARER_SECRET_ARN. */
  bearerTokenProvider?: SecretSource;
  sleep?: Sleep;
  log?: Pick<Log, 'warn'>;
};

export function createTransport(config: TransportConfig, deps: TransportDeps = {}): Transport {
  switch (config.kind) {
    case 'agentcore': {
      const client =
        deps.agentCoreClient ??
        new BedrockAgentCoreClient({
          // The runtime is called in its own region, whatever region the caller runs in.
          region: regionOfArn(config.runtimeArn) ?? config.region,
          maxAttempts: config.maxAttempts,
          ...(deps.credentials ? { credentials: deps.credentials } : {}),
        });
      return new AgentCoreTransport({ client, settings: config });
    }
    case 'https':
      return new HttpsTransport({ settings: config, auth: httpsAuth(config, deps), fetch: deps.fetch, sleep: deps.sleep, log: deps.log });
    case 'in-process':
      if (!deps.inProcess) {
        throw new ConfigError('TRANSPORT=in-process runs the execution zone in this process; it is available in local runs and tests only (nothing wired a dispatcher in here)');
      }
      return new InProcessTransport(deps.inProcess, deps.inProcessStream);
  }
}

/** The https auth the config names; unset is `none` for a loopback URL and `sigv4` otherwise. */
function httpsAuth(config: Extract<TransportConfig, { kind: 'https' }>, deps: TransportDeps): HttpsAuth | undefined {
  const sigv4: HttpsAuth = { kind: 'sigv4', credentials: deps.credentials, service: config.sigv4Service, defaultRegion: config.region };
  switch (config.auth) {
    case undefined:
      // An unparsable URL is left to the transport, which reports it as a config error.
      return URL.canParse(config.url) && isLoopbackUrl(new URL(config.url)) ? { kind: 'none' } : sigv4;
    case 'none':
      return { kind: 'none' };
    case 'sigv4':
      return sigv4;
    case 'bearer': {
      const token =
        deps.bearerTokenProvider ??
        // A JSON secret holds the token in its `token` field, as rotation templates store it.
        (config.bearerToken ? staticSecret(config.bearerToken) : secretsManagerSecret(config.bearerSecretArn as string, { jsonField: 'token' }));
      return { kind: 'bearer', token };
    }
  }
}
