import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { systemClock } from '../clock';
import { createExecutionHttpServer, readBody } from '../execution/hosts/http-host';
import { runtimeFromEnv } from '../execution/runtime-from-env';
import type { ExecutionRuntime } from '../execution/runtime';
import { createLogger, type Log } from '../observability/logger';
import { agentSettingsFrom, buildExecutionAgents, type AgentSettings, type ExecutionAgents } from '../protocols/agent-config';
import type { ExecutionAgent } from '../protocols/execution-agent';
import { describeAgents, type AgentDescription } from '../protocols/agent-description';
import type { AgentRoutes } from '../protocols/agent-routes';
import { createSlackWebClient, WebApiSlackReplies, type SlackReplies } from '../slack/slack-replies';
import type { TransportDeps } from '../transport/factory';
import { startAgentCoreEmulator, type AgentCoreEmulator, type EmulatedSessions } from './agentcore-emulator';
import { ConsoleSlackReplies } from './console-slack-replies';
import { createLocalAgentSurface, isLoopback, type LocalAgentSurface } from './local-agent-surface';
import { lastDays } from '../verification/stores/usage-store';
import { createLocalPipeline, type LocalPipeline } from './local-pipeline';
import { PLAYGROUND_HTML } from './playground-page';
import { close, listen, sendJson } from './server-lifecycle';
import { executionPortOf, verificationPortOf } from './local-ports';
import { postSignedEvent, slackEventEnvelope } from './slack-event-builder';
import { SlackEnvelopeSchema } from '../verification/intake/slack-event';
import { TraceRecorder } from './trace-recorder';
import { replyThreadTs } from '../verification/queues/slack-thread';
import type { FeedbackRecord } from '../verification/surface/feedback-records';

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
  /** Sessions of the local AgentCore emulator (TRANSPORT=agentcore): idle timeout, account limit. */
  agentCoreSessions?: EmulatedSessions;
  /** Where terminal replies are written (default stdout); tests and the demo pass their own. */
  replyWriter?: (line: string) => void;
  log?: Log;
};

export type SayOptions = {
  threadTs?: string;
  followUp?: boolean;
  files?: ReadonlyArray<{ name: string; mimetype: string; bytes: Buffer }>;
  /** The channel it is said in (default the local channel): routing by channel shows locally. */
  channel?: string;
};

export type LocalStack = {
  ingressUrl: string;
  playgroundUrl: string;
  /** The local execution runtime's /invocations, when one runs here. */
  executionUrl?: string;
  agentCoreEndpoint?: string;
  /** The local AgentCore emulator, when TRANSPORT=agentcore runs one (its sessions and invocations). */
  agentCoreEmulator?: AgentCoreEmulator;
  agent: ExecutionAgent;
  /** Every configured agent (EXECUTION_AGENTS), and where each answers. */
  agents: ExecutionAgents;
  signingSecret: string;
  signingSecretGenerated: boolean;
  /** Set when replies go to the terminal (no SLACK_BOT_TOKEN). */
  consoleReplies?: ConsoleSlackReplies;
  traces: TraceRecorder;
  pipeline: LocalPipeline;
  runtime?: ExecutionRuntime;
  /**
   * Signs an event like Slack would and posts it to the local ingress over HTTP: an app_mention,
   * or with `followUp` a reply in the thread without a mention; `files` are shared with it
   * (replies to the terminal only: the local workspace keeps them).
   */
  say(text: string, options?: SayOptions): Promise<{ status: number; eventId: string; ts: string }>;
  /**
   * The agent surface as a person in Slack works it, each signed and posted to the ingress: Stop
   * on a thread's session, the agent's DM opened, 👍 / 👎 under an answer, the "what went wrong"
   * form; with each Stop followed to what it did, and the feedback recorded.
   */
  surface: LocalAgentSurface;
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
  const executionPort = options.executionPort ?? executionPortOf(env);
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
    if (runtime && transport.kind === 'in-process') {
      deps.inProcess = runtime.dispatch;
      deps.inProcessStream = runtime.dispatchStream;
    }
    if (runtime && transport.kind === 'agentcore' && !env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE) {
      // The real SDK client, pointed at the emulator, signing with placeholder credentials the
      // emulator checks the signature against, as AWS would.
      const credentials = { accessKeyId: 'LOCALEMULATOR', secretAccessKey: 'local-emulator-placeholder' };
      emulator = await startAgentCoreEmulator({
        runtimes: { [transport.runtimeArn]: executionBase! },
        host,
        credentials: { [credentials.accessKeyId]: credentials.secretAccessKey },
        ...(options.agentCoreSessions ? { sessions: options.agentCoreSessions } : {}),
      });
      closers.push(() => emulator!.close());
      deps.agentCoreClient = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials });
    }
    const agents = buildExecutionAgents(agentSettings, deps);
    const agent = agents.default;

    const consoleReplies = options.slack || env.SLACK_BOT_TOKEN ? undefined : new ConsoleSlackReplies(options.replyWriter, undefined, env.SLACK_BOT_USER_ID || undefined);
    const slack = options.slack ?? consoleReplies ?? new WebApiSlackReplies(createSlackWebClient({ token: env.SLACK_BOT_TOKEN!, apiUrl: env.SLACK_API_URL }), env.SLACK_API_URL ? { apiUrl: env.SLACK_API_URL } : {});

    const signingSecretGenerated = !env.SLACK_SIGNING_SECRET;
    const signingSecret = env.SLACK_SIGNING_SECRET || randomBytes(16).toString('hex');
    const traces = new TraceRecorder();
    const pipeline = createLocalPipeline({ agent, agents, slack, signingSecret, env, timeScale: options.timeScale, log, trace: traces.tracer });
    closers.push(() => pipeline.stop());

    let ingressUrl = '';
    let verificationBase = '';
    const say: LocalStack['say'] = async (text, sayOptions = {}) => {
      if (sayOptions.files?.length && !consoleReplies) throw new Error('files can be shared locally only while replies go to the terminal (no SLACK_BOT_TOKEN)');
      const files = sayOptions.files?.map((file) => consoleReplies!.shareFile(file, verificationBase));
      const kind = sayOptions.followUp && sayOptions.threadTs ? 'thread-reply' : 'mention';
      const { body, eventId, ts } = slackEventEnvelope(kind, { text, threadTs: sayOptions.threadTs, botUserId: env.SLACK_BOT_USER_ID, ...(files ? { files } : {}), ...(sayOptions.channel ? { channel: sayOptions.channel } : {}) });
      const response = await postSignedEvent(ingressUrl, body, signingSecret);
      return { status: response.status, eventId, ts };
    };

    const surface = createLocalAgentSurface({ ingressUrl: () => ingressUrl, signingSecret, ...(env.SLACK_BOT_USER_ID ? { botUserId: env.SLACK_BOT_USER_ID } : {}), ...(consoleReplies ? { consoleReplies } : {}), pipeline, traces });
    const verification = createServer((req, res) => {
      routeVerification(req, res, { pipeline, traces, consoleReplies, say, surface, agents: agents.routes, described: describeAgents(agentSettings).map((agent) => (emulator && agent.transport === 'agentcore' ? { ...agent, where: `${agent.where} (the local AgentCore emulator at ${emulator.endpoint})` } : agent)), base: () => verificationBase }).catch((error: unknown) => {
        log.error('local ingress failure', { error: error as Error });
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      });
    });
    verificationBase = `http://${await listen(verification, options.verificationPort ?? verificationPortOf(env), host)}`;
    closers.push(() => close(verification));
    ingressUrl = `${verificationBase}/slack/events`;

    return {
      ingressUrl,
      playgroundUrl: `${verificationBase}/`,
      ...(executionBase ? { executionUrl: `${executionBase}/invocations` } : {}),
      ...(emulator ? { agentCoreEndpoint: emulator.endpoint, agentCoreEmulator: emulator } : {}),
      agent,
      agents,
      signingSecret,
      signingSecretGenerated,
      ...(consoleReplies ? { consoleReplies } : {}),
      traces,
      pipeline,
      ...(runtime ? { runtime } : {}),
      say,
      surface,
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
  surface: LocalAgentSurface;
  /** Where each agent answers: the playground offers their channels. */
  agents: AgentRoutes;
  /** The agents this stack calls, as `zone agents` shows them (with the ports and transports it really uses). */
  described: AgentDescription[];
  /** This server's own origin (files are served from it). */
  base: () => string;
};

/** A file shared through the playground or `zone say --file`, at most. */
const MAX_LOCAL_FILE_BYTES = 50 * 1024 * 1024;

async function routeVerification(req: IncomingMessage, res: ServerResponse, routes: Routes): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  if (req.method === 'POST' && url.pathname === '/slack/events') {
    const body = await readBody(req, 1_048_576);
    if (body === 'too-large') return sendJson(res, 413, { error: 'payload too large' });
    const headers = Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(',') : value]));
    const answer = await routes.pipeline.ingress({ headers, body });
    // The local workspace remembers what people said, as Slack does, for the thread context.
    if (answer.statusCode === 200 && routes.consoleReplies) rememberMessage(routes.consoleReplies, body);
    res.writeHead(answer.statusCode, answer.headers).end(answer.body);
    return;
  }
  if (req.method === 'GET' && url.pathname.startsWith('/api/files/') && routes.consoleReplies) {
    // A shared file, as Slack's url_private_download serves it (no playground check: the
    // invoker's download has no browser headers; the id is unguessable).
    const id = url.pathname.split('/')[3] ?? '';
    const bytes = routes.consoleReplies.fileBytes(id);
    if (!bytes) return sendJson(res, 404, { error: 'no such file' });
    // Images as what they are, for the playground's preview; anything else as bytes, never as a page of this origin.
    const mimetype = routes.consoleReplies.fileMimetype(id) ?? '';
    const type = /^image\/(png|jpeg|gif|webp)$/.test(mimetype) ? mimetype : 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': bytes.length, 'X-Content-Type-Options': 'nosniff' }).end(bytes);
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
    const body = await readBody(req, Math.ceil((MAX_LOCAL_FILE_BYTES * 4) / 3) + 65_536);
    if (body === 'too-large') return sendJson(res, 413, { error: 'payload too large' });
    const request = JSON.parse(body.toString() || '{}') as { text?: unknown; thread_ts?: unknown; follow_up?: unknown; files?: unknown; channel?: unknown };
    if (typeof request.text !== 'string') return sendJson(res, 400, { error: 'text is required' });
    const threadTs = typeof request.thread_ts === 'string' && request.thread_ts ? request.thread_ts : undefined;
    const files = parseFiles(request.files);
    if (typeof files === 'string') return sendJson(res, 400, { error: files });
    if (files.length && !routes.consoleReplies) return sendJson(res, 400, { error: 'files can be shared locally only while replies go to the terminal (no SLACK_BOT_TOKEN)' });
    // A channel id as Slack writes them: the playground picks one to show routing by channel.
    if (request.channel !== undefined && (typeof request.channel !== 'string' || !/^[CDG][A-Z0-9]{1,20}$/.test(request.channel))) return sendJson(res, 400, { error: 'channel must be a Slack channel id (C…)' });
    const channel = typeof request.channel === 'string' ? request.channel : undefined;
    const sent = await routes.say(request.text, { ...(threadTs ? { threadTs } : {}), followUp: request.follow_up === true, ...(files.length ? { files } : {}), ...(channel ? { channel } : {}) });
    return sendJson(res, 200, { status: sent.status, event_id: sent.eventId, ts: sent.ts, thread_ts: threadTs ?? sent.ts });
  }
  if (req.method === 'GET' && url.pathname.startsWith('/api/events/')) {
    const eventId = decodeURIComponent(url.pathname.slice('/api/events/'.length));
    const trace = routes.traces.byEventId(eventId);
    return sendJson(res, trace ? 200 : 404, trace ? withReplies(trace, routes, await routes.surface.feedback()) : { error: 'unknown event id' });
  }
  if (req.method === 'GET' && url.pathname === '/api/state') {
    const feedback = await routes.surface.feedback();
    const workspace = routes.consoleReplies;
    return sendJson(res, 200, {
      requests: routes.traces.all().map((trace) => withReplies(trace, routes, feedback)),
      replies_to_terminal: Boolean(workspace),
      // The agent surface: each thread's session, what was offered or shown to one person, the Stops, the feedback.
      sessions: workspace ? [...workspace.sessions.values()] : [],
      surface: workspace?.surface ?? [],
      stops: routes.surface.stops.all(),
      feedback,
      // The agents and where each answers: the playground picks a channel to show routing.
      agents: routes.agents.agents.map((agent) => ({ ...agent, default: agent.name === routes.agents.defaultAgent })),
    });
  }
  if (req.method === 'GET' && url.pathname === '/api/agents') {
    // `zone agents` asks the running stack, not its own shell's variables.
    return sendJson(res, 200, { agents: routes.described });
  }
  if (req.method === 'GET' && url.pathname === '/api/usage') {
    // Who used how much: for this machine alone, like the feedback (`zone usage`).
    if (!isLoopback(req.socket.remoteAddress)) return sendJson(res, 403, { error: 'usage is served to this machine only' });
    const count = Math.min(400, Math.max(1, Number(url.searchParams.get('days') ?? 7) || 7));
    const days = await Promise.all(lastDays(systemClock.now(), count).map(async (day) => ({ day, rows: await routes.pipeline.usage.day(day) })));
    return sendJson(res, 200, { days });
  }
  if (await routes.surface.route(req, res, url.pathname)) return;
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

function withReplies(trace: ReturnType<TraceRecorder['all']>[number], routes: Routes, feedback: readonly FeedbackRecord[]) {
  const ingress = trace.events.find((e) => e.hop === 'ingress');
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const ts = text(ingress?.detail?.ts);
  // The thread the poster replies in, computed the one way the poster computes it.
  const threadTs = ts === undefined ? undefined : replyThreadTs({ ts, thread_ts: text(ingress?.detail?.thread_ts) });
  // In a thread that goes on, only this request's replies: each chunk names its request (a live
  // message names it once it is finished; until then, one that started after this request did).
  const since = ingress?.at ?? 0;
  const replies = (routes.consoleReplies?.posted ?? [])
    .filter((reply) => reply.threadTs === threadTs && (reply.requestId === undefined ? reply.at >= since : reply.requestId === trace.requestId))
    // An answer's feedback buttons say which was clicked last (`given`), as Slack shows the clicker.
    .map((reply) => (reply.feedback ? { ...reply, feedback: { ...reply.feedback, ...givenFeedback(feedback, reply.feedback.requestId) } } : { ...reply }));
  const shown = routes.consoleReplies?.statuses.filter((entry) => entry.threadTs === threadTs && entry.at >= since).at(-1);
  const status = shown?.status && !trace.events.some((event) => event.hop === 'reply-posted') ? shown.status : undefined;
  const channel = text(ingress?.detail?.channel);
  const surface = routes.surface.threadSurface({ channel, threadTs, since, replies });
  // The files the answer shared in the thread (Slack's upload, locally: console-slack-uploads.ts), served at /api/files.
  const sharedFiles = (routes.consoleReplies?.sharedFiles ?? [])
    .filter((file) => file.threadTs === threadTs && file.at >= since)
    .map((file) => ({ name: file.name, size: file.size, mimetype: file.mimetype, url: `/api/files/${file.id}/${encodeURIComponent(file.name)}` }));
  return { ...trace, ...(channel ? { channel } : {}), ...(threadTs ? { thread_ts: threadTs } : {}), ...(status ? { status } : {}), replies, ...(sharedFiles.length ? { shared_files: sharedFiles } : {}), ...surface };
}

/** The rating last given to an answer, if any. */
function givenFeedback(feedback: readonly FeedbackRecord[], requestId: string): { given?: 'positive' | 'negative' } {
  const value = feedback.find((record) => record.request_id === requestId && record.value)?.value;
  return value ? { given: value } : {};
}

/** `files` of a playground request: `[{name, mimetype, data}]`, data in base64; an error text when malformed. */
function parseFiles(value: unknown): Array<{ name: string; mimetype: string; bytes: Buffer }> | string {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return 'files must be an array';
  const files = [];
  for (const file of value as Array<Record<string, unknown>>) {
    if (typeof file?.name !== 'string' || typeof file.data !== 'string') return 'each file needs a name and base64 data';
    const bytes = Buffer.from(file.data, 'base64');
    if (bytes.length > MAX_LOCAL_FILE_BYTES) return `a file may be ${MAX_LOCAL_FILE_BYTES} bytes at most`;
    files.push({ name: file.name, mimetype: typeof file.mimetype === 'string' && file.mimetype ? file.mimetype : 'application/octet-stream', bytes });
  }
  return files;
}

/** Records an accepted message event in the local workspace. */
function rememberMessage(workspace: ConsoleSlackReplies, body: Buffer | string): void {
  try {
    const envelope = SlackEnvelopeSchema.parse(JSON.parse(body.toString()));
    if (envelope.type !== 'event_callback') return;
    const { channel, ts, thread_ts, user, text, files } = envelope.event;
    if (!channel || !ts || !user) return;
    workspace.recordMessage({ channel, ts, ...(thread_ts ? { thread_ts } : {}), user, text: text ?? '', ...(files?.length ? { files: files.map((file) => ({ name: file.name ?? file.id })) } : {}) });
  } catch {
    // Not an event the local workspace keeps.
  }
}

async function stopAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const closeOne of closers.reverse()) await closeOne().catch(() => undefined);
}
