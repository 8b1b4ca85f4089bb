import type { WebClient } from '@slack/web-api';
import type { SlackAssistant } from '../slack-assistant';
import type { SlackConversations } from '../slack-conversations';
import type { SlackLive } from '../slack-live';
import type { SlackReplies } from '../slack-port';
import { WebApiAgent } from './agent';
import type { SlackRepliesLog } from './bounded-call';
import { WebApiConversations } from './conversations';
import { WebApiLive } from './live';
import { WebApiReplies } from './replies';
import { WebApiUploads } from './uploads';
import type { SlackUploads } from '../slack-uploads';

/** Every Slack port the pipeline uses, over one WebClient. */
export type SlackPorts = SlackReplies & SlackConversations & SlackLive & SlackAssistant & SlackUploads;

/** The methods each port contributes to the whole. */
const PORT_METHODS = {
  replies: ['post', 'findPosted', 'addReaction', 'removeReaction'],
  conversations: ['readThread', 'downloadFile'],
  live: ['setStatus', 'startStream', 'appendStream', 'stopStream', 'update'],
  agent: ['setSessionStatus', 'setSuggestedPrompts', 'postEphemeral', 'openView'],
  uploads: ['startUpload', 'sendBytes', 'share', 'isShared'],
} as const;

// The class below gets every port's methods at construction (Object.assign); this says so to the type checker.
export interface WebApiSlackReplies extends SlackPorts {
  findPosted: NonNullable<SlackPorts['findPosted']>;
}

/**
 * The four ports over one WebClient (build it with `createSlackWebClient`): replies, the thread
 * and its files, live answers, the agent surface. One object, so a function that needs several
 * is given one client.
 */
export class WebApiSlackReplies {
  constructor(client: WebClient, options: { log?: SlackRepliesLog; /** SLACK_API_URL, when not Slack's: files on its origin may be fetched too (a local fake). */ apiUrl?: string } = {}) {
    const ports = {
      replies: new WebApiReplies(client, options.log),
      conversations: new WebApiConversations(client, options),
      live: new WebApiLive(client, options.log),
      agent: new WebApiAgent(client, options.log),
      uploads: new WebApiUploads(client, options.log),
    };
    for (const [port, methods] of Object.entries(PORT_METHODS) as Array<[keyof typeof ports, readonly string[]]>) {
      const target = ports[port] as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const method of methods) Object.assign(this, { [method]: target[method]!.bind(target) });
    }
  }
}
