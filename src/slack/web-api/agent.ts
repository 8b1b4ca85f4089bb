import type { WebClient } from '@slack/web-api';
import type { AgentSession, AgentSessionStatus, SlackAssistant, SuggestedPrompt } from '../slack-assistant';
import type { SlackCallOptions } from '../slack-port';
import { WebApiPort } from './web-api-port';

/** Slack refuses more suggested prompts than this. */
const MAX_PROMPTS = 4;
/** Slack's limit on a session title. */
const MAX_TITLE = 200;

/** SlackAssistant over a WebClient: agent sessions, suggested prompts, ephemeral messages, modals. */
export class WebApiAgent extends WebApiPort implements SlackAssistant {
  async setSessionStatus(session: AgentSession & { status: AgentSessionStatus; title?: string; initiatorUserId?: string }, options: SlackCallOptions = {}): Promise<void> {
    const title = session.title ? { title: sessionTitle(session.title) } : {};
    const initiator = session.initiatorUserId ? { initiator_user_id: session.initiatorUserId } : {};
    const args = { channel_id: session.channel, thread_ts: session.threadTs, status: session.status, ...title, ...initiator };
    // The same status twice is the same status: safe to try again after no answer.
    await this.call('agents.sessions.setStatus', () => this.client.agents.sessions.setStatus(args), options, { afterNoAnswer: true });
  }

  async setSuggestedPrompts(target: { channel: string; prompts: readonly SuggestedPrompt[]; title?: string }, options: SlackCallOptions = {}): Promise<void> {
    // Agent apps omit thread_ts: with it, Slack drops the prompts without an error. The SDK's type
    // still asks for it (from the legacy assistant view), hence the cast.
    const prompts = target.prompts.slice(0, MAX_PROMPTS).map((prompt) => ({ title: prompt.title, message: prompt.message }));
    const args = { channel_id: target.channel, prompts, ...(target.title ? { title: target.title } : {}) } as Parameters<WebClient['assistant']['threads']['setSuggestedPrompts']>[0];
    await this.call('assistant.threads.setSuggestedPrompts', () => this.client.assistant.threads.setSuggestedPrompts(args), options, { afterNoAnswer: true });
  }

  async postEphemeral(message: { channel: string; user: string; text: string; threadTs?: string }, options: SlackCallOptions = {}): Promise<void> {
    await this.call('chat.postEphemeral', () => this.client.chat.postEphemeral({ channel: message.channel, user: message.user, text: message.text, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) }), options);
  }

  async openView(view: { triggerId: string; view: Record<string, unknown> }, options: SlackCallOptions = {}): Promise<void> {
    await this.call('views.open', () => this.client.views.open({ trigger_id: view.triggerId, view: view.view as unknown as Parameters<WebClient['views']['open']>[0]['view'] }), options);
  }
}

/** A session title from the question: one line, at most Slack's 200 characters. */
export function sessionTitle(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_TITLE ? line : `${line.slice(0, MAX_TITLE - 1)}…`;
}
