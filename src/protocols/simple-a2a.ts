import { z } from 'zod';
import { ProtocolFailure, answerFailure, sendJson } from './json-rpc-exchange';
import { failure, success, type FailureCategory, type Outcome, type PendingHandle } from './outcome';
import type { CallContext, ExecutionProtocol, TaskInput } from './protocol';
import { usageOfA2aMetadata } from './a2a-usage';

/**
 * The legacy "simple A2A" format some existing agents still speak (docs/architecture.md §4.3): not
 * JSON-RPC, one synchronous exchange per task, no polling and no cancel.
 *   request  {"task_id": <request id>, "input": <the execute_task params>}
 *   response {"task_id", "status": "success" | "error", "output": {…}, "error": null | "…"}
 * `input` is the params as they are, so the thread's earlier messages arrive in `input.messages`
 * and the files (bytes in base64) in `input.attachments` whenever the task carries them.
 */
export const SimpleA2aResponseSchema = z
  .object({
    task_id: z.string().optional(),
    status: z.enum(['success', 'error']),
    output: z.unknown().optional(),
    error: z.string().nullable().optional(),
  })
  .loose();

/** Where the reply text lives in `output`, in order of preference. */
const TEXT_FIELDS = ['text', 'response', 'result'] as const;

export class SimpleA2aProtocol implements ExecutionProtocol {
  readonly name = 'simple-a2a' as const;

  async start(task: TaskInput, call: CallContext): Promise<Outcome> {
    const body = await sendJson(call, { task_id: task.requestId, input: task.params });
    if (body === undefined || body.trim() === '') return answerFailure(ProtocolFailure.Empty, 'the agent brought back an empty response');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return answerFailure(ProtocolFailure.Malformed, 'the agent brought back a body that is not JSON');
    }
    const parsed = SimpleA2aResponseSchema.safeParse(json);
    if (!parsed.success) return answerFailure(ProtocolFailure.Malformed, 'the agent brought back JSON that is not a simple-a2a response');
    const response = parsed.data;
    // The echoed task id is the format's only way to pair an answer with its question.
    if (response.task_id !== undefined && response.task_id !== task.requestId) {
      return answerFailure(ProtocolFailure.IdMismatch, `response task_id ${JSON.stringify(response.task_id)} does not match ${JSON.stringify(task.requestId)}`);
    }
    if (response.status === 'error') {
      const reason = response.error || 'the agent reported an error without a reason';
      return failure(categoryOfSimpleA2aError(reason), 'simple-a2a:error', reason, false);
    }
    return replyOf(response.output);
  }

  async poll(_handle: PendingHandle, _call: CallContext): Promise<Outcome> {
    return failure('failed', 'simple-a2a:no-polling', 'the simple-a2a format has no way to ask about a task later', false);
  }

  /** Nothing to stop: every simple-a2a exchange is over when its answer arrives. */
  async cancel(_handle: PendingHandle, _call: CallContext): Promise<undefined> {
    return undefined;
  }
}

/**
 * The format's error is free text and its only clue (HTTP statuses are the transport's). Plain
 * words that agents use for the few failures a user should hear about; anything else is `failed`.
 */
const ERROR_WORDS: ReadonlyArray<[RegExp, FailureCategory]> = [
  [/\b(throttl\w*|rate[ _-]?limit\w*|too many (requests|sessions)|quota exceeded|overloaded|busy)\b/i, 'busy'],
  [/\b(timed? ?out|deadline exceeded)\b/i, 'timed-out'],
  [/\b(unavailable|not available|can(not|'t) reach|unreachable)\b/i, 'unavailable'],
  [/\b(too long|too large|content filter\w*|invalid input|rejected)\b/i, 'rejected'],
];

export function categoryOfSimpleA2aError(reason: string): FailureCategory {
  return ERROR_WORDS.find(([words]) => words.test(reason))?.[1] ?? 'failed';
}

function replyOf(output: unknown): Outcome {
  if (output === undefined || output === null) return success('');
  if (typeof output === 'string') return success(output);
  if (typeof output !== 'object' || Array.isArray(output)) return success(JSON.stringify(output));
  const fields = output as Record<string, unknown>;
  for (const field of TEXT_FIELDS) {
    const value = fields[field];
    if (typeof value === 'string') {
      const { [field]: _text, ...extra } = fields;
      // Its usage, if it reports one, is read as an A2A agent's metadata is (a2a-usage.ts).
      return success(value, extra, usageOfA2aMetadata(fields));
    }
  }
  return success(JSON.stringify(output), {});
}
