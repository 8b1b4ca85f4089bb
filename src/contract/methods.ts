import { z } from 'zod';
import { type JsonRpcId, type JsonRpcRequest, request } from './jsonrpc';
import { ContextEntitySchema, MAX_CONTEXT_ENTITIES } from './context';
import { newRequestId } from './request-id';
import { AskerSchema } from './asker';
import { InputRequiredResultSchema, type ResumeTaskParams } from './questions';
import { stepFields } from './steps';
import type { Usage } from './usage';
import type { AgentFile } from './files';

/** The methods of the zone contract (docs/contract.md): names, params and results. */
export const Method = {
  ExecuteTask: 'execute_task',
  GetTaskResult: 'get_task_result',
  CancelTask: 'cancel_task',
  /** Answers a task's pending question (docs/contract.md, "Questions"). */
  ResumeTask: 'resume_task',
} as const;
export type MethodName = (typeof Method)[keyof typeof Method];

const optionalString = z.string().optional();

/**
 * One earlier message of the Slack thread, oldest first (docs/contract.md, "Thread context"): the
 * bot's own replies are `assistant`, everyone else is `user` with their Slack user id.
 */
export const ThreadMessageSchema = z
  .object({
    role: z.enum(['user', 'assistant'], { error: 'role must be "user" or "assistant"' }),
    text: z.string({ error: 'text must be a string' }),
    user_id: optionalString,
    ts: z.string({ error: 'ts must be a string' }).min(1, 'ts must not be empty'),
  })
  .loose();
export type ThreadMessage = z.infer<typeof ThreadMessageSchema>;

/** At most this many thread messages in one task; the verification zone sends far fewer (THREAD_CONTEXT_MAX_MESSAGES). */
export const MAX_THREAD_MESSAGES = 1000;
/** At most this many attachments in one task: Converse's 20 images and 5 documents, with room. */
export const MAX_ATTACHMENTS = 50;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The byte length a base64 string decodes to (standard alphabet, padded). */
export function base64DecodedLength(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

/**
 * A file that came with the Slack message, with its bytes (docs/contract.md, "Attachments"). The
 * verification zone downloads it and checks its bytes against its type; a Slack URL never
 * crosses the zones. `mimetype` is one of ATTACHMENT_TYPES (src/contract/attachments.ts).
 */
export const AttachmentSchema = z
  .object({
    name: z.string({ error: 'name is required and must be a string' }).min(1, 'name must not be empty'),
    mimetype: z.string({ error: 'mimetype is required and must be a string' }).min(1, 'mimetype must not be empty'),
    size: z.number({ error: 'size is required and must be a number' }).int().nonnegative(),
    /** The file's bytes, base64 (standard alphabet, padded). */
    data: z
      .string({ error: 'data is required and must be a base64 string' })
      .refine((data) => data.length % 4 === 0 && BASE64.test(data), 'data must be base64 (standard alphabet, padded)'),
  })
  .loose()
  .refine((attachment) => attachment.data.length % 4 !== 0 || base64DecodedLength(attachment.data) === attachment.size, { message: 'size must be the byte length of data', path: ['size'] });
export type Attachment = z.infer<typeof AttachmentSchema>;

/** `hold_ms`: how long a caller reads a streamed answer, in ms (an integer, 0 or more). */
const holdMs = z.number({ error: 'hold_ms must be a number of milliseconds' }).int('hold_ms must be an integer').nonnegative('hold_ms must not be negative').optional();

export const ExecuteTaskParamsSchema = z
  .object({
    text: z.string({ error: 'text is required and must be a string' }).min(1, 'text must not be empty'),
    channel: optionalString,
    thread_ts: optionalString,
    correlation_id: optionalString,
    team_id: optionalString,
    user_id: optionalString,
    /** Earlier messages of the thread, oldest first; the current message is `text`, never repeated here. */
    messages: z.array(ThreadMessageSchema).max(MAX_THREAD_MESSAGES).optional(),
    attachments: z.array(AttachmentSchema).max(MAX_ATTACHMENTS).optional(),
    /**
     * The caller shows text as it is produced (docs/contract.md, "Streaming"): an agent that
     * streams may answer `accepted` as soon as it has text, with that text and a cursor.
     */
    stream: z.boolean({ error: 'stream must be a boolean' }).optional(),
    /**
     * With `stream: true`, asked for a streamed answer (docs/contract.md, "Streamed answers"): the
     * longest the caller reads the stream, in ms. An agent that streams ends it by then with
     * `accepted` and a cursor, and polling goes on from there.
     */
    hold_ms: holdMs,
    /**
     * What the user is looking at in Slack while they ask (docs/contract.md, "Context"): entities
     * by relevance — a channel, a canvas, a list, a message (`id` its ts, `channel` where it is).
     * Optional; an agent may ignore it.
     */
    context: z
      .object({ entities: z.array(ContextEntitySchema).max(MAX_CONTEXT_ENTITIES) })
      .loose()
      .optional(),
    /**
     * Who is asking (docs/contract.md, "Who is asking"): the verified Slack user, set only by the
     * verification zone. Optional: an agent may ignore it.
     */
    asker: AskerSchema.optional(),
    /** Sent only when the operator opts in; never logged. */
    bot_token: optionalString,
  })
  .loose();
export type ExecuteTaskParams = z.infer<typeof ExecuteTaskParamsSchema>;

export const TaskIdParamsSchema = z
  .object({
    task_id: z.string({ error: 'task_id is required and must be a string' }).min(1, 'task_id must not be empty'),
    /** get_task_result: the `cursor` of the last answer; `text` then holds only what came after it. */
    cursor: z.string({ error: 'cursor must be a string' }).optional(),
    /** get_task_result: answer with a stream of the task's text (docs/contract.md, "Streamed answers"). */
    stream: z.boolean({ error: 'stream must be a boolean' }).optional(),
    /** get_task_result with `stream: true`: the longest the caller reads the stream, in ms. */
    hold_ms: holdMs,
  })
  .loose();
export type TaskIdParams = z.infer<typeof TaskIdParamsSchema>;

/**
 * The final answer. `usage` (docs/contract.md, "Usage") and `files` ("Files") are optional, and not
 * checked here: a malformed one must never cost the answer, so their readers check them apart
 * (`readUsage` drops a bad usage, `readFiles` refuses a bad file with a reason).
 */
export const SuccessResultSchema = z
  .object({ status: z.literal('success'), response_text: z.string(), usage: z.unknown().optional(), files: z.unknown().optional() })
  .loose();
export type SuccessResult = { status: 'success'; response_text: string; usage?: Usage | undefined; files?: AgentFile[] | undefined; [field: string]: unknown };

/**
 * Partial output of a task that streams (docs/contract.md, "Streaming"): `text` is what it produced
 * after the caller's cursor (from the start, for execute_task), `cursor` what to send next time.
 */
const partialOutput = {
  text: z.string().optional(),
  cursor: z.string().optional(),
  /** The agent's steps so far (docs/contract.md, "Steps"). */
  ...stepFields,
};

export const AcceptedResultSchema = z.object({ status: z.literal('accepted'), task_id: z.string().min(1), ...partialOutput }).loose();
export type AcceptedResult = z.infer<typeof AcceptedResultSchema>;

export const PendingResultSchema = z
  .object({ status: z.enum(['accepted', 'working']), task_id: z.string().min(1), ...partialOutput })
  .loose();
export type PendingResult = z.infer<typeof PendingResultSchema>;

export const CancelledResultSchema = z.object({ status: z.literal('cancelled'), task_id: z.string().min(1) }).loose();
export type CancelledResult = z.infer<typeof CancelledResultSchema>;

export const ExecuteTaskResultSchema = z.discriminatedUnion('status', [SuccessResultSchema, AcceptedResultSchema, InputRequiredResultSchema]);
export type ExecuteTaskResult = z.infer<typeof ExecuteTaskResultSchema>;

export const GetTaskResultResultSchema = z.discriminatedUnion('status', [SuccessResultSchema, PendingResultSchema, InputRequiredResultSchema]);
export type GetTaskResultResult = z.infer<typeof GetTaskResultResultSchema>;

export const CancelTaskResultSchema = z.discriminatedUnion('status', [CancelledResultSchema, SuccessResultSchema]);
export type CancelTaskResult = z.infer<typeof CancelTaskResultSchema>;

/**
 * Task states: accepted → working → success | failed | cancelled; working → input_required (a
 * question waits for a person) → accepted again on `resume_task`, or cancelled.
 */
export type TaskStatus = 'accepted' | 'working' | 'input_required' | 'success' | 'failed' | 'cancelled';
export const PENDING_STATUSES: readonly TaskStatus[] = ['accepted', 'working'];
/** Not ended: pending, or paused on a question (which a store must keep as it keeps a pending task). */
export const UNFINISHED_STATUSES: readonly TaskStatus[] = [...PENDING_STATUSES, 'input_required'];

export { newRequestId };

export function executeTaskRequest(params: ExecuteTaskParams, id: JsonRpcId = newRequestId()): JsonRpcRequest<ExecuteTaskParams> {
  return request(Method.ExecuteTask, params, id);
}

export function getTaskResultRequest(taskId: string, id: JsonRpcId = newRequestId(), cursor?: string): JsonRpcRequest<TaskIdParams> {
  return request(Method.GetTaskResult, cursor === undefined ? { task_id: taskId } : { task_id: taskId, cursor }, id);
}

export function resumeTaskRequest(params: ResumeTaskParams, id: JsonRpcId = newRequestId()): JsonRpcRequest<ResumeTaskParams> {
  return request(Method.ResumeTask, params, id);
}

export function cancelTaskRequest(taskId: string, id: JsonRpcId = newRequestId()): JsonRpcRequest<TaskIdParams> {
  return request(Method.CancelTask, { task_id: taskId }, id);
}
