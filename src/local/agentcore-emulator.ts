import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock';

/**
 * A local stand-in for the AgentCore data plane: enough of `InvokeAgentRuntime` for the real
 * `@aws-sdk/client-bedrock-agentcore` client to talk to it (endpoint override), and for the
 * agentcore transport to be exercised end to end on loopback without AWS.
 *
 * What it checks is what AgentCore refuses before an agent runs: a SigV4 Authorization header
 * (present and well-formed; the signature itself is not verified), the session id length
 * (33–256), a known runtime ARN. Errors use restJson1's shape, an `x-amzn-errortype` header and a
 * `{"message"}` body, which is what the SDK's deserializer reads to pick the exception class.
 * The agent's answer comes back as AgentCore returns it — a streamed one (`text/event-stream`)
 * passed on chunk by chunk as the agent writes it — and a non-2xx or unreachable agent becomes
 * 424 RuntimeClientError, as on AWS.
 *
 * Like AgentCore it passes the agent only the request headers the runtime allow-lists
 * (`RequestHeaderConfiguration`), and models sessions: one per session id (a cold start when it
 * opens), kept while requests come and ended after the idle timeout, with an account-wide limit of
 * live sessions answered with ServiceQuotaExceededException (docs/operations.md, "AgentCore
 * sessions").
 */
export type EmulatedFault = {
  status: number;
  /** The modelled error name, e.g. ThrottlingException, InternalServerException. */
  type: string;
  message?: string;
  /** Sent as Retry-After. */
  retryAfterSeconds?: number;
};

/** What the emulator saw, for tests to assert on. */
export type EmulatedInvocation = {
  runtimeArn: string;
  qualifier?: string;
  sessionId?: string;
  /** From the SigV4 credential scope: where and for what the caller signed. */
  signingRegion?: string;
  signingService?: string;
  /** The HTTP status the emulator answered with. */
  status: number;
  /** The error type when it refused or faulted the call. */
  errorType?: string;
  /**
   * `runtimeUserId` (header X-Amzn-Bedrock-AgentCore-Runtime-User-Id): who the caller said is
   * asking (docs/contract.md, "Who is asking"); AgentCore binds Identity and Memory to it.
   */
  userId?: string;
  /** The request headers passed on to the agent (allow-listed), lower case. */
  forwardedHeaders?: Record<string, string>;
  /** True when the call opened a new session (a cold start). */
  coldStart?: boolean;
};

/** A runtime as AgentCore hosts it. */
export type EmulatedRuntime = {
  /** HTTP: the agent's base URL; A2A: its JSON-RPC endpoint (on AgentCore, port 9000 at `/`). */
  url: string;
  /** `HTTP` (the default): POST `<url>/invocations`; `A2A` (`ProtocolConfiguration: A2A`): JSON-RPC POST to `url`. */
  protocol?: 'HTTP' | 'A2A';
  /** `RequestHeaderConfiguration.requestHeaderAllowlist`: the request headers the agent receives. */
  allowlistedHeaders?: readonly string[];
};

/** Sessions as AgentCore keeps them. */
export type EmulatedSessions = {
  /** `idleRuntimeSessionTimeout`: a session with no request this long ends. @default 900 */
  idleTimeoutSeconds?: number;
  /** Live sessions the account may have at once; one more is refused. @default unlimited */
  maxSessions?: number;
  /** The clock sessions age on (tests). @default systemClock */
  clock?: Clock;
  /**
   * AgentCore's announced rule for concurrent use of one session (docs/operations.md, "AgentCore
   * sessions"): a request to a session that has one running is refused with 409
   * RetryableConflictException. @default false (not yet enforced on AWS)
   */
  conflictOnConcurrentUse?: boolean;
};

/** A StopRuntimeSession call: `ended` when it ended a live session (else AgentCore answers ResourceNotFoundException). */
export type EmulatedStop = { runtimeArn: string; qualifier?: string; sessionId?: string; ended: boolean };

/** A live session: `inFlight` requests running in it now, at most `peakInFlight` at once so far. */
export type EmulatedSession = { runtimeArn: string; sessionId: string; startedAt: number; lastRequestAt: number; requests: number; inFlight: number; peakInFlight: number };

export type AgentCoreEmulatorOptions = {
  /** Runtime ARN → the agent: a base URL serving the AgentCore HTTP contract (`/invocations`), or a runtime spec. */
  runtimes: Record<string, string | EmulatedRuntime>;
  sessions?: EmulatedSessions;
  port?: number;
  host?: string;
  /**
   * Faults served instead of invoking the agent: a queue consumed one per request, or a function
   * asked for every request (undefined = no fault).
   */
  faults?: EmulatedFault[] | ((invocation: { runtimeArn: string; qualifier?: string; sessionId: string }) => EmulatedFault | undefined);
  /** The largest request payload accepted (AgentCore: 100 MB). */
  maxPayloadBytes?: number;
  /**
   * Access key id → secret key: with it, the SigV4 signature itself is checked (recomputed over
   * the request as received) and a wrong one is refused like AWS refuses it. Without it, only the
   * Authorization header's shape is.
   */
  credentials?: Readonly<Record<string, string>>;
};

export type AgentCoreEmulator = {
  endpoint: string;
  /** Every request that reached an invocation path, faulted and refused ones included. */
  invocations: EmulatedInvocation[];
  /** Queues faults for the next requests. */
  injectFaults(...faults: EmulatedFault[]): void;
  /** Queues faults for the next StopRuntimeSession calls (e.g. 409 RetryableConflictException). */
  injectStopFaults(...faults: EmulatedFault[]): void;
  /** The sessions alive now (idle ones past their timeout are gone). */
  liveSessions(): EmulatedSession[];
  /** Sessions opened so far: each one a cold start. */
  readonly coldStarts: number;
  /** Every StopRuntimeSession that reached the emulator, signed correctly: the session it named, and whether it was live. */
  stops: EmulatedStop[];
  close(): Promise<void>;
};

const INVOCATIONS_PATH = /^\/runtimes\/([^/]+)\/invocations$/;
const STOP_PATH = /^\/runtimes\/([^/]+)\/stopruntimesession$/;
const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';
const USER_ID_HEADER = 'x-amzn-bedrock-agentcore-runtime-user-id';
const REQUEST_ID_HEADER = 'x-amzn-bedrock-agentcore-runtime-request-id';
const SESSION_MIN = 33;
const SESSION_MAX = 256;
const DEFAULT_MAX_PAYLOAD = 100_000_000;
/** AgentCore's default `idleRuntimeSessionTimeout`. */
const DEFAULT_IDLE_TIMEOUT_SECONDS = 900;

export async function startAgentCoreEmulator(options: AgentCoreEmulatorOptions): Promise<AgentCoreEmulator> {
  const invocations: EmulatedInvocation[] = [];
  const queued: EmulatedFault[] = Array.isArray(options.faults) ? [...options.faults] : [];
  const faultFor = typeof options.faults === 'function' ? options.faults : () => queued.shift();
  const maxPayload = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD;
  const clock = options.sessions?.clock ?? systemClock;
  const idleMs = (options.sessions?.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000;
  const sessions = new Map<string, EmulatedSession>();
  let coldStarts = 0;
  const runtimeOf = (arn: string): EmulatedRuntime | undefined => {
    const spec = options.runtimes[arn];
    return typeof spec === 'string' ? { url: spec } : spec;
  };
  /** Ends sessions idle past the timeout (a session with a request running is never idle). */
  const expire = () => {
    for (const [key, session] of sessions) if (session.inFlight === 0 && clock.now() - session.lastRequestAt >= idleMs) sessions.delete(key);
  };

  const stops: EmulatedStop[] = [];
  const stopFaults: EmulatedFault[] = [];

  /** StopRuntimeSession: ends the session at once (a request running in it ends with it), as AgentCore does. */
  async function stopSession(req: IncomingMessage, res: ServerResponse, url: URL, runtimeArn: string): Promise<void> {
    if (req.method !== 'POST') return sendError(res, 405, 'UnknownOperationException', `${req.method} is not supported`);
    const authorization = header(req, 'authorization');
    if (!authorization?.startsWith('AWS4-HMAC-SHA256 ')) return sendError(res, 403, 'AccessDeniedException', 'Missing or malformed SigV4 Authorization header');
    const payload = (await readPayload(req, 1_000_000)) ?? Buffer.alloc(0);
    if (options.credentials) {
      const problem = await signatureProblem(req, url, payload, authorization, options.credentials);
      if (problem) return sendError(res, 403, problem.type, problem.message);
    }
    const qualifier = url.searchParams.get('qualifier') ?? undefined;
    const sessionId = header(req, SESSION_HEADER);
    if (!runtimeOf(runtimeArn)) return sendError(res, 404, 'ResourceNotFoundException', `No agent runtime found for ${runtimeArn}`);
    const fault = stopFaults.shift();
    if (fault) return sendError(res, fault.status, fault.type, fault.message ?? `emulated ${fault.type}`);
    expire();
    const key = `${runtimeArn}\n${qualifier ?? ''}\n${sessionId ?? ''}`;
    const ended = sessions.delete(key);
    stops.push({ runtimeArn, ...(qualifier ? { qualifier } : {}), ...(sessionId ? { sessionId } : {}), ended });
    if (!ended) return sendError(res, 404, 'ResourceNotFoundException', `No active session ${sessionId ?? ''} for ${runtimeArn}`);
    res.writeHead(200, { 'content-type': 'application/json', ...(sessionId ? { [SESSION_HEADER]: sessionId } : {}), 'x-amzn-requestid': randomUUID() }).end('{}');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const stop = STOP_PATH.exec(url.pathname);
    if (stop) return stopSession(req, res, url, decodeURIComponent(stop[1] ?? ''));
    const match = INVOCATIONS_PATH.exec(url.pathname);
    if (!match) return sendError(res, 404, 'UnknownOperationException', `no operation at ${url.pathname}`);
    if (req.method !== 'POST') return sendError(res, 405, 'UnknownOperationException', `${req.method} is not supported`);

    const runtimeArn = decodeURIComponent(match[1] ?? '');
    const qualifier = url.searchParams.get('qualifier') ?? undefined;
    const sessionId = header(req, SESSION_HEADER);
    const userId = header(req, USER_ID_HEADER);
    const seen: EmulatedInvocation = { runtimeArn, qualifier, sessionId, ...(userId ? { userId } : {}), status: 0 };
    invocations.push(seen);
    const refuse = (status: number, type: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
      seen.status = status;
      seen.errorType = type;
      sendError(res, status, type, message, extra, headers);
    };

    const authorization = header(req, 'authorization');
    const scope = authorization?.startsWith('AWS4-HMAC-SHA256 ') ? /Credential=[^/,\s]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(authorization) : null;
    if (!scope) return refuse(403, 'AccessDeniedException', 'Missing or malformed SigV4 Authorization header');
    seen.signingRegion = scope[1];
    seen.signingService = scope[2];
    if (!sessionId || sessionId.length < SESSION_MIN || sessionId.length > SESSION_MAX) {
      return refuse(400, 'ValidationException', `runtimeSessionId must be ${SESSION_MIN} to ${SESSION_MAX} characters long`, {
        reason: 'FieldValidationFailed',
        fieldList: [{ name: 'runtimeSessionId', message: `length must be between ${SESSION_MIN} and ${SESSION_MAX}` }],
      });
    }
    const runtime = runtimeOf(runtimeArn);
    if (!runtime) return refuse(404, 'ResourceNotFoundException', `No agent runtime found for ${runtimeArn}`);

    const payload = await readPayload(req, maxPayload);
    if (payload === undefined) return refuse(400, 'ValidationException', `payload exceeds ${maxPayload} bytes`, { reason: 'FieldValidationFailed' });
    if (options.credentials) {
      const problem = await signatureProblem(req, url, payload, authorization!, options.credentials);
      if (problem) return refuse(403, problem.type, problem.message);
    }

    const fault = faultFor({ runtimeArn, qualifier, sessionId });
    if (fault) {
      const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return refuse(fault.status, fault.type, fault.message ?? `emulated ${fault.type}`, {}, headers);
    }

    // The session: the one this id has, or a new one (a cold start) if the account may have one more.
    expire();
    const sessionKey = `${runtimeArn}\n${qualifier ?? ''}\n${sessionId}`;
    let session = sessions.get(sessionKey);
    if (!session) {
      const limit = options.sessions?.maxSessions;
      if (limit !== undefined && sessions.size >= limit) {
        return refuse(402, 'ServiceQuotaExceededException', `The number of active sessions has reached the account limit (${limit}). Try again after sessions end, or request a quota increase.`);
      }
      session = { runtimeArn, sessionId, startedAt: clock.now(), lastRequestAt: clock.now(), requests: 0, inFlight: 0, peakInFlight: 0 };
      sessions.set(sessionKey, session);
      coldStarts += 1;
      seen.coldStart = true;
    } else if (options.sessions?.conflictOnConcurrentUse && session.inFlight > 0) {
      return refuse(409, 'RetryableConflictException', 'The session is in use by another invocation; retry the request to prevent orphaned VMs during concurrent session access.');
    }
    session.requests += 1;
    session.inFlight += 1;
    session.peakInFlight = Math.max(session.peakInFlight, session.inFlight);
    session.lastRequestAt = clock.now();
    const live = session;
    const done = () => {
      live.inFlight = Math.max(0, live.inFlight - 1);
      live.lastRequestAt = clock.now();
    };

    // Only the headers the runtime allow-lists reach the agent, as on AgentCore.
    const allowed = new Set((runtime.allowlistedHeaders ?? []).map((name) => name.toLowerCase()));
    const forwarded = Object.fromEntries(Object.entries(req.headers).filter(([name, value]) => allowed.has(name) && typeof value === 'string')) as Record<string, string>;
    if (Object.keys(forwarded).length) seen.forwardedHeaders = forwarded;

    // The agent's work stops if the caller goes away, as a real client disconnect would do.
    const upstream = new AbortController();
    res.on('close', () => upstream.abort());
    let answer: Response;
    try {
      answer = await fetch(runtime.protocol === 'A2A' ? runtime.url : new URL('/invocations', runtime.url), {
        method: 'POST',
        headers: {
          ...forwarded,
          'content-type': header(req, 'content-type') ?? 'application/json',
          accept: header(req, 'accept') ?? 'application/json',
          [SESSION_HEADER]: sessionId,
          [REQUEST_ID_HEADER]: randomUUID(),
        },
        // Node's fetch takes a Buffer; the DOM typings want an ArrayBuffer-backed view.
        body: payload as unknown as BodyInit,
        signal: upstream.signal,
      });
    } catch {
      done();
      if (res.destroyed) return;
      return refuse(424, 'RuntimeClientError', 'The runtime could not be reached. Check the agent logs for more information.');
    }
    const contentType = answer.headers.get('content-type') ?? 'application/json';
    if (answer.status >= 200 && answer.status < 300 && answer.body && /^text\/event-stream\b/i.test(contentType)) {
      // A streamed answer goes through as it comes, as AgentCore passes an agent's SSE on.
      seen.status = answer.status;
      res.writeHead(answer.status, { 'content-type': contentType, 'cache-control': 'no-cache', [SESSION_HEADER]: sessionId, 'x-amzn-requestid': randomUUID() });
      res.flushHeaders();
      try {
        for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
        res.end();
      } catch {
        // The agent broke off, or the caller left (which aborted the agent's request): so does the answer.
        res.destroy();
      } finally {
        done();
      }
      return;
    }
    let body: Buffer;
    try {
      body = Buffer.from(await answer.arrayBuffer());
    } finally {
      done();
    }
    if (answer.status < 200 || answer.status >= 300) {
      return refuse(424, 'RuntimeClientError', `Received error (${answer.status}) from runtime. Check the agent logs for more information.`);
    }
    seen.status = answer.status;
    res.writeHead(answer.status, {
      'content-type': contentType,
      [SESSION_HEADER]: sessionId,
      'x-amzn-requestid': randomUUID(),
      ...(answer.status === 204 ? {} : { 'content-length': body.length }),
    });
    res.end(answer.status === 204 ? undefined : body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 500, 'InternalServerException', 'emulator failure');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    endpoint: `http://${host}:${address.port}`,
    invocations,
    injectFaults: (...faults) => queued.push(...faults),
    injectStopFaults: (...faults) => stopFaults.push(...faults),
    liveSessions: () => {
      expire();
      return [...sessions.values()].map((session) => ({ ...session }));
    },
    get coldStarts() {
      return coldStarts;
    },
    stops,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Why the request's SigV4 signature is not right, or undefined when it is: the canonical request is
 * rebuilt from what arrived — method, path and query as sent, the signed headers, the payload's
 * hash — and signed again with the secret of the access key it names, at the time it names.
 */
async function signatureProblem(req: IncomingMessage, url: URL, payload: Buffer, authorization: string, credentials: Readonly<Record<string, string>>): Promise<{ type: string; message: string } | undefined> {
  const parts = /Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)/.exec(authorization);
  if (!parts) return { type: 'InvalidSignatureException', message: 'The Authorization header is not a SigV4 signature' };
  const [, accessKeyId, , region, service, signedHeaders, signature] = parts as unknown as string[];
  const secretAccessKey = credentials[accessKeyId!];
  if (secretAccessKey === undefined) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const amzDate = header(req, 'x-amz-date');
  if (!amzDate) return { type: 'InvalidSignatureException', message: 'X-Amz-Date is missing' };
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const headers = Object.fromEntries(signedHeaders!.split(';').map((name) => [name, header(req, name) ?? '']));
  const [{ SignatureV4 }, { HttpRequest }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/protocol-http'), import('@smithy/hash-node')]);
  const signer = new SignatureV4({ service: service!, region: region!, credentials: { accessKeyId: accessKeyId!, secretAccessKey }, sha256: Hash.bind(null, 'sha256') });
  const request = new HttpRequest({
    method: req.method ?? 'POST',
    protocol: 'http:',
    hostname: url.hostname,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: payload,
  });
  const signed = await signer.sign(request, { signingDate, signableHeaders: new Set(Object.keys(headers)) });
  const expected = /Signature=([0-9a-f]+)/.exec(String(signed.headers.authorization ?? signed.headers.Authorization))?.[1];
  if (expected !== signature) return { type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
  return undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sendError(res: ServerResponse, status: number, type: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ message, ...extra });
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': type,
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readPayload(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
