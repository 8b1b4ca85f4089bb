import * as z from '../../config/zod-mini';
import { ConfigError } from '../../config/env';
import type { SuggestedPrompt } from '../../slack/slack-assistant';

/** AGENT_PROMPTS_JSON: the suggested prompts shown when the agent's DM opens, and when the user looks at a channel. */
export type PromptSettings = {
  /** Up to 4, when the user opens the agent's messages tab. */
  home: SuggestedPrompt[];
  /** Up to 4, when the user looks at a channel; `{channel}` in a message becomes a link to it. */
  channel: SuggestedPrompt[];
  /** Shown above the prompts. */
  title?: string;
};

/**
 * The suggested prompts the agent offers (docs/architecture.md §2.6): when the user opens its DM
 * (`home`), and when they look at a channel while its window is open (`channel`; `{channel}` in a
 * message becomes a link to that channel). AGENT_PROMPTS_JSON replaces any part; Slack shows 4 at
 * most. `{"home": [], "channel": []}` offers none.
 */
export const DEFAULT_AGENT_PROMPTS: PromptSettings = {
  title: 'Try one of these',
  home: [
    { title: 'What can you do?', message: 'What can you help me with, and what should I not ask you?' },
    { title: 'Summarize a file', message: 'Summarize the file I am sharing in three bullet points.' },
    { title: 'Draft a message', message: 'Help me draft a short, friendly message to my team about ' },
  ],
  channel: [
    { title: 'Summarize this channel', message: 'Summarize what is being discussed in {channel}.' },
    { title: 'Draft a reply', message: 'Help me draft a reply for {channel} about ' },
  ],
};

const PromptSchema = z.object({ title: z.string().check(z.minLength(1), z.maxLength(75)), message: z.string().check(z.minLength(1), z.maxLength(4000)) });
const PromptsSchema = z.object({
  title: z.optional(z.string().check(z.maxLength(150))),
  home: z.optional(z.array(PromptSchema).check(z.maxLength(4))),
  channel: z.optional(z.array(PromptSchema).check(z.maxLength(4))),
});

/** The prompts with AGENT_PROMPTS_JSON applied; a malformed value is a clear configuration error. */
export function agentPromptsOf(json: string | undefined): PromptSettings {
  if (!json) return DEFAULT_AGENT_PROMPTS;
  let parsed: z.infer<typeof PromptsSchema>;
  try {
    parsed = PromptsSchema.parse(JSON.parse(json));
  } catch (error) {
    throw new ConfigError(`AGENT_PROMPTS_JSON is not valid: expected {"title"?, "home"?: [{"title","message"}…] (4 at most), "channel"?: […]} (${(error as Error).message.slice(0, 300)})`);
  }
  const title = parsed.title ?? DEFAULT_AGENT_PROMPTS.title;
  return { ...(title ? { title } : {}), home: parsed.home ?? DEFAULT_AGENT_PROMPTS.home, channel: parsed.channel ?? DEFAULT_AGENT_PROMPTS.channel };
}
