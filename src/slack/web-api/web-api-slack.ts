import type { WebClient } from '@slack/web-api';
import type { SlackAgent } from '../slack-agent';
import type { SlackConversations } from '../slack-conversations';
import type { SlackLive } from '../slack-live';
import type { SlackReplies } from '../slack-port';
import { WebApiAgent } from './agent';
import type { SlackRepliesLog } from './bounded-call';
import { WebApiConversations } from './conversations';
import { WebApiLive } from './live';
import { WebApiReplies } from './replies';

/** Every Slack port the pipeline uses, over one WebClient. */
export type SlackPorts = SlackReplies & SlackConversations & SlackLive & SlackAgent;

/**
 * The four ports over one WebClient (build it with `createSlackWebClient`): replies, the thread
 * and its files, live answers, the agent surface. One object, so a function that needs several
 * is given one client.
 */
export class WebApiSlackReplies implements SlackPorts {
  private readonly replies: WebApiReplies;
  private readonly conversations: WebApiConversations;
  private readonly live: WebApiLive;
  private readonly agent: WebApiAgent;

  constructor(client: WebClient, options: { log?: SlackRepliesLog; /** SLACK_API_URL, when not Slack's: files on its origin may be fetched too (a local fake). */ apiUrl?: string } = {}) {
    this.replies = new WebApiReplies(client, options.log);
    this.conversations = new WebApiConversations(client, options);
    this.live = new WebApiLive(client, options.log);
    this.agent = new WebApiAgent(client, options.log);
  }

  post: SlackPorts['post'] = (...args) => this.replies.post(...args);
  findPosted: NonNullable<SlackPorts['findPosted']> = (...args) => this.replies.findPosted(...args);
  addReaction: SlackPorts['addReaction'] = (...args) => this.replies.addReaction(...args);
  removeReaction: SlackPorts['removeReaction'] = (...args) => this.replies.removeReaction(...args);
  readThread: SlackPorts['readThread'] = (...args) => this.conversations.readThread(...args);
  downloadFile: SlackPorts['downloadFile'] = (...args) => this.conversations.downloadFile(...args);
  setStatus: SlackPorts['setStatus'] = (...args) => this.live.setStatus(...args);
  startStream: SlackPorts['startStream'] = (...args) => this.live.startStream(...args);
  appendStream: SlackPorts['appendStream'] = (...args) => this.live.appendStream(...args);
  stopStream: SlackPorts['stopStream'] = (...args) => this.live.stopStream(...args);
  update: SlackPorts['update'] = (...args) => this.live.update(...args);
  setSessionStatus: SlackPorts['setSessionStatus'] = (...args) => this.agent.setSessionStatus(...args);
  setSuggestedPrompts: SlackPorts['setSuggestedPrompts'] = (...args) => this.agent.setSuggestedPrompts(...args);
  postEphemeral: SlackPorts['postEphemeral'] = (...args) => this.agent.postEphemeral(...args);
  openView: SlackPorts['openView'] = (...args) => this.agent.openView(...args);
}
