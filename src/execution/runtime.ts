import { systemClock, type Clock } from '../clock';
import { createLogger, type Log } from '../observability/logger';
import { agentCard, type AgentCard } from './agent-card';
import type { ExecutionConfig } from './config';
import { createStreamingDispatcher, streamOf, type Dispatch, type DispatchStream, type OpenStream } from './dispatcher';
import type { Executor } from './executors/executor';
import { contractMethods, contractStreamMethods } from './methods';
import type { TaskStore } from './stores/task-store';
import { TaskService, type TaskHandoff } from './task-service';
import { MemoryTaskStore } from './stores/memory-task-store';
import { EchoExecutor } from './executors/echo-executor';

export const RUNTIME_VERSION = '0.1.0';

/** Everything a host needs: the dispatcher, the task service behind it, and the agent card. */
export type ExecutionRuntime = {
  /** Body in, body out (the in-process transport's `send`). */
  dispatch: Dispatch;
  /** For a caller that reads streamed answers (docs/contract.md, "Streamed answers"): a stream of response bodies, or a plain answer (the HTTP hosts). */
  openStream: OpenStream;
  /** The same as the response bodies one by one, plain or streamed (the in-process transport's `stream`). */
  dispatchStream: DispatchStream;
  service: TaskService;
  /** The task store behind the service (the Lambda hosts keep large handoff params in it). */
  store: TaskStore;
  card: AgentCard;
  log: Log;
  config: ExecutionConfig;
  /** The clock the service, the default store and the hosts read. */
  clock: Clock;
};

export type RuntimeParts = {
  config: ExecutionConfig;
  /** Defaults to the executor the config names (echo needs nothing; bedrock needs a client). */
  executor?: Executor;
  store?: TaskStore;
  handoff?: TaskHandoff;
  log?: Log;
  /** The one clock of the runtime's parts (a `store` given here is built with it by its caller). @default systemClock */
  clock?: Clock;
};

/** Wires one execution runtime. Adapters that need AWS clients are built by the caller (see `runtime-from-env.ts`). */
export function createExecutionRuntime(parts: RuntimeParts): ExecutionRuntime {
  const { config } = parts;
  const log = parts.log ?? createLogger('execution');
  const clock = parts.clock ?? systemClock;
  const executor = parts.executor ?? new EchoExecutor(config.ECHO_DELAY_MS, config.ECHO_STREAM_MS);
  const store = parts.store ?? new MemoryTaskStore({ clock, maxBytes: config.TASK_STORE_MAX_BYTES });
  const service = new TaskService({
    store,
    executor,
    log,
    syncBudgetMs: config.SYNC_BUDGET_MS,
    streamFirstTextMs: config.STREAM_FIRST_TEXT_MS,
    taskTimeoutMs: config.TASK_TIMEOUT_MS,
    ttlSeconds: config.TASK_TTL_SECONDS,
    maxConcurrentTasks: config.MAX_CONCURRENT_TASKS,
    handoff: parts.handoff,
    clock,
  });
  const { dispatch, openStream } = createStreamingDispatcher(contractMethods(service), contractStreamMethods(service, config.STREAM_MAX_MS), log, { maxBatchLength: config.MAX_BATCH_LENGTH });
  const card = agentCard({ name: config.AGENT_NAME, version: RUNTIME_VERSION, executor: executor.name });
  return { dispatch, openStream, dispatchStream: streamOf(openStream), service, store, card, log, config, clock };
}
