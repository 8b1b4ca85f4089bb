import type { WebClient } from '@slack/web-api';
import type { SlackCallOptions } from '../slack-port';
import { boundedCall, type CallRetry, type SlackRepliesLog } from './bounded-call';

/**
 * What every port over the Web API shares: the client, the log for the SDK's and our warnings,
 * and `call` — one Slack method within the caller's bounds (`boundedCall`).
 */
export abstract class WebApiPort {
  constructor(
    protected readonly client: WebClient,
    protected readonly log?: SlackRepliesLog,
  ) {}

  protected call<T>(method: string, run: () => Promise<T>, options: SlackCallOptions, retry?: CallRetry): Promise<T> {
    return boundedCall(method, run, options, this.log, retry);
  }

  /** Who this token posts as (`auth.test`), asked once: only its own messages count as its posts. */
  private self: Promise<{ userId?: string; botId?: string }> | undefined;

  /**
   * A test for "this token posted it" (by user or bot id), for a port that reads a thread back:
   * another app in the channel can copy our metadata onto a message of its own.
   */
  protected async oursTest(options: SlackCallOptions): Promise<(message: { user?: string; bot_id?: string }) => boolean> {
    this.self ??= this.call('auth.test', () => this.client.auth.test(), options, { afterServerError: true }).then(
      (answer) => ({ ...(answer.user_id ? { userId: answer.user_id } : {}), ...(answer.bot_id ? { botId: answer.bot_id } : {}) }),
      (error: unknown) => {
        this.self = undefined;
        throw error;
      },
    );
    const self = await this.self;
    return (message) => (self.userId !== undefined && message.user === self.userId) || (self.botId !== undefined && message.bot_id === self.botId);
  }
}
