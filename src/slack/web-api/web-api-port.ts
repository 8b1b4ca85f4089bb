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
}
