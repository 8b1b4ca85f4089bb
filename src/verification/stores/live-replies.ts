/**
 * The message a task's answer is shown in while it is produced (docs/architecture.md §2.5, "Live
 * answers"): a Slack stream, or a posted message that is updated. One record per request id, so
 * every function that shows text for the task — agent-invoker, async-result, slack-poster — finds
 * it, and an append is applied once: `shown` moves only from the value the writer read.
 */
export type LiveReply = {
  /**
   * `status`: only the thread's status is shown so far (no message yet); `stream`:
   * chat.startStream/appendStream; `update`: chat.postMessage then chat.update; `none`: Slack
   * refused both.
   */
  mode: 'status' | 'stream' | 'update' | 'none';
  channel: string;
  /** The live message; empty in mode `none`. */
  ts: string;
  /** Characters of the answer (as the agent produced it) shown so far. */
  shown: number;
  /**
   * The text the message shows now, as sent (modes `update` and `stream`): chat.update rewrites a
   * message whole, so a note under a stream Slack already stopped is added to this.
   */
  text?: string;
  /**
   * An append whose outcome is unknown (no answer from Slack), or a preview that stopped: the
   * message may not be a prefix of the answer. Previews stop; the final answer rewrites it.
   */
  dirty?: boolean;
  /**
   * The sign of life was the thread's agent session (`processing`, with Slack's Stop button):
   * slack-poster moves it to `active` once the final message is out. `threadTs`: its thread.
   */
  session?: true;
  threadTs?: string;
};

export interface LiveReplies {
  get(requestId: string): Promise<LiveReply | undefined>;
  /** Stores the record unless one exists; resolves with the record that is stored now. */
  create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply>;
  /** Replaces the record if its `shown` is still `from`; false if another writer moved it. */
  advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean>;
}

export function liveReplyKey(requestId: string): string {
  return `live#${requestId}`;
}
