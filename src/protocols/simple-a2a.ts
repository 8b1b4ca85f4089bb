import { z } from 'zod';
import { ProtocolFailure, sendJson } from './json-rpc-exchange';
import { failure, success, type Outcome, type PendingHandle } from './outcome';
import type { CallContext, ExecutionProtocol, TaskInput } from './protocol';

/**
 * The legacy "simple A2A" format some existing agents still speak (ARCHITECTURE §4): not
 * JSON-RPC, one synchronous exchange per task, no polling and no cancel.
 *   request  {"task_id": <request id>, "input": <the execute_task params>}
 *   response {"task_id", "status": "success" | "error", "output": {…}, "error": null | "…"}
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
    if (body === undefined || body.trim() === '') return failure(ProtocolFailure.Empty, 'the agent brought back an empty response', false);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return failure(ProtocolFailure.Malformed, 'the agent brought back a body that is not JSON', false);
    }
    const parsed = SimpleA2aResponseSchema.safeParse(json);
    if (!parsed.success) return failure(ProtocolFailure.Malformed, 'the agent brought back JSON that is not a simple-a2a response', false);
    const response = parsed.data;
    // The echoed task id is the format's only way to pair an answer with its question.
    if (response.task_id !== undefined && response.task_id !== task.requestId) {
      return failure(ProtocolFailure.IdMismatch, `response task_id ${JSON.stringify(response.task_id)} does not match ${JSON.stringify(task.requestId)}`, false);
    }
    if (response.status === 'error') return failure('simple-a2a:error', response.error || 'the agent reported an error without a reason', false);
    return replyOf(response.output);
  }

  async poll(_handle: PendingHandle, _call: CallContext): Promise<Outcome> {
    return failure('simple-a2a:no-polling', 'the simple-a2a format has no way to ask about a task later', false);
  }

  /** Nothing to stop: every simple-a2a exchange is over when its answer arrives. */
  async cancel(_handle: PendingHandle, _call: CallContext): Promise<void> {}
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
      return success(value, extra);
    }
  }
  return success(JSON.stringify(output), {});
}
