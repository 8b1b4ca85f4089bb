import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { CASES } from '../../src/conformance/cases';
import { LEVELS, type Level } from '../../src/conformance/levels';
import { createProbe, type ConformanceTarget } from '../../src/conformance/probe';
import { formatReport } from '../../src/conformance/report';
import { runConformance, type CaseResult, type ConformanceOptions, type ConformanceReport } from '../../src/conformance/runner';
import { loadExecutionConfig } from '../../src/execution/config';
import { readBody } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { closeServer, listenOnLoopback } from '../support/http';
import { runZone } from '../support/spawn';

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/conformance_ref-AbCdEf1234';
const BROKEN_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/conformance_500-AbCdEf1234';
const EXAMPLES = join(__dirname, '..', '..', 'docs', 'examples');
/** Whether a Go toolchain is on PATH (`go version` runs). */
const GO = spawnSync('go', ['version'], { encoding: 'utf8', timeout: 30_000 }).status === 0;
if (!GO) process.stderr.write('\n[conformance] Go is not installed here: the docs/examples/go test is skipped (CI installs golang-go)\n');
/** Agents here answer accepted after 150 ms; a 600 ms task is slow enough, and quick to poll. */
const SYNC_BUDGET_MS = '150';
const FAST = ['--slow-ms', '600'];
const FAST_OPTIONS: ConformanceOptions = { slowMs: 600, pollIntervalMs: 50 };

/** The cases of these levels. */
function casesOf(...levels: Level[]) {
  return CASES.filter((c) => levels.includes(c.level));
}

/** A level's line in the report's verdict block: `  core  PASS  24 passed`, `  cancel  not declared (skipped)`. */
function levelLine(output: string, level: Level): string {
  const line = output.split('\n').find((l) => new RegExp(`^  ${level}\\s+(PASS|FAIL|not)`).test(l));
  if (!line) throw new Error(`no level line for ${level} in:\n${output}`);
  return line.trim();
}

/** The table row of a case: its id at the start of a line, then the expectation, result and ms. */
function row(output: string, id: string): string {
  const line = output.split('\n').find((l) => l.startsWith(`${id} `));
  if (!line) throw new Error(`no row for ${id} in:\n${output}`);
  return line;
}

function resultOf(report: ConformanceReport, id: string): CaseResult {
  const result = report.results.find((r) => r.id === id);
  if (!result) throw new Error(`no result for ${id} in:\n${formatReport(report)}`);
  return result;
}

async function check(target: ConformanceTarget, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const probe = createProbe(target);
  try {
    return await runConformance(probe, { ...FAST_OPTIONS, ...options });
  } finally {
    probe.close();
  }
}

type Flaw =
  | 'http-500-errors'
  | 'number-ids-as-strings'
  | 'invalid-params-without-data'
  | 'answers-notifications'
  | 'ignores-optional-params'
  | 'rejects-thread-context'
  | 'streams-text-not-in-answer'
  | 'streams-without-cursor';

/** The flaws that change a request before the runtime sees it, or answer it instead of the runtime. */
function beforeDispatch(flaw: Flaw, body: Buffer): { body: string | Uint8Array } | { answer: string } {
  if (flaw !== 'ignores-optional-params' && flaw !== 'rejects-thread-context') return { body };
  let value: Record<string, any>;
  try {
    value = JSON.parse(body.toString('utf8')) as Record<string, any>;
  } catch {
    return { body };
  }
  const params = value?.params;
  if (typeof params !== 'object' || params === null) return { body };
  if (flaw === 'ignores-optional-params') {
    // An agent written to the first contract: it never looks at the params added since, so it
    // neither reads nor checks them (and does not stream).
    const added = ['messages', 'attachments', 'context', 'stream'].filter((key) => key in params);
    if (!added.length) return { body };
    for (const key of added) delete params[key];
    return { body: JSON.stringify(value) };
  }
  if (!('messages' in params || 'attachments' in params)) return { body };
  // An agent written before the fields existed, one that refuses params it does not know.
  const data = Object.keys(params).filter((key) => key === 'messages' || key === 'attachments').map((path) => ({ path, message: `unknown param ${path}` }));
  return { answer: JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params', data }, id: value.id ?? null }) };
}

/**
 * Our reference runtime behind a node:http host with one deliberate flaw, each a mistake agent
 * authors make (docs/migration-guide.md, troubleshooting). It serves `card` as its agent card,
 * and no card without one.
 */
async function startFlawedAgent(flaw: Flaw, env: Record<string, string> = {}, card?: unknown): Promise<{ url: string; baseUrl: string; close(): Promise<void> }> {
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS, ...env }) });
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET') {
      if (card === undefined || req.url !== '/.well-known/agent-card.json') return res.writeHead(404).end();
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    }
    const body = await readBody(req, 1_000_000);
    if (body === 'too-large') return res.writeHead(413).end();
    const before = beforeDispatch(flaw, body);
    let answer = 'answer' in before ? before.answer : await runtime.dispatch(before.body);
    let status = 200;
    if (answer === undefined) {
      if (flaw !== 'answers-notifications') return res.writeHead(204).end();
      answer = JSON.stringify({ jsonrpc: '2.0', result: { status: 'success', response_text: 'ok' }, id: null });
    }
    const value = JSON.parse(answer) as Record<string, any>;
    if (flaw === 'http-500-errors' && 'error' in value) status = 500;
    if (flaw === 'number-ids-as-strings' && typeof value.id === 'number') value.id = String(value.id);
    if (flaw === 'invalid-params-without-data' && value.error?.code === -32602) delete value.error.data;
    // Streamed text the answer does not begin with (a draft rewritten at the end), or text without the cursor that follows it.
    if (flaw === 'streams-text-not-in-answer' && typeof value.result?.text === 'string') value.result.text = value.result.text.toUpperCase();
    if (flaw === 'streams-without-cursor' && typeof value.result?.text === 'string') delete value.result.cursor;
    const text = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
  const baseUrl = await listenOnLoopback(server);
  return { url: `${baseUrl}/invocations`, baseUrl, close: () => closeServer(server) };
}

/** Starts an example agent as its README says and waits for the address it prints. */
async function startExample(command: string, args: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} printed no address within 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`${command} exited early:\n${output}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('zone conformance against the reference runtime', () => {
  let runtime: RunningRuntime;
  let emulator: AgentCoreEmulator;
  let flawed: Awaited<ReturnType<typeof startFlawedAgent>>;

  beforeAll(async () => {
    runtime = await startExecutionRuntime({ SYNC_BUDGET_MS });
    flawed = await startFlawedAgent('http-500-errors');
    emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: runtime.baseUrl, [BROKEN_ARN]: flawed.baseUrl } });
  });
  afterAll(async () => {
    await emulator.close();
    await Promise.all([runtime.close(), flawed.close()]);
  });

  it('over https on loopback: the agent card declares every level, every case of each passes, the async path included, and the exit code is 0', async () => {
    // Act
    const { code, output } = await runZone(['conformance', runtime.invocationsUrl, ...FAST]);
    // Assess
    expect(output).toContain(`agent card: the agent card at ${runtime.baseUrl}/.well-known/agent-card.json declares ${LEVELS.join(', ')}`);
    expect(output).toMatch(/^case\s+expectation\s+result\s+ms$/m);
    for (const c of CASES) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
    for (const level of LEVELS) {
      expect(output).toMatch(new RegExp(`^${level} — ${level === 'core' ? 'every execution agent' : 'declared by the agent card'}: `, 'm'));
      expect(levelLine(output, level)).toMatch(/^\S+\s+PASS\s+\d+ passed$/);
    }
    expect(output).toContain(`${CASES.length} cases: ${CASES.length} passed, 0 failed, 0 warned, 0 skipped — the agent conforms to the zone contract (levels: ${LEVELS.join(', ')})`);
    expect(code).toBe(0);
  });

  it('through the AgentCore emulator with --transport agentcore --level all: everything AgentCore carries passes, in one session', async () => {
    // Act: InvokeAgentRuntime carries no GET, so the levels are declared with --level
    const { code, output } = await runZone(['conformance', '--transport', 'agentcore', '--arn', ARN, '--endpoint', emulator.endpoint, '--level', 'all', ...FAST]);
    // Assess
    expect(output).toContain(`zone conformance: ${ARN} via ${emulator.endpoint} over agentcore`);
    expect(output).toContain('agent card: the agent card cannot be read over agentcore; declare levels with --level');
    expect(output).toContain(`levels checked: core (every execution agent); ${LEVELS.filter((l) => l !== 'core').join(', ')} (asked for with --level)`);
    for (const c of CASES.filter((c) => c.id !== 'malformed.non-utf8')) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
    expect(row(output, 'malformed.non-utf8')).toMatch(/\sskip\s+\d+$/);
    expect(code).toBe(0);
    const sessions = new Set(emulator.invocations.filter((i) => i.runtimeArn === ARN).map((i) => i.sessionId));
    expect(sessions.size).toBe(1);
  });

  it('--transport agentcore without --endpoint honours AWS_ENDPOINT_URL_BEDROCK_AGENTCORE', async () => {
    // Act
    const { code, output } = await runZone(['conformance', '--transport', 'agentcore', '--arn', ARN, '--only', 'execute_task.success'], {
      AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: emulator.endpoint,
    });
    // Assess
    expect(row(output, 'execute_task.success')).toMatch(/\spass\s+\d+$/);
    expect(output).toContain('1 case: 1 passed');
    expect(code).toBe(0);
  });

  it('a runtime that answers at once warns that the async path (streaming included) was not exercised, and fails with --require-async', async () => {
    // Prepare
    const fast = await startExecutionRuntime({ SYNC_BUDGET_MS: '5000' });
    try {
      const target: ConformanceTarget = { kind: 'https', url: fast.invocationsUrl };
      // The slow and streaming tasks' text: no #sleep or #stream, answered well within the budget
      const slowText = 'conformance check: a quick task';
      // Act
      const lenient = await check(target, { only: ['execute_task', 'get_task_result.polling', 'cancel_task.accepted'], slowText });
      const strict = await check(target, { only: ['execute_task.accepted', 'execute_task.stream'], slowText, requireAsync: true });
      // Assess
      expect(resultOf(lenient, 'execute_task.success').status).toBe('pass');
      expect(resultOf(lenient, 'execute_task.accepted')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^not exercised: .*--slow-ms/) });
      expect(resultOf(lenient, 'get_task_result.polling').status).toBe('warn');
      expect(resultOf(lenient, 'cancel_task.accepted').status).toBe('warn');
      expect(resultOf(lenient, 'execute_task.stream')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^not exercised: the streaming task was answered with success at once/) });
      expect(lenient.conforms).toBe(true);
      expect(resultOf(strict, 'execute_task.accepted').status).toBe('fail');
      expect(resultOf(strict, 'execute_task.stream').status).toBe('fail');
      expect(strict.conforms).toBe(false);
    } finally {
      await fast.close();
    }
  });

  it('an agent that answers JSON-RPC errors with HTTP 500 fails, and the table names the failing cases (exit code 1)', async () => {
    // Act
    const { code, output } = await runZone(['conformance', flawed.url, ...FAST]);
    // Assess
    expect(row(output, 'execute_task.success')).toMatch(/\spass\s+\d+$/);
    expect(row(output, 'error.method-not-found')).toMatch(/\sFAIL\s+\d+$/);
    expect(row(output, 'http.status-200')).toMatch(/\sFAIL\s+\d+$/);
    expect(output).toMatch(/FAIL error\.method-not-found: the agent answered HTTP 500 .*must travel with HTTP 200/);
    expect(output).toMatch(/why it matters: behind AgentCore a non-2xx answer becomes RuntimeClientError/);
    expect(output).toMatch(/the agent does NOT conform/);
    expect(code).toBe(1);
  });

  it('behind AgentCore, the same HTTP 500 shows up as RuntimeClientError on the error cases', async () => {
    // Act
    const report = await check({ kind: 'agentcore', runtimeArn: BROKEN_ARN, endpoint: emulator.endpoint }, { only: ['execute_task.success', 'error.invalid-params.text'] });
    // Assess
    expect(resultOf(report, 'execute_task.success').status).toBe('pass');
    expect(resultOf(report, 'error.invalid-params.text')).toMatchObject({ status: 'fail', detail: expect.stringContaining('RuntimeClientError') });
    expect(report.conforms).toBe(false);
  });
});

describe('zone conformance against flawed agents', () => {
  it.each<[Flaw, string, RegExp]>([
    ['number-ids-as-strings', 'id.number', /^expected id \d+ \(a number\), got "\d+" \(a string\)$/],
    ['invalid-params-without-data', 'error.invalid-params.text', /^expected error\.data to list the failing field "text", got no data$/],
    ['answers-notifications', 'notification.execute_task', /^expected no response to a notification, got "\{/],
    ['rejects-thread-context', 'execute_task.optional-params', /^expected an execute_task result \(success or accepted\), got error -32602 /],
    ['ignores-optional-params', 'error.invalid-params.messages', /^expected error\.code -32602 \(Invalid params\), got a result: /],
    ['ignores-optional-params', 'error.invalid-params.attachments', /^expected error\.code -32602 \(Invalid params\), got a result: /],
    ['ignores-optional-params', 'error.invalid-params.context', /^expected error\.code -32602 \(Invalid params\), got a result: /],
  ])('%s: %s fails with an explanation, and the agent does not conform', async (flaw, failingCase, explanation) => {
    // Prepare
    const agent = await startFlawedAgent(flaw);
    try {
      // Act: every level checked, so a capability's case runs on an agent that declares none
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.success', failingCase], levels: ['all'] });
      // Assess
      expect(resultOf(report, 'execute_task.success').status).toBe('pass');
      expect(resultOf(report, failingCase)).toMatchObject({ status: 'fail', detail: expect.stringMatching(explanation), why: expect.any(String) });
      expect(report.conforms).toBe(false);
      expect(formatReport(report)).toMatch(new RegExp(`^${failingCase.replace(/\./g, '\\.')}\\s.*\\sFAIL\\s+\\d+$`, 'm'));
    } finally {
      await agent.close();
    }
  });
});

describe('zone conformance and an agent written to an earlier contract (levels)', () => {
  let agent: Awaited<ReturnType<typeof startFlawedAgent>>;
  beforeAll(async () => {
    // It ignores messages, attachments, context and stream, and serves no agent card.
    agent = await startFlawedAgent('ignores-optional-params');
  });
  afterAll(() => agent.close());

  it('passes core and exits 0: the capability levels it does not declare are skipped', async () => {
    // Act
    const { code, output } = await runZone(['conformance', agent.url, ...FAST]);
    // Assess
    expect(output).toContain(`agent card: no agent card at ${agent.baseUrl}/.well-known/agent-card.json (HTTP 404)`);
    expect(output).toContain('levels checked: core (every execution agent)\nnot declared, skipped: thread-context, attachments, context, streaming, cancel, usage');
    for (const c of casesOf('core')) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
    for (const c of CASES.filter((c) => c.level !== 'core')) expect(output).not.toMatch(new RegExp(`^${c.id.replace(/\./g, '\\.')}\\s`, 'm'));
    expect(levelLine(output, 'core')).toBe(`core            PASS  ${casesOf('core').length} passed`);
    for (const level of LEVELS.filter((l) => l !== 'core')) expect(levelLine(output, level)).toMatch(/^\S+\s+not declared \(skipped\)$/);
    expect(output).toMatch(/— the agent conforms to the zone contract \(levels: core\)$/m);
    expect(code).toBe(0);
  });

  it('with --level thread-context fails that level, core still passing, and exits 1', async () => {
    // Act
    const { code, output } = await runZone(['conformance', agent.url, '--level', 'thread-context', ...FAST]);
    // Assess
    expect(output).toContain('levels checked: core (every execution agent); thread-context (asked for with --level)');
    expect(row(output, 'execute_task.thread-context')).toMatch(/\spass\s+\d+$/);
    expect(row(output, 'error.invalid-params.messages')).toMatch(/\sFAIL\s+\d+$/);
    expect(levelLine(output, 'core')).toMatch(/^core\s+PASS\s+\d+ passed$/);
    expect(levelLine(output, 'thread-context')).toBe('thread-context  FAIL  1 passed, 1 failed');
    expect(levelLine(output, 'attachments')).toMatch(/not declared \(skipped\)$/);
    expect(output).toMatch(/— the agent does NOT conform to the zone contract \(failing: thread-context\)$/m);
    expect(code).toBe(1);
  });

  it('declaring thread-context in its agent card fails the same way; a level the kit does not know is named and ignored', async () => {
    // Prepare
    const declaring = await startFlawedAgent('ignores-optional-params', {}, { name: 'v1', zone_contract: { levels: ['core', 'thread-context', 'telepathy'] } });
    try {
      // Act
      const report = await check({ kind: 'https', url: declaring.url }, { only: ['execute_task.success', 'error.invalid-params'] });
      // Assess
      expect(report.card).toBe(`the agent card at ${declaring.baseUrl}/.well-known/agent-card.json declares core, thread-context (ignored, unknown to this kit: telepathy)`);
      expect(report.levels.find((l) => l.level === 'thread-context')).toEqual({ level: 'thread-context', declaredBy: 'agent card', status: 'fail', counts: { pass: 0, fail: 1, warn: 0, skip: 0 } });
      expect(report.levels.find((l) => l.level === 'core')).toMatchObject({ declaredBy: 'always', status: 'pass' });
      expect(report.levels.find((l) => l.level === 'attachments')).toEqual({ level: 'attachments', status: 'skipped', counts: { pass: 0, fail: 0, warn: 0, skip: 0 } });
      expect(report.results.map((r) => r.id)).toEqual(['execute_task.success', 'error.invalid-params.text', 'error.invalid-params.empty-text', 'error.invalid-params.task_id', 'error.invalid-params.messages']);
      expect(report.conforms).toBe(false);
    } finally {
      await declaring.close();
    }
  });

  it('--level with a name it does not know, or --only naming only undeclared cases, is a usage error (exit 2)', async () => {
    // Act
    const unknown = await runZone(['conformance', agent.url, '--level', 'core,telepathy']);
    const undeclared = await runZone(['conformance', agent.url, '--only', 'error.invalid-params.messages']);
    // Assess
    expect(unknown.output).toContain('--level takes core, thread-context, attachments, context, streaming, cancel, usage, files, steps, asker, questions or all, not "telepathy"');
    expect(unknown.code).toBe(2);
    expect(undeclared.output).toContain('no case of the levels checked (core) starts with error.invalid-params.messages; add --level thread-context');
    expect(undeclared.code).toBe(2);
  });
});

describe('zone conformance against an agent that is not there', () => {
  it('stops after the first case with one clear reason instead of failing every case alike', async () => {
    // Prepare: a port that was free a moment ago, so nothing listens on it
    const server = createServer();
    const url = `${await listenOnLoopback(server)}/invocations`;
    await closeServer(server);
    // Act
    const report = await check({ kind: 'https', url });
    // Assess
    expect(report.results).toHaveLength(1);
    expect(report.stopped).toMatch(/^could not reach the agent: /);
    expect(report.conforms).toBe(false);
  });
});

/** What the examples do beyond core; they declare nothing (no agent card) and do not stream. */
const EXAMPLE_LEVELS: Level[] = ['thread-context', 'attachments', 'cancel'];

/**
 * An example passes at core level as it is (exit 0, the capability levels skipped), and every
 * level it implements when asked with --level.
 */
async function expectExampleConforms(url: string): Promise<void> {
  const core = await runZone(['conformance', url, ...FAST]);
  expect(levelLine(core.output, 'core')).toMatch(/^core\s+PASS\s+\d+ passed$/);
  expect(core.output).toContain(`${casesOf('core').length} cases: ${casesOf('core').length} passed, 0 failed, 0 warned, 0 skipped — the agent conforms to the zone contract (levels: core)`);
  expect(core.code).toBe(0);

  const { code, output } = await runZone(['conformance', url, '--level', EXAMPLE_LEVELS.join(','), ...FAST]);
  for (const c of casesOf('core', ...EXAMPLE_LEVELS)) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
  for (const level of EXAMPLE_LEVELS) expect(levelLine(output, level)).toMatch(/^\S+\s+PASS\s+\d+ passed$/);
  expect(levelLine(output, 'streaming')).toMatch(/not declared \(skipped\)$/);
  expect(code).toBe(0);
}

describe('the example agents in docs/examples', () => {
  it('python (standard library only) passes zone conformance: core, and thread-context, attachments and cancel with --level', async () => {
    // Prepare
    const agent = await startExample('python3', [join(EXAMPLES, 'python', 'agent.py'), '--port', '0', '--sync-budget-ms', SYNC_BUDGET_MS]);
    try {
      // Act, Assess
      await expectExampleConforms(agent.url);
    } finally {
      await agent.stop();
    }
  });

  it('node (node:http only) passes zone conformance: core, and thread-context, attachments and cancel with --level', async () => {
    // Prepare
    const agent = await startExample(process.execPath, [join(EXAMPLES, 'node', 'agent.mjs'), '--port', '0', '--sync-budget-ms', SYNC_BUDGET_MS]);
    try {
      // Act, Assess
      await expectExampleConforms(agent.url);
    } finally {
      await agent.stop();
    }
  });

  // Go is not part of Node's toolchain: where it is missing the test is reported as skipped, never
  // as passed. CI installs it (.ci/run), so there it always runs.
  (GO ? it : it.skip)('go (net/http only) passes go vet and zone conformance: core, and thread-context, attachments and cancel with --level', async () => {
    // Prepare: vet it, and build it outside the repository, so its start is not a compile
    const dir = join(EXAMPLES, 'go');
    // GOTOOLCHAIN=local: never download another toolchain; -buildvcs=false: no git lookup for a stamp.
    const goEnv = { ...process.env, GOFLAGS: '-buildvcs=false', GOTOOLCHAIN: 'local' };
    const vet = spawnSync('go', ['vet', './...'], { cwd: dir, encoding: 'utf8', timeout: 100_000, env: goEnv });
    expect({ status: vet.status, output: `${vet.stdout}${vet.stderr}` }).toEqual({ status: 0, output: '' });
    const bin = join(mkdtempSync(join(tmpdir(), 'go-agent-')), 'agent');
    try {
      const build = spawnSync('go', ['build', '-o', bin, '.'], { cwd: dir, encoding: 'utf8', timeout: 100_000, env: goEnv });
      expect({ status: build.status, output: `${build.stdout}${build.stderr}` }).toEqual({ status: 0, output: '' });
      const agent = await startExample(bin, ['--port', '0', '--sync-budget-ms', SYNC_BUDGET_MS]);
      try {
        // Act, Assess
        await expectExampleConforms(agent.url);
      } finally {
        await agent.stop();
      }
    } finally {
      rmSync(dirname(bin), { recursive: true, force: true });
    }
  }, 240_000);
});

describe('zone conformance and streaming (execute_task.stream)', () => {
  it('the reference runtime that streams (ECHO_STREAM_MS) passes, its pieces adding up to the start of the answer', async () => {
    // Prepare
    const agent = await startExecutionRuntime({ SYNC_BUDGET_MS, ECHO_STREAM_MS: '20' });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.invocationsUrl }, { only: ['execute_task.stream'] });
      // Assess
      expect(resultOf(report, 'execute_task.stream')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^\d+ pieces of text \(none with accepted\), \d+ of \d+ characters before success; \d+ polls$/) });
    } finally {
      await agent.close();
    }
  });

  it('an agent that declares streaming but hands out no text before the answer gets a warning', async () => {
    // Prepare: the runtime without streaming, behind a host that drops `stream`
    const agent = await startFlawedAgent('ignores-optional-params', {}, { zone_contract: { levels: ['streaming'] } });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.stream'] });
      // Assess
      expect(resultOf(report, 'execute_task.stream')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^not exercised: the task was accepted, but no text came before success/) });
      expect(report.levels.find((l) => l.level === 'streaming')).toMatchObject({ declaredBy: 'agent card', status: 'pass' });
    } finally {
      await agent.close();
    }
  });

  it.each<[Flaw, RegExp]>([
    ['streams-text-not-in-answer', /^expected the streamed text to be the start of response_text, got "ECHO: /],
    ['streams-without-cursor', /^expected a cursor with the text of get_task_result \(poll \d+\), got text ".*" without one/],
  ])('%s fails execute_task.stream with an explanation', async (flaw, explanation) => {
    // Prepare
    const agent = await startFlawedAgent(flaw, { ECHO_STREAM_MS: '20' });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.stream'], levels: ['streaming'] });
      // Assess
      expect(resultOf(report, 'execute_task.stream')).toMatchObject({ status: 'fail', detail: expect.stringMatching(explanation), why: expect.any(String) });
      expect(report.conforms).toBe(false);
    } finally {
      await agent.close();
    }
  });
});

/**
 * An agent whose streamed answers are written by hand: `frames(id)` is the body of its answer to an
 * execute_task asking for a stream (id: the request's), as `text/event-stream`.
 */
async function startSseAgent(frames: (id: unknown) => string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(404).end();
    const body = await readBody(req, 1_000_000);
    const request = JSON.parse(body.toString()) as { id: unknown };
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(frames(request.id));
  });
  const baseUrl = await listenOnLoopback(server);
  return { url: `${baseUrl}/invocations`, close: () => closeServer(server) };
}

const event = (id: unknown, result: unknown) => `data: ${JSON.stringify({ jsonrpc: '2.0', result, id })}\n\n`;

describe('zone conformance and streamed answers (execute_task.sse)', () => {
  it('the reference runtime answers with server-sent events: text by cursor, then the answer', async () => {
    // Prepare
    const agent = await startExecutionRuntime({ SYNC_BUDGET_MS });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.invocationsUrl }, { only: ['execute_task.sse'] });
      // Assess
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^\d+ events in 1 streamed answer; \d+ pieces of text, (\d+) of \1 characters before success$/) });
    } finally {
      await agent.close();
    }
  });

  it('a stream that ends before its task (the caller\'s hold) goes on with a streamed get_task_result from its cursor', async () => {
    // Prepare: the runtime ends every stream after 300 ms (STREAM_MAX_MS), well before the task
    const agent = await startExecutionRuntime({ SYNC_BUDGET_MS, STREAM_MAX_MS: '300' });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.invocationsUrl }, { only: ['execute_task.sse'] });
      // Assess
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^\d+ events in \d+ streamed answers; /) });
      expect(Number(/in (\d+) streamed answers/.exec(resultOf(report, 'execute_task.sse').detail!)![1])).toBeGreaterThan(1);
    } finally {
      await agent.close();
    }
  });

  it('an agent that declares streaming and answers plain JSON passes: a stream is optional', async () => {
    // Prepare: the runtime behind a host that never streams and drops `stream`
    const agent = await startFlawedAgent('ignores-optional-params', {}, { zone_contract: { levels: ['streaming'] } });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.sse'] });
      // Assess
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^answered with plain JSON \(allowed: an agent need not stream\)/) });
      expect(report.conforms).toBe(true);
    } finally {
      await agent.close();
    }
  });

  it('a stream that opens by naming its task without text passes (a quiet task a caller may let go of)', async () => {
    const agent = await startSseAgent((id) => event(id, { status: 'working', task_id: 't1', cursor: '0' }) + event(id, { status: 'working', task_id: 't1', text: 'echo: ', cursor: '6' }) + event(id, { status: 'success', response_text: 'echo: hi' }));
    try {
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.sse'], levels: ['streaming'] });
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'pass', detail: '3 events in 1 streamed answer; 1 pieces of text, 6 of 8 characters before success' });
    } finally {
      await agent.close();
    }
  });

  it('keep-alive comments and other SSE fields are read past', async () => {
    const agent = await startSseAgent((id) => `: hello\n\nid: 1\n${event(id, { status: 'working', task_id: 't1', text: 'echo: ', cursor: '6' })}: keep-alive\n\n${event(id, { status: 'success', response_text: 'echo: hi' })}`);
    try {
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.sse'], levels: ['streaming'] });
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'pass', detail: '2 events in 1 streamed answer; 1 pieces of text, 6 of 8 characters before success' });
    } finally {
      await agent.close();
    }
  });

  it.each<[string, (id: unknown) => string, RegExp]>([
    ['text without a cursor', (id) => event(id, { status: 'working', task_id: 't1', text: 'echo: ' }) + event(id, { status: 'success', response_text: 'echo: hi' }), /^expected a cursor with the text "echo: " of event 1 of 2: the caller could not go on from it/],
    // The first event may name a quiet task without text; a later one must carry text.
    ['a later progress event without text', (id) => event(id, { status: 'working', task_id: 't1', cursor: '0' }) + event(id, { status: 'working', task_id: 't1', cursor: '0' }) + event(id, { status: 'success', response_text: 'echo: hi' }), /^expected text in event 2 of 3: /],
    ['an opening event without a cursor', (id) => event(id, { status: 'working', task_id: 't1' }) + event(id, { status: 'success', response_text: 'echo: hi' }), /^expected a cursor with event 1 of 2: /],
    ['a stream with no last response', (id) => event(id, { status: 'working', task_id: 't1', text: 'echo: ', cursor: '6' }), /^expected an execute_task result \(success or accepted\) as the last response, got .*"working"/],
    ['accepted without the cursor to poll from', (id) => event(id, { status: 'working', task_id: 't1', text: 'echo: ', cursor: '6' }) + event(id, { status: 'accepted', task_id: 't1' }), /^expected a cursor in the last response, "accepted": /],
    ['an event of two data lines', (id) => `data: {"jsonrpc":"2.0",\ndata: "result":{"status":"success","response_text":"hi"},"id":${JSON.stringify(id)}}\n\n`, /^expected server-sent events of one data line each, each ended by a blank line: an event had 2 data lines/],
    ['a stream cut mid-event', (id) => `data: ${JSON.stringify({ jsonrpc: '2.0', result: { status: 'success', response_text: 'hi' }, id })}`, /^expected server-sent events of one data line each, each ended by a blank line: the stream ended in the middle of an event/],
    ['another id', () => event('someone-else', { status: 'success', response_text: 'hi' }), /^expected id "[^"]+" \(a string\), got "someone-else"/],
    ['text the answer does not begin with', (id) => event(id, { status: 'working', task_id: 't1', text: 'draft ', cursor: '6' }) + event(id, { status: 'success', response_text: 'echo: hi' }), /^expected the streamed text to be the start of response_text/],
  ])('a stream with %s fails with an explanation', async (_flaw, frames, explanation) => {
    // Prepare
    const agent = await startSseAgent(frames);
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.sse'], levels: ['streaming'] });
      // Assess
      expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'fail', detail: expect.stringMatching(explanation), why: expect.any(String) });
      expect(report.conforms).toBe(false);
    } finally {
      await agent.close();
    }
  });

  it('is skipped over a transport that cannot read a streamed answer', async () => {
    // Prepare: a transport with `send` only
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS }) });
    const transport = { kind: 'in-process' as const, send: (body: string) => runtime.dispatch(body) };
    // Act
    const report = await check({ kind: 'transport', transport }, { only: ['execute_task.sse'], levels: ['streaming'] });
    // Assess
    expect(resultOf(report, 'execute_task.sse')).toMatchObject({ status: 'skip', detail: expect.stringMatching(/^needs a transport that reads streamed answers/) });
  });
});
