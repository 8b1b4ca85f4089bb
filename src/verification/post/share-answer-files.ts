import type { RefusedFile } from '../../contract';
import { systemClock, type Clock } from '../../clock';
import type { Guardrail } from '../../guardrail/guardrail';
import type { Log } from '../../observability/logger';
import type { DeliveryContext } from '../../queue/queue';
import type { SlackReplies } from '../../slack/slack-port';
import { guardedFileNames } from './guard-file-names';
import { postPiece, type PostTarget } from './post-piece';
import type { ClaimStore } from '../stores/claim-store';
import type { FileUploader } from '../files-out/file-uploader';
import { refusedFileLine } from '../files-out/file-refusals';
import type { OutgoingFiles, ReplyFiles } from '../files-out/outgoing-files';

/** The chunk number the refused-files line carries in its metadata (real chunks count from 0, the fallback is -1). */
export const FILES_REFUSED_CHUNK = -2;

export type AnswerFilesOptions = {
  uploader: FileUploader;
  outgoing: OutgoingFiles;
  claims: ClaimStore;
  slack: SlackReplies;
  ttlSeconds: number;
  /** GUARDRAIL: the files' names through the output guardrail before Slack shows them (guard-file-names.ts). */
  guardrail?: Guardrail;
  clock?: Clock;
};

/** What a reply says of its answer's files: how many wait in OutgoingFiles, and those the settlement refused already. */

/**
 * slack-poster's step after an answer's text (docs/architecture.md, "Files the agent makes"): each
 * file the settlement left in OutgoingFiles is uploaded to the thread (FileUploader: once each,
 * whatever fails between deliveries), then one message lists the files left out and why — posted
 * once like a chunk of the reply (`reply#<request_id>#files-refused`). Files that expired before a
 * late redelivery are named as such: the user is told, never left to guess.
 */
export async function shareAnswerFiles(options: AnswerFilesOptions, reply: { request_id: string; files: ReplyFiles }, target: PostTarget, context: DeliveryContext, log: Log): Promise<{ shared: number; refused: number }> {
  const call = { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { deadline: context.deadline } : {}) };
  const named = { files: await options.outgoing.get(reply.request_id), refused: reply.files.refused ?? [] };
  const { files, refused: refusedBefore } = options.guardrail ? await guardedFileNames(options.guardrail, named.files, named.refused, { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { remainingMs: context.deadline - (options.clock ?? systemClock).now() } : {}) }) : named;
  const outcomes = await options.uploader.uploadAll({ taskKey: reply.request_id, channel: target.channel, threadTs: target.threadTs }, files, call);
  const refused: RefusedFile[] = [...refusedBefore, ...outcomes.flatMap((outcome) => (outcome.status === 'refused' ? [{ name: outcome.name, reason: outcome.reason }] : []))];
  if (files.length < reply.files.count) refused.push({ name: `${reply.files.count - files.length} file(s)`, reason: 'they were no longer kept when the reply was posted' });
  if (refused.length) {
    const text = refused.map(refusedFileLine).join('\n');
    await postPiece({ claims: options.claims, slack: options.slack, ttlSeconds: options.ttlSeconds }, target, { key: `reply#${reply.request_id}#files-refused`, marker: { requestId: reply.request_id, chunk: FILES_REFUSED_CHUNK }, text, label: 'the refused files' }, context, log);
  }
  const shared = outcomes.filter((outcome) => outcome.status === 'shared').length;
  log.info('answer files handled', { files: reply.files.count, shared, refused: refused.length, again: outcomes.filter((outcome) => outcome.again).length });
  return { shared, refused: refused.length };
}
