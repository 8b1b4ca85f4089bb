import { z } from 'zod';
import { ExecuteTaskParamsSchema, type ExecuteTaskParams } from '../contract';
import type { ExecutionRuntime } from './runtime';
import type { TaskHandoff } from './task-service';

/**
 * What the function-URL host hands to its worker when a task outlives the response, as an SQS
 * message body. Small params travel inline: `{task_id, params}`. An SQS message must stay under
 * 256 KiB, and a task with attachments can carry megabytes, so params whose message would exceed
 * HANDOFF_INLINE_MAX_BYTES are kept in the task store (`TaskStore.putParams`, until the task
 * expires) and the message only points at them: `{task_id, params_ref: true}`.
 *
 * The `bot_token` of the params (sent only when the operator opts in) is a credential: it rests
 * in no message body and in no store, so the worker runs the task without it. Only the function
 * URL's own attempt, within the sync budget, has it; a deployment whose agent needs the token
 * for the whole task uses the AgentCore host, which runs every task in the process that received
 * it (docs/operations.md, "Hand-offs to the worker"). A message from before this rule that still
 * carries a token (inline, or `bot_token` beside `params_ref`) has it dropped the same way.
 */
export const InlineHandoffMessageSchema = z.object({ task_id: z.string().min(1), params: ExecuteTaskParamsSchema });
export const StoredHandoffMessageSchema = z.object({ task_id: z.string().min(1), params_ref: z.literal(true) });
export const HandoffMessageSchema = z.union([InlineHandoffMessageSchema, StoredHandoffMessageSchema]);
export type HandoffMessage = z.infer<typeof HandoffMessageSchema>;

/** Largest handoff message body sent as is (UTF-8 bytes): SQS takes 256 KiB, this leaves room. */
export const HANDOFF_INLINE_MAX_BYTES = 200 * 1024;

type HandoffTask = Parameters<TaskHandoff>[0];

/**
 * A hand-off another worker holds (its lease still lasts): nothing ran. Thrown so the queue
 * delivers the message again after its visibility timeout, by which time the holder has finished
 * (the message is then dropped) or stopped and its lease is over (the delivery runs the task):
 * the copy SQS delivered twice is the same message, and deleting it now would leave a holder that
 * dies with no message to finish its task.
 */
export class HandoffHeldError extends Error {
  override name = 'HandoffHeldError';
  constructor(readonly taskId: string) {
    super(`task ${taskId} is held by another worker whose lease still lasts: delivering the hand-off again later`);
  }
}

/** The handoff message body for a task, without its bot token; params too large to travel inline are put in the store first. */
export async function handoffMessageBody(runtime: Pick<ExecutionRuntime, 'store'> & Partial<Pick<ExecutionRuntime, 'log'>>, task: HandoffTask): Promise<string> {
  const params = withoutToken(task.params);
  if (params !== task.params) runtime.log?.info('bot_token is not handed to the worker: the worker runs the task without it', { task_id: task.taskId });
  const inline = JSON.stringify({ task_id: task.taskId, params } satisfies HandoffMessage);
  if (Buffer.byteLength(inline) <= HANDOFF_INLINE_MAX_BYTES) return inline;
  await runtime.store.putParams(task.taskId, JSON.stringify(params), task.expiresAt);
  return JSON.stringify({ task_id: task.taskId, params_ref: true } satisfies HandoffMessage);
}

/**
 * Runs the task a handoff message body names (the worker side), once however often the message
 * comes (TaskService.runHandedOff): with its inline params, or with the params kept in the
 * store, which are loaded only if the task is still pending and erased once it is done. Throws
 * on a malformed body or a store failure, so the queue delivers the message again, and
 * HandoffHeldError for a task another worker holds.
 */
export async function runHandoffMessage(runtime: Pick<ExecutionRuntime, 'service' | 'store' | 'log'>, body: string): Promise<void> {
  const message = HandoffMessageSchema.parse(JSON.parse(body));
  const outcome =
    'params' in message
      ? await runtime.service.runHandedOff(message.task_id, withoutToken(message.params))
      : await runtime.service.runHandedOff(message.task_id, async () => {
          const json = await runtime.store.getParams(message.task_id);
          return json === undefined ? undefined : withoutToken(ExecuteTaskParamsSchema.parse(JSON.parse(json)));
        });
  // The holder reads the kept params again if it must run the task over: they stay until it is done.
  if (outcome === 'held') throw new HandoffHeldError(message.task_id);
  if ('params' in message) return;
  // The task has settled (or was no longer pending): its text need not wait for its expiry.
  await runtime.store.deleteParams(message.task_id).catch((error: unknown) => {
    runtime.log.warn('could not erase the kept params of a handed-off task: they go at its expiry', { task_id: message.task_id, error: error as Error });
  });
}

/** The params without `bot_token` (the same object when they have none). */
function withoutToken(params: ExecuteTaskParams): ExecuteTaskParams {
  if (params.bot_token === undefined) return params;
  const { bot_token: _token, ...rest } = params;
  return rest;
}
