import type { z } from 'zod';
import { ErrorCode, ExecuteTaskParamsSchema, Method, ResumeTaskParamsSchema, TaskIdParamsSchema, invalidParamsDetails } from '../contract';
import type { MethodHandler, StreamContext, StreamMethodHandler } from './dispatcher';
import { RpcError } from './rpc-error';
import type { TaskService } from './task-service';
import type { StreamHold } from './task-stream';

/** Validates named params against a contract schema; every failing field lands in -32602's data. */
function paramsOf<S extends z.ZodType>(schema: S, params: unknown): z.infer<S> {
  if (Array.isArray(params)) {
    throw new RpcError(ErrorCode.InvalidParams, undefined, [{ path: '(params)', message: 'params must be an object (by name), not an array' }]);
  }
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw new RpcError(ErrorCode.InvalidParams, undefined, invalidParamsDetails(parsed.error));
  return parsed.data;
}

/** The zone contract's methods, bound to a task service. */
export function contractMethods(service: TaskService): Record<string, MethodHandler> {
  return {
    [Method.ExecuteTask]: (params, { id }) => service.executeTask(paramsOf(ExecuteTaskParamsSchema, params), id),
    [Method.GetTaskResult]: (params) => {
      const { task_id, cursor } = paramsOf(TaskIdParamsSchema, params);
      return service.getTaskResult(task_id, cursor);
    },
    [Method.CancelTask]: (params) => service.cancelTask(paramsOf(TaskIdParamsSchema, params).task_id),
    [Method.ResumeTask]: (params) => service.resumeTask(paramsOf(ResumeTaskParamsSchema, params)),
  };
}

/**
 * The methods that answer with a stream when asked (docs/contract.md, "Streamed answers"):
 * `execute_task` and `get_task_result` with `stream: true`. A stream lasts until the task ends,
 * or at most `hold_ms` (the caller's), `maxMs` (STREAM_MAX_MS) and the host's own limit.
 */
export function contractStreamMethods(service: TaskService, maxMs: number): Record<string, StreamMethodHandler> {
  return {
    [Method.ExecuteTask]: (params, context) => {
      const task = paramsOf(ExecuteTaskParamsSchema, params);
      return service.executeTaskStreamed(task, context.id, holdOf(task.hold_ms, maxMs, context));
    },
    [Method.GetTaskResult]: (params, context) => {
      const { task_id, cursor, hold_ms } = paramsOf(TaskIdParamsSchema, params);
      return service.getTaskResultStreamed(task_id, cursor, holdOf(hold_ms, maxMs, context));
    },
  };
}

/** When a stream ends: the first of the caller's hold, the runtime's cap and the host's limit, counted from the request. */
function holdOf(holdMs: number | undefined, maxMs: number, context: StreamContext): StreamHold {
  const endsAt = Math.min(context.startedAt + Math.min(holdMs ?? maxMs, maxMs), context.deadline ?? Number.POSITIVE_INFINITY);
  return { endsAt, signal: context.signal };
}
