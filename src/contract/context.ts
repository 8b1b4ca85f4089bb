import { z } from 'zod';

/**
 * What the user is looking at in Slack while they ask (docs/contract.md, "Context"): entities by
 * relevance — a channel, a canvas, a list, a message (`id` its ts, `channel` where it is). The
 * execute_task param `context` carries them; an agent may ignore it.
 */
export const MAX_CONTEXT_ENTITIES = 10;

export const ContextEntitySchema = z
  .object({
    type: z.enum(['channel', 'canvas', 'list', 'message'], { error: 'type must be "channel", "canvas", "list" or "message"' }),
    id: z.string({ error: 'id must be a string' }).min(1, 'id must not be empty'),
    channel: z.string({ error: 'channel must be a string' }).optional(),
  })
  .loose();
export type ContextEntity = z.infer<typeof ContextEntitySchema>;
