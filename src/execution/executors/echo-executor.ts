import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecuteTaskParams } from '../../contract';
import { RpcError } from '../rpc-error';
import type { Executor, ExecutorContext, ExecutorOutput } from './executor';

/**
 * A deterministic executor for local runs, demos and tests: it answers `echo: <text>`.
 * Directives in the text make it behave like a real model would on a bad day:
 *   `#sleep=<ms>`  take that long (overrides the configured delay)
 *   `#fail`        fail with a server-defined error (-32000)
 *   `#crash`       throw an unexpected error (reported as -32603)
 */
export class EchoExecutor implements Executor {
  readonly name = 'echo';
  constructor(private readonly delayMs = 0) {}

  async execute(params: ExecuteTaskParams, { signal }: ExecutorContext): Promise<ExecutorOutput> {
    const sleepDirective = /#sleep=(\d+)/.exec(params.text);
    const delayMs = sleepDirective ? Number(sleepDirective[1]) : this.delayMs;
    if (delayMs > 0) await sleep(delayMs, undefined, { signal });
    if (params.text.includes('#fail')) throw new RpcError(-32000, 'The echo executor was asked to fail');
    if (params.text.includes('#crash')) throw new Error('echo executor crashed on purpose');
    return { response_text: `echo: ${params.text}` };
  }
}
