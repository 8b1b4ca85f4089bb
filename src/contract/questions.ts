import { z } from 'zod';
import { AskerSchema } from './asker';
import { stepFields } from './steps';

/**
 * A question to a person (docs/contract.md, "Questions"): an agent pauses its task with
 * `input_required` and a question; the caller asks the person and resumes the **same** task with
 * `resume_task` and the answer. `kind: "auth"` asks the asker to sign in at `auth_url` (A2A's
 * `auth-required`) and resume once done.
 */
export const MAX_OPTIONS = 5;

export const QuestionOptionSchema = z
  .object({
    value: z.string({ error: 'value is required and must be a string' }).min(1, 'value must not be empty').max(150, 'value must be at most 150 characters'),
    label: z.string({ error: 'label is required and must be a string' }).min(1, 'label must not be empty').max(75, 'label must be at most 75 characters'),
  })
  .loose();
export type QuestionOption = z.infer<typeof QuestionOptionSchema>;

export const QuestionSchema = z
  .object({
    id: z.string({ error: 'id is required and must be a string' }).min(1, 'id must not be empty').max(128, 'id must be at most 128 characters'),
    text: z.string({ error: 'text is required and must be a string' }).min(1, 'text must not be empty').max(3000, 'text must be at most 3000 characters'),
    options: z.array(QuestionOptionSchema).max(MAX_OPTIONS).optional(),
    /** A free-text answer is taken too (a modal in Slack): `label` names the field. */
    free_text: z.object({ label: z.string().min(1).max(48) }).loose().optional(),
    kind: z.enum(['input', 'auth']).optional(),
    /** `kind: "auth"`: where the asker signs in; shown to the asker only. */
    auth_url: z.string().url().optional(),
  })
  .loose()
  .refine((question) => (question.options?.length ?? 0) > 0 || question.free_text !== undefined || question.kind === 'auth', {
    message: 'a question needs options, a free_text field, or kind "auth"',
  });
export type Question = z.infer<typeof QuestionSchema>;

/** The task waits for a person: ask `question`, then `resume_task`. Text and steps so far may come with it. */
export const InputRequiredResultSchema = z
  .object({
    status: z.literal('input_required'),
    task_id: z.string().min(1),
    question: QuestionSchema,
    text: z.string().optional(),
    cursor: z.string().optional(),
    ...stepFields,
  })
  .loose();
export type InputRequiredResult = z.infer<typeof InputRequiredResultSchema>;

/** One answer: an option's `value`, or free `text` (exactly one of them). */
export const AnswerSchema = z
  .object({
    question_id: z.string({ error: 'question_id is required and must be a string' }).min(1, 'question_id must not be empty'),
    value: z.string().min(1).optional(),
    text: z.string().min(1).max(3000).optional(),
    /** Who answered: the asker, or one of the agent's approvers. */
    answered_by: AskerSchema.optional(),
  })
  .loose()
  .refine((answer) => (answer.value === undefined) !== (answer.text === undefined), { message: 'an answer has exactly one of value and text' });
export type Answer = z.infer<typeof AnswerSchema>;

/** `resume_task`: the paused task, and the answer to its pending question. */
export const ResumeTaskParamsSchema = z
  .object({
    task_id: z.string({ error: 'task_id is required and must be a string' }).min(1, 'task_id must not be empty'),
    answer: AnswerSchema,
    stream: z.boolean().optional(),
    hold_ms: z.number().int().nonnegative().optional(),
  })
  .loose();
export type ResumeTaskParams = z.infer<typeof ResumeTaskParamsSchema>;
