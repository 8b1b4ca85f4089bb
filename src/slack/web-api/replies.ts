import { REPLY_METADATA_TYPE } from '../reply-metadata';
import type { ReactionTarget, ReplyMarker, SlackCallOptions, SlackPersona, SlackReplies } from '../slack-port';
import type { MessageBlock } from '../feedback-blocks';
import { WebApiPort } from './web-api-port';
import { toSlackApiError } from './slack-errors';

/** Reactions are decoration: these mean "already as asked" or "nothing left to decorate". */
const IGNORED_REACTION_ERRORS = new Set(['already_reacted', 'no_reaction', 'message_not_found']);
/** A reply's chunks are among the thread's latest messages: a bounded look. */
const FIND_POSTED_MAX_PAGES = 5;

/** SlackReplies over a WebClient: posts in a thread, finding a post again, reactions. */
export class WebApiReplies extends WebApiPort implements SlackReplies {
  async post({ channel, threadTs, text, marker, blocks, persona }: { channel: string; threadTs: string; text: string; marker?: ReplyMarker; blocks?: readonly MessageBlock[]; persona?: SlackPersona }, options: SlackCallOptions = {}): Promise<{ ts: string }> {
    const result = await this.call(
      'chat.postMessage',
      () =>
        this.client.chat.postMessage({
          channel,
          thread_ts: threadTs,
          text,
          // An answer full of links would otherwise be followed by previews the user did not ask for.
          unfurl_links: false,
          unfurl_media: false,
          mrkdwn: true,
          ...(marker ? { metadata: replyMetadata(marker) } : {}),
          ...(blocks?.length ? { blocks: withTextSection(text, blocks) } : {}),
          ...personaArguments(persona),
        }),
      options,
      // Never repeated after no answer or a server error: it may have landed. The poster keeps the
      // chunk's claim and the next delivery looks for it by its metadata (findPosted).
    );
    return { ts: result.ts ?? '' };
  }

  async findPosted(thread: { channel: string; threadTs: string }, marker: ReplyMarker, options: SlackCallOptions = {}): Promise<string | undefined> {
    // Another app in the channel can read our reply metadata and copy it onto a message of its own:
    // only a message this token posted is ours (else a look-alike would keep the real chunk from being posted).
    const ours = await this.oursTest(options);
    let cursor: string | undefined;
    for (let page = 0; page < FIND_POSTED_MAX_PAGES; page += 1) {
      const result = await this.call(
        'conversations.replies',
        () => this.client.conversations.replies({ channel: thread.channel, ts: thread.threadTs, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) }),
        options,
        // A read: safe to repeat after a server error (after no answer, the time is better left to the caller).
        { afterServerError: true },
      );
      for (const message of result.messages ?? []) {
        const metadata = (message as { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }).metadata;
        if (metadata?.event_type === REPLY_METADATA_TYPE && metadata.event_payload?.request_id === marker.requestId && Number(metadata.event_payload.chunk) === marker.chunk && ours(message)) {
          return message.ts;
        }
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return undefined;
    }
    return undefined;
  }

  async addReaction(reaction: ReactionTarget): Promise<void> {
    await this.react('reactions.add', reaction, () => this.client.reactions.add(reaction));
  }

  async removeReaction(reaction: ReactionTarget): Promise<void> {
    await this.react('reactions.remove', reaction, () => this.client.reactions.remove(reaction));
  }

  private async react(method: string, reaction: ReactionTarget, call: () => Promise<unknown>): Promise<void> {
    try {
      // Safe to repeat after a server error: an add or a remove that landed is answered
      // already_reacted / no_reaction, ignored below.
      await this.call(method, call, {}, { afterServerError: true });
    } catch (error) {
      const failure = toSlackApiError(error, method);
      if (!IGNORED_REACTION_ERRORS.has(failure.code)) throw failure;
      this.log?.info('reaction left as it is', { method, reaction: reaction.name, code: failure.code });
    }
  }
}

/** The metadata that marks a reply chunk (`findPosted` looks for it). */
export function replyMetadata(marker: ReplyMarker): { event_type: string; event_payload: { request_id: string; chunk: number } } {
  return { event_type: REPLY_METADATA_TYPE, event_payload: { request_id: marker.requestId, chunk: marker.chunk } };
}

/**
 * With `blocks`, Slack shows the blocks and not `text`: the text goes first, as a markdown block
 * (mrkdwn as posted, up to 12,000 characters), then the blocks (the feedback buttons).
 */
export function withTextSection(text: string, blocks: readonly MessageBlock[]): MessageBlock[] {
  return [{ type: 'markdown', text }, ...blocks];
}

/** `username` / `icon_emoji` of a persona (chat.postMessage and chat.startStream take both). */
export function personaArguments(persona: SlackPersona | undefined): { username?: string; icon_emoji?: string } {
  return { ...(persona?.username ? { username: persona.username } : {}), ...(persona?.iconEmoji ? { icon_emoji: persona.iconEmoji } : {}) };
}
