import type { IncomingMessage, ServerResponse } from 'node:http';
import { systemClock } from '../clock';
import { readBody } from '../execution/hosts/http-host';
import { encodeFeedbackValue, feedbackFormAnswer, type FeedbackValue } from '../slack/feedback-blocks';
import { listFeedback, type FeedbackRecord } from '../verification/surface/feedback-records';
import { replyThreadTs } from '../verification/queues/slack-thread';
import type { ConsoleSlackReplies, LocalSession, LocalSurfaceEvent, RecordedReply } from './console-slack-replies';
import type { LocalPipeline } from './local-pipeline';
import { sendJson } from './server-lifecycle';
import { agentSessionStoppedEnvelope, appHomeOpenedEnvelope, postSignedEvent } from './slack-event-builder';
import { buttonClickPayload, feedbackClickPayload, feedbackFormSubmission, localTriggerId, postSignedInteraction } from './slack-interaction-builder';
import { decodeQuestionRef } from '../verification/questions/question-blocks';
import type { TraceRecorder } from './trace-recorder';

/**
 * The agent surface of the local stack (docs/architecture.md §2.6), as a person in Slack works
 * it: press Stop on a thread's agent session, open the agent's DM (its suggested prompts come
 * back), click 👍 / 👎 under an answer and fill in the "what went wrong" form. Each is signed as
 * Slack signs it and posted to the real ingress, so the whole pipeline handles it. It also
 * follows each Stop to what it did (`zone say --stop`), and lists the feedback recorded
 * (`zone feedback`).
 */

/** What a Stop did: still on the tasks queue, stopped a task in its thread, or found nothing working there. */
export type LocalStop = {
  event_id: string;
  channel: string;
  thread_ts: string;
  state: 'queued' | 'stopped' | 'nothing-running';
  /** The task it stopped: its request id, the event that asked for it, how it is cancelled. */
  request_id?: string;
  task_event_id?: string;
  cancels?: string;
};

/** A request the playground or `zone say` may get wrong (unknown message, no such form): HTTP 400. */
export class LocalRequestError extends Error {}

/** Stops remembered at most; the oldest goes first. */
const MAX_STOPS = 500;

export type LocalAgentSurface = ReturnType<typeof createLocalAgentSurface>;

export function createLocalAgentSurface(deps: { ingressUrl: () => string; signingSecret: string; botUserId?: string; consoleReplies?: ConsoleSlackReplies; pipeline: LocalPipeline; traces: TraceRecorder }) {
  const { consoleReplies, pipeline, traces } = deps;
  const stops = followStops(pipeline, traces);
  const workspace = (): ConsoleSlackReplies => {
    if (!consoleReplies) throw new LocalRequestError('the agent surface can be used locally only while replies go to the terminal (no SLACK_BOT_TOKEN)');
    return consoleReplies;
  };

  /** Presses Stop on the agent session of the thread `threadTs` (a signed agent_session_stopped). */
  async function stopSession(threadTs: string, options: { channel?: string } = {}): Promise<{ status: number; eventId: string }> {
    const { body, eventId } = agentSessionStoppedEnvelope({ threadTs, ...(options.channel ? { channel: options.channel } : {}), ...(deps.botUserId ? { botUserId: deps.botUserId } : {}) });
    const answer = await postSignedEvent(deps.ingressUrl(), body, deps.signingSecret);
    return { status: answer.status, eventId };
  }

  /** Opens the agent's DM (a signed app_home_opened, messages tab): its suggested prompts come back as a `prompts` surface event. */
  async function openAgentDm(): Promise<{ status: number; eventId: string }> {
    const { body, eventId } = appHomeOpenedEnvelope(deps.botUserId ? { botUserId: deps.botUserId } : {});
    const answer = await postSignedEvent(deps.ingressUrl(), body, deps.signingSecret);
    return { status: answer.status, eventId };
  }

  /**
   * Clicks 👍 or 👎 under the answer `messageTs` (a signed block_actions carrying that button's
   * value). `at`: when it was sent; what the app shows in answer comes after it.
   */
  async function clickFeedback(messageTs: string, rating: FeedbackValue): Promise<{ status: number; triggerId: string; at: number }> {
    const reply = workspace().posted.find((candidate) => candidate.ts === messageTs && candidate.feedback);
    if (!reply?.feedback) throw new LocalRequestError(`no answer with feedback buttons has ts ${messageTs}`);
    const triggerId = localTriggerId();
    const payload = feedbackClickPayload({ value: encodeFeedbackValue({ rating, ...reply.feedback }), channel: reply.channel, messageTs, threadTs: reply.threadTs, triggerId });
    const at = systemClock.now();
    const answer = await postSignedInteraction(deps.ingressUrl(), payload, deps.signingSecret);
    return { status: answer.status, triggerId, at };
  }

  /**
   * Clicks a button of the message `messageTs` (a question's option, or "Type an answer": a signed
   * block_actions with that button's value, as the local user); resolves with the click's trigger,
   * which a form the app opens for it carries.
   */
  async function clickButton(messageTs: string, actionId: string, options: { userId?: string } = {}): Promise<{ status: number; triggerId: string; at: number }> {
    const reply = workspace().posted.find((candidate) => candidate.ts === messageTs);
    const button = reply?.buttons?.find((candidate) => candidate.actionId === actionId);
    if (!reply || !button) throw new LocalRequestError(`no message with ts ${messageTs} has a button ${actionId}`);
    const triggerId = localTriggerId();
    const payload = buttonClickPayload({ actionId, value: button.value, channel: reply.channel, messageTs, threadTs: reply.threadTs, triggerId, ...(options.userId ? { userId: options.userId } : {}) });
    const at = systemClock.now();
    const answer = await postSignedInteraction(deps.ingressUrl(), payload, deps.signingSecret);
    return { status: answer.status, triggerId, at };
  }

  /** Submits the form the app opened for `triggerId` (a signed view_submission) with `text`. */
  async function submitFeedbackForm(triggerId: string, text: string): Promise<{ status: number; at: number }> {
    const opened = workspace().surface.find((event): event is Extract<LocalSurfaceEvent, { type: 'view' }> => event.type === 'view' && event.triggerId === triggerId);
    if (!opened) throw new LocalRequestError('no form was opened for that trigger');
    const at = systemClock.now();
    const answer = await postSignedInteraction(deps.ingressUrl(), feedbackFormSubmission({ view: opened.view, text }), deps.signingSecret);
    return { status: answer.status, at };
  }

  /** The playground's POSTs for the agent surface: path → what it does with the JSON body. */
  const actions: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    '/api/stop': async (body) => {
      const sent = await stopSession(required(body.thread_ts, 'thread_ts'), typeof body.channel === 'string' && body.channel ? { channel: body.channel } : {});
      return { status: sent.status, event_id: sent.eventId };
    },
    '/api/open': async () => {
      const sent = await openAgentDm();
      return { status: sent.status, event_id: sent.eventId };
    },
    '/api/feedback/click': async (body) => {
      if (body.value !== 'positive' && body.value !== 'negative') throw new LocalRequestError('value must be positive or negative');
      const sent = await clickFeedback(required(body.message_ts, 'message_ts'), body.value);
      return { status: sent.status, trigger_id: sent.triggerId, at: sent.at };
    },
    '/api/feedback/form': (body) => submitFeedbackForm(required(body.trigger_id, 'trigger_id'), required(body.text, 'text')),
    // A question's button (docs/architecture.md, "Questions"); its answer form is submitted as the feedback form is.
    '/api/button/click': async (body) => {
      const sent = await clickButton(required(body.message_ts, 'message_ts'), required(body.action_id, 'action_id'));
      return { status: sent.status, trigger_id: sent.triggerId, at: sent.at };
    },
  };

  return {
    /** Each Stop the tasks queue took, by its event id, and what it did. */
    stops,
    stopSession,
    openAgentDm,
    clickFeedback,
    clickButton,
    submitFeedbackForm,
    /** The feedback recorded, newest first. */
    feedback: (): Promise<FeedbackRecord[]> => listFeedback(pipeline.records),

    /** What a request's thread shows of the agent surface: its session, and what only the user sees there since `since`. */
    threadSurface(thread: { channel?: string; threadTs?: string; since: number; replies: readonly RecordedReply[] }): { session?: LocalSession; surface?: LocalSurfaceEvent[] } {
      if (!consoleReplies || !thread.channel || !thread.threadTs) return {};
      const session = consoleReplies.session(thread.channel, thread.threadTs);
      const answers = new Set(thread.replies.map((reply) => reply.ts));
      const requests = new Set(thread.replies.flatMap((reply) => (reply.requestId ? [reply.requestId] : [])));
      const surface = consoleReplies.surface.filter((event) => {
        if (event.at < thread.since) return false;
        if (event.type === 'ephemeral') return event.channel === thread.channel && event.threadTs === thread.threadTs;
        // A form opened about one of this request's answers, or to answer one of its questions.
        if (event.type !== 'view') return false;
        const metadata = String(event.view.private_metadata ?? '');
        return (answers.has(feedbackFormAnswer(metadata)?.messageTs ?? '') || requests.has(decodeQuestionRef(metadata)?.requestId ?? ''));
      });
      return { ...(session ? { session } : {}), surface };
    },

    /**
     * The routes of the agent surface, asked after the playground's origin checks; false when the
     * request is not one of them.
     */
    async route(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
      try {
        if (req.method === 'GET' && pathname === '/api/feedback') {
          // People's words about answers: for this machine alone, whatever address the stack listens on.
          if (isLoopback(req.socket.remoteAddress)) sendJson(res, 200, { feedback: await listFeedback(pipeline.records) });
          else sendJson(res, 403, { error: 'feedback is served to this machine only' });
          return true;
        }
        if (req.method === 'GET' && pathname.startsWith('/api/stops/')) {
          const stop = stops.byEventId(decodeURIComponent(pathname.slice('/api/stops/'.length)));
          sendJson(res, stop ? 200 : 404, stop ?? { error: 'no Stop with that event id' });
          return true;
        }
        const act = req.method === 'POST' ? actions[pathname] : undefined;
        if (!act) return false;
        sendJson(res, 200, await act(await jsonBody(req)));
        return true;
      } catch (error) {
        if (!(error instanceof LocalRequestError)) throw error;
        sendJson(res, 400, { error: error.message });
        return true;
      }
    },
  };
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req, 65_536);
  if (raw === 'too-large') throw new LocalRequestError('payload too large');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString() || '{}');
  } catch {
    throw new LocalRequestError('the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new LocalRequestError('the body is not a JSON object');
  return body as Record<string, unknown>;
}

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || !value) throw new LocalRequestError(`${name} is required`);
  return value;
}

/**
 * Follows each Stop through the tasks queue: queued when the ingress sends it, then, once
 * agent-invoker has handled it, `stopped` if it stopped a task in its thread (stop-task traces
 * a `stop` hop on that task's request while handling it), else `nothing-running`.
 */
function followStops(pipeline: LocalPipeline, traces: TraceRecorder) {
  const byEvent = new Map<string, LocalStop>();
  /** Tasks stopped, in order, with the number of the first still kept. */
  const stopped: Array<Pick<LocalStop, 'channel' | 'thread_ts' | 'request_id' | 'task_event_id' | 'cancels'>> = [];
  let firstKept = 0;
  /** Per Stop message on the queue: how many tasks had been stopped when it was first delivered. */
  const stoppedBefore = new Map<string, number>();

  traces.subscribe((event) => {
    if (event.hop !== 'stop') return;
    // stop-task's hop names the task it stopped; the ingress's (a Stop queued) names no task.
    const trace = traces.byRequestId(event.requestId);
    const ingress = trace?.events.find((hop) => hop.hop === 'ingress')?.detail;
    if (typeof ingress?.channel !== 'string' || typeof ingress.ts !== 'string') return;
    stopped.push({
      channel: ingress.channel,
      thread_ts: replyThreadTs({ ts: ingress.ts, thread_ts: typeof ingress.thread_ts === 'string' ? ingress.thread_ts : undefined }),
      request_id: event.requestId,
      ...(trace?.eventId ? { task_event_id: trace.eventId } : {}),
      ...(typeof event.detail?.cancels === 'string' ? { cancels: event.detail.cancels } : {}),
    });
    if (stopped.length > MAX_STOPS) {
      stopped.shift();
      firstKept += 1;
    }
  });

  pipeline.queues.tasks.subscribe((event) => {
    const stop = stopOf(event.body);
    if (!stop) return;
    if (event.type === 'sent') {
      if (byEvent.size >= MAX_STOPS) byEvent.delete(byEvent.keys().next().value!);
      byEvent.set(stop.event_id, { event_id: stop.event_id, channel: stop.channel, thread_ts: stop.thread_ts, state: 'queued' });
    } else if (event.type === 'delivered') {
      if (!stoppedBefore.has(event.messageId)) stoppedBefore.set(event.messageId, firstKept + stopped.length);
    } else if (event.type === 'succeeded' || event.type === 'dead-lettered') {
      const from = Math.max(0, (stoppedBefore.get(event.messageId) ?? firstKept + stopped.length) - firstKept);
      stoppedBefore.delete(event.messageId);
      const record = byEvent.get(stop.event_id);
      if (!record || event.type === 'dead-lettered') return;
      const task = stopped.slice(from).find((candidate) => candidate.channel === stop.channel && candidate.thread_ts === stop.thread_ts);
      Object.assign(record, task ? { ...task, state: 'stopped' } : { state: 'nothing-running' });
    }
  });

  return {
    byEventId: (eventId: string): LocalStop | undefined => byEvent.get(eventId),
    all: (): LocalStop[] => [...byEvent.values()],
  };
}

/** A Stop on the tasks queue: its event id and thread; undefined for a task. */
function stopOf(body: string): { event_id: string; channel: string; thread_ts: string } | undefined {
  try {
    const message = JSON.parse(body) as { kind?: unknown; event_id?: unknown; channel?: unknown; ts?: unknown; thread_ts?: unknown };
    if (message.kind !== 'stop' || typeof message.event_id !== 'string' || typeof message.channel !== 'string' || typeof message.ts !== 'string') return undefined;
    return { event_id: message.event_id, channel: message.channel, thread_ts: replyThreadTs({ ts: message.ts, thread_ts: typeof message.thread_ts === 'string' ? message.thread_ts : undefined }) };
  } catch {
    return undefined;
  }
}

export function isLoopback(address: string | undefined): boolean {
  const plain = (address ?? '').replace(/^::ffff:(?=\d+\.)/, '');
  return plain === '::1' || plain.startsWith('127.');
}
