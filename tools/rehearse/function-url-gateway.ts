import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type { Sandbox } from './lambda-sandbox';
import { requestBody } from './request-body';

/**
 * A Lambda function URL in front of one sandbox, on loopback: each HTTP request becomes the
 * function URL event (payload version 2.0) and the function's answer becomes the HTTP response.
 * In RESPONSE_STREAM mode the function writes `application/vnd.awslambda.http-integration-response`:
 * a JSON prelude (statusCode, headers, cookies), eight NUL bytes, then the body, which is passed on
 * as it arrives — so an SSE stream reaches the caller event by event, as through the real URL.
 *
 * AuthType AWS_IAM: a request without a SigV4 signature for the `lambda` service is refused with
 * 403 as the URL refuses it; whether the signer's role may invoke is IAM's, which only a real
 * account evaluates. Failures (an invocation error, an error trailer, a stream that never ends)
 * answer 502 or cut the stream, as the URL does, and are kept in `failures` for the rehearsal.
 */
export type FunctionUrlGateway = {
  url: string;
  /** Each answer: the function's response mode, and the status and content type it gave the caller. */
  answers: Array<{ mode: 'buffered' | 'streaming'; status: number; contentType: string | undefined }>;
  failures: string[];
  close(): Promise<void>;
};

const PRELUDE_TYPE = 'application/vnd.awslambda.http-integration-response';

export async function startFunctionUrlGateway(sandbox: () => Sandbox, options: { authType: string; accountId: string; timeoutMs: number }): Promise<FunctionUrlGateway> {
  const failures: string[] = [];
  const answers: FunctionUrlGateway['answers'] = [];
  const server = createServer((req, res) => {
    void serve(req, res).catch((error: Error) => {
      failures.push(error.message);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"Message":"Internal Server Error"}');
      else res.destroy(error);
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await requestBody(req);
    const authorization = String(req.headers.authorization ?? '');
    if (options.authType === 'AWS_IAM' && !/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[^/]+\/lambda\/aws4_request/.test(authorization)) {
      res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' }).end('{"Message":"Forbidden"}');
      return;
    }
    const answer = await sandbox().invoke(functionUrlEvent(req, body, options.accountId), { timeoutMs: options.timeoutMs });
    if (answer.mode === 'streaming' && answer.contentType === PRELUDE_TYPE) {
      const { prelude, rest } = await readPrelude(answer.body);
      res.writeHead(prelude.statusCode ?? 200, { ...prelude.headers, ...(prelude.cookies?.length ? { 'set-cookie': prelude.cookies } : {}) });
      answers.push({ mode: 'streaming', status: res.statusCode, contentType: contentTypeOf(prelude.headers) });
      if (rest.length) res.write(rest);
      for await (const chunk of answer.body) res.write(chunk);
    } else {
      const text = Buffer.concat(await chunksOf(answer.body)).toString('utf8');
      const result = text ? (JSON.parse(text) as { statusCode?: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean }) : {};
      const payload = result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
      res.writeHead(result.statusCode ?? 200, result.headers ?? {});
      answers.push({ mode: 'buffered', status: res.statusCode, contentType: contentTypeOf(result.headers) });
      res.write(payload);
    }
    const streamError = await answer.finished;
    if (streamError) throw new Error(`${sandbox().name}: ${streamError.errorType}: ${streamError.errorMessage}`);
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    answers,
    failures,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const contentTypeOf = (headers: Record<string, string> | undefined) => Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1];

function functionUrlEvent(req: IncomingMessage, body: Buffer, accountId: string) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  const text = /json|text|x-www-form-urlencoded/.test(headers['content-type'] ?? '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(url.search ? { queryStringParameters: Object.fromEntries(url.searchParams) } : {}),
    requestContext: {
      accountId,
      apiId: 'rehearsal',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'rehearsal',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** Reads up to the eight NUL bytes after the JSON prelude; returns the prelude and what followed it. */
async function readPrelude(body: Readable): Promise<{ prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] }; rest: Buffer }> {
  let buffered = Buffer.alloc(0);
  const delimiter = Buffer.alloc(8);
  // Stops reading at the delimiter without destroying the stream: the caller reads the rest.
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    const at = buffered.indexOf(delimiter);
    if (at >= 0) return { prelude: JSON.parse(buffered.subarray(0, at).toString('utf8')), rest: buffered.subarray(at + 8) };
  }
  throw new Error('the response stream ended before its http-integration prelude did');
}

async function chunksOf(body: Readable): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return chunks;
}
