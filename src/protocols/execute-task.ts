import type { z } from 'zod';
import {
  CancelTaskResultSchema,
  ErrorCode,
  ExecuteTaskResultSchema,
  GetTaskResultResultSchema,
  cancelTaskRequest,
  executeTaskRequest,
  getTaskResultRequest,
  type JsonRpcRequest,
} from '../contract';
import { CancelError, ProtocolFailure, answerFailure, callJsonRpc, type RpcAnswer } from './json-rpc-exchange';
import { failure, pending, success, type FailureCategory, type Outcome, type PendingHandle } from './outcome';
import type { CallContext, ExecutionProtocol, TaskInput } from './protocol';
import { isRetryableRpcError } from './retry-policy';

type ResultSchema = typeof ExecuteTaskResultSchema | typeof GetTaskResultResultSchema;

/**
 * The zone contract (docs/contract.md, "Repeated ids and retries"): `execute_task` carries the caller's request id as its
 * JSON-RPC id, so a retry is recognised by the execution zone as the same task; `get_task_result`
 * and `cancel_task` are fresh requests about a task id and get fresh ids.
 *
 * Streaming (docs/contract.md, "Streaming"): `params.stream` goes to the agent as given. A pending
 * answer's `text` becomes the outcome's `partial`, and its `cursor` rides in the handle
 * (`handle.cursor`), so the next poll asks only for the text after it.
 */
export class ExecuteTaskProtocol implements ExecutionProtocol {
  readonly name = 'execute-task' as const;

  async start(task: TaskInput, call: CallContext): Promise<Outcome> {
    const request = executeTaskRequest(task.params, task.requestId);
    return outcomeOf(request, await callJsonRpc(call, request), ExecuteTaskResultSchema);
  }

  async poll(handle: PendingHandle, call: CallContext): Promise<Outcome> {
    const request = getTaskResultRequest(handle.taskId, undefined, handle.cursor);
    return outcomeOf(request, await callJsonRpc(call, request), GetTaskResultResultSchema, handle.cursor);
  }

  async cancel(handle: PendingHandle, call: CallContext): Promise<void> {
    const request = cancelTaskRequest(handle.taskId);
    const answer = await callJsonRpc(call, request);
    if (answer.kind === 'unusable') throw new CancelError(answer.outcome.message);
    if (answer.kind === 'error') {
      // Unknown, expired or already cancelled: nothing runs on, which is all cancel is for.
      if (answer.error.code === ErrorCode.TaskNotFound || answer.error.code === ErrorCode.TaskCancelled) return;
      throw new CancelError(`cancel_task answered ${answer.error.code}: ${answer.error.message}`);
    }
    const parsed = CancelTaskResultSchema.safeParse(answer.result);
    if (!parsed.success) throw new CancelError(`cancel_task result breaks the contract: ${issuesOf(parsed.error)}`);
  }
}

/** `cursor`: the one the request sent, kept in the handle when the answer gives no newer one. */
function outcomeOf(request: JsonRpcRequest<unknown>, answer: RpcAnswer, schema: ResultSchema, cursor?: string): Outcome {
  switch (answer.kind) {
    case 'unusable':
      return answer.outcome;
    case 'error':
      return failure(categoryOfContractError(answer.error.code), answer.error.code, answer.error.message, isRetryableRpcError(answer.error, { protocol: 'execute-task', method: request.method }));
    case 'result': {
      const parsed = schema.safeParse(answer.result);
      if (!parsed.success) return answerFailure(ProtocolFailure.Malformed, `${request.method} result breaks the contract: ${issuesOf(parsed.error)}`);
      const result = parsed.data;
      if (result.status === 'success') {
        const { status: _status, response_text, ...extra } = result;
        return success(response_text, extra);
      }
      const next = result.cursor ?? cursor;
      return pending({ taskId: result.task_id, ...(next === undefined ? {} : { cursor: next }) }, result.status, result.text);
    }
  }
}

/**
 * What a zone contract error means for the user (docs/contract.md, "Errors"). Everything not
 * named here — -32603, -32002 Task not found, the request errors other than -32602, and the
 * server-defined -32000 range — is `failed`.
 */
const CONTRACT_ERROR_CATEGORIES: ReadonlyMap<number, FailureCategory> = new Map<number, FailureCategory>([
  [ErrorCode.ModelThrottled, 'busy'],
  [ErrorCode.OverCapacity, 'busy'],
  [ErrorCode.ModelUnavailable, 'unavailable'],
  [ErrorCode.Timeout, 'timed-out'],
  [ErrorCode.TaskCancelled, 'cancelled'],
  [ErrorCode.ModelRejected, 'rejected'],
  [ErrorCode.InvalidParams, 'rejected'],
]);

export function categoryOfContractError(code: number): FailureCategory {
  return CONTRACT_ERROR_CATEGORIES.get(code) ?? 'failed';
}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(result)'}: ${issue.message}`).join('; ');
}
