import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { createExecutionHttpServer, readBody } from '../execution/hosts/http-host';
import { runtimeFromEnv } from '../execution/runtime-from-env';
import type { ExecutionRuntime } from '../execution/runtime';
import { createLogger, type Log } from '../observability/logger';
import { agentSettingsFrom, buildExecutionAgents, type AgentSettings } from '../protocols/agent-config';
import type { ExecutionAgent } from '../protocols/execution-agent';
import { createSlackWebClient, WebApiSlackReplies, type SlackReplies } from '../slack/slack-replies';
import type { TransportDeps } from '../transport/factory';
import { startAgentCoreEmulator, type AgentCoreEmulator } from './agentcore-emulator';
import { ConsoleSlackReplies } from './console-slack-replies';
import { createLocalPipeline, type LocalPipeline } from './local-pipeline';
import { PLAYGROUND_HTML } from './playground-page';
import { close, listen } from './server-lifecycle';
import { appMentionEnvelope, postSignedEvent } from './slack-event-builder';
import { TraceRecorder } from './trace-recorder';
import { replyThreadTs } from '../verification/queue-messages';

export const LOCAL_RUNTIME_ARN = 'arn:aws:bedrock-agentcore:us-east-1:000000000000:runtime/local_runtime-0000000000';

export type LocalStackOptions = {
  env?: NodeJS.ProcessEnv;
  host?: string;
  /** Overrides VERIFICATION_PORT (3000); 0 picks a free port. */
  verificationPort?: number;
  /** Overrides EXECUTION_PORT (8080); 0 picks a free port. */
  executionPort?: number;
  /** Multiplies queue delays (tests and the demo run faster than real time). */
  timeScale?: number;
  /** Replaces the reply sink (tests). */
  slack?: SlackReplies;
  /** Where terminal replies are written (default stdout); tests and the demo pass their own. */
  replyWriter?: (line: string) => void;
  log?: Log;
};

export type LocalStack = {
  ingressUrl: string;
  playgroundUrl: string;
  /** The local execution runtime's /invocations, when one runs here. */
  executionUrl?: string;
  agentCoreEndpoint?: string;
  agent: ExecutionAgent;
  signingSecret: string;
  signingSecretGenerated: boolean;
  /** Set when replies go to the terminal (no SLACK_BOT_TOKEN). */
  consoleReplies?: ConsoleSlackReplies;
  traces: TraceRecorder;
  pipeline: LocalPipeline;
  runtime?: ExecutionRuntime;
  /** Signs an app_mention like Slack would and posts it to the local ingress over HTTP. */
  say(text: string, options?: { threadTs?: string }): Promise<{ status: number; eventId: string; ts: string }>;
  stop(): Promise<void>;
};

/**
 * Both zones on loopback in one process (docs/architecture.md §8): the execution runtime on
 * EXECUTION_PORT, the Slack ingress and playground on VERIFICATION_PORT, the four verification
 * functions wired with in-memory queues and stores. The transport comes from TRANSPORT (default
 * https to the local runtime); with `agentcore` and no endpoint override, the local AgentCore
 * emulator stands in for AWS.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const env = { ...(options.env ?? process.env) };
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? createLogger('local');
  // Parsed once, here: which agent the pipeline calls. Unset, it is the runtime started below.
  const executionPort = options.executionPort ?? Number(env.EXECUTION_PORT ?? 8080);
  const plannedUrl = `http://${host}:${executionPort}/invocations`;
  const settings = agentSettingsFrom({ env, transportDefaults: { kind: 'https', https: { url: plannedUrl }, agentcore: { runtimeArn: LOCAL_RUNTIME_ARN } } });
  const transport = settings.agents.find((agent) => agent.name === settings.defaultAgent)!.transport;
  // agentcore always runs the runtime here: the emulator (or the endpoint override) forwards to it.
  const usesLocalRuntime = transport.kind !== 'https' || transport.url === plannedUrl;
  const closers: Array<() => Promise<void>> = [];

  try {
    // The execution zone, unless the operator pointed us at another agent.
    let runtime: ExecutionRuntime | undefined;
    let executionBase: string | undefined;
    if (usesLocalRuntime) {
      runtime = runtimeFromEnv(env);
      const server = createExecutionHttpServer(runtime);
      executionBase = `http://${await listen(server, executionPort, host)}`;
      closers.push(() => close(server));
    }

    const deps: TransportDeps = {};
    let emulator: AgentCoreEmulator | undefined;
    let agentSettings = settings;
    if (runtime) {
      // The port is known only now (0 picks a free one).
      const actualUrl = `${executionBase}/invocations`;
      const local = (agent: AgentSettings): AgentSettings => (agent.transport.kind === 'https' && agent.transport.url === plannedUrl ? { ...agent, transport: { ...agent.transport, url: actualUrl } } : agent);
      agentSettings = { ...settings, agents: settings.agents.map(local) };
    }
    if (runtime && transport.kind === 'in-process') deps.inProcess = runtime.dispatch;
    if (runtime && transport.kind === 'agentcore' && !env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE) {
      emulator = await startAgentCoreEmulator({ runtimes: { [transport.runtimeArn]: executionBase! }, host });
      closers.push(() => emulator!.close());
      // The real SDK client, pointed at the emulator, with placeholder credentials it signs with.
      deps.agentCoreClient = new BedrockAgentCoreClient({
        endpoint: emulator.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'LOCALEMULATOR', secretAccessKey: 'local-emulator-placeholder' },
      });
    }
    const agent = buildExecutionAgents(agentSettings, deps).default;

    const consoleReplies = options.slack || env.SLACK_BOT_TOKEN ? undefined : new ConsoleSlackReplies(options.replyWriter);
    const slack = options.slack ?? consoleReplies ?? new WebApiSlackReplies(createSlackWebClient({ token: env.SLACK_BOT_TOKEN!, apiUrl: env.SLACK_API_URL }));

    const signingSecretGenerated = !env.SLACK_SIGNING_SECRET;
    const signingSecret = env.SLACK_SIGNING_SECRET || randomBytes(16).toString('hex');
    const traces = new TraceRecorder();
    const pipeline = createLocalPipeline({ agent, slack, signingSecret, env, timeScale: options.timeScale, log, trace: traces.tracer });
    closers.push(() => pipeline.stop());

    let ingressUrl = '';
    const say: LocalStack['say'] = async (text, sayOptions = {}) => {
      const { body, eventId, ts } = appMentionEnvelope({ text, threadTs: sayOptions.threadTs, botUserId: env.SLACK_BOT_USER_ID });
      const response = await postSignedEvent(ingressUrl, body, signingSecret);
      return { status: response.status, eventId, ts };
    };

    const verification = createServer((req, res) => {
      routeVerification(req, res, { pipeline, traces, consoleReplies, say }).catch((error: unknown) => {
        log.error('local ingress failure', { error: error as Error });
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      });
    });
    const verificationBase = `http://${await listen(verification, options.verificationPort ?? Number(env.VERIFICATION_PORT ?? 3000), host)}`;
    closers.push(() => close(verification));
    ingressUrl = `${verificationBase}/slack/events`;

    return {
      ingressUrl,
      playgroundUrl: `${verificationBase}/`,
      ...(executionBase ? { executionUrl: `${executionBase}/invocations` } : {}),
      ...(emulator ? { agentCoreEndpoint: emulator.endpoint } : {}),
      agent,
      signingSecret,
      signingSecretGenerated,
      ...(consoleReplies ? { consoleReplies } : {}),
      traces,
      pipeline,
      ...(runtime ? { runtime } : {}),
      say,
      stop: () => stopAll(closers),
    };
  } catch (error) {
    await stopAll(closers);
    throw error;
  }
}

type Routes = {
  pipeline: LocalPipeline;
  traces: TraceRecorder;
  consoleReplies?: ConsoleSlackReplies;
  say: LocalStack['say'];
};

async function routeVerification(req: IncomingMessage, res: ServerResponse, routes: Routes): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  if (req.method === 'POST' && url.pathname === '/slack/events') {
    const body = await readBody(req, 1_048_576);
    if (body === 'too-large') return sendJson(res, 413, { error: 'payload too large' });
    const headers = Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]));
    const answer = await routes.pipeline.ingress({ headers, body });
    res.writeHead(answer.statusCode, answer.headers).end(answer.body);
    return;
  }
  // Everything else is the playground, which can say things and shows every trace: only for itself.
  const refusal = playgroundRefusal(req, url.pathname);
  if (refusal) return sendJson(res, 403, { error: refusal });
  if (req.method === 'GET' && url.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'X-Frame-Options': 'DENY', 'Content-Security-Policy': "frame-ancestors 'none'" }).end(PLAYGROUND_HTML);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/api/say') {
    const body = await readBody(req, 65_536);
    if (body === 'too-large') return sendJson(res, 413, { error: 'payload too large' });
    const { text, thread_ts } = JSON.parse(body.toString() || '{}') as { text?: string; thread_ts?: string };
    if (typeof text !== 'string') return sendJson(res, 400, { error: 'text is required' });
    const sent = await routes.say(text, { threadTs: thread_ts });
    return sendJson(res, 200, { status: sent.status, event_id: sent.eventId, ts: sent.ts });
  }
  if (req.method === 'GET' && url.pathname.startsWith('/api/events/')) {
    const eventId = decodeURIComponent(url.pathname.slice('/api/events/'.length));
    const trace = routes.traces.byEventId(eventId);
    return sendJson(res, trace ? 200 : 404, trace ? withReplies(trace, routes) : { error: 'unknown event id' });
  }
  if (req.method === 'GET' && url.pathname === '/api/state') {
    return sendJson(res, 200, { requests: routes.traces.all().map((trace) => withReplies(trace, routes)), replies_to_terminal: Boolean(routes.consoleReplies) });
  }
  sendJson(res, 404, { error: 'not found' });
}

/**
 * Why a playground request is refused, or undefined. `/slack/events` never comes here: Slack's
 * servers post there with no browser headers, and the signature protects it.
 * - Host must name the address and port this connection arrived on (or `localhost` on loopback):
 *   a DNS-rebound name that resolves to 127.0.0.1 is someone else's origin.
 * - For /api/: an `Origin` must be the playground's own, and `Sec-Fetch-Site` (where the browser
 *   sends it) `same-origin` or `none`. Without either header (curl, `zone say`) it is no browser page.
 * - The page itself may be opened from a link elsewhere (a top-level navigation), never embedded.
 * A refusal carries no CORS headers, so another origin's script cannot read it either.
 */
function playgroundRefusal(req: IncomingMessage, pathname: string): string | undefined {
  const own = ownHosts(req);
  const host = req.headers.host?.toLowerCase();
  if (!host || !own.includes(host)) return 'the Host header does not name this playground';
  const site = req.headers['sec-fetch-site'];
  const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
  if (pathname.startsWith('/api/')) {
    const origin = req.headers.origin;
    if (origin !== undefined && !own.some((allowed) => origin.toLowerCase() === `http://${allowed}`)) return 'cross-origin request refused';
    if (crossSite) return 'cross-origin request refused';
    return undefined;
  }
  if (crossSite && (req.headers['sec-fetch-mode'] !== 'navigate' || req.headers['sec-fetch-dest'] !== 'document')) return 'cross-origin request refused';
  return undefined;
}

/** The Host values that name the address and port this connection arrived on. */
function ownHosts(req: IncomingMessage): string[] {
  const address = (req.socket.localAddress ?? '').replace(/^::ffff:(?=\d+\.)/, '').toLowerCase();
  const port = req.socket.localPort;
  if (!address || !port) return [];
  const names = [address.includes(':') ? `[${address}]` : address];
  if (address === '::1' || address.startsWith('127.')) names.push('localhost');
  // Browsers leave out the default port.
  return names.flatMap((name) => (port === 80 ? [`${name}:80`, name] : [`${name}:${port}`]));
}

function withReplies(trace: ReturnType<TraceRecorder['all']>[number], routes: Routes) {
  const ingress = trace.events.find((e) => e.hop === 'ingress');
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const ts = text(ingress?.detail?.ts);
  // The thread the poster replies in, computed the one way the poster computes it.
  const threadTs = ts === undefined ? undefined : replyThreadTs({ ts, thread_ts: text(ingress?.detail?.thread_ts) });
  const replies = routes.consoleReplies?.posted.filter((reply) => reply.threadTs === threadTs) ?? [];
  return { ...trace, replies };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

async function stopAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const closeOne of closers.reverse()) await closeOne().catch(() => undefined);
}
