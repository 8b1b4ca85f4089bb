import type { z } from 'zod';
import {
  CancelTaskResultSchema,
  ErrorCode,
  ExecuteTaskResultSchema,
  GetTaskResultResultSchema,
  Method,
  cancelTaskRequest,
  executeTaskRequest,
  getTaskResultRequest,
  newRequestId,
  readFiles,
  readUsage,
  request,
  resumeTaskRequest,
  type Answer,
  type JsonRpcRequest,
  type Usage,
} from '../contract';
import { TransportError } from '../transport/transport';
import { CancelError, ProtocolFailure, answerFailure, callJsonRpc, streamJsonRpc, type RpcAnswer, type StreamReadOptions } from './json-rpc-exchange';
import { failure, finalSteps, inputRequired, pending, stepsShown, success, textStep, withSteps, type AgentOutcome, type AgentStreamStep, type FailureCategory, type PendingHandle } from './outcome';
import type { CallContext, ExecutionProtocol, StreamHold, TaskInput } from './protocol';
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
 *
 * Read as a stream (`stream`, `streamPoll`), the same request carries `stream: true` and
 * `hold_ms`, and an agent that streams answers with events, each a JSON-RPC response: `working`
 * with the text since the last one and its cursor (a text step whose handle carries the cursor),
 * then the last — success, an error, or `accepted` with the cursor where the stream stopped.
 * A stream that ends without success or error (the agent's `accepted` at the hold, a cut, the
 * caller's own limit) ends in `pending`, polled on from the last cursor. A plain answer is
 * read the same way: one response, its text a text step.
 */
export class ExecuteTaskProtocol implements ExecutionProtocol {
  readonly name = 'execute-task' as const;
  private readonly holdGraceMs: number;

  constructor(options: { holdGraceMs?: number } = {}) {
    this.holdGraceMs = options.holdGraceMs ?? STREAM_HOLD_GRACE_MS;
  }

  async *stream(task: TaskInput, call: CallContext, hold: StreamHold): AsyncGenerator<AgentStreamStep, void, undefined> {
    const sent = request(Method.ExecuteTask, { ...task.params, stream: true, hold_ms: holdMsOf(hold) }, task.requestId);
    yield* streamedSteps(sent, call, { holdMs: holdMsOf(hold), graceMs: this.holdGraceMs });
  }

  async *streamPoll(handle: PendingHandle, call: CallContext, hold: StreamHold): AsyncGenerator<AgentStreamStep, void, undefined> {
    const params = { task_id: handle.taskId, ...(handle.cursor === undefined ? {} : { cursor: handle.cursor }), stream: true, hold_ms: holdMsOf(hold) };
    yield* streamedSteps(request(Method.GetTaskResult, params, newRequestId()), call, { holdMs: holdMsOf(hold), graceMs: this.holdGraceMs }, handle.cursor);
  }

  /** `resume_task` with the answer to the task's question (docs/contract.md, "Questions"): answered as execute_task is. */
  async resume(handle: PendingHandle, answer: Answer, call: CallContext): Promise<AgentOutcome> {
    const request = resumeTaskRequest({ task_id: handle.taskId, answer });
    return outcomeOf(request, await callJsonRpc(call, request), ExecuteTaskResultSchema);
  }

  async start(task: TaskInput, call: CallContext): Promise<AgentOutcome> {
    const request = executeTaskRequest(task.params, task.requestId);
    return outcomeOf(request, await callJsonRpc(call, request), ExecuteTaskResultSchema);
  }

  async poll(handle: PendingHandle, call: CallContext): Promise<AgentOutcome> {
    const request = getTaskResultRequest(handle.taskId, undefined, handle.cursor);
    return outcomeOf(request, await callJsonRpc(call, request), GetTaskResultResultSchema, handle.cursor);
  }

  /** `cancel_task`: the usage the task reports with it (checked as every usage is: a malformed one is dropped). */
  async cancel(handle: PendingHandle, call: CallContext): Promise<Usage | undefined> {
    const request = cancelTaskRequest(handle.taskId);
    const answer = await callJsonRpc(call, request);
    if (answer.kind === 'unusable') throw new CancelError(answer.outcome.message);
    if (answer.kind === 'error') {
      // Unknown, expired or already cancelled: nothing runs on, which is all cancel is for.
      if (answer.error.code === ErrorCode.TaskNotFound || answer.error.code === ErrorCode.TaskCancelled) return usageIn((answer.error.data as { usage?: unknown } | undefined)?.usage);
      throw new CancelError(`cancel_task answered ${answer.error.code}: ${answer.error.message}`);
    }
    const parsed = CancelTaskResultSchema.safeParse(answer.result);
    if (!parsed.success) throw new CancelError(`cancel_task result breaks the contract: ${issuesOf(parsed.error)}`);
    return usageIn(parsed.data.usage);
  }
}

/** A usage value read as the contract says (non-negative integers), undefined when none or malformed. */
function usageIn(value: unknown): Usage | undefined {
  const reading = readUsage(value);
  return 'usage' in reading ? reading.usage : undefined;
}

/** `cursor`: the one the request sent, kept in the handle when the answer gives no newer one. */
function outcomeOf(request: JsonRpcRequest<unknown>, answer: RpcAnswer, schema: ResultSchema, cursor?: string): AgentOutcome {
  switch (answer.kind) {
    case 'unusable':
      return answer.outcome;
    case 'error': {
      const failed = failure(categoryOfContractError(answer.error.code), answer.error.code, answer.error.message, isRetryableRpcError(answer.error, { protocol: 'execute-task', method: request.method }));
      // A failed or cancelled task is charged what it used (`data.usage`); a malformed one is left out here too.
      const reading = readUsage((answer.error.data as { usage?: unknown } | undefined)?.usage);
      return 'usage' in reading ? { ...failed, usage: reading.usage } : failed;
    }
    case 'result': {
      const parsed = schema.safeParse(answer.result);
      if (!parsed.success) return answerFailure(ProtocolFailure.Malformed, `${request.method} result breaks the contract: ${issuesOf(parsed.error)}`);
      const result = parsed.data;
      if (result.status === 'success') {
        // `usage` and `files` are read apart: a malformed one is dropped or refused, never the answer.
        const { status: _status, response_text, usage, files, ...extra } = result;
        return withSteps(success(response_text, extra, readUsage(usage), readFiles(files)), finalSteps(extra as { steps?: unknown; plan_title?: unknown }));
      }
      const next = result.cursor ?? cursor;
      // A question: resumed later from this handle. The resumed run's text starts again from its first character.
      if (result.status === 'input_required') return inputRequired({ taskId: result.task_id }, result.question, stepsShown(result));
      return withSteps(pending({ taskId: result.task_id, ...(next === undefined ? {} : { cursor: next }) }, result.status, result.text), stepsShown(result));
    }
  }
}

/**
 * How much longer than its hold a stream is read before the caller ends it: the agent ends it at
 * `hold_ms` with its own last answer; this is for one that does not.
 */
export const STREAM_HOLD_GRACE_MS = 5_000;

function holdMsOf(hold: StreamHold): number {
  return Math.max(0, Math.floor(hold.holdMs));
}

/** The steps of one streamed request: see the class. `cursor`: the one the request sent. */
async function* streamedSteps(sent: JsonRpcRequest<unknown>, call: CallContext, read: StreamReadOptions, cursor?: string): AsyncGenerator<AgentStreamStep, void, undefined> {
  let handle: PendingHandle | undefined;
  let state: string | undefined;
  try {
    for await (const answer of streamJsonRpc(call, sent, read)) {
      const outcome = outcomeOf(sent, answer, GetTaskResultResultSchema, handle?.cursor ?? cursor);
      if (outcome.kind !== 'pending') {
        yield outcome;
        return;
      }
      const known = handle !== undefined;
      ({ handle, state } = outcome);
      // The first pending answer names the task even without text: a caller that reads a quiet
      // task may let the stream go and poll (src/verification/live/stream-hold.ts).
      // Steps (docs/contract.md, "Steps") come with text or alone: a step-only event is a text step without text.
      if (outcome.partial || !known || outcome.steps) yield textStep(outcome.partial ?? '', handle, outcome.steps);
    }
  } catch (error) {
    // Cut off, gone quiet, or past the caller's limit once the task is known: it runs on, and
    // polling takes it up from the last cursor. Before that, the fault is the outcome.
    if (!handle || !(error instanceof TransportError)) throw error;
  }
  if (handle) yield pending(handle, state);
  else yield answerFailure(ProtocolFailure.Empty, `${sent.method} brought back an empty response`);
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
