import * as z from '../../config/zod-mini';

/**
 * A file shared with the message, as the invoker needs it to download it. The URL stays in the
 * verification zone: the execution zone receives the bytes (docs/contract.md, "Attachments").
 */
export const TaskFileSchema = z.object({
  id: z.string().check(z.minLength(1)),
  name: z.string(),
  /** As Slack declared it; the invoker checks the bytes against it. */
  mimetype: z.string(),
  filetype: z.optional(z.string()),
  size: z.number().check(z.nonnegative()),
  /** Absent for a file Slack no longer serves (deleted, hidden by the plan's limits). */
  url: z.optional(z.string()),
});
export type TaskFile = z.infer<typeof TaskFileSchema>;

/** More file references than this in one task message are cut (Slack attaches at most 10 to a message). */
export const MAX_TASK_FILES = 50;

