import { createServer } from 'node:http';
import { readBody } from '../../src/execution/hosts/http-host';
import { closeServer, listenOnLoopback } from './http';

/**
 * A legacy "simple A2A" agent on node:http (POST any path), reused by the protocol tests and the
 * conformance suite. Request {task_id, input}; directives in input.text:
 *
 *   (none)     success, output {text: "legacy: <text>", model: "legacy-test"}
 *   #response  success, output {response: …}
 *   #result    success, output {result: …}
 *   #json      success, output {answer: 42, unit: "none"} (no text field)
 *   #usage     success, output {text, usage: {inputTokens: 6, outputTokens: 3, modelId: "legacy-model"}}
 *   #error     status error, error "the legacy agent could not answer"
 *   #error=<reason>  status error with that reason (the rest of the text)
 *   #wrong-id  success for another task_id
 *   #garbage   a body that is not JSON
 *   #empty     HTTP 204, no body
 *   #http500   HTTP 500
 *   #http429   HTTP 429 (Retry-After: 0)
 */
export type LegacyTestAgent = {
  url: string;
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
};

export async function startLegacyAgent(): Promise<LegacyTestAgent> {
  const requests: Array<Record<string, unknown>> = [];
  const server = createServer(async (req, res) => {
    const raw = await readBody(req, 1_000_000);
    const call = JSON.parse(raw.toString()) as { task_id: string; input: { text: string } };
    requests.push(call as unknown as Record<string, unknown>);
    const text = call.input.text;
    const send = (status: number, body: string) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
    const answer = (output: unknown, taskId = call.task_id) => send(200, JSON.stringify({ task_id: taskId, status: 'success', output, error: null }));

    if (text.includes('#garbage')) return send(200, '<html>not json</html>');
    if (text.includes('#empty')) return res.writeHead(204).end();
    if (text.includes('#http500')) return send(500, JSON.stringify({ message: 'boom' }));
    if (text.includes('#http429')) return res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '0' }).end(JSON.stringify({ message: 'slow down' }));
    const reason = /#error=(.+)$/.exec(text)?.[1];
    if (reason) return send(200, JSON.stringify({ task_id: call.task_id, status: 'error', output: null, error: reason }));
    if (text.includes('#error')) return send(200, JSON.stringify({ task_id: call.task_id, status: 'error', output: null, error: 'the legacy agent could not answer' }));
    if (text.includes('#wrong-id')) return answer({ text: 'not yours' }, 'another-task');
    if (text.includes('#response')) return answer({ response: `legacy response: ${text}` });
    if (text.includes('#result')) return answer({ result: `legacy result: ${text}` });
    if (text.includes('#json')) return answer({ answer: 42, unit: 'none' });
    if (text.includes('#usage')) return answer({ text: `legacy: ${text}`, usage: { inputTokens: 6, outputTokens: 3, modelId: 'legacy-model' } });
    return answer({ text: `legacy: ${text}`, model: 'legacy-test' });
  });
  const url = await listenOnLoopback(server);
  return { url, requests, close: () => closeServer(server) };
}
