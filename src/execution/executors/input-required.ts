import type { Question } from '../../contract';

/**
 * Thrown by an executor to pause its task on a question to a person (docs/contract.md,
 * "Questions"). The task service records the question and answers `input_required`; on
 * `resume_task` it runs the executor again for the same task, with every answer so far in
 * `ExecutorContext.answers`, so an executor finds its answer there and goes on.
 */
export class InputRequired extends Error {
  override name = 'InputRequired';
  constructor(readonly question: Question) {
    super(`the task waits for an answer to question ${question.id}`);
  }
}
