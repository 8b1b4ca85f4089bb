import type { Attachment, ExecuteTaskParams } from '../../contract';
import type { Guardrail, GuardrailFindings } from '../../guardrail/guardrail';
import { Numbering } from '../../guardrail/numbering';
import { GuardrailUnavailableError } from '../../guardrail/guardrail';
import { fill, type UserMessages } from '../messages/user-messages';
import { RetryableTaskError, type InvokerParts, type TaskRun } from './invoker-parts';
import type { TaskInputs } from './task-inputs';

/**
 * agent-invoker, before the task crosses (docs/operations.md, "Guardrails"): the user's text, the
 * thread's earlier messages and the text of the files shared with it go through the input
 * guardrail, with one numbering for the whole task (the same address is `[EMAIL-1]` in the thread
 * and in the question). Masked text is what the agent gets. Anything blocked blocks the task: the
 * user gets one notice and no task is sent. A file whose text cannot be read here (a PDF, an image,
 * an Office file) is not sent while the direction masks or blocks, with a note saying so; in detect
 * mode everything passes unchanged. A guardrail that cannot answer throws (GuardrailUnavailableError):
 * the task is retried, never sent unchecked.
 */
export type GuardedInput = { kind: 'pass'; params: ExecuteTaskParams; notes: string[] } | { kind: 'blocked'; findings: GuardrailFindings };

/** The document formats whose bytes are text, checked as UTF-8. */
const TEXT_FORMATS: ReadonlySet<string> = new Set(['text/plain', 'text/markdown', 'text/csv', 'text/html']);

export async function guardInput(guardrail: Guardrail, params: ExecuteTaskParams, call: { signal?: AbortSignal; remainingMs?: number }, messages: UserMessages): Promise<GuardedInput> {
  const numbering = new Numbering();
  const blocked: GuardrailFindings = {};
  let isBlocked = false;
  const check = async (text: string): Promise<string> => {
    if (isBlocked || text.trim() === '') return text;
    const result = await guardrail.check(text, 'input', { numbering, ...call });
    if (result.action === 'blocked') {
      isBlocked = true;
      Object.assign(blocked, result.findings);
    }
    return result.text;
  };
  // One after another, in reading order: placeholders are numbered as the agent reads them.
  const guarded: ExecuteTaskParams = { ...params };
  if (params.messages) {
    guarded.messages = [];
    for (const message of params.messages) guarded.messages.push({ ...message, text: await check(message.text) });
  }
  guarded.text = await check(params.text);
  const notes: string[] = [];
  if (params.attachments) {
    const kept: Attachment[] = [];
    const unread: string[] = [];
    for (const attachment of params.attachments) {
      const mimetype = attachment.mimetype.split(';')[0]!.trim().toLowerCase();
      if (TEXT_FORMATS.has(mimetype)) {
        const text = await check(Buffer.from(attachment.data, 'base64').toString('utf8'));
        const bytes = Buffer.from(text, 'utf8');
        kept.push({ ...attachment, name: await check(attachment.name), data: bytes.toString('base64'), size: bytes.length });
      } else if (guardrail.modeOf('input') === 'detect') kept.push(attachment);
      else unread.push(attachment.name.replace(/[`*_~<>]/g, ''));
    }
    if (kept.length > 0) guarded.attachments = kept;
    else delete guarded.attachments;
    if (unread.length > 0) notes.push(fill(messages.filesNotChecked, { files: unread.join(', ') }));
  }
  if (isBlocked) return { kind: 'blocked', findings: blocked };
  return { kind: 'pass', params: guarded, notes };
}

/**
 * The step agent-invoker takes between reading the task's inputs and sending it: the params the
 * agent may get (and the notes to add under the answer), or undefined when the input was blocked —
 * then the user has had the one notice, and the task is done.
 */
export async function guardedTask(p: InvokerParts, run: TaskRun, guardrail: Guardrail, sending: { params: ExecuteTaskParams; inputs: TaskInputs }): Promise<{ params: ExecuteTaskParams; inputs: TaskInputs } | undefined> {
  const { options, clock, trace, settlement } = p;
  const { task, log, context } = run;
  let guarded: GuardedInput;
  try {
    guarded = await guardInput(guardrail, sending.params, { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { remainingMs: context.deadline - clock.now() } : {}) }, options.messages);
  } catch (error) {
    if (error instanceof GuardrailUnavailableError) throw new RetryableTaskError(`the input guardrail could not check the task: ${error.message}`);
    throw error;
  }
  if (guarded.kind === 'blocked') {
    log.info('the input guardrail blocked the task; telling the user, sending nothing', { findings: guarded.findings });
    trace({ requestId: task.request_id, hop: 'guardrail-blocked', at: clock.now(), detail: { findings: guarded.findings } });
    await settlement.reply(task, 'notice', options.messages.guardrailBlocked);
    return undefined;
  }
  return { params: guarded.params, inputs: { ...sending.inputs, notes: [...sending.inputs.notes, ...guarded.notes] } };
}
