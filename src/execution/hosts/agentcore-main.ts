import { runtimeFromEnv } from '../runtime-from-env';
import { createExecutionHttpServer } from './http-host';

/**
 * Entry point of the AgentCore Runtime code deploy (NODE_22): the process must itself listen on
 * 0.0.0.0:8080 and serve /invocations and /ping (docs/architecture.md §10.4).
 */
const runtime = runtimeFromEnv();
const server = createExecutionHttpServer(runtime);
const port = Number(process.env.EXECUTION_PORT ?? 8080);
server.listen(port, process.env.EXECUTION_HOST ?? '0.0.0.0', () => {
  runtime.log.info('execution runtime listening', { port, executor: runtime.card.executor, store: runtime.config.TASK_STORE });
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
