import type { z } from 'zod';
import { ErrorCode, ExecuteTaskParamsSchema, Method, TaskIdParamsSchema, invalidParamsDetails } from '../contract';
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

/** The zone contract's methods, bound to a task service. */
export function contractMethods(service: TaskService): Record<string, MethodHandler> {
  return {
    [Method.ExecuteTask]: (params, { id }) => service.executeTask(paramsOf(ExecuteTaskParamsSchema, params), id),
    [Method.GetTaskResult]: (params) => {
      const { task_id, cursor } = paramsOf(TaskIdParamsSchema, params);
      return service.getTaskResult(task_id, cursor);
    },
    [Method.CancelTask]: (params) => service.cancelTask(paramsOf(TaskIdParamsSchema, params).task_id),
  };
}
