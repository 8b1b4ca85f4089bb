import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the AgentCore data plane: enough of `InvokeAgentRuntime` for the real
 * `@aws-sdk/client-bedrock-agentcore` client to talk to it (endpoint override), and for the
 * agentcore transport to be exercised end to end on loopback without AWS.
 *
 * What it checks is what AgentCore refuses before an agent runs: a SigV4 Authorization header
 * (present and well-formed; the signature itself is not verified), the session id length
 * (33–256), a known runtime ARN. Errors use restJson1's shape, an `x-amzn-errortype` header and a
 * `{"message"}` body, which is what the SDK's deserializer reads to pick the exception class.
 * The agent's answer comes back as AgentCore returns it; a non-2xx or unreachable agent becomes
 * 424 RuntimeClientError, as on AWS.
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
};

export type AgentCoreEmulatorOptions = {
  /** Runtime ARN → base URL of a host that serves the AgentCore HTTP contract (`/invocations`). */
  runtimes: Record<string, string>;
  port?: number;
  host?: string;
  /**
   * Faults served instead of invoking the agent: a queue consumed one per request, or a function
   * asked for every request (undefined = no fault).
   */
  faults?: EmulatedFault[] | ((invocation: { runtimeArn: string; qualifier?: string; sessionId: string }) => EmulatedFault | undefined);
  /** The largest request payload accepted (AgentCore: 100 MB). */
  maxPayloadBytes?: number;
};

export type AgentCoreEmulator = {
  endpoint: string;
  /** Every request that reached an invocation path, faulted and refused ones included. */
  invocations: EmulatedInvocation[];
  /** Queues faults for the next requests. */
  injectFaults(...faults: EmulatedFault[]): void;
  close(): Promise<void>;
};

const INVOCATIONS_PATH = /^\/runtimes\/([^/]+)\/invocations$/;
const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';
const REQUEST_ID_HEADER = 'x-amzn-bedrock-agentcore-runtime-request-id';
const SESSION_MIN = 33;
const SESSION_MAX = 256;
const DEFAULT_MAX_PAYLOAD = 100_000_000;

export async function startAgentCoreEmulator(options: AgentCoreEmulatorOptions): Promise<AgentCoreEmulator> {
  const invocations: EmulatedInvocation[] = [];
  const queued: EmulatedFault[] = Array.isArray(options.faults) ? [...options.faults] : [];
  const faultFor = typeof options.faults === 'function' ? options.faults : () => queued.shift();
  const maxPayload = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const match = INVOCATIONS_PATH.exec(url.pathname);
    if (!match) return sendError(res, 404, 'UnknownOperationException', `no operation at ${url.pathname}`);
    if (req.method !== 'POST') return sendError(res, 405, 'UnknownOperationException', `${req.method} is not supported`);

    const runtimeArn = decodeURIComponent(match[1] ?? '');
    const qualifier = url.searchParams.get('qualifier') ?? undefined;
    const sessionId = header(req, SESSION_HEADER);
    const seen: EmulatedInvocation = { runtimeArn, qualifier, sessionId, status: 0 };
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
    const runtimeUrl = options.runtimes[runtimeArn];
    if (!runtimeUrl) return refuse(404, 'ResourceNotFoundException', `No agent runtime found for ${runtimeArn}`);

    const payload = await readPayload(req, maxPayload);
    if (payload === undefined) return refuse(400, 'ValidationException', `payload exceeds ${maxPayload} bytes`, { reason: 'FieldValidationFailed' });

    const fault = faultFor({ runtimeArn, qualifier, sessionId });
    if (fault) {
      const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return refuse(fault.status, fault.type, fault.message ?? `emulated ${fault.type}`, {}, headers);
    }

    // The agent's work stops if the caller goes away, as a real client disconnect would do.
    const upstream = new AbortController();
    res.on('close', () => upstream.abort());
    let answer: Response;
    try {
      answer = await fetch(new URL('/invocations', runtimeUrl), {
        method: 'POST',
        headers: {
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
      if (res.destroyed) return;
      return refuse(424, 'RuntimeClientError', 'The runtime could not be reached. Check the agent logs for more information.');
    }
    const body = Buffer.from(await answer.arrayBuffer());
    if (answer.status < 200 || answer.status >= 300) {
      return refuse(424, 'RuntimeClientError', `Received error (${answer.status}) from runtime. Check the agent logs for more information.`);
    }
    seen.status = answer.status;
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
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
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
