import type { Clock } from '../../clock';
import type { Log } from '../../observability/logger';
import type { ExecutionAgent } from '../../protocols/execution-agent';
import type { DeliveryContext } from '../../queue/queue';
import type { FollowUpOptions } from '../follow-up-options';
import type { PollMessage } from '../queues/polls-queue';
import type { Settlement } from '../settle/settle-outcome';
import type { Tracer } from '../trace';

/** What async-result is given, and what its steps share (src/verification/poll/async-result.ts). */

export type AsyncResultOptions = FollowUpOptions;

/** What async-result's steps share: its options and what it made of them once. */
export type PollerParts = { options: AsyncResultOptions; clock: Clock; trace: Tracer; settlement: Settlement; deadlineMs: number };

/** One poll on one delivery: the message, the agent that accepted its task, the calls' options. */
export type PollRun = {
  message: PollMessage;
  agent: ExecutionAgent;
  log: Log;
  context: DeliveryContext;
  /** The conversation's session: the one that runs the task (agent-invoker started it there). */
  /** `questions`: with a questions room the agent may ask; `askerId`: who is asking, on every call (docs/contract.md, "Who is asking"). */
  call: { requestId: string; sessionKey: string; correlationId: string; signal: AbortSignal | undefined; questions: boolean; askerId?: string };
};

