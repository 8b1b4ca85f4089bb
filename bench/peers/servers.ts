import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as jayson from 'jayson';
import { JSONRPCErrorException, JSONRPCServer } from 'json-rpc-2.0';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';
import { SERVER_KINDS, type ServerKind } from '../support/throughput-shared';

/**
 * The servers the throughput part compares, one per child process (bundled with esbuild first,
 * as a deployed host would be, so no TypeScript loader runs inside the measured process).
 * Each serves `execute_task` with the echo behaviour (`echo: <text>`) on POST /invocations.
 * The peers check what a hand-written method would (text is a non-empty string); ours is the
 * execution runtime exactly as `zone serve` runs it (echo executor, memory task store, the
 * default log level).
 */

type EchoParams = { text?: unknown };
const echo = (text: string) => ({ status: 'success' as const, response_text: `echo: ${text}` });
const validText = (params: EchoParams | undefined): params is { text: string } => typeof params?.text === 'string' && params.text.length > 0;

function jaysonServer(): Server {
  const server = new jayson.Server({
    execute_task: (params: EchoParams, callback: (error: unknown, result?: unknown) => void) => {
      if (!validText(params)) return callback({ code: -32602, message: 'Invalid params' });
      callback(null, echo(params.text));
    },
  });
  return server.http();
}

function jsonRpc2Server(): Server {
  const rpc = new JSONRPCServer();
  rpc.addMethod('execute_task', (params: EchoParams) => {
    if (!validText(params)) throw new JSONRPCErrorException('Invalid params', -32602);
    return echo(params.text);
  });
  return createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const answer = await rpc.receiveJSON(body);
      if (answer === null) return void res.writeHead(204).end();
      send(res, JSON.stringify(answer));
    });
  });
}

/** The floor: parse, look at method and text, stringify. No schema, no store, no log. */
function bareServer(): Server {
  return createServer((req, res) => {
    void readBody(req).then((body) => {
      let message: { id?: unknown; method?: unknown; params?: EchoParams };
      try {
        message = JSON.parse(body) as typeof message;
      } catch {
        return send(res, JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      }
      const id = message.id ?? null;
      if (message.method !== 'execute_task') return send(res, JSON.stringify({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id }));
      if (!validText(message.params)) return send(res, JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id }));
      send(res, JSON.stringify({ jsonrpc: '2.0', result: echo(message.params.text), id }));
    });
  });
}

function oursServer(): Server {
  return createExecutionHttpServer(runtimeFromEnv({ ...process.env, EXECUTOR: 'echo', TASK_STORE: 'memory' }));
}

export function createPeerServer(kind: ServerKind): Server {
  switch (kind) {
    case 'ours':
      return oursServer();
    case 'jayson':
      return jaysonServer();
    case 'json-rpc-2.0':
      return jsonRpc2Server();
    case 'bare':
      return bareServer();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/** The child's entry: `serveFromArgv()` with `<kind> <port>` on the command line (see runtime-throughput.ts). */
export function serveFromArgv(argv = process.argv.slice(2)): void {
  const [kind, port] = argv;
  if (!SERVER_KINDS.includes(kind as ServerKind) || !port) {
    process.stderr.write(`usage: <${SERVER_KINDS.join('|')}> <port>\n`);
    process.exit(2);
  }
  const server = createPeerServer(kind as ServerKind);
  server.listen(Number(port), '127.0.0.1');
  const shutdown = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
