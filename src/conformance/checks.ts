import type { z } from 'zod';
import {
  ErrorResponseSchema,
  SuccessResponseSchema,
  messageFor,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcResponse,
  type JsonRpcSuccess,
} from '../contract';
import type { Exchange } from './probe';

/**
 * Assertions over one exchange with an agent. Each one either returns what it checked or throws
 * a CaseFailure whose message reads as "expected …, got …", which is what the report shows.
 */
export class CaseFailure extends Error {
  override name = 'CaseFailure';
}

/** Nothing answered at all (connection refused, reset, DNS): later cases would only repeat it. */
export class AgentUnreachable extends CaseFailure {
  override name = 'AgentUnreachable';
}

/** The agent never took the path the case is about (e.g. it answered a slow task at once). */
export class NotExercised extends Error {
  override name = 'NotExercised';
}

/** The case cannot run over this transport (e.g. non-UTF-8 bytes behind AgentCore). */
export class NotApplicable extends Error {
  override name = 'NotApplicable';
}

export function fail(message: string): never {
  throw new CaseFailure(message);
}

/** A value as it would appear on the wire, shortened for a one-line report. */
export function show(value: unknown, max = 100): string {
  return clip(value === undefined ? 'nothing' : (JSON.stringify(value) ?? String(value)), max);
}

/** A raw body, quoted, on one line. */
export function showBody(body: string, max = 80): string {
  return JSON.stringify(clip(body.replace(/\s+/g, ' ').trim(), max));
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function showId(id: unknown): string {
  if (id === null) return 'null';
  if (typeof id === 'string') return `${JSON.stringify(id)} (a string)`;
  if (typeof id === 'number') return `${id} (a number)`;
  return show(id);
}

function failOnFault(exchange: Exchange): void {
  if (!exchange.fault) return;
  if (exchange.fault.reason === 'connection' && exchange.fault.details.status === undefined) throw new AgentUnreachable(describeFault(exchange));
  fail(describeFault(exchange));
}

/** Why no usable answer came back, in the words an agent author can act on. */
export function describeFault(exchange: Exchange): string {
  const fault = exchange.fault;
  if (!fault) return 'no fault';
  if (fault.reason === 'runtime') {
    return `AgentCore answered RuntimeClientError (${fault.message}): the agent crashed or answered a non-2xx HTTP status; JSON-RPC errors must travel with HTTP 200`;
  }
  const status = fault.details.status;
  if (status !== undefined) {
    return `the agent answered HTTP ${status} (${fault.message}); JSON-RPC responses, errors included, must travel with HTTP 200`;
  }
  return fault.message;
}

/** The parsed JSON body of an exchange that must carry a response. */
export function bodyJson(exchange: Exchange): unknown {
  failOnFault(exchange);
  if (exchange.httpStatus !== undefined && exchange.httpStatus !== 200) {
    fail(`expected HTTP 200, got HTTP ${exchange.httpStatus}${exchange.body ? ` with ${showBody(exchange.body)}` : ''}; JSON-RPC responses, errors included, travel with HTTP 200`);
  }
  if (exchange.body === undefined) {
    fail('expected a response, got none (an empty body or HTTP 204); only notifications go unanswered');
  }
  try {
    return JSON.parse(exchange.body);
  } catch {
    return fail(`expected a JSON body, got ${showBody(exchange.body)}`);
  }
}

/** Checks one JSON value against the contract's response schemas and the expected id. */
export function asResponse(value: unknown, id: JsonRpcId): JsonRpcResponse {
  if (Array.isArray(value)) fail(`expected a single response object, got an array of ${value.length}`);
  if (typeof value !== 'object' || value === null) fail(`expected a JSON-RPC response object, got ${show(value)}`);
  const schema = 'error' in value ? ErrorResponseSchema : SuccessResponseSchema;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    fail(`not a JSON-RPC 2.0 response (${issues}): ${show(value)}`);
  }
  const response = parsed.data as JsonRpcResponse;
  if (response.id !== id) fail(`expected id ${showId(id)}, got ${showId(response.id)}`);
  return response;
}

export function expectResponse(exchange: Exchange, id: JsonRpcId): JsonRpcResponse {
  return asResponse(bodyJson(exchange), id);
}

/** The response must be an error with this code (and this id). */
export function expectErrorIn(response: JsonRpcResponse, code: number): JsonRpcError {
  if (!('error' in response)) fail(`expected error.code ${code} (${messageFor(code)}), got a result: ${show(response.result)}`);
  if (response.error.code !== code) {
    fail(`expected error.code ${code} (${messageFor(code)}), got ${response.error.code} (${show(response.error.message, 60)})`);
  }
  return response;
}

export function expectError(exchange: Exchange, code: number, id: JsonRpcId): JsonRpcError {
  return expectErrorIn(expectResponse(exchange, id), code);
}

/** The response must be a result that the contract's schema accepts. */
export function expectResultIn<S extends z.ZodType>(response: JsonRpcResponse, schema: S, what: string): z.infer<S> {
  if ('error' in response) fail(`expected ${what}, got error ${response.error.code} (${show(response.error.message, 60)})`);
  const parsed = schema.safeParse((response as JsonRpcSuccess).result);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'result'}: ${issue.message}`).join('; ');
    fail(`expected ${what}, got ${show((response as JsonRpcSuccess).result)} (${issues})`);
  }
  return parsed.data;
}

export function expectResult<S extends z.ZodType>(exchange: Exchange, schema: S, id: JsonRpcId, what: string): z.infer<S> {
  return expectResultIn(expectResponse(exchange, id), schema, what);
}

/** Notifications get no answer at all: over HTTP, 204 or 200 with an empty body. */
export function expectNoResponse(exchange: Exchange): string | undefined {
  failOnFault(exchange);
  if (exchange.httpStatus !== undefined && (exchange.httpStatus < 200 || exchange.httpStatus >= 300)) {
    fail(`expected no response (HTTP 204), got HTTP ${exchange.httpStatus}`);
  }
  if (exchange.body !== undefined && exchange.body.trim() !== '') {
    fail(`expected no response to a notification, got ${showBody(exchange.body)}`);
  }
  if (exchange.httpStatus !== undefined && exchange.httpStatus !== 204) return `HTTP ${exchange.httpStatus} with an empty body (204 is what the contract names)`;
  return undefined;
}

/** -32602's `data` lists one `{path, message}` per failing field; the named field must be among them. */
export function expectInvalidParamsData(error: JsonRpcError, field: string): void {
  const data = error.error.data;
  if (data === undefined) fail(`expected error.data to list the failing field "${field}", got no data`);
  if (!Array.isArray(data)) fail(`expected error.data to be an array of {path, message}, got ${show(data)}`);
  const malformed = data.find((entry) => typeof entry !== 'object' || entry === null || typeof entry.path !== 'string' || typeof entry.message !== 'string');
  if (malformed !== undefined) fail(`expected each error.data entry to be {path, message} strings, got ${show(malformed)}`);
  const entries = data as Array<{ path: string; message: string }>;
  if (!entries.some((entry) => entry.path === field || entry.path.split('.').includes(field))) {
    fail(`expected error.data to name the field "${field}", got paths ${show(entries.map((entry) => entry.path))}`);
  }
}
