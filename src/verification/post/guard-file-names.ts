import type { AgentFile, RefusedFile } from '../../contract';
import type { Guardrail } from '../../guardrail/guardrail';
import { Numbering } from '../../guardrail/numbering';

/**
 * share-answer-files.ts, before Slack shows an answer's files (docs/operations.md, "Guardrails"):
 * the names the agent gave them — Slack shows each as the file's name and title, and a refused
 * one in the line that says why — go through the output guardrail like the answer's text, one
 * numbering for all of them. A masked name keeps its extension (`[EMAIL-1].pdf`, so the file still
 * opens as what it is); a blocked one becomes `file-<n>` with it. The built-in guardrail names the
 * same files the same way on a redelivery. A check that fails throws: the reply comes back.
 */
export async function guardedFileNames(guardrail: Guardrail, files: readonly AgentFile[], refused: readonly RefusedFile[], call: { signal?: AbortSignal; remainingMs?: number }): Promise<{ files: AgentFile[]; refused: RefusedFile[] }> {
  const numbering = new Numbering();
  let blocked = 0;
  const safeName = async (name: string): Promise<string> => {
    const checked = await guardrail.check(name, 'output', { ...call, numbering });
    const extension = /\.[A-Za-z0-9]{1,8}$/.exec(name)?.[0] ?? '';
    if (checked.action === 'blocked') return `file-${(blocked += 1)}${extension}`;
    return checked.text.endsWith(extension) ? checked.text : `${checked.text}${extension}`;
  };
  const guardedFiles: AgentFile[] = [];
  for (const file of files) guardedFiles.push({ ...file, name: await safeName(file.name) });
  const guardedRefused: RefusedFile[] = [];
  for (const file of refused) guardedRefused.push({ ...file, name: await safeName(file.name) });
  return { files: guardedFiles, refused: guardedRefused };
}
