import { z } from 'zod';
import { type JsonRpcId, type JsonRpcRequest, request } from './jsonrpc';

/** The methods of the zone contract (docs/contract.md): names, params and results. */
export const Method = {
  ExecuteTask: 'execute_task',
  GetTaskResult: 'get_task_result',
  CancelTask: 'cancel_task',
} as const;
export type MethodName = (typeof Method)[keyof typeof Method];

const optionalString = z.string().optional();

/** A file or link that came with the Slack message; the execution zone decides what to do with it. */
export const AttachmentSchema = z
  .object({
    name: optionalString,
    mimetype: optionalString,
    url: optionalString,
    size: z.number().int().nonnegative().optional(),
  })
  .loose();
export type Attachment = z.infer<typeof AttachmentSchema>;

export const ExecuteTaskParamsSchema = z
  .object({
    text: z.string({ error: 'text is required and must be a string' }).min(1, 'text must not be empty'),
    channel: optionalString,
    thread_ts: optionalString,
    correlation_id: optionalString,
    team_id: optionalString,
    user_id: optionalString,
    attachments: z.array(AttachmentSchema).optional(),
    /** Sent only when the operator opts in; never logged. */
    bot_token: optionalString,
  })
  .loose();
export type ExecuteTaskParams = z.infer<typeof ExecuteTaskParamsSchema>;

export const TaskIdParamsSchema = z
  .object({ task_id: z.string({ error: 'task_id is required and must be a string' }).min(1, 'task_id must not be empty') })
  .loose();
export type TaskIdParams = z.infer<typeof TaskIdParamsSchema>;

export const SuccessResultSchema = z
  .object({ status: z.literal('success'), response_text: z.string() })
  .loose();
export type SuccessResult = z.infer<typeof SuccessResultSchema>;

export const AcceptedResultSchema = z.object({ status: z.literal('accepted'), task_id: z.string().min(1) }).loose();
export type AcceptedResult = z.infer<typeof AcceptedResultSchema>;

export const PendingResultSchema = z
  .object({ status: z.enum(['accepted', 'working']), task_id: z.string().min(1) })
  .loose();
export type PendingResult = z.infer<typeof PendingResultSchema>;

export const CancelledResultSchema = z.object({ status: z.literal('cancelled'), task_id: z.string().min(1) }).loose();
export type CancelledResult = z.infer<typeof CancelledResultSchema>;

export const ExecuteTaskResultSchema = z.discriminatedUnion('status', [SuccessResultSchema, AcceptedResultSchema]);
export type ExecuteTaskResult = z.infer<typeof ExecuteTaskResultSchema>;

export const GetTaskResultResultSchema = z.discriminatedUnion('status', [SuccessResultSchema, PendingResultSchema]);
export type GetTaskResultResult = z.infer<typeof GetTaskResultResultSchema>;

export const CancelTaskResultSchema = z.discriminatedUnion('status', [CancelledResultSchema, SuccessResultSchema]);
export type CancelTaskResult = z.infer<typeof CancelTaskResultSchema>;

/** Task states: accepted → working → success | failed | cancelled. */
export type TaskStatus = 'accepted' | 'working' | 'success' | 'failed' | 'cancelled';
export const PENDING_STATUSES: readonly TaskStatus[] = ['accepted', 'working'];

/** A fresh UUID v4 string: the request id the verification zone always sends. */
export function newRequestId(): string {
  return globalThis.crypto.randomUUID();
}

export function executeTaskRequest(params: ExecuteTaskParams, id: JsonRpcId = newRequestId()): JsonRpcRequest<ExecuteTaskParams> {
  return request(Method.ExecuteTask, params, id);
}

export function getTaskResultRequest(taskId: string, id: JsonRpcId = newRequestId()): JsonRpcRequest<TaskIdParams> {
  return request(Method.GetTaskResult, { task_id: taskId }, id);
}

export function cancelTaskRequest(taskId: string, id: JsonRpcId = newRequestId()): JsonRpcRequest<TaskIdParams> {
  return request(Method.CancelTask, { task_id: taskId }, id);
}
