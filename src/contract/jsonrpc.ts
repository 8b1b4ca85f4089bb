import { z } from 'zod';
import { ErrorCode, messageFor } from './error-codes';

/**
 * JSON-RPC 2.0 envelopes as data: zod schemas, the types inferred from them, and builders.
 * Nothing here knows about tasks, AWS or Slack.
 */

export const JSONRPC_VERSION = '2.0' as const;

export const IdSchema = z.union([z.string(), z.number(), z.null()]);
export type JsonRpcId = z.infer<typeof IdSchema>;

export const ParamsSchema = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);
export type JsonRpcParams = z.infer<typeof ParamsSchema>;

export const RequestSchema = z
  .object({
    jsonrpc: z.literal(JSONRPC_VERSION),
    method: z.string(),
    params: ParamsSchema.optional(),
    id: IdSchema,
  });
export type JsonRpcRequest<P = JsonRpcParams> = { jsonrpc: '2.0'; method: string; params?: P; id: JsonRpcId };

export const NotificationSchema = RequestSchema.omit({ id: true });
export type JsonRpcNotification<P = JsonRpcParams> = Omit<JsonRpcRequest<P>, 'id'>;

export const ErrorObjectSchema = z
  .object({
    code: z.number().int(),
    message: z.string(),
    data: z.unknown().optional(),
  })
  .strict();
export type JsonRpcErrorObject = z.infer<typeof ErrorObjectSchema>;

export const SuccessResponseSchema = z
  .object({ jsonrpc: z.literal(JSONRPC_VERSION), result: z.unknown(), id: IdSchema })
  .strict()
  // `result` is required even when its value is null; z.unknown() alone would accept a missing key.
  .refine((value) => 'result' in value, { message: 'result is required', path: ['result'] });
export const ErrorResponseSchema = z
  .object({ jsonrpc: z.literal(JSONRPC_VERSION), error: ErrorObjectSchema, id: IdSchema })
  .strict();
export const ResponseSchema = z.union([SuccessResponseSchema, ErrorResponseSchema]);

export type JsonRpcSuccess<R = unknown> = { jsonrpc: '2.0'; result: R; id: JsonRpcId };
export type JsonRpcError = { jsonrpc: '2.0'; error: JsonRpcErrorObject; id: JsonRpcId };
export type JsonRpcResponse<R = unknown> = JsonRpcSuccess<R> | JsonRpcError;

export function isErrorResponse(response: JsonRpcResponse): response is JsonRpcError {
  return 'error' in response;
}

export function successResponse<R>(id: JsonRpcId, result: R): JsonRpcSuccess<R> {
  return { jsonrpc: JSONRPC_VERSION, result, id };
}

export function errorObject(code: number, message?: string, data?: unknown): JsonRpcErrorObject {
  const error: JsonRpcErrorObject = { code, message: message ?? messageFor(code) };
  if (data !== undefined) error.data = data;
  return error;
}

export function errorResponse(id: JsonRpcId, code: number, message?: string, data?: unknown): JsonRpcError {
  return { jsonrpc: JSONRPC_VERSION, error: errorObject(code, message, data), id };
}

export function request<P extends JsonRpcParams>(method: string, params: P | undefined, id: JsonRpcId): JsonRpcRequest<P> {
  const built: JsonRpcRequest<P> = { jsonrpc: JSONRPC_VERSION, method, id };
  if (params !== undefined) built.params = params;
  return built;
}

/** Why a response cannot be accepted as the answer to a request. */
export class ResponseMismatchError extends Error {
  override name = 'ResponseMismatchError';
}

/**
 * Checks that `body` (already parsed JSON) is a valid JSON-RPC 2.0 response to `sent`:
 * `jsonrpc` exactly "2.0", exactly one of `result`/`error`, and the same `id` — or `null` for
 * an error the server could not attribute to the request (parse error, invalid request).
 */
export function validateResponseFor(sent: Pick<JsonRpcRequest, 'id'>, body: unknown): JsonRpcResponse {
  const parsed = ResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw new ResponseMismatchError(`not a JSON-RPC 2.0 response: ${describeIssues(parsed.error.issues)}`);
  }
  const response = parsed.data as JsonRpcResponse;
  if (response.id !== sent.id) {
    const unattributedError = response.id === null && isErrorResponse(response);
    if (!unattributedError) {
      throw new ResponseMismatchError(`response id ${JSON.stringify(response.id)} does not match request id ${JSON.stringify(sent.id)}`);
    }
  }
  return response;
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/** The error-object `data` of -32602: one entry per failing field. */
export type InvalidParamsDetail = { path: string; message: string };

export function invalidParamsDetails(error: z.ZodError): InvalidParamsDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join('.') : '(params)',
    message: issue.message,
  }));
}

export function invalidParamsResponse(id: JsonRpcId, error: z.ZodError): JsonRpcError {
  return errorResponse(id, ErrorCode.InvalidParams, undefined, invalidParamsDetails(error));
}
