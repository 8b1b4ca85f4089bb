import type { AgentFile } from '../../contract';
import type { SuccessOutcome } from '../../protocols/outcome';
import { OUTGOING_FILES_TTL_SECONDS, type OutgoingFiles, type ReplyFiles } from './outgoing-files';

/**
 * The settlement's part of an answer's files (docs/architecture.md, "Files the agent makes"): they
 * go into OutgoingFiles under the task's request id before its reply is queued (a redelivered
 * settlement puts the same files again), and the reply says how many, with those the contract's
 * rules refused. A deployment without the store shares no files and names each as left out.
 */
export async function handOverFiles(outgoing: OutgoingFiles | undefined, requestId: string, outcome: Pick<SuccessOutcome, 'files' | 'filesRefused'>): Promise<ReplyFiles | undefined> {
  const files = outcome.files ?? [];
  const refused = outcome.filesRefused ?? [];
  if (files.length === 0 && refused.length === 0) return undefined;
  if (!outgoing) return { count: 0, refused: [...refused, ...files.map((file) => ({ name: file.name, reason: 'this deployment does not share files' }))] };
  if (files.length) await outgoing.put(requestId, files, OUTGOING_FILES_TTL_SECONDS);
  return { count: files.length, ...(refused.length ? { refused } : {}) };
}

/** An answer of files alone still says what it sent: the text Slack shows above them. */
export function textWithFiles(text: string, files: readonly AgentFile[] | undefined): string {
  if (text.trim() !== '' || !files?.length) return text;
  return `Here ${files.length === 1 ? 'is the file' : 'are the files'}: ${files.map((file) => `\`${file.name}\``).join(', ')}.`;
}
