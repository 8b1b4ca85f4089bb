import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part, type Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { readBody } from '../../src/execution/hosts/http-host';
import { closeServer, listenOnLoopback } from './http';


/**
 * A2A test agents, reused by the protocol tests and the cross-transport conformance suite.
 * Each one behaves according to directives in the message text, like the echo executor:
 *
 *   (none)        answer at once with a Message "a2a echo: <text>"
 *   #task         a Task: submitted → working → (after #delay=<ms>, default 150) completed, with
 *                 the answer "a2a done: <text>" as an artifact
 *   #task-fail    a Task: submitted → (after the delay) failed, reason in the status message
 *   #history      a completed Task whose only answer is an agent message in its history
 *   #usage        with the answer Message: its token usage in the message's metadata, as Google
 *                 ADK's A2A server reports it (`adk_usage_metadata`: promptTokenCount 40 of which
 *                 cachedContentTokenCount 30, candidatesTokenCount 7); with #task, in the
 *                 completed Task's metadata under `usage` (inputTokens 12, outputTokens 5)
 *   #fail #reject #input #auth
 *                 a Task that is at once failed / rejected / input-required / auth-required,
 *                 with a reason in its status message
 *   #confirm      a Task that asks first (input-required, "Deploy <text>?" in its status message);
 *                 the answer — a message on the same taskId — completes it with the artifact
 *                 "a2a confirmed: <answer>" (docs/contract.md, "Questions")
 *   #signin       a Task that needs the user to sign in first (auth-required, "Sign in at
 *                 https://auth.example.test/authorize?task=<id>" in its status message); the next
 *                 message on the same taskId completes it as #confirm's answer does
 *   #slow         a Task that works for 10 s unless it is cancelled
 *   #throttle     HTTP 429 (Retry-After: 0) before the SDK sees the request, as a rate-limiting
 *                 proxy in front of an agent answers
 *   #rate-limited a JSON-RPC error the SDK writes for an A2AError whose ErrorInfo reason is
 *                 RATE_LIMIT_EXCEEDED (in 1.0; the SDK's 0.3 layer drops the reason)
 *   #file         with the answer (the Message, or #task's artifact): one more part, the file
 *                 A2A_AGENT_FILE as raw bytes (the SDK's 0.3 layer turns it into a FilePart)
 *   #parts        a Message "a2a parts: <JSON>" describing what the agent read, as the SDK hands
 *                 it to an executor in either dialect: `{contextId, parts: [{kind, value,
 *                 filename, mediaType}]}`, kind being text / raw (value in base64) / url / data
 *   #stream       a Task that streams its answer (streamedAnswer(text)): submitted → working, then
 *                 one artifact-update per line of the answer, #delay=<ms> apart (default 150), the
 *                 first with `append: false`, the others `append: true` (one more text part each),
 *                 the last `lastChunk: true`; then completed. Between updates it reports progress
 *                 in status messages ("thinking…"), which are not answer text. Modifiers:
 *                 #early    the Task it answers with is already working and holds the first line
 *                 #replace  each update replaces the artifact (`append: false`) with one text part
 *                           holding the whole answer so far, as an agent streaming tokens may do
 *                 #rewrite  after two lines it replaces what it streamed with "a2a rewritten: <text>"
 *                           and completes with that
 *                 #words=<n> instead of the lines, the n words of streamedWords(n), one update a word
 *                           (#delay=<ms> apart, the first after one delay), each replacing the
 *                           artifact with the answer so far, as #replace; completed right after the
 *                           last word. The agent's onAnswerText option sees each word as it is published
 *                 #gated    after its first line it waits for the agent's `gate` option to let it go on
 *                           (a test then knows the task is still working, whatever the machine's load)
 *                 #steps=<n> instead of the lines, n status messages "Step 1" … "Step n" on the
 *                           working task (#delay=<ms> apart), then the answer in one artifact
 *                           ("a2a steps: <text>"), completed: an agent showing its work (a2a-steps.ts);
 *                           with #step-title=<words> (up to the next #) each message is "Step i: <words>"
 */

export type RecordedRequest = { headers: IncomingHttpHeaders; body: Record<string, unknown> };

export type A2aTestAgent = {
  /** The JSON-RPC endpoint. */
  url: string;
  cardUrl: string;
  /** Every JSON-RPC request received, in order. */
  requests: RecordedRequest[];
  /** The headers of every agent card request received, in order (refused ones included). */
  cardRequests: IncomingHttpHeaders[];
  close(): Promise<void>;
};

export type SdkAgentOptions = {
  /** Serve A2A 0.3 too (the SDK's compat layer: requests without `A2A-Version: 1.0`). */
  legacyCompat?: boolean;
  /** Refuse (HTTP 401) every request, the agent card's included, without `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /**
   * The card says `capabilities.streaming`, and the SDK serves `message/stream` (0.3) and
   * `SendStreamingMessage` (1.0): Server-Sent Events of the task's updates as the executor
   * publishes them (the directives above). Without it the SDK refuses both.
   */
  streaming?: boolean;
  /**
   * Called as a `#stream #words=<n>` task publishes each word, with the user's text and the
   * answer's new text (the word, with its leading space): bench part 7 times the agent's words by it.
   */
  onAnswerText?: (question: string, delta: string) => void;
  /** Awaited by a `#stream #gated` task after its first line, with the user's text: it goes on once this resolves. */
  gate?: (question: string) => Promise<void>;
};

const DEFAULT_DELAY_MS = 150;

/** The lines a `#stream` agent streams, one artifact update each. */
export function streamedLines(text: string): string[] {
  return [1, 2, 3, 4].map((line) => `a2a stream ${line}/4${line === 4 ? `: ${text}` : ''}`);
}

/** The answer of a `#stream #words=<n>` agent, word by word: `a2a:` and then word1 … word<n−1>. */
export function streamedWords(count: number): string[] {
  return ['a2a:', ...Array.from({ length: Math.max(0, count - 1) }, (_, i) => `word${i + 1}`)];
}

/** The whole answer of a `#stream` agent (without #rewrite): its lines, one text part each, read one per line. */
export function streamedAnswer(text: string): string {
  return streamedLines(text).join('\n');
}

/** A real @a2a-js/sdk 1.x agent (DefaultRequestHandler + InMemoryTaskStore) over express on 127.0.0.1. */
export async function startSdkA2aAgent(options: SdkAgentOptions = {}): Promise<A2aTestAgent> {
  const legacyCompat = options.legacyCompat ?? false;
  const app = express();
  const server = createServer(app);
  const baseUrl = await listenOnLoopback(server);
  const url = `${baseUrl}/a2a`;
  const interfaces = (['1.0', ...(legacyCompat ? ['0.3'] : [])] as const).map((protocolVersion) => ({ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion }));
  const card: AgentCard = {
    name: 'sdk-test-agent',
    description: 'An @a2a-js/sdk agent for protocol tests',
    version: '1.0.0',
    // The SDK refuses a dialect that the card does not list for JSON-RPC.
    supportedInterfaces: interfaces,
    provider: undefined,
    capabilities: { streaming: options.streaming ?? false, pushNotifications: false, extensions: [] } as AgentCard['capabilities'],
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [],
    signatures: [],
  };
  const executor = new DirectiveExecutor(options.onAnswerText, options.gate);
  const requestHandler = new DirectiveRequestHandler(card, new InMemoryTaskStore(), executor);
  const requests: RecordedRequest[] = [];
  const cardRequests: IncomingHttpHeaders[] = [];

  app.use('/.well-known/agent-card.json', (req, _res, next) => {
    cardRequests.push(req.headers);
    next();
  });
  if (options.bearerToken) {
    const expected = `Bearer ${options.bearerToken}`;
    app.use((req, res, next) => (req.headers.authorization === expected ? next() : res.status(401).json({ error: 'Unauthorized' })));
  }
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler, legacyCompat: { enabled: legacyCompat } }));
  app.use('/a2a', express.json(), (req, res, next) => {
    requests.push({ headers: req.headers, body: req.body as Record<string, unknown> });
    if (JSON.stringify(req.body).includes('#throttle')) return res.status(429).set('Retry-After', '0').json({ error: 'Too Many Requests' });
    next();
  });
  app.use('/a2a', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: legacyCompat } }));

  return {
    url,
    cardUrl: `${baseUrl}/.well-known/agent-card.json`,
    requests,
    cardRequests,
    close: async () => {
      executor.stopAll();
      await closeServer(server);
    },
  };
}

/** What an agent throws when its model provider or its own rate limit says "not now". */
class RateLimitExceededError extends A2AError {
  override readonly reason = 'RATE_LIMIT_EXCEEDED';
}

/** The SDK's handler, refusing `#rate-limited` messages before any task starts, as a rate limiter inside the agent would. */
class DirectiveRequestHandler extends DefaultRequestHandler {
  override async sendMessage(...args: Parameters<DefaultRequestHandler['sendMessage']>): ReturnType<DefaultRequestHandler['sendMessage']> {
    if (JSON.stringify(args[0].message ?? {}).includes('#rate-limited')) throw new RateLimitExceededError('too many requests; try again in a minute');
    return super.sendMessage(...args);
  }
}

/** Where `#signin` sends the user (never fetched). */
export const SIGN_IN_URL = 'https://auth.example.test/authorize';

class DirectiveExecutor implements AgentExecutor {
  private readonly running = new Map<string, { controller: AbortController; contextId: string }>();

  constructor(
    private readonly onAnswerText?: (question: string, delta: string) => void,
    private readonly gate?: (question: string) => Promise<void>,
  ) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const text = ctx.userMessage.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
    const delayMs = Number(/#delay=(\d+)/.exec(text)?.[1] ?? DEFAULT_DELAY_MS);
    const immediate: Array<[string, TaskState, string]> = [
      ['#fail', TaskState.TASK_STATE_FAILED, 'the model exploded'],
      ['#reject', TaskState.TASK_STATE_REJECTED, 'this agent does not do that'],
      ['#input', TaskState.TASK_STATE_INPUT_REQUIRED, 'which city do you mean?'],
      ['#auth', TaskState.TASK_STATE_AUTH_REQUIRED, 'sign in first'],
    ];
    try {
      // The answer to a task that asked (#confirm, #signin): the same task goes on, and completes.
      if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED || ctx.task?.status?.state === TaskState.TASK_STATE_AUTH_REQUIRED) {
        const answer = { artifactId: 'answer', name: '', description: '', parts: [textPart(`a2a confirmed: ${text}`)], metadata: undefined, extensions: [] };
        bus.publish(AgentEvent.task({ ...taskOf(ctx, TaskState.TASK_STATE_COMPLETED), artifacts: [answer] }));
        return;
      }
      if (text.includes('#signin')) {
        bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_AUTH_REQUIRED, agentMessage(ctx, `Sign in at ${SIGN_IN_URL}?task=${ctx.taskId}`))));
        return;
      }
      if (text.includes('#confirm')) {
        bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(ctx, `Deploy ${text.replace('#confirm', '').trim()}?`))));
        return;
      }
      if (text.includes('#stream')) {
        await this.stream(ctx, bus, text, delayMs);
        return;
      }
      if (text.includes('#task') || text.includes('#slow')) {
        const controller = new AbortController();
        this.running.set(ctx.taskId, { controller, contextId: ctx.contextId });
        bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_SUBMITTED)));
        bus.publish(statusOf(ctx, TaskState.TASK_STATE_WORKING));
        await sleep(text.includes('#slow') ? 10_000 : delayMs, undefined, { signal: controller.signal }).catch(() => undefined);
        if (controller.signal.aborted) return; // cancelTask published the final state
        if (text.includes('#task-fail')) {
          bus.publish(statusOf(ctx, TaskState.TASK_STATE_FAILED, agentMessage(ctx, 'the tool timed out')));
        } else {
          bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: 'answer', name: '', description: '', parts: [textPart(`a2a done: ${text}`), ...fileParts(text)], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }));
          // The whole task again, its artifact with it: the task store takes a task event as the task.
          if (text.includes('#usage')) bus.publish(AgentEvent.task({ ...taskOf(ctx, TaskState.TASK_STATE_COMPLETED), artifacts: [{ artifactId: 'answer', name: '', description: '', parts: [textPart(`a2a done: ${text}`)], metadata: undefined, extensions: [] }], metadata: { usage: { inputTokens: 12, outputTokens: 5 } } }));
          else bus.publish(statusOf(ctx, TaskState.TASK_STATE_COMPLETED));
        }
        return;
      }
      if (text.includes('#parts')) {
        bus.publish(AgentEvent.message({ ...agentMessage(ctx, `a2a parts: ${JSON.stringify(partsSeen(ctx))}`), taskId: '' }));
        return;
      }
      if (text.includes('#history')) {
        bus.publish(AgentEvent.task({ ...taskOf(ctx, TaskState.TASK_STATE_COMPLETED), history: [ctx.userMessage, agentMessage(ctx, `from history: ${text}`)] }));
        return;
      }
      const failing = immediate.find(([directive]) => text.includes(directive));
      if (failing) {
        bus.publish(AgentEvent.task(taskOf(ctx, failing[1], agentMessage(ctx, failing[2]))));
        return;
      }
      const usage = text.includes('#usage') ? { metadata: { adk_usage_metadata: { promptTokenCount: 40, cachedContentTokenCount: 30, candidatesTokenCount: 7, totalTokenCount: 47 } } } : {};
      const message = agentMessage(ctx, `a2a echo: ${text}`);
      bus.publish(AgentEvent.message({ ...message, parts: [...message.parts, ...fileParts(text)], taskId: '', ...usage }));
    } finally {
      this.running.delete(ctx.taskId);
      bus.finished();
    }
  };

  /** `#stream`: the answer line by line, as artifact updates on a working task (see the directives above). */
  private async stream(ctx: RequestContext, bus: ExecutionEventBus, text: string, delayMs: number): Promise<void> {
    const controller = new AbortController();
    this.running.set(ctx.taskId, { controller, contextId: ctx.contextId });
    const lines = streamedLines(text);
    const replace = text.includes('#replace');
    const update = (parts: Part[], append: boolean, lastChunk: boolean) =>
      AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: 'answer', name: '', description: '', parts, metadata: undefined, extensions: [] }, append, lastChunk, metadata: undefined });
    const chunk = (index: number) =>
      replace ? update([textPart(lines.slice(0, index + 1).join('\n'))], false, index === lines.length - 1) : update([textPart(lines[index]!)], index > 0, index === lines.length - 1);
    const wait = async () => {
      await sleep(delayMs, undefined, { signal: controller.signal }).catch(() => undefined);
      return !controller.signal.aborted;
    };

    const stepCount = /#steps=(\d+)/.exec(text)?.[1];
    if (stepCount !== undefined) {
      bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_SUBMITTED)));
      for (let step = 1; step <= Number(stepCount); step++) {
        const title = /#step-title=([^#]+)/.exec(text)?.[1]?.trim();
        bus.publish(statusOf(ctx, TaskState.TASK_STATE_WORKING, agentMessage(ctx, `Step ${step}${title ? `: ${title}` : ''}`)));
        if (!(await wait())) return; // cancelTask published the final state
      }
      bus.publish(update([textPart(`a2a steps: ${text}`)], false, true));
      bus.publish(statusOf(ctx, TaskState.TASK_STATE_COMPLETED));
      return;
    }

    const wordCount = /#words=(\d+)/.exec(text)?.[1];
    if (wordCount !== undefined) {
      bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_SUBMITTED)));
      bus.publish(statusOf(ctx, TaskState.TASK_STATE_WORKING));
      const words = streamedWords(Number(wordCount));
      for (let index = 0; index < words.length; index++) {
        if (!(await wait())) return; // cancelTask published the final state
        this.onAnswerText?.(text, index === 0 ? words[0]! : ` ${words[index]!}`);
        bus.publish(update([textPart(words.slice(0, index + 1).join(' '))], false, index === words.length - 1));
      }
      bus.publish(statusOf(ctx, TaskState.TASK_STATE_COMPLETED));
      return;
    }

    let next = 0;
    if (text.includes('#early')) {
      bus.publish(AgentEvent.task({ ...taskOf(ctx, TaskState.TASK_STATE_WORKING, agentMessage(ctx, 'thinking…')), artifacts: [{ artifactId: 'answer', name: '', description: '', parts: [textPart(lines[0]!)], metadata: undefined, extensions: [] }] }));
      next = 1;
    } else {
      bus.publish(AgentEvent.task(taskOf(ctx, TaskState.TASK_STATE_SUBMITTED)));
      bus.publish(statusOf(ctx, TaskState.TASK_STATE_WORKING, agentMessage(ctx, 'thinking…')));
    }
    for (; next < lines.length; next++) {
      if (!(await wait())) return; // cancelTask published the final state
      if (text.includes('#rewrite') && next === 2) {
        bus.publish(update([textPart(`a2a rewritten: ${text}`)], false, true));
        break;
      }
      bus.publish(chunk(next));
      bus.publish(statusOf(ctx, TaskState.TASK_STATE_WORKING, agentMessage(ctx, `still thinking (${next + 1}/${lines.length})`)));
      if (next === 0 && text.includes('#gated')) await this.gate?.(text);
    }
    if (!(await wait())) return;
    bus.publish(statusOf(ctx, TaskState.TASK_STATE_COMPLETED));
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.running.get(taskId);
    running?.controller.abort();
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: running?.contextId ?? '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
  };

  stopAll(): void {
    for (const { controller } of this.running.values()) controller.abort();
  }
}

/** What the agent got: the context id it works in, and each part of the user's message. */
export type PartsSeen = {
  contextId: string;
  parts: Array<{ kind: string; value: unknown; filename: string; mediaType: string }>;
};

function partsSeen(ctx: RequestContext): PartsSeen {
  return {
    contextId: ctx.contextId,
    parts: ctx.userMessage.parts.map(({ content, filename, mediaType }) => ({
      kind: content?.$case ?? 'none',
      value: content?.$case === 'raw' ? Buffer.from(content.value).toString('base64') : content?.value,
      filename,
      mediaType,
    })),
  };
}

/** The file a `#file` agent returns with its answer. */
export const A2A_AGENT_FILE = { name: 'report.csv', mediaType: 'text/csv', bytes: Buffer.from('city,visits\nParis,3\nLima,5\n') } as const;

function fileParts(text: string): Part[] {
  if (!text.includes('#file')) return [];
  return [{ content: { $case: 'raw', value: Buffer.from(A2A_AGENT_FILE.bytes) }, metadata: undefined, filename: A2A_AGENT_FILE.name, mediaType: A2A_AGENT_FILE.mediaType }];
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function agentMessage(ctx: RequestContext, text: string): Message {
  return { messageId: randomUUID(), contextId: ctx.contextId, taskId: ctx.taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function taskOf(ctx: RequestContext, state: TaskState, message?: Message): Task {
  return { id: ctx.taskId, contextId: ctx.contextId, status: { state, message, timestamp: new Date().toISOString() }, artifacts: [], history: [ctx.userMessage], metadata: undefined };
}

function statusOf(ctx: RequestContext, state: TaskState, message?: Message) {
  return AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined });
}

/**
 * A hand-written A2A 0.3 agent on plain node:http, the kind found in the field: no `kind`, no
 * message ids, no context ids, and a poll answer without the task id. Directives:
 *
 *   (none)     a bare message {role, parts: [{text}]}
 *   #task      {id, status: working}; tasks/get answers {status: completed, artifacts} once the
 *              delay (#delay=<ms>, default 150) has passed — without repeating the id
 *   #done      a completed task without an id whose answer is only in status.message
 *   #fail      a failed task with the reason in status.message
 *   #cancelled a task in the (British-spelt) cancelled state
 *   #auth      an auth-required task
 *   #rate-limited  a JSON-RPC error -32000 whose data is a google.rpc.ErrorInfo, reason RATE_LIMIT_EXCEEDED
 *   #noid      a working task without an id (nothing to poll by)
 *   #wrong-id  a response carrying another request's id
 *   #garbage   a body that is not JSON
 * tasks/get of an unknown id answers -32001; tasks/cancel answers the task as canceled.
 * The card at /.well-known/agent-card.json says protocolVersion 0.3.0.
 */
export async function startHandWrittenA2aAgent(): Promise<A2aTestAgent> {
  const requests: RecordedRequest[] = [];
  const cardRequests: IncomingHttpHeaders[] = [];
  const tasks = new Map<string, { text: string; readyAt: number; canceled: boolean }>();
  let counter = 0;
  let baseUrl = '';

  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: string) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      cardRequests.push(req.headers);
      return send(200, JSON.stringify({ name: 'hand-written', protocolVersion: '0.3.0', url: `${baseUrl}/`, capabilities: {}, skills: [] }));
    }
    const raw = await readBody(req, 1_000_000);
    const call = JSON.parse(raw.toString()) as { id: unknown; method: string; params: Record<string, any> };
    requests.push({ headers: req.headers, body: call as unknown as Record<string, unknown> });
    const reply = (result: unknown, id = call.id) => send(200, JSON.stringify({ jsonrpc: '2.0', id, result }));
    const error = (code: number, message: string, data?: unknown) => send(200, JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code, message, ...(data === undefined ? {} : { data }) } }));

    if (call.method === 'message/send') {
      const text: string = (call.params.message?.parts ?? []).map((part: { text?: string }) => part.text ?? '').join('');
      const delayMs = Number(/#delay=(\d+)/.exec(text)?.[1] ?? DEFAULT_DELAY_MS);
      if (text.includes('#garbage')) return send(200, 'this is not JSON');
      if (text.includes('#rate-limited')) {
        return error(-32000, 'slow down', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', domain: 'agent.example' }]);
      }
      if (text.includes('#wrong-id')) return reply({ role: 'agent', parts: [{ text: 'not yours' }] }, 'someone-elses-request');
      if (text.includes('#task')) {
        const id = `hw-task-${++counter}`;
        tasks.set(id, { text, readyAt: Date.now() + delayMs, canceled: false });
        return reply({ id, status: { state: 'working' } });
      }
      if (text.includes('#done')) return reply({ status: { state: 'completed', message: { role: 'agent', parts: [{ text: `done: ${text}` }] } } });
      if (text.includes('#fail')) return reply({ status: { state: 'failed', message: { role: 'agent', parts: [{ text: 'no model available' }] } } });
      if (text.includes('#cancelled')) return reply({ id: 'hw-cancelled', status: { state: 'cancelled' } });
      if (text.includes('#auth')) return reply({ id: 'hw-auth', status: { state: 'auth-required' } });
      if (text.includes('#noid')) return reply({ status: { state: 'working' } });
      return reply({ role: 'agent', parts: [{ text: `plain: ${text}` }] });
    }
    const task = tasks.get(String(call.params?.id));
    if (call.method === 'tasks/get') {
      if (!task) return error(-32001, 'Task not found');
      if (task.canceled) return reply({ status: { state: 'canceled' } });
      if (Date.now() < task.readyAt) return reply({ status: { state: 'working' } });
      return reply({ status: { state: 'completed' }, artifacts: [{ parts: [{ kind: 'text', text: `hand-written done: ${task.text}` }] }] });
    }
    if (call.method === 'tasks/cancel') {
      if (!task) return error(-32001, 'Task not found');
      task.canceled = true;
      return reply({ id: call.params.id, status: { state: 'canceled' } });
    }
    return error(-32601, 'Method not found');
  });
  baseUrl = await listenOnLoopback(server);
  return { url: `${baseUrl}/`, cardUrl: `${baseUrl}/.well-known/agent-card.json`, requests, cardRequests, close: () => closeServer(server) };
}
