import { ErrorCode, type Answer, type Question } from '../contract';
import { RpcError } from './rpc-error';

/**
 * Whether `answer` answers `question` (docs/contract.md, "Questions"): its id, and a value among
 * the options or a text where the question takes free text. An auth question takes any value
 * (the asker says they signed in). Throws -32602 naming the field otherwise.
 */
export function checkAnswer(question: Question, answer: Answer): void {
  if (answer.question_id !== question.id) throw invalidAnswer('answer.question_id', `the task waits on question ${question.id}, not ${answer.question_id}`);
  if (question.kind === 'auth') return;
  if (answer.value !== undefined && !(question.options ?? []).some((option) => option.value === answer.value)) {
    throw invalidAnswer('answer.value', `value must be one of the question's options: ${(question.options ?? []).map((option) => option.value).join(', ') || '(none)'}`);
  }
  if (answer.text !== undefined && question.free_text === undefined) throw invalidAnswer('answer.text', 'this question takes one of its options, not free text');
}

function invalidAnswer(path: string, message: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, undefined, [{ path, message }]);
}
