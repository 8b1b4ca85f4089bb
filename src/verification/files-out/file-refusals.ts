import type { RefusedFile } from '../../contract';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';

/**
 * The one line the thread shows for a file that was not shared (docs/architecture.md, "Files the
 * agent makes"): which file, and why, in words a person can act on. The agent's file name is
 * its text, so it is made safe to show (no mentions, no links it did not mean).
 */
export function refusedFileLine(file: RefusedFile): string {
  return `:warning: The file ${toSafeMrkdwn(`\`${file.name}\``)} was not shared: ${file.reason}.`;
}

/** What a refusal of the URL fetcher means for the user. */
export const FETCH_REFUSAL_REASONS = {
  'not-allowed': 'its address is not on the list of hosts files may come from',
  'too-large': 'it is larger than a file fetched by URL may be',
  'timed-out': 'its host did not send it in time',
  failed: 'its host did not send it',
} as const;
