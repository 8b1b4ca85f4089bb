import * as z from '../../config/zod-mini';

/**
 * The parts of Slack's interactivity payloads the intake reads (docs/architecture.md §2.6): a
 * click on a block element (`block_actions`, e.g. the feedback buttons under an answer) and a
 * submitted modal (`view_submission`, the "what went wrong" form). Slack sends them as
 * `application/x-www-form-urlencoded` with one field, `payload`, holding this JSON; everything
 * not named here passes through.
 */
export const InteractionActionSchema = z.looseObject({ action_id: z.string(), block_id: z.optional(z.string()), type: z.optional(z.string()), value: z.optional(z.string()), action_ts: z.optional(z.string()) });
export type InteractionAction = z.infer<typeof InteractionActionSchema>;

export const InteractionPayloadSchema = z.looseObject({
  type: z.string(),
  team: z.optional(z.nullable(z.looseObject({ id: z.string() }))),
  user: z.looseObject({ id: z.string(), team_id: z.optional(z.string()) }),
  channel: z.optional(z.looseObject({ id: z.string() })),
  container: z.optional(z.looseObject({ message_ts: z.optional(z.string()), channel_id: z.optional(z.string()), thread_ts: z.optional(z.string()) })),
  message: z.optional(z.looseObject({ ts: z.string(), thread_ts: z.optional(z.string()) })),
  actions: z.optional(z.array(InteractionActionSchema)),
  trigger_id: z.optional(z.string()),
  view: z.optional(
    z.looseObject({
      id: z.optional(z.string()),
      callback_id: z.optional(z.string()),
      private_metadata: z.optional(z.string()),
      state: z.optional(z.looseObject({ values: z.optional(z.record(z.string(), z.record(z.string(), z.looseObject({ value: z.optional(z.nullable(z.string())) })))) })),
    }),
  ),
});
export type InteractionPayload = z.infer<typeof InteractionPayloadSchema>;

/** The workspace an interaction came from. */
export function interactionTeamId(payload: InteractionPayload): string {
  return payload.team?.id ?? payload.user.team_id ?? '';
}
