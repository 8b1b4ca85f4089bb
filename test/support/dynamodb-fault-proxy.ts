import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './http';

/**
 * A loopback HTTP proxy in front of a DynamoDB endpoint (dynalite) that loses answers: a request
 * that matches a planted fault is forwarded and applied, and then its answer never reaches the
 * client — the connection is reset, or a 500 comes back instead. That is what a network fault
 * after the write looks like to the SDK, which then sends the same request again. Point the SDK
 * at `endpoint` (AWS_ENDPOINT_URL_DYNAMODB); everything else is relayed as it is.
 */
export type DynamoDbRequest = {
  /** The operation, e.g. `UpdateItem` (from `X-Amz-Target`). */
  operation: string;
  /** The request's JSON body. */
  input: Record<string, unknown>;
};

export type LostAnswer = {
  /** Which requests lose their answer. */
  match: (request: DynamoDbRequest) => boolean;
  /** `reset`: the connection is reset; `500`: an InternalServerError comes back instead. */
  how: 'reset' | '500';
  /** How many matching requests lose their answer. @default 1 */
  times?: number;
};

export type DynamoDbFaultProxy = {
  endpoint: string;
  /** Plants a fault: the next matching request(s) are applied, their answers lost. */
  loseAnswerOf(fault: LostAnswer): void;
  /** Every request forwarded to DynamoDB, in order (lost answers included). */
  forwarded: DynamoDbRequest[];
  /** Requests whose answers were lost. */
  lost: DynamoDbRequest[];
  /** Forgets recorded requests and planted faults. */
  reset(): void;
  close(): Promise<void>;
};

/** The string value of the `pk` key a request names (GetItem, PutItem, UpdateItem, DeleteItem). */
export function keyOf(request: DynamoDbRequest): string | undefined {
  const key = (request.input.Key ?? request.input.Item) as { pk?: { S?: string } } | undefined;
  return key?.pk?.S;
}

export async function startDynamoDbFaultProxy(target: string): Promise<DynamoDbFaultProxy> {
  const upstream = new URL(target);
  const forwarded: DynamoDbRequest[] = [];
  const lost: DynamoDbRequest[] = [];
  let faults: Array<LostAnswer & { times: number }> = [];

  const takeFault = (request: DynamoDbRequest) => {
    const fault = faults.find((candidate) => candidate.match(request));
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) faults = faults.filter((candidate) => candidate !== fault);
    return fault;
  };

  const server = createServer((req, res) => {
    void relay(req, res).catch(() => res.destroy());
  });

  async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    let input: Record<string, unknown> = {};
    try {
      input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      // Not JSON: relayed as it is, never matched.
    }
    const seen = { operation, input };
    forwarded.push(seen);
    const fault = takeFault(seen);
    const answer = await forward(req.method ?? 'POST', req.url ?? '/', req.headers, body);
    if (!fault) {
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      return;
    }
    // Applied upstream; the caller never learns it.
    lost.push(seen);
    if (fault.how === 'reset') {
      res.socket?.resetAndDestroy();
      return;
    }
    const text = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'fake proxy: the answer was lost' });
    res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  function forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest({ host: upstream.hostname, port: upstream.port, method, path, headers: { ...headers, host: upstream.host } }, (incoming) => {
        void readBody(incoming).then((answer) => resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: answer }), reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  const endpoint = await listenOnLoopback(server);
  return {
    endpoint,
    loseAnswerOf(fault) {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    forwarded,
    lost,
    reset() {
      forwarded.length = 0;
      lost.length = 0;
      faults = [];
    },
    close: () => closeServer(server),
  };
}

async function readBody(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
