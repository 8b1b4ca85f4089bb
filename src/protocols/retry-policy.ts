import { ErrorCode, Method, type JsonRpcErrorObject } from '../contract';

/**
 * The one place that says which JSON-RPC error answers are worth sending again later.
 *
 * A retry is the same request body with the same request id (the task message goes back to its
 * queue). That can only help when the cause sits outside the task and passes on its own. Faults
 * of the wire itself (connection, HTTP 5xx, throttling by AgentCore) never reach this file: the
 * transport decides those as TransportError.
 *
 * Zone contract (execute-task):
 * - -32010 Model throttled and -32012 Model unavailable are weather: they pass. The execution
 *   zone may still mark one permanent with `data.retryable: false` (a model that does not exist,
 *   access denied), and that word wins. A retry only helps if the execution zone runs a task
 *   again when a repeated id finds its last attempt failed this way.
 * - -32004 Over capacity is load too: the runtime refused to start the task (too many running,
 *   its task store full of pending tasks), so the same id later starts it. A batch over the
 *   runtime's length cap carries `data.retryable: false` (the verification zone never batches).
 * - -32603 Internal error is NOT retried: an unexpected failure is a bug or broken state, the
 *   same request tends to fail the same way, and every retry holds the user's reply back by a
 *   queue visibility timeout. Trouble that does pass (HTTP 5xx, AgentCore throttling, resets)
 *   reaches us as a transport fault, which the transport marks retryable.
 * - -32001 Timeout, -32002 Task not found, -32003 Task cancelled, -32005 Request id reused
 *   with different params, -32011 Model rejected and the reserved request errors (-32700, -32600,
 *   -32601, -32602) describe the task or the request itself: sending it again cannot change the
 *   answer.
 * - Only `execute_task` retries. `get_task_result` answers with the error the task *finished*
 *   with, so polling again returns the same error until the deadline; the user is better told now.
 *
 * A2A: its JSON-RPC errors (-32001 task not found, -32002 not cancelable, -32004 unsupported,
 * -32009 version not supported, …) all describe the request or the task, and A2A servers signal
 * overload with HTTP statuses (the transport's business), so none is retried.
 */
const TRANSIENT_CONTRACT_CODES: ReadonlySet<number> = new Set([ErrorCode.ModelThrottled, ErrorCode.ModelUnavailable, ErrorCode.OverCapacity]);

export type RpcErrorOrigin = {
  protocol: 'execute-task' | 'a2a';
  /** The JSON-RPC method the error answered. */
  method: string;
};

export function isRetryableRpcError(error: JsonRpcErrorObject, origin: RpcErrorOrigin): boolean {
  if (origin.protocol !== 'execute-task') return false;
  if (origin.method !== Method.ExecuteTask) return false;
  if (!TRANSIENT_CONTRACT_CODES.has(error.code)) return false;
  return retryableFlag(error.data) !== false;
}

function retryableFlag(data: unknown): boolean | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const flag = (data as { retryable?: unknown }).retryable;
  return typeof flag === 'boolean' ? flag : undefined;
}
