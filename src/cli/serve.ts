import { parseArgs } from 'node:util';
import { executionPortOf } from '../local/local-ports';
import { runtimeFromEnv } from '../execution/runtime-from-env';
import { createExecutionHttpServer } from '../execution/hosts/http-host';
import type { Command } from './command';
import { listen, stopOnSignals } from '../local/server-lifecycle';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the execution runtime (JSON-RPC execute_task host) on HTTP',
  usage: `zone serve [--host 127.0.0.1] [--port 8080]

Runs the execution zone's HTTP host: POST /invocations (JSON-RPC 2.0), GET /ping,
GET /.well-known/agent-card.json. The executor, task store and limits come from the
environment (EXECUTOR, ECHO_DELAY_MS, BEDROCK_MODEL_ID, SYNC_BUDGET_MS, TASK_TIMEOUT_MS, …).
Defaults: --host $EXECUTION_HOST or 127.0.0.1, --port $EXECUTION_PORT or 8080.`,
  async run(args) {
    const { values } = parseArgs({ args, options: { host: { type: 'string' }, port: { type: 'string' } } });
    const host = values.host ?? process.env.EXECUTION_HOST ?? '127.0.0.1';
    const port = values.port !== undefined ? Number(values.port) : executionPortOf(process.env);
    const runtime = runtimeFromEnv();
    const server = createExecutionHttpServer(runtime);
    const address = await listen(server, port, host);
    process.stdout.write(
      `execution runtime (${runtime.card.executor} executor) listening on http://${address}\n` +
        `  POST http://${address}/invocations   JSON-RPC 2.0: execute_task, get_task_result, cancel_task, resume_task\n` +
        `  GET  http://${address}/ping\n  GET  http://${address}/.well-known/agent-card.json\n`,
    );
    await stopOnSignals([server]);
    return 0;
  },
};
