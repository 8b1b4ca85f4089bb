import type { Log } from '../../observability/logger';
import type { DeliveryContext } from '../../queue/queue';
import type { MessageBlock } from '../../slack/feedback-blocks';
import { SlackApiError } from '../../slack/slack-api-error';
import type { ReplyMarker, SlackPersona, SlackReplies } from '../../slack/slack-port';
import { REPLY_CHUNK_LEASE_SECONDS } from '../pipeline-settings';
import type { ClaimStore } from '../stores/claim-store';
import { once } from '../stores/once';

/** Another delivery of the same reply holds this chunk's claim: come back later (SQS redelivers). */
export class ChunkInProgressError extends Error {
  override name = 'ChunkInProgressError';
}

/** Where a reply goes, and who it is posted as (the answering agent's name and icon). */
export type PostTarget = { channel: string; threadTs: string; persona?: SlackPersona };
/** One message of a reply: its claim key, its metadata marker, its text. */
export type Piece = { key: string; marker: ReplyMarker; text: string; label: string; blocks?: MessageBlock[] };

/** What posting a piece needs: the claims, Slack, and how long a done piece is remembered. */
export type PieceSink = { claims: ClaimStore; slack: Pick<SlackReplies, 'post' | 'findPosted'>; ttlSeconds: number };

/**
 * Posts one message of a reply exactly once across deliveries (`once`, src/verification/stores/once.ts):
 * claimed before it is posted, marked done with Slack's `ts` once Slack confirmed it; `posted: false`
 * when an earlier delivery already did. A post Slack may have made without answering keeps its
 * claim's lease (the redelivery after the lease looks before posting again); a refused one gives
 * the claim back. `finishLive` (the first chunk of a reply shown live) puts the text into the live
 * message instead of posting a new one, when Slack takes it there.
 */
export async function postPiece(sink: PieceSink, target: PostTarget, piece: Piece, context: DeliveryContext, log: Log, finishLive?: () => Promise<string | undefined>): Promise<{ ts: string; posted: boolean }> {
  // Out of time (the Lambda is about to stop): leave the rest for the redelivery.
  context.signal?.throwIfAborted();
  const outcome = await once(sink.claims, piece.key, { leaseSeconds: REPLY_CHUNK_LEASE_SECONDS, ttlSeconds: sink.ttlSeconds, mayHaveHappened: isUnknownOutcome }, async (claim) => {
    const live = finishLive ? await finishedLive(finishLive, log) : undefined;
    if (live !== undefined) return { result: { ts: live, posted: true }, value: live };
    if (claim.takenOver) {
      // The poster before may have died after Slack posted it: look before posting again.
      const found = await findPosted(sink.slack, target, piece.marker, context, log);
      log.warn('took over a chunk whose poster did not finish', { chunk: piece.marker.chunk, already_posted: found !== undefined });
      if (found !== undefined) return { result: { ts: found, posted: false }, value: found };
    }
    const { ts } = await sink.slack.post({ ...target, text: piece.text, marker: piece.marker, ...(piece.blocks ? { blocks: piece.blocks } : {}) }, context);
    return { result: { ts, posted: true }, value: ts };
  });
  if (outcome.status === 'duplicate') return { ts: outcome.value ?? '', posted: false };
  if (outcome.status === 'busy') throw new ChunkInProgressError(`${piece.label} is being posted by another delivery until ${new Date(outcome.leaseEndsAt).toISOString()}`);
  if (!outcome.kept) log.error('a chunk was posted but could not be marked done; a redelivery may post it again', { chunk: piece.marker.chunk, ts: outcome.result.ts, ...(outcome.keepError ? { error: outcome.keepError as Error } : {}) });
  return outcome.result;
}

/** The live message finished with the text (its ts), or undefined when Slack will not take it there for good (a new message then). */
async function finishedLive(finishLive: () => Promise<string | undefined>, log: Log): Promise<string | undefined> {
  try {
    return await finishLive();
  } catch (error) {
    const refusedForGood = error instanceof SlackApiError && error.outcome === 'refused' && !error.retryable;
    if (!refusedForGood) throw error;
    // Deleted, not editable: the answer goes out as a new message.
    log.warn('could not finish the live message; posting the answer as a new message', { code: error.code });
    return undefined;
  }
}

/** No answer from Slack: the call may have landed. */
function isUnknownOutcome(error: unknown): boolean {
  return error instanceof SlackApiError && error.outcome === 'unknown';
}

/** The chunk's message in the thread, if the sink can look; a failed look is a WARN and counts as "not there". */
async function findPosted(slack: Pick<SlackReplies, 'findPosted'>, thread: { channel: string; threadTs: string }, marker: ReplyMarker, context: DeliveryContext, log: Log): Promise<string | undefined> {
  if (!slack.findPosted) return undefined;
  try {
    return await slack.findPosted(thread, marker, context);
  } catch (error) {
    const code = error instanceof SlackApiError ? error.code : 'unknown_error';
    // missing_scope: an install without the *:history scopes. Posting again is the old behaviour.
    log.warn('could not read the thread back to see whether the chunk is already out; posting it', { chunk: marker.chunk, code });
    return undefined;
  }
}

