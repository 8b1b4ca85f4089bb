import { z } from 'zod';
import { ExecuteTaskParamsSchema } from '../contract';
import type { ExecutionRuntime } from './runtime';
import type { TaskHandoff } from './task-service';

/**
 * What the function-URL host hands to its worker when a task outlives the response, as an SQS
 * message body. Small params travel inline: `{task_id, params}`. An SQS message must stay under
 * 256 KiB, and a task with attachments can carry megabytes, so params whose message would exceed
 * HANDOFF_INLINE_MAX_BYTES are kept in the task store (`TaskStore.putParams`, until the task
 * expires) and the message only points at them: `{task_id, params_ref: true}`. The `bot_token`
 * of such params, a credential, is not kept in the store: it rides in the message as it would
 * inline. The worker erases kept params once it is done with the task.
 */
export const InlineHandoffMessageSchema = z.object({ task_id: z.string().min(1), params: ExecuteTaskParamsSchema });
export const StoredHandoffMessageSchema = z.object({ task_id: z.string().min(1), params_ref: z.literal(true), bot_token: z.string().optional() });
export const HandoffMessageSchema = z.union([InlineHandoffMessageSchema, StoredHandoffMessageSchema]);
export type HandoffMessage = z.infer<typeof HandoffMessageSchema>;

/** Largest handoff message body sent as is (UTF-8 bytes): SQS takes 256 KiB, this leaves room. */
export const HANDOFF_INLINE_MAX_BYTES = 200 * 1024;

type HandoffTask = Parameters<TaskHandoff>[0];

/** The handoff message body for a task; params too large to travel inline are put in the store first. */
export async function handoffMessageBody(runtime: Pick<ExecutionRuntime, 'store'>, task: HandoffTask): Promise<string> {
  const inline = JSON.stringify({ task_id: task.taskId, params: task.params } satisfies HandoffMessage);
  if (Buffer.byteLength(inline) <= HANDOFF_INLINE_MAX_BYTES) return inline;
  const { bot_token: botToken, ...kept } = task.params;
  await runtime.store.putParams(task.taskId, JSON.stringify(kept), task.expiresAt);
  const message: HandoffMessage = { task_id: task.taskId, params_ref: true, ...(botToken === undefined ? {} : { bot_token: botToken }) };
  return JSON.stringify(message);
}

/**
 * Runs the task a handoff message body names (the worker side): with its inline params, or with
 * the params kept in the store, which are loaded only if the task is still pending and erased
 * once the worker is done with it. Throws on a malformed body or a store failure, so the queue
 * delivers the message again.
 */
export async function runHandoffMessage(runtime: Pick<ExecutionRuntime, 'service' | 'store' | 'log'>, body: string): Promise<void> {
  const message = HandoffMessageSchema.parse(JSON.parse(body));
  if ('params' in message) return runtime.service.runHandedOff(message.task_id, message.params);
  await runtime.service.runHandedOff(message.task_id, async () => {
    const json = await runtime.store.getParams(message.task_id);
    if (json === undefined) return undefined;
    const params = ExecuteTaskParamsSchema.parse(JSON.parse(json));
    return message.bot_token === undefined ? params : { ...params, bot_token: message.bot_token };
  });
  // The task has settled (or was no longer pending): its text need not wait for its expiry.
  await runtime.store.deleteParams(message.task_id).catch((error: unknown) => {
    runtime.log.warn('could not erase the kept params of a handed-off task: they go at its expiry', { task_id: message.task_id, error: error as Error });
  });
}
