import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, post } from '../support/http';

/**
 * The README's commands, run as a reader types them: `npx zone …` through npm's bin link (the way
 * issue 10 went unnoticed: `node bin/zone.js` worked while `npx zone` printed nothing), `npm …`
 * through npm, with cwd = the checkout. Every run checks what the command prints, so a command
 * that prints nothing fails.
 */

const ROOT = join(__dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/**
 * Every line of the README's ```sh blocks that starts with `npx zone`, `zone ` or `npm ` (as
 * written, comment dropped) → the command line this file runs for it: the same, unless noted.
 */
const SH_COMMANDS: Record<string, string> = {
  // `npm ci` is what installed the jest running this file; running it here would empty
  // node_modules under the test files running next to this one. The `npm start` half is run.
  'npm ci && npm start': 'npm start',
  // The whole suite, this file included, is what `npm test` runs; running it from inside the
  // suite would recurse. Checked: the script starts jest, and jest finds the suite and this file.
  'npm test': 'npm test -- --listTests',
  'npx zone say "hello"': 'npx zone say "hello"',
  'npx zone say "slow one #sleep=8000"': 'npx zone say "slow one #sleep=8000"',
  'npx zone say --file README.md "what is this file about?"': 'npx zone say --file README.md "what is this file about?"',
  'npx zone say "plan #steps=3"': 'npx zone say "plan #steps=3"',
  'npx zone say "deploy #ask=Ship it?"': 'npx zone say "deploy #ask=Ship it?"',
  'npx zone say "deploy #ask=Ship it?" --answer approve': 'npx zone say "deploy #ask=Ship it?" --answer approve',
  'npx zone feedback': 'npx zone feedback',
  'npx zone usage': 'npx zone usage',
  'npm run demo': 'npm run demo',
  // `&` puts it in the background; here it is a child process, stopped at the end.
  'npx zone serve &': 'npx zone serve',
  'TRANSPORT=in-process npx zone call --text "hello"': 'TRANSPORT=in-process npx zone call --text "hello"',
  'npx zone agents': 'npx zone agents',
};

/**
 * ```sh commands that cannot run here as written: only deploys that need an AWS account belong
 * here (e.g. `npx cdk deploy --all -c transport=https`). None is in a ```sh block today.
 */
const NEEDS_AWS: string[] = [];

/**
 * Commands the README shows inline (in `backticks` in its prose) → how this file covers them:
 * the command line it runs, or why it runs none.
 */
const INLINE_COMMANDS: Record<string, { run: string } | { notRun: string }> = {
  'npm start': { run: 'npm start' },
  'npx zone start': { run: 'npx zone start' },
  'npm run demo': { run: 'npm run demo' },
  'TRANSPORT=agentcore npm start': { run: 'TRANSPORT=agentcore npm start' },
  'npm ci': { notRun: 'installs the jest running this file; CI runs it first (.ci/run)' },
  'npm test': { notRun: 'the suite this file is part of; `npm test -- --listTests` is run for the ```sh block\'s `npm test`' },
  'npm run model': { run: 'npm run model' },
  'npm run soak': { notRun: 'minutes of injected faults, its own npm script; its judge and a 10-event run are tested in test/soak/soak.test.ts' },
  'npx cdk deploy --all -c transport=https': { notRun: 'needs an AWS account; what it deploys is synthesized by test/cdk' },
  'npx cdk deploy --all -c transport=agentcore': { notRun: 'needs an AWS account; what it deploys is synthesized by test/cdk' },
  'npm run bench': { notRun: 'eight minutes of benchmarks, its own npm script; its parts are unit-tested in test/bench' },
  'npm run bench -- --quick': { notRun: 'a minute of benchmarks, its own npm script; its parts are unit-tested in test/bench' },
  'npm run bench -- --help': { run: 'npm run bench -- --help' },
  'npm --prefix bench run typecheck': { notRun: "needs the bench's own packages (bench/package.json), which `npm ci` leaves out; CI installs them and runs it (.ci/run)" },
  'npm run typecheck': { notRun: 'tsc over the whole project; CI runs it before the tests (.ci/run)' },
  'npm ci && npm test': { notRun: '`npm ci` would reinstall the jest running this file (see `npm ci`); `npm test -- --listTests` is run for the ```sh block\'s `npm test`' },
  'npx playwright install': { notRun: 'named as what the project does not do: it downloads a browser at install time' },
  'npm run test:rehearse': { notRun: 'the jest run of test/rehearse (which runs `npm run rehearse` as written); CI runs it exactly as written after `npm test` (.ci/run), and it cannot run inside the suite it is apart from' },
  'npm run rehearse': { notRun: 'run exactly as written by test/rehearse/rehearsal.test.ts (a minute and a half: a synthesis and six functions under the Lambda runtime client)' },
  'npm --prefix tools/rehearse ci --nodedir="$(dirname "$(dirname "$(command -v node)")")"': {
    notRun: "installs tools/rehearse's own packages (Node 22, aws-lambda-ric's native build: minutes); CI runs it exactly as written before the tests (.ci/run)",
  },
};

/** Inline code spans of the README that are npm or npx commands (optionally after NAME=value). */
function readmeInlineCommands(): string[] {
  const spans = [...README.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
  return [...new Set(spans.filter((span) => /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:npx|npm) /.test(span)))];
}

/** The rows of the README's `zone` table → the command line this file runs for each. */
const ZONE_TABLE: Record<string, string> = {
  'zone start': 'npx zone start',
  'zone say "<text>"': SH_COMMANDS['npx zone say "hello"']!,
  // <ts> is the thread of a streamed answer a `npx zone say` started just before.
  'zone say --stop --thread <ts>': 'npx zone say --stop --thread <ts>',
  'zone feedback': SH_COMMANDS['npx zone feedback']!,
  'zone usage': SH_COMMANDS['npx zone usage']!,
  'zone demo': SH_COMMANDS['npm run demo']!,
  'zone serve [--host] [--port]': SH_COMMANDS['npx zone serve &']!,
  'zone call --text "…"': 'npx zone call --text hi',
  // <url> is the running `zone serve`. --slow-ms 600 (default 8000) makes the slow task of the
  // async cases 600 ms, still longer than that runtime's 150 ms sync budget, so the same cases
  // (accepted, polling, cancel) run the same code, in ~2 s rather than ~20 s.
  'zone conformance <url>': 'npx zone conformance <url> --slow-ms 600',
  // Run with EXECUTION_URL = the running `zone serve`; --slow-ms 600 as for `zone conformance`.
  'zone agents [check]': 'npx zone agents check --slow-ms 600',
};

/** `NAME=value ` assignments in front of a command, as sh reads them. */
const ENV_PREFIX = /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+/;

/** The README's ```sh blocks, continuation lines joined. */
function shBlocks(): string[][] {
  return [...README.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((block) => block[1]!.replace(/\\\n\s*/g, '').split('\n'));
}

/** The commands of the ```sh blocks that this file must cover, as written, without the comment. */
function readmeShCommands(): string[] {
  return shBlocks()
    .flat()
    .map(withoutComment)
    .filter((line) => {
      const command = line.replace(ENV_PREFIX, '');
      return command.startsWith('npx zone') || command.startsWith('zone ') || command.startsWith('npm ');
    });
}

/** Splits a command line into words the way sh does for the simple lines of the README. */
function shellWords(line: string): { words: string[]; commentAt: number } {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (ch === '#' && !inWord) {
      return { words, commentAt: i };
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${line}`);
  if (inWord) words.push(word);
  return { words, commentAt: line.length };
}

function withoutComment(line: string): string {
  return line.slice(0, shellWords(line).commentAt).trim();
}

/** The process environment of a fresh terminal: none of the npm_* variables of the npm that runs jest. */
function terminalEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
  return { ...env, ...extra };
}

type Running = {
  output: () => string;
  exited: Promise<number | null>;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM to the command's whole process group (npm, its shell, the zone process), then waits until none is left. */
  stop(): Promise<void>;
};

/**
 * Starts a command line as written (`npx …` or `npm …`) in the checkout. `npx --yes=false` (what
 * `npx --no` means; npx 11 reads `--no zone` as an option with a value) never downloads: `zone`
 * must come from this checkout's package.json `bin`, through the link npm makes for it.
 */
function startCommand(line: string, env: Record<string, string> = {}): Running {
  // Leading NAME=value words are the command's environment, as in sh.
  const words = shellWords(line).words;
  const assignments = words.filter((word, index) => words.slice(0, index + 1).every((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)));
  for (const assignment of assignments) {
    const at = assignment.indexOf('=');
    env = { ...env, [assignment.slice(0, at)]: assignment.slice(at + 1) };
  }
  const [program, ...args] = words.slice(assignments.length);
  if (program !== 'npx' && program !== 'npm') throw new Error(`not an npx or npm command: ${line}`);
  if (args.some((arg) => ['&', '&&', '|', ';'].includes(arg))) throw new Error(`one command at a time: ${line}`);
  const child = spawn(program, program === 'npx' ? ['--yes=false', ...args] : args, {
    cwd: ROOT,
    env: terminalEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const groupGone = () => {
    try {
      process.kill(-child.pid!, 0);
      return undefined;
    } catch {
      return true;
    }
  };
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  return {
    output: () => output,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      try {
        return await eventually(() => {
          const match = output.match(pattern);
          if (match) return match;
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
          return undefined;
        }, timeoutMs, 25);
      } catch (error) {
        throw new Error(`${line}: no ${pattern} (${(error as Error).message}) in output:\n${output}`);
      }
    },
    async stop() {
      signalGroup('SIGTERM');
      await exited;
      try {
        await eventually(groupGone, 10_000, 50);
      } catch {
        signalGroup('SIGKILL');
      }
    },
  };
}

/** Runs a command line to its end; returns its exit code and everything it printed. */
async function runCommand(line: string, env: Record<string, string> = {}, timeoutMs = 40_000): Promise<{ code: number | null; output: string }> {
  const run = startCommand(line, env);
  const timer = setTimeout(() => void run.stop(), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, output: run.output() };
}

/** The command this file runs for a README ```sh line, failing if the README no longer shows it. */
function shCommand(readmeLine: string): string {
  expect(readmeShCommands()).toContain(readmeLine);
  return SH_COMMANDS[readmeLine]!;
}

/** The README's `zone` table: the first cell of each row, without its backticks. */
function zoneTableRows(): string[] {
  return [...README.matchAll(/^\| `(zone [^`]*)` \|/gm)].map((row) => row[1]!);
}

describe('the README lists only commands this file runs', () => {
  it('every npx zone / zone / npm line of a ```sh block is in SH_COMMANDS (or is an AWS deploy in NEEDS_AWS)', () => {
    const commands = readmeShCommands();
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) expect([...Object.keys(SH_COMMANDS), ...NEEDS_AWS]).toContain(command);
    // and the table does not go stale: each entry is still a README command
    for (const command of [...Object.keys(SH_COMMANDS), ...NEEDS_AWS]) expect(commands).toContain(command);
  });

  it('every npm / npx command shown inline is in INLINE_COMMANDS, run here or excluded with a reason', () => {
    const commands = readmeInlineCommands();
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.sort()).toEqual(Object.keys(INLINE_COMMANDS).sort());
  });

  it('every row of the `zone` command table is in ZONE_TABLE', () => {
    const rows = zoneTableRows();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.sort()).toEqual(Object.keys(ZONE_TABLE).sort());
  });
});

describe('the README commands, through npm', () => {
  it('npx zone --help lists every command of the README table', async () => {
    // Also the first npx run: it sets up npm's bin link for this checkout before any runs in parallel.
    const { code, output } = await runCommand('npx zone --help');
    expect(output).toMatch(/^usage: zone <command>/m);
    for (const row of zoneTableRows()) {
      const name = row.split(' ')[1]!;
      expect(output).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
    }
    expect(code).toBe(0);
  });

  describe('with `npx zone start` running (VERIFICATION_PORT and EXECUTION_PORT free ports)', () => {
    let stack: Running;
    let verificationPort: string;
    beforeAll(async () => {
      // Fast follow-up for the slow task: accepted after 1 s (not 5), polled every second (not 2, 4, …).
      stack = startCommand(ZONE_TABLE['zone start']!, {
        VERIFICATION_PORT: '0',
        EXECUTION_PORT: '0',
        SYNC_BUDGET_MS: '1000',
        POLL_FIRST_DELAY_S: '1',
        POLL_MAX_DELAY_S: '1',
      });
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      verificationPort = new URL(ingress!).port;
    }, 40_000);
    afterAll(() => stack?.stop());

    it('npx zone start prints where both zones run', () => {
      expect(stack.output()).toMatch(/slack-zone-bridge is running locally/);
      expect(stack.output()).toMatch(/playground\s+http:\/\/127\.0\.0\.1:\d+\//);
      expect(stack.output()).toMatch(/execution runtime\s+POST http:\/\/127\.0\.0\.1:\d+\/invocations/);
      expect(stack.output()).toMatch(/signing secret\s+[0-9a-f]{32}\s+\(generated/);
    });

    it('npx zone say "hello" prints the hops and the reply `echo: hello`', async () => {
      const { code, output } = await runCommand(shCommand('npx zone say "hello"'), { VERIFICATION_PORT: verificationPort });
      expect(output).toMatch(/HTTP 200/);
      expect(output).toMatch(/\bingress\b[\s\S]*\bexecute-sent\b[\s\S]*\breply-posted\b/);
      expect(output).toMatch(/^echo: hello$/m);
      expect(code).toBe(0);
      await stack.waitFor(/reply in CLOCAL[^\n]*\n\s+echo: hello$/m);
    });

    it('npx zone say --file README.md "…" shares the file: the agent gets its exact bytes', async () => {
      const { code, output } = await runCommand(shCommand('npx zone say --file README.md "what is this file about?"'), { VERIFICATION_PORT: verificationPort });
      const readme = readFileSync(join(ROOT, 'README.md'));
      const sha256 = createHash('sha256').update(readme).digest('hex');
      expect(output).toMatch(/HTTP 200/);
      expect(output).toContain(`echo: what is this file about?\nattachment: README.md text/markdown ${readme.length} bytes sha256=${sha256}`);
      expect(output).toMatch(/continue this thread: npx zone say --thread \d+\.\d{6}/);
      expect(code).toBe(0);
    });

    it('npx zone feedback says there is none yet (no one has clicked 👍 / 👎)', async () => {
      const { code, output } = await runCommand(shCommand('npx zone feedback'), { VERIFICATION_PORT: verificationPort });
      expect(output).toBe('no feedback yet\n');
      expect(code).toBe(0);
    });

    it('npx zone usage prints today\'s and the last 7 days\' tokens by user, channel and agent (the tasks said above)', async () => {
      const { code, output } = await runCommand(shCommand('npx zone usage'), { VERIFICATION_PORT: verificationPort });
      expect(output).toMatch(/^today \(\d{4}-\d\d-\d\d, UTC\):\n/);
      expect(output).toMatch(/last 7 days \(\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\):/);
      for (const [heading, id] of [['by user', 'TLOCAL/ULOCALUSER'], ['by channel', 'TLOCAL/CLOCAL'], ['by agent', 'default']]) {
        expect(output).toContain(heading);
        expect(output).toMatch(new RegExp(`^  ${id}\\s+[1-9][\\d,]*\\s+`, 'm'));
      }
      expect(code).toBe(0);
    });

    it('npx zone say --stop --thread <ts> stops the answer being written in that thread', async () => {
      const asking = startCommand('npx zone say "one two three four five six seven eight nine ten #stream=1500"', { VERIFICATION_PORT: verificationPort });
      try {
        const [, thread] = await asking.waitFor(/thread (\d+\.\d{6})\)/);
        await asking.waitFor(/streaming:\s*\necho: one/);
        const { code, output } = await runCommand(ZONE_TABLE['zone say --stop --thread <ts>']!.replace('<ts>', thread!), { VERIFICATION_PORT: verificationPort });
        expect(output).toMatch(/HTTP 200 .*agent_session_stopped/);
        expect(output).toMatch(/stopped request [0-9a-f-]{36}/);
        expect(output).toMatch(/^_Stopped\._$/m);
        expect(code).toBe(0);
      } finally {
        await asking.stop();
      }
    });

    it('npx zone say "plan #steps=3" prints the three steps, each ending complete, before the answer', async () => {
      const { code, output } = await runCommand(shCommand('npx zone say "plan #steps=3"'), { VERIFICATION_PORT: verificationPort });
      expect(output).toMatch(/plan: Echo plan/);
      expect(output).toMatch(/● Step 1 — complete[\s\S]*● Step 2 — complete[\s\S]*● Step 3 — complete[\s\S]*^echo: plan #steps=3$/m);
      expect(code).toBe(0);
    });

    it('npx zone say "deploy #ask=Ship it?" prints the question, its options and the command that answers it; that command (the README\'s `zone say --thread <ts> --answer approve`) resumes the task', async () => {
      const asked = await runCommand(shCommand('npx zone say "deploy #ask=Ship it?"'), { VERIFICATION_PORT: verificationPort });
      expect(asked.output).toMatch(/\basked\b/);
      expect(asked.output).toMatch(/❓ Ship it\?\n\s+• Approve\s+\(--answer approve\)\n\s+• Reject\s+\(--answer reject\)/);
      expect(asked.code).toBe(0);
      const answerCommand = /answer it: (npx zone say --thread \d+\.\d{6} --answer approve)/.exec(asked.output)?.[1];
      expect(README).toContain('`zone say --thread <ts> --answer approve`');
      const answered = await runCommand(answerCommand!, { VERIFICATION_PORT: verificationPort });
      expect(answered.output).toMatch(/clicked Approve[\s\S]*\banswered\b[\s\S]*\breply-posted\b/);
      expect(answered.output).toMatch(/^answer: Approve \(by slack:TLOCAL:ULOCALUSER\)$/m);
      // The same task resumed: no second execute_task for it.
      expect(answered.output).not.toMatch(/execute-sent/);
      expect(answered.code).toBe(0);
      // Answered once: the question is no longer waiting.
      const again = await runCommand(answerCommand!, { VERIFICATION_PORT: verificationPort });
      expect(again.output).toMatch(/no question is waiting for an answer in thread/);
      expect(again.code).toBe(1);
    });

    it('npx zone say "deploy #ask=Ship it?" --answer approve clicks Approve when asked and prints the resumed answer', async () => {
      const { code, output } = await runCommand(shCommand('npx zone say "deploy #ask=Ship it?" --answer approve'), { VERIFICATION_PORT: verificationPort });
      expect(output).toMatch(/\basked\b[\s\S]*❓ Ship it\?[\s\S]*clicked Approve[\s\S]*\banswered\b/);
      expect(output).not.toMatch(/answer it:/);
      expect(output).toMatch(/^\*Approve\* — answered by <@ULOCALUSER>$/m);
      expect(output).toMatch(/^answer: Approve \(by slack:TLOCAL:ULOCALUSER\)$/m);
      expect(code).toBe(0);
    });

    it('npx zone say "slow one #sleep=8000" is held, let go after 5 s of quiet, polled, then answered', async () => {
      const { code, output } = await runCommand(shCommand('npx zone say "slow one #sleep=8000"'), { VERIFICATION_PORT: verificationPort });
      expect(output).toMatch(/HTTP 200/);
      expect(output).toMatch(/\baccepted\b[\s\S]*\bpoll\b[\s\S]*\breply-posted\b/);
      expect(output).toMatch(/^echo: slow one #sleep=8000$/m);
      expect(code).toBe(0);
    }, 45_000);
  });

  it('npm run model prints the session model: both policies, their idle timeouts, and where the quota is reached', async () => {
    const line = INLINE_COMMANDS['npm run model'] as { run: string };
    const { code, output } = await runCommand(line.run);
    expect(code).toBe(0);
    for (const policy of ['per-message', 'per-conversation']) expect(output).toContain(policy);
    expect(output).toMatch(/cold starts/i);
    expect(output).toMatch(/limit/i);
  }, 60_000);

  it('npm run bench -- --help prints the options and installs nothing', async () => {
    const line = INLINE_COMMANDS['npm run bench -- --help'] as { run: string };
    const { code, output } = await runCommand(line.run);
    expect(output).toMatch(/--quick[\s\S]*--only=[\s\S]*--out=/);
    expect(output).toContain('bench/package.json');
    expect(output).not.toMatch(/installing/);
    expect(code).toBe(0);
  });

  it('TRANSPORT=agentcore npm start runs the local AgentCore emulator and answers through it', async () => {
    const line = INLINE_COMMANDS['TRANSPORT=agentcore npm start'] as { run: string };
    const stack = startCommand(line.run, { VERIFICATION_PORT: '0', EXECUTION_PORT: '0' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      expect(stack.output()).toMatch(/AgentCore emulator\s+http:\/\/127\.0\.0\.1:\d+/);
      expect(stack.output()).toMatch(/transport\s+agentcore · protocol execute-task/);
      const { code, output } = await runCommand('npx zone say "hello"', { VERIFICATION_PORT: new URL(ingress!).port });
      expect(output).toMatch(/^echo: hello$/m);
      expect(code).toBe(0);
    } finally {
      await stack.stop();
    }
  });

  it('npm start (the quick start) runs both zones and serves the playground', async () => {
    const stack = startCommand(shCommand('npm ci && npm start'), { VERIFICATION_PORT: '0', EXECUTION_PORT: '0' });
    try {
      const [, playground] = await stack.waitFor(/playground\s+(http:\/\/\S+)/);
      expect(stack.output()).toMatch(/Slack ingress\s+POST http:\/\/127\.0\.0\.1:\d+\/slack\/events/);
      const page = await fetch(playground!);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
    } finally {
      await stack.stop();
    }
  });

  describe('with `npx zone serve &` running (EXECUTION_PORT a free port)', () => {
    let serve: Running;
    let address: string;
    beforeAll(async () => {
      serve = startCommand(shCommand('npx zone serve &'), { EXECUTION_PORT: '0', SYNC_BUDGET_MS: '150' });
      address = (await serve.waitFor(/listening on http:\/\/(\S+)/))[1]!;
    }, 40_000);
    afterAll(() => serve?.stop());

    it('answers the README curl request with exactly the JSON the README shows', async () => {
      const block = shBlocks().find((lines) => lines.includes('npx zone serve &'))!;
      const curl = shellWords(block.find((line) => line.startsWith('curl '))!).words;
      const url = new URL(curl.find((word) => word.startsWith('http://'))!);
      const body = curl[curl.indexOf('-d') + 1]!;
      const shown = block.find((line) => line.startsWith('# {'))!.slice(2);
      url.host = address;
      // curl -d sends a form content type; the runtime reads the body as JSON all the same.
      const response = await post(url.href, body, { 'content-type': 'application/x-www-form-urlencoded' });
      expect(response.status).toBe(200);
      expect(response.text.trim()).toBe(shown);
    });

    it('npx zone call --text hi (EXECUTION_URL = that runtime) prints the reply', async () => {
      const { code, output } = await runCommand(ZONE_TABLE['zone call --text "…"']!, { EXECUTION_URL: `http://${address}/invocations` });
      expect(output).toMatch(/^echo: hi$/m);
      expect(code).toBe(0);
    });

    it('npx zone agents check (EXECUTION_URL = that runtime) checks the one agent: its core cases pass, exit 0', async () => {
      const { code, output } = await runCommand(ZONE_TABLE['zone agents [check]']!, { EXECUTION_URL: `http://${address}/invocations` });
      expect(output).toMatch(/^default\s+execute-task\s+https\s+.*core: \d+ passed, 0 failed.*PASS$/m);
      expect(output).toMatch(/^all 1 agents pass$/m);
      expect(code).toBe(0);
    });

    it('npx zone conformance <url> passes every case and exits 0', async () => {
      const { code, output } = await runCommand(ZONE_TABLE['zone conformance <url>']!.replace('<url>', `http://${address}/invocations`));
      expect(output).toMatch(/^case\s+expectation\s+result\s+ms$/m);
      expect(output).toMatch(/\b(\d+) cases: \1 passed, 0 failed\b/);
      expect(code).toBe(0);
    });
  });

  it('npx zone agents lists the one agent of a fresh terminal: the local runtime, the default, over https', async () => {
    const { code, output } = await runCommand(shCommand('npx zone agents'));
    expect(output).toMatch(/^1 execution agent$/m);
    expect(output).toMatch(/^default\s+default\s+\(the app\)\s+execute-task\s+https\s+http:\/\/127\.0\.0\.1:8080\/invocations/m);
    expect(code).toBe(0);
  });

  it('TRANSPORT=in-process npx zone call --text "hello" runs the runtime in its own process and prints the reply', async () => {
    const { code, output } = await runCommand(shCommand('TRANSPORT=in-process npx zone call --text "hello"'));
    expect(output).toMatch(/over in-process/);
    expect(output).toMatch(/^echo: hello$/m);
    expect(code).toBe(0);
  });

  it('npm run demo runs the four scenarios and exits 0', async () => {
    const { code, output } = await runCommand(shCommand('npm run demo'));
    expect(output).toMatch(/✔ quick answer/);
    expect(output).toMatch(/✔ quiet long task \(held, let go, polled\)/);
    expect(output).toMatch(/✔ failure in the execution zone/);
    expect(output).toMatch(/All 4 got exactly one reply/);
    expect(code).toBe(0);
  }, 45_000);

  it('npm test runs jest over the suite, this file included', async () => {
    const { code, output } = await runCommand(shCommand('npm test'));
    expect(output).toContain(join(ROOT, 'test', 'cli', 'readme-commands.test.ts'));
    expect(output).toContain(join(ROOT, 'test', 'cli', 'zone-start-say.test.ts'));
    expect(code).toBe(0);
  });
});
