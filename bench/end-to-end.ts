import { runChildMeasure } from './support/child-entry';
import { join } from 'node:path';
import { loadExecutionConfig } from '../src/execution/config';
import { createExecutionRuntime } from '../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../src/local/local-pipeline';
import { appMentionEnvelope } from '../src/local/slack-event-builder';
import { createLogger } from '../src/observability/logger';
import { createSlackWebClient, WebApiSlackReplies } from '../src/slack/slack-replies';
import { slackSignatureHeaders } from '../src/verification/intake/slack-signature';
import { startFakeSlackApi } from '../test/support/fake-slack-api';
import { percentile, rotate, summarize, type Summary } from './stats';
import { PLACEHOLDER_AWS_ENV } from './support/net';
import { bundleProgram, measuredEnv, spawnTracked } from './support/processes';
import { TRANSPORTS, serveBehindEveryTransport, type TransportName } from './support/transport-targets';

/**
 * Part 4: a signed Slack event in, the reply at a fake Slack Web API out, through the local
 * pipeline (`createLocalPipeline`: the four verification functions with in-memory queues and
 * stores) and the real @slack/web-api client, for each transport to the same execution runtime
 * (echo executor): in-process (the dispatcher in the same process), https (the runtime's HTTP
 * host on loopback) and agentcore (the real BedrockAgentCoreClient → the AgentCore emulator → the
 * HTTP host). Events go one at a time; transports take turns in chunks. The whole part runs in a
 * child process bundled with esbuild, with its logs (default level) going to /dev/null.
 */
const ROOT = join(__dirname, '..');
const SIGNING_SECRET = 'bench-e2e-signing-secret-0123456789';
export { TRANSPORTS, type TransportName } from './support/transport-targets';

export type EndToEndOptions = { eventsPerTransport: number; warmupEvents: number; chunk: number };

export type EndToEndResult = {
  eventsPerTransport: number;
  warmupEvents: number;
  /** Event in → reply posted, ms. */
  reply: Record<TransportName, { p50: number; p99: number; all: Summary }>;
  /** Event in → HTTP answer to Slack (the ack), ms. */
  ack: Record<TransportName, { p50: number; p99: number }>;
};

/** Runs in the child: measures and returns the figures. */
export async function measureEndToEnd(options: EndToEndOptions): Promise<EndToEndResult> {
  Object.assign(process.env, PLACEHOLDER_AWS_ENV);
  const slack = await startFakeSlackApi();
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({}), log: createLogger('execution') });
  const targets = await serveBehindEveryTransport(runtime);
  const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }));
  const pipelines = new Map<TransportName, LocalPipeline>();
  try {
    for (const name of TRANSPORTS) {
      pipelines.set(name, createLocalPipeline({ agent: targets.agentFor(name), slack: replies, signingSecret: SIGNING_SECRET, env: { RATE_LIMIT_PER_MINUTE: '100000000' }, log: createLogger('verification') }));
    }

    const oneEvent = async (name: TransportName, n: number): Promise<{ ackMs: number; replyMs: number }> => {
      const text = `what is ${n} plus one?`;
      const { body, ts } = appMentionEnvelope({ text });
      const headers = slackSignatureHeaders(SIGNING_SECRET, body);
      slack.reset();
      const posted = slack.waitForPosts(1, 10_000);
      const started = performance.now();
      const ack = await pipelines.get(name)!.ingress({ headers, body });
      const acked = performance.now();
      const [post] = await posted;
      const replied = performance.now();
      if (ack.statusCode !== 200) throw new Error(`${name}: ingress answered ${ack.statusCode}`);
      if (post?.thread_ts !== ts || post.text !== `echo: ${text}`) throw new Error(`${name}: unexpected reply ${JSON.stringify(post)}`);
      return { ackMs: acked - started, replyMs: replied - started };
    };

    const samples = new Map<TransportName, { ack: number[]; reply: number[] }>(TRANSPORTS.map((name) => [name, { ack: [], reply: [] }]));
    let n = 0;
    for (const name of TRANSPORTS) for (let i = 0; i < options.warmupEvents; i += 1) await oneEvent(name, (n += 1));
    const chunks = Math.ceil(options.eventsPerTransport / options.chunk);
    for (let round = 0; round < chunks; round += 1) {
      for (const name of rotate(TRANSPORTS, round)) {
        const sample = samples.get(name)!;
        const count = Math.min(options.chunk, options.eventsPerTransport - sample.reply.length);
        for (let i = 0; i < count; i += 1) {
          const { ackMs, replyMs } = await oneEvent(name, (n += 1));
          sample.ack.push(ackMs);
          sample.reply.push(replyMs);
        }
      }
    }
    for (const pipeline of pipelines.values()) await pipeline.whenIdle({ timeoutMs: 10_000 });

    const entry = <T>(make: (name: TransportName) => T) => Object.fromEntries(TRANSPORTS.map((name) => [name, make(name)])) as Record<TransportName, T>;
    return {
      eventsPerTransport: options.eventsPerTransport,
      warmupEvents: options.warmupEvents,
      reply: entry((name) => {
        const { reply } = samples.get(name)!;
        return { p50: percentile(reply, 50), p99: percentile(reply, 99), all: summarize(reply) };
      }),
      ack: entry((name) => {
        const { ack } = samples.get(name)!;
        return { p50: percentile(ack, 50), p99: percentile(ack, 99) };
      }),
    };
  } finally {
    for (const pipeline of pipelines.values()) await pipeline.stop();
    await targets.close();
    await slack.close();
  }
}

/** The child's entry (bench/support/child-entry.ts). */
export function endToEndFromArgv(argv = process.argv.slice(2)): void {
  runChildMeasure<EndToEndOptions, unknown>(measureEndToEnd, argv);
}

export async function runEndToEnd(options: EndToEndOptions & { workDir: string; log: (line: string) => void }): Promise<EndToEndResult> {
  const program = await bundleProgram(options.workDir, 'end-to-end', __dirname, "import { endToEndFromArgv } from './end-to-end'; endToEndFromArgv();");
  const { log, workDir: _workDir, ...childOptions } = options;
  const child = spawnTracked(process.execPath, [program, JSON.stringify(childOptions)], { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let report = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (report += chunk.toString()));
  await new Promise<void>((resolve) => child.once('close', () => resolve()));
  const parsed = JSON.parse(report.trim().split('\n').pop() || '{"error":"no report"}') as EndToEndResult & { error?: string };
  if (parsed.error) throw new Error(`end-to-end child failed: ${parsed.error}\n${stderr}`);
  for (const name of TRANSPORTS) log(`  ${name}: reply p50 ${parsed.reply[name].p50.toFixed(1)} ms, p99 ${parsed.reply[name].p99.toFixed(1)} ms`);
  return parsed;
}
