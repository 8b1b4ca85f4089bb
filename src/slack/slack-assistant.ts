/*
 * The port for Slack's agent surface (docs/architecture.md §2.6): agent sessions with their
 * status and Stop button, suggested prompts, ephemeral answers to one user, and modals. Types
 * only, free of @slack/web-api: the pipeline depends on this; the Web API adapter
 * (src/slack/web-api/) and the local console (src/local) implement it.
 *
 * Every method rejects with a SlackApiError carrying Slack's code.
 */
import type { SlackCallOptions } from './slack-port';

/** A prompt offered to the user: `title` on the button, `message` what it sends. */
export type SuggestedPrompt = { title: string; message: string };

/** `agents.sessions.setStatus`: Slack shows a Stop button while a session is `processing`. */
export type AgentSessionStatus = 'processing' | 'active' | 'suspended' | 'closed';

export type AgentSession = {
  channel: string;
  /** The thread's root: one session per thread. */
  threadTs: string;
};

/** A Slack call the pipeline asks slack-poster to make for the intake (they go through the replies queue). */
export type SlackAction =
  /** `assistant.threads.setSuggestedPrompts` in the agent's DM, without a thread (agent apps must omit it). */
  | { type: 'set-prompts'; channel: string; prompts: SuggestedPrompt[]; title?: string }
  /** `chat.postEphemeral`: seen by `user` alone. */
  | { type: 'ephemeral'; channel: string; user: string; text: string; thread_ts?: string }
  /** `views.open` with an interaction's `trigger_id` (valid 3 s). */
  | { type: 'open-view'; trigger_id: string; view: Record<string, unknown> };

export interface SlackAssistant {
  /**
   * `agents.sessions.setStatus`. A session is created by its first call: `title` (≤ 200 characters)
   * and `initiatorUserId` are used only then. Idempotent: tried again after no answer.
   */
  setSessionStatus(session: AgentSession & { status: AgentSessionStatus; title?: string; initiatorUserId?: string }, options?: SlackCallOptions): Promise<void>;
  /** `assistant.threads.setSuggestedPrompts` (at most 4). */
  setSuggestedPrompts(target: { channel: string; prompts: readonly SuggestedPrompt[]; title?: string }, options?: SlackCallOptions): Promise<void>;
  /** `chat.postEphemeral`. */
  postEphemeral(message: { channel: string; user: string; text: string; threadTs?: string }, options?: SlackCallOptions): Promise<void>;
  /** `views.open`. Slack answers `expired_trigger_id` after 3 s. */
  openView(view: { triggerId: string; view: Record<string, unknown> }, options?: SlackCallOptions): Promise<void>;
}
