import {
  ExecuteTaskParamsSchema,
  ExecuteTaskResultSchema,
  RequestSchema,
  executeTaskRequest,
  successResponse,
  type ExecuteTaskParams,
  type JsonRpcRequest,
} from '../src/contract';
import { readRpcAnswer } from '../src/protocols/json-rpc-exchange';
import { ExecuteTaskProtocol } from '../src/protocols/execute-task';
import { success } from '../src/protocols/outcome';
import type { Transport } from '../src/transport/transport';
import { pairedRatios, rotate, summarize, type Summary } from './stats';

/**
 * Part 2: what the zone contract costs per message, through the code the pipeline runs, next to
 * bare JSON.stringify / JSON.parse of the very same objects and strings (1 KiB each).
 *
 * Verification side (the target):
 *  - request: `executeTaskRequest(params, id)` then `JSON.stringify`, as ExecuteTaskProtocol.start
 *    builds it and sendJson serializes it;
 *  - response: `readRpcAnswer` (JSON.parse, envelope schema, id check) then the result schema and
 *    the success outcome, the three steps of execute-task.ts's private `outcomeOf`;
 *  - round trip: `ExecuteTaskProtocol.start` end to end over a transport that answers at once.
 * Execution side (for reference): the dispatcher's envelope and params validation, and its answer.
 */

export const PAYLOAD_BYTES = 1024;
const REQUEST_ID = '6f1c2b7e-3d4a-4b8c-9e2f-1a2b3c4d5e6f';

/** Text padded so the serialized message is exactly `bytes` long (Slack-like: newlines, quotes, a few non-ASCII). */
function padTo(bytes: number, build: (text: string) => string): string {
  const seed = 'Summarise the thread above for the weekly report, please: "what shipped", what slipped — and why.\nKeep it short; café-style bullet points are fine. ';
  let text = '';
  while (Buffer.byteLength(build(text + seed)) <= bytes) text += seed;
  while (Buffer.byteLength(build(`${text}x`)) <= bytes) text += 'x';
  return text;
}

export function fixtures() {
  const baseParams = {
    channel: 'C0123456789',
    thread_ts: '1712345678.123456',
    correlation_id: REQUEST_ID,
    team_id: 'T0123456789',
    user_id: 'U0123456789',
  };
  const text = padTo(PAYLOAD_BYTES, (t) => JSON.stringify(executeTaskRequest({ text: t, ...baseParams }, REQUEST_ID)));
  const params: ExecuteTaskParams = { text, ...baseParams };
  const request = executeTaskRequest(params, REQUEST_ID);
  const requestBody = JSON.stringify(request);
  const responseText = padTo(PAYLOAD_BYTES, (t) => JSON.stringify(successResponse(REQUEST_ID, { status: 'success', response_text: t })));
  const responseObject = successResponse(REQUEST_ID, { status: 'success', response_text: responseText });
  const responseBody = JSON.stringify(responseObject);
  return { params, request, requestBody, responseObject, responseBody };
}

export type OverheadRow = {
  name: string;
  what: string;
  ours: Summary;
  bare: Summary;
  /** ours / bare, paired sample by sample. */
  ratio: Summary;
  side: 'verification' | 'execution';
};

export type ProtocolOverheadResult = { requestBytes: number; responseBytes: number; samples: number; rows: OverheadRow[] };

let sink = 0;

/** ns per call of `fn`, over `iterations` calls. */
function timeSync(fn: () => unknown, iterations: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i += 1) {
    const value = fn();
    sink += typeof value === 'string' ? value.length : value ? 1 : 0;
  }
  return Number(process.hrtime.bigint() - started) / iterations;
}

async function timeAsync(fn: () => Promise<unknown>, iterations: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i += 1) {
    const value = await fn();
    sink += value ? 1 : 0;
  }
  return Number(process.hrtime.bigint() - started) / iterations;
}

type Pair = { name: string; what: string; side: OverheadRow['side']; ours: () => unknown; bare: () => unknown; async?: boolean };

export type ProtocolOverheadOptions = { samples: number; sampleMs: number; log: (line: string) => void };

export async function runProtocolOverhead(options: ProtocolOverheadOptions): Promise<ProtocolOverheadResult> {
  const { params, request, requestBody, responseObject, responseBody } = fixtures();
  const sent: Pick<JsonRpcRequest, 'id' | 'method'> = { id: REQUEST_ID, method: request.method };

  // The real response step (outcomeOf in execute-task.ts is private; these are its three steps).
  const readResponse = () => {
    const answer = readRpcAnswer(sent, responseBody);
    if (answer.kind !== 'result') throw new Error(`unexpected answer ${answer.kind}`);
    const parsed = ExecuteTaskResultSchema.safeParse(answer.result);
    if (!parsed.success || parsed.data.status !== 'success') throw new Error('the fixture breaks the contract');
    const { status: _status, response_text, ...extra } = parsed.data;
    return success(response_text, extra);
  };

  const transport: Transport = { kind: 'in-process', send: async () => responseBody };
  const protocol = new ExecuteTaskProtocol();
  const call = { transport, sessionKey: REQUEST_ID };
  const task = { requestId: REQUEST_ID, params };
  const bareTransport = async (_body: string) => responseBody;

  const pairs: Pair[] = [
    {
      name: 'request: build + serialize',
      what: '`executeTaskRequest` + `JSON.stringify` vs `JSON.stringify` of the same object',
      side: 'verification',
      ours: () => JSON.stringify(executeTaskRequest(params, REQUEST_ID)),
      bare: () => JSON.stringify(request),
    },
    {
      name: 'response: parse + validate',
      what: '`readRpcAnswer` + result schema + outcome vs `JSON.parse` of the same string',
      side: 'verification',
      ours: readResponse,
      bare: () => JSON.parse(responseBody),
    },
    {
      name: 'round trip, sync steps',
      what: 'request + response rows above, back to back, vs `JSON.stringify` + `JSON.parse`',
      side: 'verification',
      ours: () => {
        sink += JSON.stringify(executeTaskRequest(params, REQUEST_ID)).length;
        return readResponse();
      },
      bare: () => {
        sink += JSON.stringify(request).length;
        return JSON.parse(responseBody);
      },
    },
    {
      name: 'round trip, `ExecuteTaskProtocol.start`',
      what: 'the protocol end to end over a transport that answers at once vs stringify → await → parse',
      side: 'verification',
      async: true,
      ours: () => protocol.start(task, call),
      bare: async () => JSON.parse(await bareTransport(JSON.stringify(request))),
    },
    {
      name: 'execution side: parse + validate request',
      what: '`JSON.parse` + envelope schema + `execute_task` params schema vs `JSON.parse`',
      side: 'execution',
      ours: () => {
        const parsed = RequestSchema.safeParse(JSON.parse(requestBody));
        if (!parsed.success) throw new Error('bad fixture');
        return ExecuteTaskParamsSchema.safeParse(parsed.data.params).success;
      },
      bare: () => JSON.parse(requestBody),
    },
    {
      name: 'execution side: build + serialize response',
      what: '`successResponse` + `JSON.stringify` vs `JSON.stringify` of the same object',
      side: 'execution',
      ours: () => JSON.stringify(successResponse(REQUEST_ID, responseObject.result)),
      bare: () => JSON.stringify(responseObject),
    },
  ];

  // Size each batch so one sample takes about sampleMs; warm both sides up first.
  const rows: OverheadRow[] = [];
  for (const pair of pairs) {
    const measure = (fn: () => unknown, n: number) => (pair.async ? timeAsync(fn as () => Promise<unknown>, n) : Promise.resolve(timeSync(fn, n)));
    await measure(pair.ours, 20_000);
    await measure(pair.bare, 20_000);
    const probe = Math.max(await measure(pair.ours, 5_000), await measure(pair.bare, 5_000));
    const iterations = Math.max(1_000, Math.round((options.sampleMs * 1e6) / probe));
    const ours: number[] = [];
    const bare: number[] = [];
    for (let sample = 0; sample < options.samples; sample += 1) {
      // Alternate which side goes first, so neither always runs on a warmer cache.
      for (const side of rotate(['ours', 'bare'] as const, sample)) {
        if (side === 'ours') ours.push(await measure(pair.ours, iterations));
        else bare.push(await measure(pair.bare, iterations));
      }
    }
    const row: OverheadRow = { name: pair.name, what: pair.what, side: pair.side, ours: summarize(ours), bare: summarize(bare), ratio: summarize(pairedRatios(ours, bare)) };
    rows.push(row);
    options.log(`  ${pair.name}: ${row.ours.median.toFixed(0)} ns/op vs bare ${row.bare.median.toFixed(0)} ns/op (${row.ratio.median.toFixed(2)}×)`);
  }
  if (sink === -1) options.log('unreachable');
  return { requestBytes: Buffer.byteLength(requestBody), responseBytes: Buffer.byteLength(responseBody), samples: options.samples, rows };
}
