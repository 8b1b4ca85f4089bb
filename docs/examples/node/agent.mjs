#!/usr/bin/env node
/**
 * A minimal execution agent for the zone contract, on node:http alone (no dependencies).
 *
 * JSON-RPC 2.0 `execute_task`, `get_task_result` and `cancel_task` on POST /invocations (the
 * AgentCore Runtime HTTP contract; GET /ping answers too), so the same file runs behind the
 * `https` transport or on AgentCore. The "model" is an echo: replace `runModel` with yours.
 *
 *   node agent.mjs --port 8080
 *   npx zone conformance http://127.0.0.1:8080/invocations
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const TASK_NOT_FOUND = -32002;
const TASK_CANCELLED = -32003;

const MESSAGES = {
  [PARSE_ERROR]: 'Parse error',
  [INVALID_REQUEST]: 'Invalid Request',
  [METHOD_NOT_FOUND]: 'Method not found',
  [INVALID_PARAMS]: 'Invalid params',
  [INTERNAL_ERROR]: 'Internal error',
  [TASK_NOT_FOUND]: 'Task not found',
  [TASK_CANCELLED]: 'Task cancelled',
};

const MAX_BODY_BYTES = 1024 * 1024;
/** At most this many earlier thread messages and attachments in one task. */
const MAX_THREAD_MESSAGES = 1000;
const MAX_ATTACHMENTS = 50;
/** Standard base64 alphabet, padded; the length is checked to be a multiple of 4 separately. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Finished tasks are kept this long for get_task_result; then they are "not found". */
const TASK_TTL_MS = 60 * 60 * 1000;

/** A failure that goes on the wire as a JSON-RPC error object. */
class RpcError extends Error {
  constructor(code, data, message = MESSAGES[code] ?? 'Server error') {
    super(message);
    this.code = code;
    this.data = data;
  }

  toObject() {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * Stand-in for the real model call.
 *
 * `messages` are the earlier messages of the Slack thread, oldest first ({role, text, …}); a real
 * agent sends them as the model's earlier turns, then `text` as the user's turn. `attachments` are
 * the message's files ({name, mimetype, size, data}); a real agent decodes `data`
 * (`Buffer.from(data, 'base64')`) and passes the bytes to the model as an image or a document.
 * The echo only names them.
 *
 * `#sleep=<ms>` makes it slow on purpose, so the conformance kit can drive the accepted /
 * get_task_result / cancel_task path; the signal lets cancel_task stop the work.
 */
async function runModel({ text, messages, attachments }, signal) {
  const sleepMs = /#sleep=(\d+)/.exec(text)?.[1];
  if (sleepMs) await sleep(Number(sleepMs), undefined, { signal });
  const context = [];
  if (messages.length) context.push(`thread: ${messages.length} earlier message${messages.length === 1 ? '' : 's'}`);
  if (attachments.length) context.push(`files: ${attachments.map((attachment) => attachment.name).join(', ')}`);
  return `echo: ${text}${context.length ? ` (${context.join('; ')})` : ''}`;
}

export function createAgent({ syncBudgetMs = 2000 } = {}) {
  const tasks = new Map();
  // The verification zone reuses a request id when it retries a task: same id, same task.
  const taskOfRequest = new Map();

  function startTask(input) {
    forgetOldTasks();
    const task = { id: `task-${randomUUID()}`, status: 'working', controller: new AbortController(), createdAt: Date.now() };
    task.done = runModel(input, task.controller.signal).then(
      (answer) => {
        if (task.status === 'working') Object.assign(task, { status: 'success', result: { status: 'success', response_text: answer } });
      },
      (error) => {
        if (task.status !== 'working') return; // cancelled: the abort is expected
        if (error instanceof RpcError) {
          // A domain error of the model (e.g. -32010 throttled) goes to the caller as it is.
          Object.assign(task, { status: 'failed', error });
          return;
        }
        // The cause stays in our log; the caller gets a generic -32603, never a stack trace.
        console.error(`task ${task.id} failed:`, error);
        Object.assign(task, { status: 'failed', error: new RpcError(INTERNAL_ERROR) });
      },
    );
    tasks.set(task.id, task);
    return task;
  }

  function forgetOldTasks() {
    const cutoff = Date.now() - TASK_TTL_MS;
    for (const [id, task] of tasks) if (task.createdAt < cutoff && task.status !== 'working') tasks.delete(id);
    for (const [key, task] of taskOfRequest) if (!tasks.has(task.id)) taskOfRequest.delete(key);
  }

  function finalAnswer(task) {
    if (task.status === 'success') return task.result;
    if (task.status === 'cancelled') throw new RpcError(TASK_CANCELLED);
    throw task.error;
  }

  function findTask(params) {
    const task = tasks.get(requiredString(namedParams(params), 'task_id'));
    if (!task) throw new RpcError(TASK_NOT_FOUND);
    return task;
  }

  const methods = {
    async execute_task(params, id) {
      const input = taskInput(namedParams(params));
      const key = id === null || id === undefined ? undefined : JSON.stringify(id);
      let task = key === undefined ? undefined : taskOfRequest.get(key);
      if (!task) {
        task = startTask(input);
        if (key !== undefined) taskOfRequest.set(key, task);
        // Answer with the result if it comes within the budget; else the task runs on.
        const budget = new AbortController();
        await Promise.race([task.done, sleep(syncBudgetMs, undefined, { signal: budget.signal }).catch(() => undefined)]);
        budget.abort();
      }
      return task.status === 'working' ? { status: 'accepted', task_id: task.id } : finalAnswer(task);
    },

    async get_task_result(params) {
      const task = findTask(params);
      return task.status === 'working' ? { status: 'working', task_id: task.id } : finalAnswer(task);
    },

    async cancel_task(params) {
      const task = findTask(params);
      if (task.status === 'working') {
        task.status = 'cancelled';
        task.controller.abort();
      }
      // Already finished: answer with its final state.
      return task.status === 'cancelled' ? { status: 'cancelled', task_id: task.id } : finalAnswer(task);
    },
  };

  async function handleOne(message) {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return errorResponse(null, INVALID_REQUEST);
    const isNotification = !('id' in message);
    const { id = null, method, params } = message;
    const validId = id === null || typeof id === 'string' || typeof id === 'number';
    const validParams = !('params' in message) || (typeof params === 'object' && params !== null);
    if (message.jsonrpc !== '2.0' || typeof method !== 'string' || !validId || !validParams) return errorResponse(null, INVALID_REQUEST);

    const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!handler) return isNotification ? undefined : errorResponse(id, METHOD_NOT_FOUND);
    const call = handler(params, isNotification ? undefined : id).then(
      (result) => ({ jsonrpc: '2.0', result, id }),
      (error) => {
        if (error instanceof RpcError) return { jsonrpc: '2.0', error: error.toObject(), id };
        console.error(`unexpected error in ${method}:`, error);
        return errorResponse(id, INTERNAL_ERROR);
      },
    );
    // Nobody waits for a notification's answer, so do not hold the response for the sync budget.
    return isNotification ? undefined : call;
  }

  const utf8 = new TextDecoder('utf-8', { fatal: true });

  /** Body in, body out; undefined means "no response" (notifications). */
  async function handleBody(bytes) {
    let message;
    try {
      message = JSON.parse(utf8.decode(bytes));
    } catch {
      return JSON.stringify(errorResponse(null, PARSE_ERROR));
    }
    if (Array.isArray(message)) {
      if (message.length === 0) return JSON.stringify(errorResponse(null, INVALID_REQUEST));
      const responses = (await Promise.all(message.map(handleOne))).filter((response) => response !== undefined);
      return responses.length ? JSON.stringify(responses) : undefined;
    }
    const response = await handleOne(message);
    return response === undefined ? undefined : JSON.stringify(response);
  }

  return { handleBody };
}

function errorResponse(id, code, data) {
  return { jsonrpc: '2.0', error: new RpcError(code, data).toObject(), id };
}

function invalidField(path, message) {
  return new RpcError(INVALID_PARAMS, [{ path, message }]);
}

function namedParams(params) {
  if (params === undefined) return {};
  if (Array.isArray(params)) throw invalidField('(params)', 'params must be an object (by name), not an array');
  return params;
}

function issue(path, message) {
  return { path, message };
}

const isString = (value) => typeof value === 'string';
const isNonEmptyString = (value) => typeof value === 'string' && value !== '';
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The byte length a base64 string decodes to (standard alphabet, padded). */
function base64Length(data) {
  return (data.length / 4) * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
}

/** execute_task's params, checked: every bad field is named in -32602's data, not just the first. */
function taskInput(params) {
  const issues = [];
  const { text, messages = [], attachments = [] } = params;
  if (!isNonEmptyString(text)) issues.push(issue('text', 'text is required and must be a non-empty string'));
  checkMessages(messages, issues);
  checkAttachments(attachments, issues);
  if (issues.length) throw new RpcError(INVALID_PARAMS, issues);
  return { text, messages, attachments };
}

/** `messages`: earlier messages of the Slack thread, oldest first; the current one is `text`. */
function checkMessages(messages, issues) {
  if (!Array.isArray(messages)) return issues.push(issue('messages', 'messages must be an array'));
  if (messages.length > MAX_THREAD_MESSAGES) return issues.push(issue('messages', `messages must have at most ${MAX_THREAD_MESSAGES} entries`));
  messages.forEach((message, i) => {
    const path = `messages.${i}`;
    if (!isObject(message)) return issues.push(issue(path, 'each message must be an object'));
    if (message.role !== 'user' && message.role !== 'assistant') issues.push(issue(`${path}.role`, 'role must be "user" or "assistant"'));
    if (!isString(message.text)) issues.push(issue(`${path}.text`, 'text must be a string'));
    if (message.user_id !== undefined && !isString(message.user_id)) issues.push(issue(`${path}.user_id`, 'user_id must be a string'));
    if (!isNonEmptyString(message.ts)) issues.push(issue(`${path}.ts`, 'ts must be a non-empty string'));
  });
}

/** `attachments`: the message's files, each with its bytes in `data` (base64). */
function checkAttachments(attachments, issues) {
  if (!Array.isArray(attachments)) return issues.push(issue('attachments', 'attachments must be an array'));
  if (attachments.length > MAX_ATTACHMENTS) return issues.push(issue('attachments', `attachments must have at most ${MAX_ATTACHMENTS} entries`));
  attachments.forEach((attachment, i) => {
    const path = `attachments.${i}`;
    if (!isObject(attachment)) return issues.push(issue(path, 'each attachment must be an object'));
    for (const field of ['name', 'mimetype']) {
      if (!isNonEmptyString(attachment[field])) issues.push(issue(`${path}.${field}`, `${field} is required and must be a non-empty string`));
    }
    const { size, data } = attachment;
    const sizeOk = Number.isInteger(size) && size >= 0;
    if (!sizeOk) issues.push(issue(`${path}.size`, 'size is required and must be a whole number ≥ 0'));
    const dataOk = isString(data) && data.length % 4 === 0 && BASE64.test(data);
    if (!dataOk) issues.push(issue(`${path}.data`, 'data must be base64 (standard alphabet, padded)'));
    if (sizeOk && dataOk && base64Length(data) !== size) issues.push(issue(`${path}.size`, 'size must be the byte length of data'));
  });
}

function requiredString(params, field) {
  const value = params[field];
  if (typeof value !== 'string' || value === '') throw invalidField(field, `${field} is required and must be a non-empty string`);
  return value;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const onData = (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return chunks.push(chunk);
      // Stop keeping the body but let it drain, so the 413 (with Connection: close) gets out.
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res, status, text, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers }).end(text);
}

export function createAgentServer(agent) {
  const startedAt = Math.floor(Date.now() / 1000);
  return createServer(async (req, res) => {
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/ping' && req.method === 'GET') return sendJson(res, 200, JSON.stringify({ status: 'Healthy', time_of_last_update: startedAt }));
      if (path !== '/invocations') return sendJson(res, 404, '{"error":"Not Found"}');
      if (req.method !== 'POST') return sendJson(res, 405, '{"error":"Method Not Allowed"}', { Allow: 'POST' });
      const body = Number(req.headers['content-length']) > MAX_BODY_BYTES ? undefined : await readBody(req);
      if (body === undefined) return sendJson(res, 413, '{"error":"Payload Too Large"}', { Connection: 'close' });
      const answer = await agent.handleBody(body);
      if (answer === undefined) return res.writeHead(204).end();
      // Every JSON-RPC answer, errors included, is HTTP 200: behind AgentCore a non-2xx status
      // becomes the caller's RuntimeClientError and the JSON-RPC error would be lost.
      return sendJson(res, 200, answer);
    } catch (error) {
      console.error('request failed:', error);
      if (!res.headersSent) sendJson(res, 500, '{"error":"Internal Server Error"}');
      else res.destroy();
    }
  });
}

// Run as a program, or import createAgent / createAgentServer into your own code.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8080' },
      'sync-budget-ms': { type: 'string', default: '2000' },
    },
  });
  const server = createAgentServer(createAgent({ syncBudgetMs: Number(values['sync-budget-ms']) }));
  server.listen(Number(values.port), values.host, () => {
    const { address, port } = server.address();
    const host = address.includes(':') ? `[${address}]` : address;
    console.log(`execution agent listening on http://${host}:${port}/invocations`);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
