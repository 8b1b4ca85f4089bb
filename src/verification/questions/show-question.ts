import type { Log } from '../../observability/logger';
import type { DeliveryContext } from '../../queue/queue';
import type { MessageBlock } from '../../slack/feedback-blocks';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { SlackLive } from '../../slack/slack-live';
import type { SlackReplies } from '../../slack/slack-port';
import { fill, type UserMessages } from '../messages/user-messages';
import type { LiveReplyService } from '../live/live-reply';
import type { QuestionMessage } from '../queues/replies-queue';
import { replyThreadTs } from '../queues/slack-thread';
import type { Pause, Pauses } from '../stores/pauses';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import { closedQuestionBlocks, questionBlocks } from './question-blocks';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * slack-poster's side of a question (docs/architecture.md, "Questions"): `question` posts it in
 * the thread with its buttons — once (the post is claimed like a reply's chunk), below what the
 * agent showed before it, which stays as an interim answer (live/live-interim.ts) — shows an
 * `auth` question's link to the asker alone, and suspends the thread's agent session;
 * `question-closed` replaces the buttons with who answered what (or why it closed) and, once
 * answered, sets the session back to processing. Both read the pause: a message about a round
 * that is no longer the pause's is dropped.
 */
export type QuestionSlack = Pick<SlackReplies, 'post' | 'findPosted'> & Pick<SlackLive, 'update'> & Partial<Pick<SlackAssistant, 'postEphemeral'>>;

export type ShowQuestionParts = {
  slack: QuestionSlack;
  pauses: Pauses;
  /** Posts a message once under its claim `key` (slack-poster's post-piece.ts); resolves with its ts. */
  postOnce: (target: { channel: string; threadTs: string }, piece: { key: string; marker: { requestId: string; chunk: number }; text: string; label: string; blocks: MessageBlock[] }, context: DeliveryContext) => Promise<{ ts: string }>;
  live?: Pick<LiveReplyService, 'interim' | 'sessionStatus'>;
  messages: UserMessages;
  log: Log;
};

/** A question's post carries this chunk number in its metadata, less its round: never a reply chunk's (0 and up) nor the fallback's (-1). */
const QUESTION_CHUNK = -100;

export async function showQuestion(p: ShowQuestionParts, message: QuestionMessage, context: DeliveryContext): Promise<void> {
  const pause = await p.pauses.get(message.request_id);
  if (!pause || pause.round !== message.round) {
    p.log.info('a question message names a round its task no longer waits on; dropped', { request_id: message.request_id, round: message.round });
    return;
  }
  if (message.kind === 'question') return postQuestion(p, pause, context);
  return closeQuestion(p, pause, context);
}

async function postQuestion(p: ShowQuestionParts, pause: Pause, context: DeliveryContext): Promise<void> {
  const call = callOf(context);
  const session = p.live ? (await p.live.interim(pause.request_id, call)).session : false;
  const threadTs = replyThreadTs(pause.thread);
  const blocks = questionBlocks(pause.question, { requestId: pause.request_id, round: pause.round }, { typeAnswer: p.messages.questionTypeAnswer, signedIn: p.messages.questionSignedIn });
  const { ts } = await p.postOnce(
    { channel: pause.thread.channel, threadTs },
    { key: `${STATE_KEYS.question.prefix}${pause.request_id}#${pause.round}`, marker: { requestId: pause.request_id, chunk: QUESTION_CHUNK - pause.round }, text: pause.question.text, label: 'the question', blocks },
    context,
  );
  if (ts) await p.pauses.posted(pause.request_id, pause.round, ts);
  // Only the asker sees where to sign in (an `auth` question's link never goes in the thread).
  if (pause.question.kind === 'auth' && pause.question.auth_url && p.slack.postEphemeral) {
    await p.slack.postEphemeral({ channel: pause.thread.channel, user: pause.asker, text: fill(p.messages.questionSignIn, { url: pause.question.auth_url }), threadTs }, call);
  }
  if (session) await p.live?.sessionStatus(pause.request_id, 'suspended', call);
  p.log.info('question posted', { request_id: pause.request_id, round: pause.round, ts, session_suspended: session });
  // Answered or closed while it was being posted: the closing update may have found no message yet.
  const now = await p.pauses.get(pause.request_id);
  if (now && now.round === pause.round && now.state !== 'waiting') await closeQuestion(p, { ...now, message_ts: now.message_ts ?? ts }, context);
}

async function closeQuestion(p: ShowQuestionParts, pause: Pause, context: DeliveryContext): Promise<void> {
  const call = callOf(context);
  if (pause.state === 'waiting') return;
  if (pause.message_ts) {
    const note = noteOf(p.messages, pause);
    await p.slack.update({ channel: pause.thread.channel, ts: pause.message_ts }, `${pause.question.text}\n${note}`, { ...call, blocks: closedQuestionBlocks(pause.question, note) });
  } else p.log.info('the question closed before its message was posted; the post updates it', { request_id: pause.request_id, state: pause.state });
  if (pause.state === 'answered') await p.live?.sessionStatus(pause.request_id, 'processing', call);
}

/** What a closed question shows under it. */
function noteOf(messages: UserMessages, pause: Pause): string {
  switch (pause.state) {
    case 'answered':
      return fill(messages.questionAnswered, { answer: `*${toSafeMrkdwn(pause.answer?.label ?? '')}*`, user: pause.answer?.user ?? '' });
    case 'expired':
      return messages.questionExpired;
    default:
      return messages.questionStopped;
  }
}

function callOf(context: DeliveryContext): { signal?: AbortSignal; deadline?: number } {
  return { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { deadline: context.deadline } : {}) };
}
