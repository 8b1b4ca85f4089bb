import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { CASES } from '../../src/conformance/cases';
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
  | 'ignores-thread-context'
  | 'rejects-thread-context'
  | 'streams-text-not-in-answer'
  | 'streams-without-cursor';

/** The flaws that change a request before the runtime sees it, or answer it instead of the runtime. */
function beforeDispatch(flaw: Flaw, body: Buffer): { body: string | Uint8Array } | { answer: string } {
  if (flaw !== 'ignores-thread-context' && flaw !== 'rejects-thread-context') return { body };
  let value: Record<string, any>;
  try {
    value = JSON.parse(body.toString('utf8')) as Record<string, any>;
  } catch {
    return { body };
  }
  const params = value?.params;
  if (typeof params !== 'object' || params === null || !('messages' in params || 'attachments' in params)) return { body };
  if (flaw === 'rejects-thread-context') {
    // An agent written before the fields existed, one that refuses params it does not know.
    const data = Object.keys(params).filter((key) => key === 'messages' || key === 'attachments').map((path) => ({ path, message: `unknown param ${path}` }));
    return { answer: JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params', data }, id: value.id ?? null }) };
  }
  // An agent that never looks at the fields: it neither reads nor checks them.
  delete params.messages;
  delete params.attachments;
  return { body: JSON.stringify(value) };
}

/**
 * Our reference runtime behind a node:http host with one deliberate flaw, each a mistake agent
 * authors make (docs/migration-guide.md, troubleshooting).
 */
async function startFlawedAgent(flaw: Flaw, env: Record<string, string> = {}): Promise<{ url: string; baseUrl: string; close(): Promise<void> }> {
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS, ...env }) });
  const server: Server = createServer(async (req, res) => {
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

  it('over https on loopback: every case passes, the async path included, and the exit code is 0', async () => {
    // Act
    const { code, output } = await runZone(['conformance', runtime.invocationsUrl, ...FAST]);
    // Assess
    expect(output).toMatch(/^case\s+expectation\s+result\s+ms$/m);
    for (const c of CASES) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
    expect(output).toContain(`${CASES.length} cases: ${CASES.length} passed, 0 failed, 0 warned, 0 skipped`);
    expect(code).toBe(0);
  });

  it('through the AgentCore emulator with --transport agentcore: everything AgentCore carries passes, in one session', async () => {
    // Act
    const { code, output } = await runZone(['conformance', '--transport', 'agentcore', '--arn', ARN, '--endpoint', emulator.endpoint, ...FAST]);
    // Assess
    expect(output).toContain(`zone conformance: ${ARN} via ${emulator.endpoint} over agentcore`);
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

  it('a runtime that answers at once warns that the async path was not exercised, and fails with --require-async', async () => {
    // Prepare
    const fast = await startExecutionRuntime({ SYNC_BUDGET_MS: '5000' });
    try {
      const target: ConformanceTarget = { kind: 'https', url: fast.invocationsUrl };
      // Act
      const lenient = await check(target, { only: ['execute_task', 'get_task_result.polling', 'cancel_task.accepted'] });
      const strict = await check(target, { only: ['execute_task.accepted'], requireAsync: true });
      // Assess
      expect(resultOf(lenient, 'execute_task.success').status).toBe('pass');
      expect(resultOf(lenient, 'execute_task.accepted')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^not exercised: .*--slow-ms/) });
      expect(resultOf(lenient, 'get_task_result.polling').status).toBe('warn');
      expect(resultOf(lenient, 'cancel_task.accepted').status).toBe('warn');
      expect(lenient.conforms).toBe(true);
      expect(resultOf(strict, 'execute_task.accepted').status).toBe('fail');
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
    ['rejects-thread-context', 'execute_task.thread-context', /^expected an execute_task result \(success or accepted\), got error -32602 /],
    ['ignores-thread-context', 'error.invalid-params.messages', /^expected error\.code -32602 \(Invalid params\), got a result: /],
    ['ignores-thread-context', 'error.invalid-params.attachments', /^expected error\.code -32602 \(Invalid params\), got a result: /],
  ])('%s: %s fails with an explanation, and the agent does not conform', async (flaw, failingCase, explanation) => {
    // Prepare
    const agent = await startFlawedAgent(flaw);
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.success', failingCase] });
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

describe('zone conformance and the thread context (messages, attachments)', () => {
  it('an agent that ignores messages and attachments still answers the thread-context case; only their validation fails', async () => {
    // Prepare
    const agent = await startFlawedAgent('ignores-thread-context');
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.thread-context', 'error.invalid-params'] });
      // Assess
      expect(resultOf(report, 'execute_task.thread-context').status).toBe('pass');
      expect(resultOf(report, 'error.invalid-params.text').status).toBe('pass');
      expect(resultOf(report, 'error.invalid-params.messages').status).toBe('fail');
      expect(resultOf(report, 'error.invalid-params.attachments').status).toBe('fail');
    } finally {
      await agent.close();
    }
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

describe('the example agents in docs/examples', () => {
  it('python (standard library only) passes zone conformance', async () => {
    // Prepare
    const agent = await startExample('python3', [join(EXAMPLES, 'python', 'agent.py'), '--port', '0', '--sync-budget-ms', SYNC_BUDGET_MS]);
    try {
      // Act
      const { code, output } = await runZone(['conformance', agent.url, ...FAST]);
      // Assess
      for (const c of CASES) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
      expect(code).toBe(0);
    } finally {
      await agent.stop();
    }
  });

  it('node (node:http only) passes zone conformance', async () => {
    // Prepare
    const agent = await startExample(process.execPath, [join(EXAMPLES, 'node', 'agent.mjs'), '--port', '0', '--sync-budget-ms', SYNC_BUDGET_MS]);
    try {
      // Act
      const { code, output } = await runZone(['conformance', agent.url, ...FAST]);
      // Assess
      for (const c of CASES) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
      expect(code).toBe(0);
    } finally {
      await agent.stop();
    }
  });

  // Go is not part of Node's toolchain: where it is missing the test is reported as skipped, never
  // as passed. CI installs it (.ci/run), so there it always runs.
  (GO ? it : it.skip)('go (net/http only) passes go vet and zone conformance', async () => {
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
        // Act
        const { code, output } = await runZone(['conformance', agent.url, ...FAST]);
        // Assess
        for (const c of CASES) expect(row(output, c.id)).toMatch(/\spass\s+\d+$/);
        expect(output).toContain(`${CASES.length} cases: ${CASES.length} passed, 0 failed, 0 warned, 0 skipped`);
        expect(code).toBe(0);
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

  it('an agent that answers at once passes: stream is only a wish', async () => {
    // Prepare
    const agent = await startExecutionRuntime({ SYNC_BUDGET_MS: '5000', ECHO_STREAM_MS: '20' });
    try {
      // Act
      const report = await check({ kind: 'https', url: agent.invocationsUrl }, { only: ['execute_task.stream'] });
      // Assess: the slow task's #sleep fits in the budget, and without streaming first text it is answered whole
      expect(resultOf(report, 'execute_task.stream')).toMatchObject({ status: 'pass' });
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
      const report = await check({ kind: 'https', url: agent.url }, { only: ['execute_task.stream'] });
      // Assess
      expect(resultOf(report, 'execute_task.stream')).toMatchObject({ status: 'fail', detail: expect.stringMatching(explanation), why: expect.any(String) });
      expect(report.conforms).toBe(false);
    } finally {
      await agent.close();
    }
  });
});
