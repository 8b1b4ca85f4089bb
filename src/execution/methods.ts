import type { z } from 'zod';
import { ErrorCode, ExecuteTaskParamsSchema, Method, TaskIdParamsSchema, invalidParamsDetails, type ExecuteTaskParams, type TaskIdParams } from '../contract';
import type { MethodHandler } from './dispatcher';
import { RpcError } from './rpc-error';
import type { TaskService } from './task-service';

/** Validates named params against a contract schema; every failing field lands in -32602's data. */
function paramsOf<S extends z.ZodType>(schema: S, params: unknown): z.infer<S> {
  if (Array.isArray(params)) {
    throw new RpcError(ErrorCode.InvalidParams, undefined, [{ path: '(params)', message: 'params must be an object (by name), not an array' }]);
  }
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw new RpcError(ErrorCode.InvalidParams, undefined, invalidParamsDetails(parsed.error));
  return parsed.data;
}

const isOptionalString = (value: unknown) => value === undefined || typeof value === 'string';

/**
 * The common `execute_task` params — a non-empty `text`, the optional string fields, `stream` —
 * checked by hand: true only where ExecuteTaskParamsSchema would accept them too, so the params
 * are used as they are. Anything else, thread context and attachments included, goes through
 * the schema, which also words every refusal (test/execution/hot-path.test.ts compares the two).
 */
export function isPlainExecuteTaskParams(params: unknown): params is ExecuteTaskParams {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const p = params as Record<string, unknown>;
  const text = p.text;
  return (
    typeof text === 'string' &&
    text.length > 0 &&
    p.messages === undefined &&
    p.attachments === undefined &&
    (p.stream === undefined || typeof p.stream === 'boolean') &&
    isOptionalString(p.channel) &&
    isOptionalString(p.thread_ts) &&
    isOptionalString(p.correlation_id) &&
    isOptionalString(p.team_id) &&
    isOptionalString(p.user_id) &&
    isOptionalString(p.bot_token)
  );
}

/** TaskIdParamsSchema's accepting side by hand, as isPlainExecuteTaskParams is ExecuteTaskParamsSchema's. */
export function isPlainTaskIdParams(params: unknown): params is TaskIdParams {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const p = params as Record<string, unknown>;
  return typeof p.task_id === 'string' && p.task_id.length > 0 && isOptionalString(p.cursor);
}

const executeTaskParams = (params: unknown): ExecuteTaskParams => (isPlainExecuteTaskParams(params) ? params : paramsOf(ExecuteTaskParamsSchema, params));
const taskIdParams = (params: unknown): TaskIdParams => (isPlainTaskIdParams(params) ? params : paramsOf(TaskIdParamsSchema, params));

/** The zone contract's methods, bound to a task service. */
export function contractMethods(service: TaskService): Record<string, MethodHandler> {
  return {
    [Method.ExecuteTask]: (params, { id }) => service.executeTask(executeTaskParams(params), id),
    [Method.GetTaskResult]: (params) => {
      const { task_id, cursor } = taskIdParams(params);
      return service.getTaskResult(task_id, cursor);
    },
    [Method.CancelTask]: (params) => service.cancelTask(taskIdParams(params).task_id),
  };
}
