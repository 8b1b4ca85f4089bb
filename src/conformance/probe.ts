import { randomUUID } from 'node:crypto';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { regionOfArn } from '../aws/arn';
import { AGENT_CARD_PATH } from '../contract/http-paths';
import { transportConfigFrom, type AuthMode } from '../transport/config';
import { createTransport } from '../transport/factory';
import { HttpsTransport } from '../transport/https';
import { TransportError, type Transport, type TransportKind } from '../transport/transport';
import { levelsOfCard, type CardLevels } from './levels';
import { SseReader } from './sse-reader';

/**
 * How the conformance kit reaches an agent: through the same transports the verification zone
 * uses, so an agent that passes here is reachable by the pipeline the same way. Only the https
 * transport lets the kit see HTTP itself (status, content type), and only there can it send
 * bytes that are not UTF-8, since a transport carries a string body.
 */
export type Exchange = {
  /** The response body; undefined for "no content" (HTTP 204, an empty body or payload). */
  body: string | undefined;
  /** The HTTP status, where the kit can see it (https). */
  httpStatus?: number;
  contentType?: string;
  /** Why no usable response came back (non-2xx, RuntimeClientError, connection refused, …). */
  fault?: TransportError;
};

/**
 * The answer to a request that asked for a streamed answer (docs/contract.md, "Streamed
 * answers"): each JSON-RPC response body in order — one per event of a stream, or the one body of
 * a plain answer.
 */
export type StreamExchange = {
  bodies: string[];
  /** Whether the answer was a stream of events (`text/event-stream`); unset where the kit cannot see it. */
  streamed?: boolean;
  httpStatus?: number;
  contentType?: string;
  /** A mistake in the stream's framing (seen over HTTP only, where the kit reads the events itself). */
  framing?: string;
  /** Why the answer stopped short, or never came. */
  fault?: TransportError;
};

export type Probe = {
  readonly transport: TransportKind;
  /** What is being checked, for the report's header. */
  readonly target: string;
  send(body: string, signal?: AbortSignal): Promise<Exchange>;
  /** Raw bytes over HTTP; absent where the kit cannot send them (agentcore, SigV4, in-process). */
  sendBytes?: (body: Uint8Array, signal?: AbortSignal) => Promise<Exchange>;
  /**
   * Sends a request that asks for a streamed answer (`Accept: text/event-stream` over HTTP) and
   * reads every response body to the end; absent where the kit cannot read a stream.
   */
  stream?: (body: string, signal?: AbortSignal) => Promise<StreamExchange>;
  /** The levels the agent card declares; absent where no GET reaches the agent (agentcore, in-process). */
  readAgentCard?: (signal?: AbortSignal) => Promise<CardLevels>;
  close(): void;
};

export type ConformanceTarget =
  | {
      kind: 'https';
      url: string;
      /** Unset: `none` for a loopback URL, `sigv4` otherwise (as the https transport decides). */
      auth?: AuthMode;
      bearerToken?: string;
      timeoutMs?: number;
      fetch?: typeof fetch;
    }
  | {
      kind: 'agentcore';
      runtimeArn: string;
      qualifier?: string;
      /** The SDK endpoint; unset, AWS_ENDPOINT_URL_BEDROCK_AGENTCORE (or AWS itself) applies. */
      endpoint?: string;
      region?: string;
      timeoutMs?: number;
      client?: BedrockAgentCoreClient;
    }
  /** Any transport a caller wired (in-process in tests, a custom one). */
  | { kind: 'transport'; transport: Transport; target?: string };

export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export function createProbe(target: ConformanceTarget): Probe {
  // One session for the whole run: behind AgentCore each session is its own microVM, and
  // get_task_result must reach the one that accepted the task.
  const sessionKey = `conformance-${randomUUID()}`;
  switch (target.kind) {
    case 'https':
      return httpsProbe(target, sessionKey);
    case 'agentcore':
      return agentCoreProbe(target, sessionKey);
    case 'transport': {
      const readAgentCard = cardReader(target.transport, undefined);
      const stream = streamViaTransport(target.transport, sessionKey);
      return {
        transport: target.transport.kind,
        target: target.target ?? target.transport.kind,
        send: viaTransport(target.transport, sessionKey),
        ...(stream ? { stream } : {}),
        ...(readAgentCard ? { readAgentCard } : {}),
        close: () => undefined,
      };
    }
  }
}

/**
 * Reads the agent card with the transport's own auth: next to the endpoint (`/prod/invocations`
 * → `/prod/.well-known/agent-card.json`), then at the origin's root, where the reference runtime
 * serves it. No card, or one without `zone_contract.levels`, declares nothing beyond core.
 */
function cardReader(transport: Transport, endpoint: URL | undefined): Probe['readAgentCard'] {
  if (!transport.getDocument) return undefined;
  const paths = [...new Set([endpoint ? new URL(`.${AGENT_CARD_PATH}`, endpoint).pathname : AGENT_CARD_PATH, AGENT_CARD_PATH])];
  return async (signal) => {
    const misses: string[] = [];
    for (const path of paths) {
      const where = endpoint ? new URL(path, endpoint).href : path;
      try {
        return levelsOfCard(await transport.getDocument!(path, signal ? { signal } : {}), where);
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        misses.push(`${where} (${error.details.status !== undefined ? `HTTP ${error.details.status}` : error.message})`);
      }
    }
    return { none: `no agent card at ${misses.join(' or ')}` };
  };
}

function viaTransport(transport: Transport, sessionKey: string, before: () => void = () => undefined, after: () => Partial<Exchange> = () => ({})) {
  return async (body: string, signal?: AbortSignal): Promise<Exchange> => {
    before();
    try {
      const answer = await transport.send(body, { sessionKey, signal });
      return { body: answer, ...after() };
    } catch (error) {
      if (error instanceof TransportError) return { body: undefined, fault: error, ...after() };
      throw error;
    }
  };
}

/** A transport's own stream (Transport.stream), where it has one: the kit sees the bodies, not the events. */
function streamViaTransport(transport: Transport, sessionKey: string, seen: () => Partial<StreamExchange> = () => ({})): Probe['stream'] {
  if (!transport.stream) return undefined;
  return async (body, signal) => {
    const bodies: string[] = [];
    try {
      for await (const answer of transport.stream!(body, { sessionKey, ...(signal ? { signal } : {}) })) bodies.push(answer);
      return { bodies, ...seen() };
    } catch (error) {
      if (error instanceof TransportError) return { bodies, fault: error, ...seen() };
      throw error;
    }
  };
}

/**
 * Reads a streamed answer over HTTP itself, so the events' framing is checked too: the body is
 * read as it comes, with `timeoutMs` as the longest wait for the next piece (a keep-alive comment
 * counts), not for the whole answer.
 */
async function readStreamOverHttp(fetcher: typeof fetch, url: URL, body: string, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<StreamExchange> {
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), timeoutMs);
  const quietFor = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), timeoutMs);
  };
  const fault = (error: unknown) =>
    new TransportError(
      idle.signal.aborted ? `no event for ${timeoutMs} ms while reading the streamed answer` : `could not read the agent's answer: ${(error as Error).message}`,
      idle.signal.aborted ? 'timeout' : 'connection',
      true,
      { transport: 'https' },
      { cause: error },
    );
  let seen: Pick<StreamExchange, 'httpStatus' | 'contentType'> = {};
  const bodies: string[] = [];
  try {
    const response = await fetcher(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream, application/json' },
      body,
      redirect: 'manual',
      signal: signal ? AbortSignal.any([signal, idle.signal]) : idle.signal,
    });
    const contentType = response.headers.get('content-type') ?? undefined;
    seen = { httpStatus: response.status, ...(contentType ? { contentType } : {}) };
    if (!/^text\/event-stream\b/i.test(contentType ?? '') || !response.body) {
      const text = await response.text();
      return { bodies: text === '' ? [] : [text], streamed: false, ...seen };
    }
    const reader = new SseReader();
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      quietFor();
      bodies.push(...reader.push(decoder.decode(chunk, { stream: true })));
    }
    bodies.push(...reader.push(decoder.decode()));
    reader.end();
    return { bodies, streamed: true, ...seen, ...(reader.problem ? { framing: reader.problem } : {}) };
  } catch (error) {
    return { bodies, ...seen, ...(seen.contentType ? { streamed: /^text\/event-stream\b/i.test(seen.contentType) } : {}), fault: fault(error) };
  } finally {
    clearTimeout(timer);
  }
}

function httpsProbe(target: Extract<ConformanceTarget, { kind: 'https' }>, sessionKey: string): Probe {
  const timeoutMs = target.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const config = transportConfigFrom({
    overrides: {
      kind: 'https',
      // Each case is one exchange: a retry would hide the very fault the kit is looking for.
      https: { url: target.url, auth: target.auth, bearerToken: target.bearerToken, timeoutMs, maxAttempts: 1 },
    },
  });
  const baseFetch = target.fetch ?? globalThis.fetch.bind(globalThis);
  // Cases run one after another, so "the last response seen" belongs to the call in flight.
  let seen: Pick<Exchange, 'httpStatus' | 'contentType'> = {};
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await baseFetch(input, init);
    seen = { httpStatus: response.status, contentType: response.headers.get('content-type') ?? undefined };
    return response;
  };
  const transport = createTransport(config, { fetch: recordingFetch });
  const authKind = transport instanceof HttpsTransport ? transport.authKind : undefined;
  const url = new URL(target.url);
  const readAgentCard = cardReader(transport, url);
  // A raw request cannot be SigV4-signed here (the signer takes a string body).
  const canSendRaw = authKind === 'none' || (authKind === 'bearer' && target.bearerToken !== undefined);

  const sendBytes = async (body: Uint8Array, signal?: AbortSignal): Promise<Exchange> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (authKind === 'bearer' && target.bearerToken) headers.authorization = `Bearer ${target.bearerToken}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await baseFetch(url, {
        method: 'POST',
        headers,
        body: body as unknown as BodyInit,
        redirect: 'manual',
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = await response.text();
      return { body: text === '' ? undefined : text, httpStatus: response.status, contentType: response.headers.get('content-type') ?? undefined };
    } catch (error) {
      const fault = new TransportError(`could not reach the agent: ${(error as Error).message}`, 'connection', true, { transport: 'https' }, { cause: error });
      return { body: undefined, fault };
    }
  };

  const bearer: Record<string, string> = authKind === 'bearer' && target.bearerToken ? { authorization: `Bearer ${target.bearerToken}` } : {};
  // Read by the kit itself where it can send the request unsigned; a SigV4-signed one goes through the transport's own stream.
  const viaOwnStream = streamViaTransport(transport, sessionKey, () => seen);
  const stream: Probe['stream'] = canSendRaw
    ? (body, signal) => readStreamOverHttp(baseFetch, url, body, bearer, timeoutMs, signal)
    : viaOwnStream &&
      ((body, signal) => {
        seen = {};
        return viaOwnStream(body, signal);
      });

  return {
    transport: 'https',
    target: url.href,
    send: viaTransport(transport, sessionKey, () => (seen = {}), () => seen),
    ...(stream ? { stream } : {}),
    ...(canSendRaw ? { sendBytes } : {}),
    ...(readAgentCard ? { readAgentCard } : {}),
    close: () => undefined,
  };
}

function agentCoreProbe(target: Extract<ConformanceTarget, { kind: 'agentcore' }>, sessionKey: string): Probe {
  const config = transportConfigFrom({
    overrides: {
      kind: 'agentcore',
      agentcore: { runtimeArn: target.runtimeArn, qualifier: target.qualifier, timeoutMs: target.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, maxAttempts: 1 },
    },
  });
  const ownClient = target.client === undefined;
  const client =
    target.client ??
    new BedrockAgentCoreClient({
      // The runtime is called in its own region, wherever the kit runs.
      region: regionOfArn(target.runtimeArn) ?? target.region ?? process.env.AWS_REGION,
      maxAttempts: 1,
      ...(target.endpoint ? { endpoint: target.endpoint } : {}),
    });
  const transport = createTransport(config, { agentCoreClient: client });
  const where = target.qualifier ? `${target.runtimeArn} (qualifier ${target.qualifier})` : target.runtimeArn;
  const stream = streamViaTransport(transport, sessionKey);
  return {
    transport: 'agentcore',
    target: target.endpoint ? `${where} via ${target.endpoint}` : where,
    send: viaTransport(transport, sessionKey),
    ...(stream ? { stream } : {}),
    close: () => {
      if (ownClient) client.destroy();
    },
  };
}
