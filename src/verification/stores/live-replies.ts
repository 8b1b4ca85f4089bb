import type { NumberingState } from '../../guardrail/numbering';
import { STATE_KEYS } from './state-keys';

/**
 * The message a task's answer is shown in while it is produced (docs/architecture.md §2.5, "Live
 * answers"): a Slack stream, or a posted message that is updated. One record per request id, so
 * every function that shows text for the task — agent-invoker, async-result, slack-poster — finds
 * it. Every Slack call that changes the live message is claimed on the record first (an intent,
 * `pending`), so two writers never both make it: one starts the message, one appends a piece.
 */
export type LiveReply = {
  /**
   * `starting`: a writer is starting the sign of life or the live message (see `pending`), nothing
   * is recorded yet; `status`: only the thread's status (or agent session) is shown so far, no
   * message yet; `stream`: chat.startStream/appendStream; `update`: chat.postMessage then
   * chat.update; `none`: Slack refused both, or a start's outcome is unknown.
   */
  mode: 'starting' | 'status' | 'stream' | 'update' | 'none';
  channel: string;
  /** The live message; empty in modes `starting`, `status` and `none`. */
  ts: string;
  /**
   * Characters of the answer (as the agent produced it) shown so far — with `pending`, once its
   * piece is out. With an output guardrail, taken in: shown (masked), or held in `mask.held`.
   */
  shown: number;
  /**
   * The text the message shows now, as sent (modes `update` and `stream`): chat.update rewrites a
   * message whole, so a note under a stream Slack already stopped is added to this.
   */
  text?: string;
  /**
   * An append whose outcome is unknown (no answer from Slack), a preview that stopped, or the final
   * answer in: the message may not be a prefix of the answer. Previews stop; the final answer
   * rewrites it.
   */
  dirty?: boolean;
  /**
   * The sign of life was the thread's agent session (`processing`, with Slack's Stop button):
   * slack-poster moves it to `active` once the final message is out. `threadTs`: its thread.
   */
  session?: true;
  threadTs?: string;
  /**
   * An intent: the writer holding `token` is making a Slack call that changes the live message —
   * starting it (modes `starting`, `status`), or appending the piece from character `from` to
   * `shown` (modes `stream`, `update`: the record already counts the piece). Other writers leave
   * the message alone until the intent is settled or `until` (epoch ms) has passed; past it, the
   * writer is taken for dead and the piece for unknown.
   */
  pending?: LiveIntent;
  /** The output guardrail's stream, when there is one (src/verification/live/live-guard.ts). */
  mask?: LiveMask;
  /**
   * The agent's steps shown as task cards (docs/architecture.md §2.5, "Steps"): per step id what
   * its card last showed (a short print of its status, title and details; `#plan`: the plan's
   * title). A step is sent again only when that changes, so a redelivered poll or a second hold
   * never sends a card twice. Written with the intent, as a text piece is.
   */
  cards?: Record<string, string>;
  /** The cards last shown pending or in progress, id → title: a task that fails ends them as errors. */
  openCards?: Record<string, string>;
  /** Mode `update`: the steps folded to one line, shown above the text (each update keeps it). */
  stepsLine?: string;
};

/**
 * Where the preview stands with the output guardrail (docs/operations.md, "Guardrails"), for the
 * next function that shows text: `held`, the end of the text taken in that an entity could still
 * span (a word or number, or Bedrock's unfinished sentence; dropped when the final answer closes
 * the record); the placeholders handed out, as digests; windows checked; `blocked` once one was.
 */
export type LiveMask = { held: string; numbering: NumberingState; windows: number; blocked?: true };

export type LiveIntent = { token: string; from: number; until: number };

/**
 * The record's writes are conditional, and each recognises itself: a write the client sent again
 * after its answer was lost (src/aws/aws-json-client.ts resends on a 5xx or a broken connection)
 * meets its own change and succeeds, instead of looking like another writer's.
 */
export interface LiveReplies {
  get(requestId: string): Promise<LiveReply | undefined>;
  /** Stores the record unless one exists; resolves with the record that is stored now. */
  create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply>;
  /**
   * Replaces the record if its `shown` is still `from` and no intent is pending on it (`next` may
   * carry one: the writer's claim on the next Slack call); false if another writer got there first.
   */
  advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean>;
  /**
   * Replaces the record if the intent pending on it is `token`'s: its writer recording what the
   * call did, or another taking over an intent whose writer is gone. False if it is not (any more).
   */
  settle(requestId: string, token: string, next: LiveReply, ttlSeconds: number): Promise<boolean>;
}

export function liveReplyKey(requestId: string): string {
  return `${STATE_KEYS.live.prefix}${requestId}`;
}
