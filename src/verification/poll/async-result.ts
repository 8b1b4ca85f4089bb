import { systemClock } from '../../clock';
import { taskLogger } from '../../observability/logger';
import type { Delivery, DeliveryContext, DeliveryHandler } from '../../queue/queue';
import { agentNamed } from '../routing/agent-directory';
import { PollMessageSchema, QuestionExpirySchema, SessionCheckSchema, type PollMessage, type PollsQueueMessage } from '../queues/polls-queue';
import { conversationKey } from '../queues/slack-thread';
import { askerCall } from '../queues/asker';
import { createSettlement } from '../settle/settle-outcome';
import { consumeByKind, type QueueTable } from '../queues/queue-consumer';
import { noTrace } from '../trace';
import { lookAtTask } from './look-at-task';
import type { AsyncResultOptions, PollerParts, PollRun } from './poller-parts';
import { afterLook } from './after-look';
import { expireQuestion, type ExpireParts } from '../questions/expire-question';
import type { QuestionRoom } from '../questions/question-room';

/**
 * The async-result function: one poll per invocation. Still pending (or a transient fault) →
 * the next poll message with the next backoff delay; done → reply; past the deadline → cancel
 * the task in the execution zone, so it stops spending model time, and tell the user.
 * Nothing sleeps here: the wait between polls is an SQS message timer. Its steps:
 * look-at-task.ts (a plain poll, or the stream held while text flows) and after-look.ts (settle,
 * cancel past the deadline, or the next poll).
 */
export function createAsyncResult(options: AsyncResultOptions): DeliveryHandler {
  const clock = options.clock ?? systemClock;
  const trace = options.trace ?? noTrace;
  const p: PollerParts = { options, clock, trace, settlement: createSettlement({ ...options, trace, clock }), deadlineMs: options.schedule.deadlineSeconds * 1000 };
  const { settlement } = p;

  const poll = async (message: PollMessage, _delivery: Delivery, context: DeliveryContext): Promise<void> => {
    const log = taskLogger(options.log, { request_id: message.request_id, correlation_id: message.request_id, event_id: message.event_id, task_id: message.handle.taskId, agent: message.agent ?? options.agent.name });
    // The agent that accepted the task (a poll of a version before routing names none: the default).
    const agent = agentNamed(options, message.agent);
    if (!agent) {
      if (options.work && (await options.work.isStopped(message.request_id))) return;
      log.warn('the task was accepted by an execution agent that is no longer configured; telling the user', { agent: message.agent });
      trace({ requestId: message.request_id, hop: 'failed', at: clock.now(), detail: { code: 'agent-removed', agent: message.agent } });
      return settlement.reply(message, 'error', options.messages.agentRemoved);
    }
    // Stopped by the user: the Stop cancelled the task and sent its one final message; polling ends here.
    if (options.work && (await options.work.isStopped(message.request_id))) {
      log.info('the task was stopped; polling ends');
      return settlement.stopped(message, { log, agent: agent.name, reached: true, shown: message.streamed ?? 0 });
    }
    const run: PollRun = { message, agent, log, context, call: { requestId: message.request_id, sessionKey: conversationKey(message), correlationId: message.request_id, signal: context.signal, questions: options.questions !== undefined, ...askerCall(message) } };
    const started = clock.now();
    const look = await lookAtTask(p, run);
    if (look.kind === 'stopped') {
      log.info('the task was stopped while its stream was held; polling ends');
      return settlement.stopped(message, { log, agent: agent.name, reached: true, shown: look.shown });
    }
    settlement.counted('poll', look.outcome, started, agent);
    await afterLook(p, run, look);
  };

  // The polls queue's table: polls, and the delayed session checks of AGENTCORE_STOP_SESSION=quiet-…
  // (a check never fails its message: a malformed one is dropped, and a deployment that no longer
  // asks for them drops them).
  const sessions = options.sessions;
  const table: QueueTable<PollsQueueMessage> = {
    poll: { schema: PollMessageSchema, what: 'poll message', handle: poll },
    'question-expiry': options.questions ? { schema: QuestionExpirySchema, what: 'question timer', handle: (timer, _delivery, { signal }) => expireQuestion(expireParts(p, options.questions!), timer, signal ? { signal } : {}) } : undefined,
    'session-check': sessions ? { schema: SessionCheckSchema, what: 'session check', malformed: 'drop', handle: (check, _delivery, { signal }) => sessions.check(check, signal ? { signal } : {}) } : undefined,
  };
  return settlement.lastReceiveApology(consumeByKind(table, { unmarked: 'poll', log: options.log }), 'poll');
}

/** What a question's timer needs of async-result: the agents that cancel, the queues, the settlement. */
function expireParts(p: PollerParts, room: QuestionRoom): ExpireParts {
  const { options } = p;
  return { room, agentOf: (name) => agentNamed(options, name), polls: options.polls, replies: options.replies, settlement: p.settlement, messages: options.messages, ...(options.work ? { work: options.work } : {}), clock: p.clock, trace: p.trace, log: options.log };
}
