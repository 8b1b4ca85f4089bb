import { z } from 'zod';

/**
 * Who is asking (docs/contract.md, "Who is asking"): the Slack user whose message started the
 * task, as the verification zone verified it (a signed Slack request). Only the verification zone
 * sets it — the execution zone is reachable from nowhere else — so an agent may key a user's
 * memory, tokens or permissions on it.
 */

/** `slack:<team id>:<user id>`: Slack ids are upper-case letters and digits. */
export const ASKER_ID = /^slack:[A-Z0-9]+:[A-Z0-9]+$/;

/** The HTTP header the https transport carries the asker's id in, next to the params. */
export const ASKER_HEADER = 'X-Zone-Asker';

export const AskerSchema = z
  .object({
    id: z.string({ error: 'id is required and must be a string' }).regex(ASKER_ID, 'id must be slack:<team id>:<user id>'),
    /** The Enterprise Grid organisation, where Slack gives one. */
    enterprise_id: z.string({ error: 'enterprise_id must be a string' }).min(1, 'enterprise_id must not be empty').optional(),
  })
  .loose();
export type Asker = z.infer<typeof AskerSchema>;

/** The asker of a verified Slack event: undefined when its team or user is unknown (or not a Slack id). */
export function askerOf(teamId: string | undefined, userId: string | undefined, enterpriseId?: string): Asker | undefined {
  if (!teamId || !userId) return undefined;
  const id = `slack:${teamId}:${userId}`;
  if (!ASKER_ID.test(id)) return undefined;
  return enterpriseId ? { id, enterprise_id: enterpriseId } : { id };
}
