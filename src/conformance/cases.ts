import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import {
  CancelTaskResultSchema,
  ErrorCode,
  ExecuteTaskResultSchema,
  GetTaskResultResultSchema,
  Method,
  PendingResultSchema,
  StepSchema,
  UsageSchema,
  inlineBytesOf,
  readFiles,
  cancelTaskRequest,
  executeTaskRequest,
  getTaskResultRequest,
  newRequestId,
  type ExecuteTaskParams,
  type JsonRpcId,
} from '../contract';
import type { TransportKind } from '../transport/transport';
import {
  NotApplicable,
  NotExercised,
  asResponse,
  bodyJson,
  expectError,
  expectErrorIn,
  expectInvalidParamsData,
  expectNoResponse,
  expectResult,
  expectResultIn,
  describeFault,
  fail,
  show,
} from './checks';
import type { Level } from './levels';
import type { Exchange, Probe, StreamExchange } from './probe';

/**
 * The zone contract's cases (docs/contract.md, "Check an agent"), as data: what is sent, what must come back, and
 * why it matters to the verification zone. A case resolves (optionally with a note for the
 * report), or throws CaseFailure, NotExercised or NotApplicable (see checks.ts). Each belongs to
 * a level (levels.ts): core, or a capability checked only when the agent declares it.
 */
export type ConformanceSettings = {
  /** An execute_task text that takes longer than the agent's sync budget. */
  slowText: string;
  /** The text of the streaming case: slow, and producing its answer piece by piece. */
  streamText: string;
  pollIntervalMs: number;
  pollTimeoutMs: number;
};

/** What earlier cases learned that later ones build on. */
export type SharedState = { acceptedTaskId?: string };

export type CaseContext = {
  transport: TransportKind;
  settings: ConformanceSettings;
  send(body: string): Promise<Exchange>;
  sendBytes?: Probe['sendBytes'];
  /** Asks for a streamed answer and reads it to the end; absent where the transport cannot read one. */
  stream?: (body: string) => Promise<StreamExchange>;
  shared: SharedState;
  signal?: AbortSignal;
};

export type ConformanceCase = {
  id: string;
  /** `core`: every agent; any other level: only an agent that declares it. */
  level: Level;
  /** What the agent must do, in one short line. */
  expectation: string;
  /** Why it matters, shown when the case fails. */
  why: string;
  /** A failing optional case only warns. */
  required: boolean;
  /** Only meaningful when the agent answers `accepted` for the slow text (or streams it). */
  async?: boolean;
  run(ctx: CaseContext): Promise<string | void>;
};

const UNKNOWN_METHOD = 'conformance_no_such_method';

/** A JSON-RPC request body; without an id it is a notification (no `id` member at all). */
function rpc(method: string, params: unknown, ...id: [JsonRpcId] | []): string {
  return JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), ...(id.length ? { id: id[0] } : {}) });
}

/** A random id, so a rerun against the same agent never meets a task remembered by id. */
function randomNumberId(): number {
  return Math.floor(Math.random() * 2 ** 31) + 1;
}

async function sendRequest(ctx: CaseContext, body: unknown): Promise<Exchange> {
  return ctx.send(JSON.stringify(body));
}

/** What a required case says of itself: its id, what the agent must do, why it matters, and its level (core unless said). */
type Described = Pick<ConformanceCase, 'id' | 'expectation' | 'why'> & { level?: Level };

/**
 * A required case whose request must be answered with the error `code`. `body(id)` builds the
 * request with the id it is sent with, which must come back; `echoes: false` for a body no id can
 * be read from (the answer's id must be null). `data`: the field -32602's data must name.
 */
function errorCase(described: Described, code: number, body: (id: JsonRpcId) => unknown, check: { echoes?: false; data?: string } = {}): ConformanceCase {
  return {
    level: 'core',
    ...described,
    required: true,
    async run(ctx) {
      const id = newRequestId();
      const error = expectError(await sendRequest(ctx, body(id)), code, check.echoes === false ? null : id);
      if (check.data) expectInvalidParamsData(error, check.data);
    },
  };
}

/** A JSON-RPC 2.0 request of `method` with `params`, for `errorCase`. */
const requestOf = (method: string, params: unknown) => (id: JsonRpcId) => ({ jsonrpc: '2.0', method, params, id });

/** Polls get_task_result until the task succeeds, checking every answer on the way. */
async function pollUntilSuccess(ctx: CaseContext, taskId: string): Promise<{ polls: number; seen: string[]; responseText: string; result: Record<string, unknown> }> {
  const deadline = performance.now() + ctx.settings.pollTimeoutMs;
  const seen: string[] = [];
  for (let polls = 1; ; polls++) {
    const id = newRequestId();
    const result = expectResult(await sendRequest(ctx, getTaskResultRequest(taskId, id)), GetTaskResultResultSchema, id, 'a get_task_result result (accepted, working or success)');
    if (seen.at(-1) !== result.status) seen.push(result.status);
    if (result.status === 'success') return { polls, seen, responseText: result.response_text, result };
    if (result.task_id !== taskId) fail(`expected result.task_id ${show(taskId)} while pending, got ${show(result.task_id)}`);
    if (performance.now() > deadline) fail(`expected success within ${ctx.settings.pollTimeoutMs} ms, the task was still ${result.status} after ${polls} polls`);
    await sleep(ctx.settings.pollIntervalMs, undefined, { signal: ctx.signal });
  }
}

/**
 * Polls a streaming task with the cursor of each answer until it succeeds, collecting the text
 * it hands out on the way; every answer is checked, and text must come with a cursor.
 */
async function pollStreamUntilSuccess(ctx: CaseContext, taskId: string, pieces: string[], cursor: string | undefined): Promise<{ polls: number; responseText: string }> {
  const deadline = performance.now() + ctx.settings.pollTimeoutMs;
  for (let polls = 1; ; polls++) {
    const id = newRequestId();
    const result = expectResult(await sendRequest(ctx, getTaskResultRequest(taskId, id, cursor)), GetTaskResultResultSchema, id, 'a get_task_result result (accepted, working or success)');
    if (result.status === 'success') return { polls, responseText: result.response_text };
    if (result.task_id !== taskId) fail(`expected result.task_id ${show(taskId)} while pending, got ${show(result.task_id)}`);
    cursor = streamedPiece(result, pieces, cursor, `get_task_result (poll ${polls})`);
    if (performance.now() > deadline) fail(`expected success within ${ctx.settings.pollTimeoutMs} ms, the task was still ${result.status} after ${polls} polls`);
    await sleep(ctx.settings.pollIntervalMs, undefined, { signal: ctx.signal });
  }
}

/** Keeps a pending answer's text; the cursor to send next (the answer's, else the one sent). */
function streamedPiece(result: { text?: string; cursor?: string }, pieces: string[], cursor: string | undefined, where: string): string | undefined {
  if (result.text !== undefined && result.text !== '') {
    if (result.cursor === undefined) fail(`expected a cursor with the text of ${where}, got text ${show(result.text)} without one: the caller could not ask for only what comes after it`);
    pieces.push(result.text);
  }
  return result.cursor ?? cursor;
}

/** What one streamed answer held: the text it handed out, its last response, and whether it was a stream at all. */
type StreamedRound<T> = { pieces: string[]; last: T; events: number; streamed: boolean };

/**
 * Checks a streamed answer (docs/contract.md, "Streamed answers"): a plain answer is one response;
 * a stream is `working` responses, each with text and the cursor after it, then one last response
 * (`lastSchema`), which carries a cursor when it is pending.
 */
function readStreamedAnswer<S extends z.ZodType<{ status: string; cursor?: string; text?: string }>>(exchange: StreamExchange, id: JsonRpcId, lastSchema: S, what: string): StreamedRound<z.infer<S>> {
  const { bodies, httpStatus } = exchange;
  if (exchange.fault) {
    if (!bodies.length) bodyJson({ body: undefined, fault: exchange.fault, ...(httpStatus === undefined ? {} : { httpStatus }) });
    fail(`the streamed answer broke off after ${bodies.length} responses: ${describeFault({ body: undefined, fault: exchange.fault })}`);
  }
  if (exchange.framing) fail(`expected server-sent events of one data line each, each ended by a blank line: ${exchange.framing}`);
  if (!bodies.length) fail('expected a response, got none (an empty body or an empty stream)');
  const streamed = exchange.streamed ?? bodies.length > 1;
  const pieces: string[] = [];
  bodies.slice(0, -1).forEach((body, index) => {
    const where = `event ${index + 1} of ${bodies.length}`;
    const progress = expectResult({ body, ...(httpStatus === undefined ? {} : { httpStatus }) }, PendingResultSchema, id, `a progress response (status working, text, cursor) as ${where}`);
    if (progress.status !== 'working') fail(`expected status "working" in ${where} (only the last response may end the stream), got ${show(progress.status)}`);
    // The first may name the task before it has text (a caller holding a quiet task lets go and polls); later ones carry text.
    if (!progress.text && index > 0) fail(`expected text in ${where}: a progress response after the first carries the text produced since the one before, never none`);
    if (progress.cursor === undefined) fail(`expected a cursor with ${progress.text ? `the text ${show(progress.text)} of ` : ''}${where}: the caller could not go on from it`);
    if (progress.text) pieces.push(progress.text);
  });
  const last = expectResult({ body: bodies.at(-1), ...(httpStatus === undefined ? {} : { httpStatus }) }, lastSchema, id, `${what} as the last response`) as z.infer<S>;
  if (last.status !== 'success') {
    if (streamed && last.cursor === undefined) fail(`expected a cursor in the last response, ${show(last.status)}: a stream that ends before its task does hands over the cursor to poll from`);
    if (last.text) {
      if (last.cursor === undefined) fail(`expected a cursor with the text of the last response, got text ${show(last.text)} without one`);
      pieces.push(last.text);
    }
  }
  return { pieces, last, events: bodies.length, streamed };
}

/** Sends the slow text; the task id when the agent answered `accepted`. */
async function startSlowTask(ctx: CaseContext, suffix: string): Promise<string> {
  const id = newRequestId();
  const result = expectResult(await sendRequest(ctx, executeTaskRequest({ text: `${ctx.settings.slowText}${suffix}` }, id)), ExecuteTaskResultSchema, id, 'an execute_task result (success or accepted)');
  if (result.status === 'success') {
    throw new NotExercised('the slow task was answered with success at once, within the agent\'s sync budget; pass a longer --slow-ms (or a --slow-text that takes longer)');
  }
  return result.task_id;
}

function expectNonEmpty(text: string, where: string): void {
  if (text.trim() === '') fail(`expected a non-empty response_text ${where}, got ${show(text)}`);
}

/** Sends an execute_task that must end in success: at once, or accepted and polled to the end. */
async function expectAnswered(ctx: CaseContext, params: ExecuteTaskParams): Promise<string | undefined> {
  const id = newRequestId();
  const result = expectResult(await sendRequest(ctx, executeTaskRequest(params, id)), ExecuteTaskResultSchema, id, 'an execute_task result (success or accepted)');
  if (result.status === 'success') {
    expectNonEmpty(result.response_text, 'in the result');
    return undefined;
  }
  const polled = await pollUntilSuccess(ctx, result.task_id);
  expectNonEmpty(polled.responseText, 'once polled to success');
  return `answered accepted; success after ${polled.polls} polls`;
}

/** A 1×1 PNG (70 bytes), the smallest file a Slack message could carry to a model. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PIXEL_PNG_SIZE = Buffer.from(PIXEL_PNG, 'base64').length;
const PIXEL_ATTACHMENT = { name: 'pixel.png', mimetype: 'image/png', size: PIXEL_PNG_SIZE, data: PIXEL_PNG };
const NOTES_TEXT = 'conformance check: a short note\n';
const NOTES_ATTACHMENT = { name: 'notes.txt', mimetype: 'text/plain', size: Buffer.byteLength(NOTES_TEXT), data: Buffer.from(NOTES_TEXT).toString('base64') };

/**
 * Earlier messages of a thread as the verification zone sends them: oldest first, the current one
 * excluded, roles as Slack shows them — two people asking one after the other are two user turns
 * in a row, and so are the last message and the current one.
 */
const THREAD_MESSAGES: NonNullable<ExecuteTaskParams['messages']> = [
  { role: 'user', text: 'conformance check: I will send you a picture', user_id: 'U0CONFORM', ts: '1700000000.000100' },
  { role: 'user', text: 'conformance check: me too', user_id: 'U0CONFORM2', ts: '1700000000.000200' },
  { role: 'assistant', text: 'Sure, send them over.', ts: '1700000001.000200' },
  { role: 'user', text: 'conformance check: here it comes', user_id: 'U0CONFORM', ts: '1700000002.000300' },
];

/** What the user is looking at in Slack while they ask (docs/contract.md, "Context"). */
const CONTEXT: NonNullable<ExecuteTaskParams['context']> = {
  entities: [
    { type: 'channel', id: 'C0CONFORM' },
    { type: 'message', id: '1700000002.000300', channel: 'C0CONFORM' },
  ],
};

/** Every level's cases, core first; the runner keeps this order. */
export const CASES: readonly ConformanceCase[] = [
  {
    id: 'execute_task.success',
    level: 'core',
    expectation: 'short text → success, response_text, string id echoed',
    why: 'this is the answer the verification zone posts in the Slack thread',
    required: true,
    async run(ctx) {
      return expectAnswered(ctx, { text: 'conformance check: hello' });
    },
  },
  {
    id: 'execute_task.optional-params',
    level: 'core',
    expectation: 'messages, attachments, context, stream + an unknown param → success, not an error',
    why: 'the verification zone adds optional params over time; an agent written to an earlier contract ignores what it does not read, and must never refuse the task for it',
    required: true,
    async run(ctx) {
      return expectAnswered(ctx, {
        text: 'conformance check: what is in this picture?',
        messages: THREAD_MESSAGES,
        attachments: [PIXEL_ATTACHMENT],
        context: CONTEXT,
        stream: true,
        conformance_future_param: { added_in: 'a later version of the contract' },
      });
    },
  },
  {
    id: 'execute_task.accepted',
    level: 'core',
    expectation: 'slow text → accepted with a task_id',
    why: 'work past the sync budget must be handed back as accepted, or the transport times out',
    required: true,
    async: true,
    async run(ctx) {
      ctx.shared.acceptedTaskId = await startSlowTask(ctx, '');
      return `task_id ${ctx.shared.acceptedTaskId}`;
    },
  },
  {
    id: 'get_task_result.polling',
    level: 'core',
    expectation: 'accepted task → accepted/working, then success',
    why: 'the verification zone polls accepted tasks until they finish, then posts the answer',
    required: true,
    async: true,
    async run(ctx) {
      const taskId = ctx.shared.acceptedTaskId;
      if (!taskId) throw new NotExercised('no task was accepted, so there was nothing to poll');
      const polled = await pollUntilSuccess(ctx, taskId);
      expectNonEmpty(polled.responseText, 'once the task succeeded');
      return `${polled.seen.join(' → ')} after ${polled.polls} polls`;
    },
  },
  errorCase({ id: 'get_task_result.unknown', expectation: 'unknown task_id → -32002, id echoed', why: 'a poll of an expired task must end the polling with a clear error' }, ErrorCode.TaskNotFound, (id) =>
    getTaskResultRequest(`conformance-unknown-${newRequestId()}`, id),
  ),
  {
    id: 'error.parse',
    level: 'core',
    expectation: 'body that is not JSON → -32700, id null',
    why: 'JSON-RPC 2.0 requires it; an HTML error page or a crash tells the caller nothing',
    required: true,
    async run(ctx) {
      // A request cut off mid-way, as a broken proxy or a truncated write would leave it.
      const truncated = rpc(Method.ExecuteTask, { text: 'hello' }, newRequestId()).slice(0, -1);
      expectError(await ctx.send(truncated), ErrorCode.ParseError, null);
    },
  },
  errorCase(
    { id: 'error.invalid-request.jsonrpc', expectation: 'jsonrpc "1.0" → -32600, id null', why: 'only JSON-RPC 2.0 is spoken across the zone boundary' },
    ErrorCode.InvalidRequest,
    (id) => ({ jsonrpc: '1.0', method: Method.ExecuteTask, params: { text: 'hello' }, id }),
    { echoes: false },
  ),
  errorCase(
    { id: 'error.invalid-request.id', expectation: 'id {} → -32600, id null', why: 'an id that cannot be echoed means the request is invalid, not a task to run' },
    ErrorCode.InvalidRequest,
    () => ({ jsonrpc: '2.0', method: Method.ExecuteTask, params: { text: 'hello' }, id: {} }),
    { echoes: false },
  ),
  errorCase(
    { id: 'error.invalid-request.method', expectation: 'no method member → -32600, id null', why: 'a request without a method is invalid, not an unknown method' },
    ErrorCode.InvalidRequest,
    (id) => ({ jsonrpc: '2.0', params: { text: 'hello' }, id }),
    { echoes: false },
  ),
  errorCase(
    { id: 'error.method-not-found', expectation: 'unknown method → -32601, id echoed', why: 'the caller must tell "this agent does not speak execute_task" from a failed task' },
    ErrorCode.MethodNotFound,
    requestOf(UNKNOWN_METHOD, {}),
  ),
  errorCase(
    { id: 'error.invalid-params.text', expectation: 'execute_task without text → -32602, data names "text"', why: 'data ({path, message} per field) is how the caller learns what it got wrong' },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { channel: 'C0CONFORM' }),
    { data: 'text' },
  ),
  errorCase(
    { id: 'error.invalid-params.empty-text', expectation: 'execute_task with text "" → -32602, data names "text"', why: 'an empty task would cost model time and post an empty reply' },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { text: '' }),
    { data: 'text' },
  ),
  errorCase(
    { id: 'error.invalid-params.task_id', expectation: 'get_task_result {} → -32602, data names "task_id"', why: "a poll without a task id is the caller's mistake, not an unknown task" },
    ErrorCode.InvalidParams,
    requestOf(Method.GetTaskResult, {}),
    { data: 'task_id' },
  ),
  {
    id: 'http.status-200',
    level: 'core',
    expectation: 'a JSON-RPC error travels with HTTP 200, application/json',
    why: 'behind AgentCore a non-2xx answer becomes RuntimeClientError and the JSON-RPC error is lost',
    required: true,
    async run(ctx) {
      const id = newRequestId();
      const exchange = await ctx.send(rpc(UNKNOWN_METHOD, {}, id));
      expectError(exchange, ErrorCode.MethodNotFound, id);
      if (exchange.httpStatus === undefined) return `the error came back through ${ctx.transport} intact`;
      if (!/^application\/json\b/i.test(exchange.contentType ?? '')) fail(`expected Content-Type application/json, got ${show(exchange.contentType ?? 'none')}`);
      return `HTTP ${exchange.httpStatus}, ${exchange.contentType}`;
    },
  },
  {
    id: 'notification.execute_task',
    level: 'core',
    expectation: 'request without id → no response (HTTP 204)',
    why: 'JSON-RPC 2.0 forbids answering notifications',
    required: true,
    async run(ctx) {
      return expectNoResponse(await ctx.send(rpc(Method.ExecuteTask, { text: 'conformance notification' })));
    },
  },
  {
    id: 'notification.unknown-method',
    level: 'core',
    expectation: 'unknown-method notification → no response, no -32601',
    why: 'even errors are not reported for notifications',
    required: true,
    async run(ctx) {
      return expectNoResponse(await ctx.send(rpc(UNKNOWN_METHOD, {})));
    },
  },
  {
    id: 'batch.mixed',
    level: 'core',
    expectation: 'batch → array of responses, none for its notification',
    why: 'JSON-RPC 2.0 batches: one response per request member, matched by id',
    required: true,
    async run(ctx) {
      const taskId = newRequestId();
      const unknownId = newRequestId();
      const batch = [
        executeTaskRequest({ text: 'conformance batch member' }, taskId),
        { jsonrpc: '2.0', method: Method.ExecuteTask, params: { text: 'conformance batch notification' } },
        { jsonrpc: '2.0', method: UNKNOWN_METHOD, id: unknownId },
        1,
      ];
      const value = bodyJson(await ctx.send(JSON.stringify(batch)));
      if (!Array.isArray(value)) fail(`expected an array of responses, got ${show(value)}`);
      if (value.length !== 3) fail(`expected 3 responses (the notification gets none), got ${value.length}: ${show(value, 160)}`);
      const withId = (id: JsonRpcId) => value.find((entry: unknown) => typeof entry === 'object' && entry !== null && (entry as { id?: unknown }).id === id);
      expectResultIn(asResponse(withId(taskId) ?? fail(`expected a response with id ${show(taskId)} for the execute_task member, got ${show(value, 160)}`), taskId), ExecuteTaskResultSchema, 'an execute_task result');
      expectErrorIn(asResponse(withId(unknownId) ?? fail(`expected a -32601 response with id ${show(unknownId)}, got ${show(value, 160)}`), unknownId), ErrorCode.MethodNotFound);
      expectErrorIn(asResponse(withId(null) ?? fail(`expected a -32600 response with id null for the member 1, got ${show(value, 160)}`), null), ErrorCode.InvalidRequest);
    },
  },
  {
    id: 'batch.empty',
    level: 'core',
    expectation: 'empty array → one -32600 error object (not an array)',
    why: 'JSON-RPC 2.0 answers an empty batch with a single Invalid Request',
    required: true,
    async run(ctx) {
      const value = bodyJson(await ctx.send('[]'));
      if (Array.isArray(value)) fail(`expected a single -32600 error object, got an array: ${show(value)}`);
      expectErrorIn(asResponse(value, null), ErrorCode.InvalidRequest);
    },
  },
  {
    id: 'batch.notifications',
    level: 'core',
    expectation: 'batch of notifications only → no response',
    why: 'an all-notification batch has nothing to answer, not even []',
    required: true,
    async run(ctx) {
      const batch = [
        { jsonrpc: '2.0', method: Method.ExecuteTask, params: { text: 'conformance batch notification 1' } },
        { jsonrpc: '2.0', method: UNKNOWN_METHOD },
      ];
      return expectNoResponse(await ctx.send(JSON.stringify(batch)));
    },
  },
  {
    id: 'id.number',
    level: 'core',
    expectation: 'numeric id → the same number echoed (not a string)',
    why: 'a response is matched to its request by id, type included',
    required: true,
    async run(ctx) {
      const id = randomNumberId();
      expectResult(await sendRequest(ctx, executeTaskRequest({ text: 'conformance numeric id' }, id)), ExecuteTaskResultSchema, id, 'an execute_task result');
    },
  },
  {
    id: 'id.numeric-string',
    level: 'core',
    expectation: 'id "<digits>" → the same string echoed (not a number)',
    why: 'a response is matched to its request by id, type included',
    required: true,
    async run(ctx) {
      const id = String(randomNumberId());
      expectResult(await sendRequest(ctx, executeTaskRequest({ text: 'conformance string id' }, id)), ExecuteTaskResultSchema, id, 'an execute_task result');
    },
  },
  {
    id: 'id.null',
    level: 'core',
    expectation: 'id null → a response with id null (not a notification)',
    why: 'the contract accepts any valid JSON-RPC id, null included',
    required: true,
    async run(ctx) {
      expectResult(await sendRequest(ctx, executeTaskRequest({ text: 'conformance null id' }, null)), ExecuteTaskResultSchema, null, 'an execute_task result');
    },
  },
  {
    id: 'malformed.bare-number',
    level: 'core',
    expectation: 'body 42 (JSON, not a request) → -32600, id null',
    why: 'valid JSON that is not a Request object is invalid, not a parse error',
    required: true,
    async run(ctx) {
      expectError(await ctx.send('42'), ErrorCode.InvalidRequest, null);
    },
  },
  {
    id: 'malformed.non-utf8',
    level: 'core',
    expectation: 'body with non-UTF-8 bytes → -32700, id null (https only)',
    why: 'JSON text is UTF-8; an agent must refuse other bytes cleanly, not crash',
    required: true,
    async run(ctx) {
      if (!ctx.sendBytes) throw new NotApplicable(`needs raw HTTP bytes; the ${ctx.transport} transport carries text (or the request must be SigV4-signed)`);
      const [head, tail] = rpc(Method.ExecuteTask, { text: 'BYTES' }, newRequestId()).split('BYTES') as [string, string];
      const body = Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from(tail)]);
      expectError(await ctx.sendBytes(body, ctx.signal), ErrorCode.ParseError, null);
    },
  },
  {
    id: 'execute_task.thread-context',
    level: 'thread-context',
    expectation: 'thread messages, two user turns in a row → success, not an error',
    why: 'a reply in a thread carries its earlier messages with roles as Slack shows them; an agent that needs alternating turns merges them rather than failing the task',
    required: true,
    async run(ctx) {
      return expectAnswered(ctx, { text: 'conformance check: and what do you make of it?', messages: THREAD_MESSAGES });
    },
  },
  errorCase(
    {
      id: 'error.invalid-params.messages',
      level: 'thread-context',
      expectation: 'messages[0].role "system" → -32602, data names "messages"',
      why: 'thread messages are user or assistant turns; a malformed history must be refused, not fed to the model',
    },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { text: 'conformance check: hello', messages: [{ role: 'system', text: 'conformance check: not a thread message', ts: '1700000000.000100' }] }),
    { data: 'messages' },
  ),
  {
    id: 'execute_task.attachments',
    level: 'attachments',
    expectation: 'a PNG and a text/plain file → success, not an error',
    why: 'files shared with a message arrive with their bytes; an agent that reads them must take every type the verification zone sends',
    required: true,
    async run(ctx) {
      return expectAnswered(ctx, { text: 'conformance check: what is in these files?', attachments: [PIXEL_ATTACHMENT, NOTES_ATTACHMENT] });
    },
  },
  errorCase(
    {
      id: 'error.invalid-params.attachments',
      level: 'attachments',
      expectation: 'attachments[0].size off by one → -32602, data names "attachments"',
      why: 'size is the byte length of data; a mismatch means a truncated or corrupted file',
    },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { text: 'conformance check: hello', attachments: [{ ...PIXEL_ATTACHMENT, size: PIXEL_PNG_SIZE + 1 }] }),
    { data: 'attachments' },
  ),
  errorCase(
    {
      id: 'error.invalid-params.context',
      level: 'context',
      expectation: 'context.entities[0].id "" → -32602, data names "context"',
      why: 'an entity without an id names nothing; a malformed context must be refused, not handed to the model as what the user looks at',
    },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { text: 'conformance check: hello', context: { entities: [{ type: 'channel', id: '' }] } }),
    { data: 'context' },
  ),
  {
    id: 'execute_task.stream',
    level: 'streaming',
    expectation: 'stream: true → accepted, text by cursor; what streamed starts the answer',
    why: 'the verification zone shows text as it is produced, then the rest of the answer: what it showed must be how the answer begins',
    required: true,
    async: true,
    async run(ctx) {
      const id = newRequestId();
      const started = expectResult(
        await sendRequest(ctx, executeTaskRequest({ text: ctx.settings.streamText, stream: true }, id)),
        ExecuteTaskResultSchema,
        id,
        'an execute_task result (success or accepted)',
      );
      if (started.status === 'success') {
        expectNonEmpty(started.response_text, 'in the result');
        throw new NotExercised('the streaming task was answered with success at once, nothing was streamed; pass a longer --slow-ms (or a --slow-text that takes longer)');
      }
      const pieces: string[] = [];
      const cursor = streamedPiece(started, pieces, undefined, 'execute_task');
      const firstPieces = pieces.length;
      const polled = await pollStreamUntilSuccess(ctx, started.task_id, pieces, cursor);
      expectNonEmpty(polled.responseText, 'once polled to success');
      const streamed = pieces.join('');
      if (!polled.responseText.startsWith(streamed)) {
        fail(`expected the streamed text to be the start of response_text, got ${show(streamed, 120)} streamed and ${show(polled.responseText, 120)} as the answer`);
      }
      if (!pieces.length) throw new NotExercised(`the task was accepted, but no text came before success (${polled.polls} polls): nothing was seen streaming`);
      return `${pieces.length} pieces of text (${firstPieces ? 'the first with accepted' : 'none with accepted'}), ${streamed.length} of ${polled.responseText.length} characters before success; ${polled.polls} polls`;
    },
  },
  {
    id: 'execute_task.sse',
    level: 'streaming',
    expectation: 'stream: true, Accept: text/event-stream → events of text by cursor, then success (or plain JSON)',
    why: 'a caller that reads the stream shows the text as the model produces it; when the stream ends first it polls from the last cursor, so every event must say where it stands',
    required: true,
    async run(ctx) {
      if (!ctx.stream) throw new NotApplicable(`needs a transport that reads streamed answers; the ${ctx.transport} transport here has none`);
      const deadline = performance.now() + ctx.settings.pollTimeoutMs;
      // The caller's hold: as long as the kit would poll; an agent may end its stream sooner, with accepted and a cursor.
      const holdMs = ctx.settings.pollTimeoutMs;
      const id = newRequestId();
      let round: StreamedRound<{ status: string; task_id?: string; cursor?: string; response_text?: string }> = readStreamedAnswer(
        await ctx.stream(JSON.stringify(executeTaskRequest({ text: ctx.settings.streamText, stream: true, hold_ms: holdMs }, id))),
        id,
        ExecuteTaskResultSchema,
        'an execute_task result (success or accepted)',
      );
      const pieces = [...round.pieces];
      let streamed = round.streamed;
      let events = round.events;
      let answers = 1;
      let polls = 0;
      let responseText: string;
      for (;;) {
        if (round.last.status === 'success') {
          responseText = round.last.response_text ?? '';
          break;
        }
        const taskId = round.last.task_id!;
        if (performance.now() > deadline) fail(`expected success within ${ctx.settings.pollTimeoutMs} ms, the task was still ${round.last.status} after ${answers} answers`);
        if (!round.streamed) {
          // A plain answer: polling by cursor from here, as the verification zone would.
          const polled = await pollStreamUntilSuccess(ctx, taskId, pieces, round.last.cursor);
          polls = polled.polls;
          responseText = polled.responseText;
          break;
        }
        // The stream ended before the task: a streamed get_task_result from its cursor goes on.
        if (round.events === 1) await sleep(ctx.settings.pollIntervalMs, undefined, { signal: ctx.signal });
        const pollId = newRequestId();
        const poll = { jsonrpc: '2.0', method: Method.GetTaskResult, params: { task_id: taskId, cursor: round.last.cursor, stream: true, hold_ms: holdMs }, id: pollId };
        round = readStreamedAnswer(await ctx.stream(JSON.stringify(poll)), pollId, GetTaskResultResultSchema, 'a get_task_result result (working or success)');
        if (round.last.status !== 'success' && round.last.task_id !== taskId) fail(`expected result.task_id ${show(taskId)} while pending, got ${show(round.last.task_id)}`);
        pieces.push(...round.pieces);
        streamed ||= round.streamed;
        events += round.events;
        answers += 1;
      }
      expectNonEmpty(responseText, 'at the end');
      const text = pieces.join('');
      if (!responseText.startsWith(text)) fail(`expected the streamed text to be the start of response_text, got ${show(text, 120)} streamed and ${show(responseText, 120)} as the answer`);
      const shown = `${pieces.length} pieces of text, ${text.length} of ${responseText.length} characters before success`;
      if (!streamed) return `answered with plain JSON (allowed: an agent need not stream); ${shown}${polls ? `; ${polls} polls` : ''}`;
      return `${events} events in ${answers} streamed answer${answers === 1 ? '' : 's'}; ${shown}${polls ? `; ${polls} polls` : ''}`;
    },
  },
  {
    id: 'cancel_task.accepted',
    level: 'cancel',
    expectation: 'cancel accepted task → cancelled, then polled → -32003',
    why: 'the verification zone cancels tasks it gave up on, or that the user stopped, so no model time is spent on them',
    required: true,
    async: true,
    async run(ctx) {
      const taskId = await startSlowTask(ctx, ' (to be cancelled)');
      const cancelId = newRequestId();
      const cancelled = expectResult(await sendRequest(ctx, cancelTaskRequest(taskId, cancelId)), CancelTaskResultSchema, cancelId, 'a cancel_task result (cancelled)');
      if (cancelled.status === 'success') throw new NotExercised('the task had already finished when cancel_task arrived');
      if (cancelled.task_id !== taskId) fail(`expected result.task_id ${show(taskId)}, got ${show(cancelled.task_id)}`);
      const pollId = newRequestId();
      expectError(await sendRequest(ctx, getTaskResultRequest(taskId, pollId)), ErrorCode.TaskCancelled, pollId);
    },
  },
  errorCase(
    { id: 'cancel_task.unknown', level: 'cancel', expectation: 'cancel unknown task_id → -32002, id echoed', why: 'cancelling an expired task must not look like a success' },
    ErrorCode.TaskNotFound,
    (id) => cancelTaskRequest(`conformance-unknown-${newRequestId()}`, id),
  ),
  {
    id: 'execute_task.usage',
    level: 'usage',
    expectation: 'the final success carries usage: input_tokens and output_tokens (cache counts, model optional), as documented',
    why: 'the verification zone counts tokens per user, channel and agent for reports and budgets; a usage it cannot read is dropped, and the agent goes uncounted',
    required: true,
    async run(ctx) {
      const id = newRequestId();
      const answer = expectResult(await sendRequest(ctx, executeTaskRequest({ text: 'conformance check: how many tokens was this?' }, id)), ExecuteTaskResultSchema, id, 'an execute_task result (success or accepted)');
      const final: Record<string, unknown> = answer.status === 'success' ? answer : (await pollUntilSuccess(ctx, answer.task_id)).result;
      if (final.usage === undefined) fail('expected usage in the final result: an agent that declares the usage level reports what each answer cost');
      const usage = UsageSchema.safeParse(final.usage);
      if (!usage.success) fail(`expected usage as docs/contract.md "Usage" defines it, got ${show(final.usage)}: ${usage.error.issues.map((issue) => `${issue.path.join('.') || 'usage'}: ${issue.message}`).join('; ')}`);
      const { input_tokens, output_tokens, model } = usage.data;
      return `${input_tokens} in, ${output_tokens} out${model ? ` (${model})` : ''}${answer.status === 'success' ? '' : ', once polled'}`;
    },
  },
  {
    id: 'execute_task.files',
    level: 'files',
    expectation: 'asked for a file, the final success carries files: name, media_type, and base64 data or an https url, within the limits',
    why: 'the verification zone uploads each file to the thread; a file that breaks the rules is refused with a line in the thread instead',
    required: true,
    async run(ctx) {
      const id = newRequestId();
      const answer = expectResult(await sendRequest(ctx, executeTaskRequest({ text: FILE_REQUEST_TEXT }, id)), ExecuteTaskResultSchema, id, 'an execute_task result (success or accepted)');
      const final: Record<string, unknown> = answer.status === 'success' ? answer : (await pollUntilSuccess(ctx, answer.task_id)).result;
      if (final.files === undefined) fail('expected files in the final result: an agent that declares the files level returns the file it was asked for');
      const { files, refused } = readFiles(final.files);
      if (refused.length) fail(`expected files as docs/contract.md "Files" defines them, got refusals: ${refused.map((file) => `${file.name}: ${file.reason}`).join('; ')}`);
      if (files.length === 0) fail('expected at least one file in files');
      return files.map((file) => `${file.name} (${file.media_type}, ${file.data !== undefined ? `${inlineBytesOf(file)} bytes` : 'by url'})`).join(', ');
    },
  },
  {
    id: 'execute_task.steps',
    level: 'steps',
    expectation: 'a task asked to show its steps (#steps=2) ends with steps, each complete or error',
    why: 'the verification zone draws the steps as cards and folds them to a line at the end: a step left in progress there would read as work never finished',
    required: true,
    async run(ctx) {
      const id = newRequestId();
      const started = expectResult(await sendRequest(ctx, executeTaskRequest({ text: 'conformance check: show your steps #steps=2' }, id)), ExecuteTaskResultSchema, id, 'an execute_task result');
      if (started.status === 'input_required') fail('the agent asked a question where it was asked for steps');
      const result = started.status === 'success' ? started : (await pollUntilSuccess(ctx, started.task_id)).result;
      const steps = StepSchema.array().safeParse(result.steps ?? []);
      if (!steps.success) fail(`the success's steps break the contract: ${steps.error.issues.map((issue) => issue.message).join('; ')}`);
      if (steps.data.length === 0) throw new NotExercised('the success carried no steps: an agent that declares steps shows them for this task (the echo obeys #steps=<n>)');
      const open = steps.data.filter((step) => step.status !== 'complete' && step.status !== 'error');
      if (open.length) fail(`steps still ${open.map((step) => `${step.id}: ${step.status}`).join(', ')} in the final answer`);
      return `${steps.data.length} steps, all ended`;
    },
  },
  // Who is asking, and questions (docs/contract.md, "Who is asking", "Questions").
  errorCase(
    {
      id: 'error.invalid-params.asker',
      level: 'asker',
      expectation: 'asker {id: "U123"} → -32602, data names "asker"',
      why: 'an agent that keys memory or tokens on the asker must take only the verified form slack:<team>:<user>, never a bare or made-up id',
    },
    ErrorCode.InvalidParams,
    requestOf(Method.ExecuteTask, { text: 'conformance check: hello', asker: { id: 'U123' } }),
    { data: 'asker' },
  ),
  errorCase(
    {
      id: 'resume_task.unknown-task',
      level: 'questions',
      expectation: 'resume_task of an unknown task_id → -32002 Task not found',
      why: 'an answer to a task the agent no longer has (expired, another runtime) must be told apart from one that resumed',
    },
    ErrorCode.TaskNotFound,
    requestOf(Method.ResumeTask, { task_id: 'task-conformance-unknown', answer: { question_id: 'q', value: 'approve' } }),
  ),
  errorCase(
    {
      id: 'resume_task.invalid-answer',
      level: 'questions',
      expectation: 'resume_task without an answer → -32602, data names "answer"',
      why: 'a resume that carries no answer must be refused, not taken as one: the task would go on without the person\'s say',
    },
    ErrorCode.InvalidParams,
    requestOf(Method.ResumeTask, { task_id: 'task-conformance-unknown' }),
    { data: 'answer' },
  ),
];

/** What the files case asks for: words any agent can follow, and the echo agent's directive (src/execution/executors/echo-files.ts). */
const FILE_REQUEST_TEXT = 'conformance check: return a small CSV file named conformance.csv #file=conformance.csv';
