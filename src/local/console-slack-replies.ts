import type { ReactionTarget, SlackReplies } from '../slack/slack-replies';
import { slackTs } from './slack-event-builder';

export type RecordedReply = { channel: string; threadTs: string; text: string; ts: string; at: number };

/**
 * Where replies go locally when no SLACK_BOT_TOKEN is set: printed to the terminal and kept for
 * the playground page, with the same interface as the Slack Web API adapter.
 */
export class ConsoleSlackReplies implements SlackReplies {
  readonly posted: RecordedReply[] = [];
  readonly reactions: Array<{ op: 'add' | 'remove'; name: string; timestamp: string }> = [];

  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  async post({ channel, threadTs, text }: { channel: string; threadTs: string; text: string }): Promise<{ ts: string }> {
    const reply = { channel, threadTs, text, ts: slackTs(), at: Date.now() };
    this.posted.push(reply);
    this.write(`\n💬 reply in ${channel} (thread ${threadTs}):\n${text.replace(/^/gm, '   ')}\n`);
    return { ts: reply.ts };
  }

  async addReaction(target: ReactionTarget): Promise<void> {
    this.reactions.push({ op: 'add', name: target.name, timestamp: target.timestamp });
  }

  async removeReaction(target: ReactionTarget): Promise<void> {
    this.reactions.push({ op: 'remove', name: target.name, timestamp: target.timestamp });
  }
}
