import { createHash } from 'node:crypto';
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
 * and show what context it was given, on lines after the echo, in this order:
 *   `#context`     adds `context: <n> turns (<roles>)`: the thread messages it received
 *                  (`params.messages`), roles in order as received, joined by ", " — e.g.
 *                  `context: 3 turns (user, assistant, user)`; none is `context: 0 turns ()`
 *   attachments    always, one line per attachment in order:
 *                  `attachment: <name> <mimetype> <size> bytes sha256=<hex>`, the SHA-256 of the
 *                  decoded bytes, so a test can tell the file arrived intact without echoing it
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
    const lines = [`echo: ${params.text}`];
    if (params.text.includes('#context')) {
      const roles = (params.messages ?? []).map((message) => message.role);
      lines.push(`context: ${roles.length} turns (${roles.join(', ')})`);
    }
    for (const attachment of params.attachments ?? []) {
      const sha256 = createHash('sha256').update(Buffer.from(attachment.data, 'base64')).digest('hex');
      lines.push(`attachment: ${attachment.name} ${attachment.mimetype} ${attachment.size} bytes sha256=${sha256}`);
    }
    return { response_text: lines.join('\n') };
  }
}
