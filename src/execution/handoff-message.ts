import { z } from 'zod';
import { ExecuteTaskParamsSchema } from '../contract';

/** What the function-URL host hands to its worker when a task outlives the response. */
export const HandoffMessageSchema = z.object({ task_id: z.string().min(1), params: ExecuteTaskParamsSchema });
export type HandoffMessage = z.infer<typeof HandoffMessageSchema>;
