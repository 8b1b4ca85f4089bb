import { z } from 'zod';

/**
 * The steps an agent shows while it works (docs/contract.md, "Steps"): each with an id of its
 * own, a title and a status that goes pending → in_progress → complete | error. Optional for
 * agents (the `steps` conformance level): a caller that reads none loses nothing but the view.
 */
export const STEP_STATUSES = ['pending', 'in_progress', 'complete', 'error'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** At most this many steps in one task: Slack draws a few dozen cards at most. */
export const MAX_STEPS = 50;

export const StepSourceSchema = z
  .object({
    url: z.string({ error: 'url must be a string' }).url('url must be a URL'),
    title: z.string({ error: 'title must be a string' }).optional(),
  })
  .loose();

export const StepSchema = z
  .object({
    id: z.string({ error: 'id is required and must be a string' }).min(1, 'id must not be empty').max(128, 'id must be at most 128 characters'),
    title: z.string({ error: 'title is required and must be a string' }).min(1, 'title must not be empty').max(256, 'title must be at most 256 characters'),
    status: z.enum(STEP_STATUSES, { error: 'status must be "pending", "in_progress", "complete" or "error"' }),
    details: z.string({ error: 'details must be a string' }).optional(),
    sources: z.array(StepSourceSchema).max(20).optional(),
  })
  .loose();
export type Step = z.infer<typeof StepSchema>;

/**
 * What a pending answer (or a success) says of the steps: `steps`, every step so far in the order
 * first shown, each at its latest status — the whole list each time, so a caller that missed an
 * event loses nothing; `plan_title`, a title over them where the agent gives one.
 */
export const stepFields = {
  steps: z.array(StepSchema).max(MAX_STEPS).optional(),
  plan_title: z.string().optional(),
};

/** `steps` with `step` in it: replaced where its id is known, else added at the end. */
export function withStep(steps: readonly Step[], step: Step): Step[] {
  const at = steps.findIndex((known) => known.id === step.id);
  if (at < 0) return [...steps, step].slice(-MAX_STEPS);
  const next = [...steps];
  next[at] = step;
  return next;
}
