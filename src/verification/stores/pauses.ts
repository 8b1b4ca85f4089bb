import type { Question } from '../../contract';
import type { PendingHandle } from '../../protocols/outcome';
import type { SlackThread } from '../queues/slack-thread';
import { STATE_KEYS } from './state-keys';

/**
 * A task paused on a question to a person (docs/architecture.md, "Questions"), as the state table
 * keeps it under `pause#<request_id>`: one record per task, the question it waits on now. Written by
 * agent-invoker and async-result when the agent asks (questions/ask-question.ts), read by
 * slack-poster to post it and by agent-invoker when someone answers. Its `state` leaves `waiting`
 * once, by a conditional write: answered, expired or stopped — whichever comes first wins, and a
 * repeat of the winning write (a redelivery, a write resent after its answer was lost) finds
 * itself by `closed_by`.
 */
export type PauseState = 'waiting' | 'answered' | 'expired' | 'stopped';

export type Pause = {
  request_id: string;
  /** Questions answered before this one in the task: 0 for the first. A button names its round, so an old one answers nothing. */
  round: number;
  state: PauseState;
  /** The user's message the task answers, and the event that asked it. */
  thread: SlackThread;
  event_id: string;
  /** Who asked the task: they may answer (as may the agent's approvers). */
  asker: string;
  /** The execution agent that paused, and its handle for `resume_task` and `cancel_task`. */
  agent: string;
  handle: PendingHandle;
  question: Question;
  /** Epoch ms the question expires (INPUT_TIMEOUT_S after it was asked). */
  expires_at_ms: number;
  /** What the task's settlement needs: when it came in, what it sent, the notes under its answer, text shown before the question. */
  received_at: number;
  input_chars?: number;
  notes?: string[];
  shown?: number;
  /** The question's message in the thread, once posted. */
  message_ts?: string;
  /** What ended the wait: the answer's queue message (its event id), the expiry, a Stop. */
  closed_by?: string;
  answer?: { value?: string; text?: string; label: string; user: string };
};

/** Each write is conditional on what the record holds now; false when another writer got there first. */
export interface Pauses {
  get(requestId: string): Promise<Pause | undefined>;
  /** Stores the pause unless the task already waits on this round or a later one; resolves with what is stored now. */
  open(pause: Pause, ttlSeconds: number): Promise<Pause>;
  /** Moves `waiting` → `to` for this round, once. */
  close(requestId: string, round: number, to: Exclude<PauseState, 'waiting'>, how: { closed_by: string; answer?: Pause['answer'] }, ttlSeconds: number): Promise<boolean>;
  /** Records where the question was posted (any state: the message is updated when the wait ends). */
  posted(requestId: string, round: number, messageTs: string): Promise<void>;
}

export function pauseKey(requestId: string): string {
  return `${STATE_KEYS.pause.prefix}${requestId}`;
}
