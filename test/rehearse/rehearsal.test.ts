import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { deploy, type Deployment } from '../../tools/rehearse/deployment';
import { rehearsalRuntime } from '../../tools/rehearse/node22';
import { readAssembly, type Assembly } from '../../tools/rehearse/template-functions';

/**
 * `npm run rehearse`, exactly as the README and docs/deploy.md show it and CI runs it: the stacks
 * synthesized by `npx cdk synth`, every Lambda bundle of cdk.out started by aws-lambda-ric on
 * Node 22 behind the loopback Runtime API, and the proofs run against it. Then the rehearsal must
 * fail loudly, naming the function and the runtime's error, on copies of that assembly broken as
 * a deployment can be: a handler path that exports nothing, an environment variable the template
 * does not set, a module the bundle does not contain, a response stream that never ends.
 */
const ROOT = path.join(__dirname, '..', '..');
let assemblyDir: string;
let run: { code: number | null; output: string };

beforeAll(async () => {
  assemblyDir = mkdtempSync(path.join(tmpdir(), 'rehearse-kept-'));
  const child = spawn('npm', ['run', 'rehearse'], { cwd: ROOT, env: { ...process.env, REHEARSE_KEEP_ASSEMBLY: assemblyDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  run = { code, output };
}, 300_000);
afterAll(() => rmSync(assemblyDir, { recursive: true, force: true }));

describe('npm run rehearse: the deployed bundles under the Lambda Runtime Interface Client on Node 22', () => {
  it('exits 0 after starting every function of both stacks under Node 22, printing its init duration', () => {
    expect({ code: run.code, tail: run.code === 0 ? '' : run.output.slice(-4000) }).toEqual({ code: 0, tail: '' });
    expect(run.output).toMatch(/^Node v22\.\d+\.\d+, aws-lambda-ric \d+\.\d+\.\d+$/m);
    const inits = [...run.output.matchAll(/^ {2}(\S+): init (\d+) ms$/gm)].map((m) => m[1]);
    expect(inits.sort()).toEqual(['AgentInvoker', 'AsyncResult', 'FunctionUrl/UrlHandler', 'FunctionUrl/Worker', 'SlackEvents', 'SlackPoster']);
  });

  it.each([
    'slack-events answers a signed url_verification',
    'slack-events refuses a forged app_mention with 401 and queues nothing',
    'slack-events acks a signed app_mention: the claim written, the task queued',
    'one Slack message becomes one reply in the thread (agent-invoker → function URL → slack-poster)',
    'the function URL streams SSE in RESPONSE_STREAM mode',
    'a slow task is handed to the worker, polled by async-result, and answered once',
    'slack-poster takes a batch and hands back only the bad record (ReportBatchItemFailures)',
    'no function URL, API or event source mapping failed unexpectedly',
  ])('proves: %s', (name) => {
    const line = run.output.split('\n').find((l) => l.includes(`${name}: `));
    expect(line).toMatch(/^ {2}ok {3}/);
  });
});

describe('fails loudly, naming the function and the runtime error', () => {
  const copies: string[] = [];
  afterAll(() => copies.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A copy of the assembly, changed by `alter`; the real templates and bundles stay as they are. */
  function alteredCopy(alter: (dir: string, assembly: Assembly) => void): Assembly {
    const dir = mkdtempSync(path.join(tmpdir(), 'rehearse-broken-'));
    copies.push(dir);
    cpSync(assemblyDir, dir, { recursive: true });
    alter(dir, readAssembly(dir));
    return readAssembly(dir);
  }

  function editTemplate(dir: string, stack: string, edit: (resources: Record<string, any>) => void): void {
    const file = path.join(dir, `${stack}.template.json`);
    const template = JSON.parse(readFileSync(file, 'utf8'));
    edit(template.Resources);
    writeFileSync(file, JSON.stringify(template));
  }

  /** Deploys only the named function of an assembly. */
  function deployOnly(assembly: Assembly, name: string, maxWaitMs = 20_000): Promise<Deployment> {
    return deploy({ ...assembly, functions: assembly.functions.filter((fn) => fn.name === name), subscriptions: [] }, { runtime: rehearsalRuntime(), maxWaitMs, secretValues: () => 'unused' });
  }

  const slackEvents = (assembly: Assembly) => assembly.functions.find((fn) => fn.name === 'SlackEvents')!;

  it('a handler path the bundle does not export', async () => {
    const assembly = alteredCopy((dir, original) =>
      editTemplate(dir, 'VerificationZone', (resources) => {
        resources[slackEvents(original).logicalId].Properties.Handler = 'index.handle';
      }),
    );
    await expect(deployOnly(assembly, 'SlackEvents')).rejects.toThrow(/^SlackEvents: init failed: Runtime\.HandlerNotFound: index\.handle is undefined or not exported/);
  }, 60_000);

  it('an environment variable the template does not set', async () => {
    const assembly = alteredCopy((dir, original) =>
      editTemplate(dir, 'VerificationZone', (resources) => {
        delete resources[slackEvents(original).logicalId].Properties.Environment.Variables.STATE_TABLE_NAME;
      }),
    );
    await expect(deployOnly(assembly, 'SlackEvents')).rejects.toThrow(/^SlackEvents: init failed: \w+: .*STATE_TABLE_NAME/);
  }, 60_000);

  it('a module the bundle does not contain', async () => {
    const assembly = alteredCopy((_dir, original) => {
      const poster = original.functions.find((fn) => fn.name === 'SlackPoster')!;
      const index = path.join(poster.assetDir, 'index.js');
      writeFileSync(index, `require("left-out-by-the-bundler");\n${readFileSync(index, 'utf8')}`);
    });
    await expect(deployOnly(assembly, 'SlackPoster')).rejects.toThrow(/^SlackPoster: init failed: Runtime\.ImportModuleError: .*Cannot find module 'left-out-by-the-bundler'/);
  }, 60_000);

  it('an invocation error', async () => {
    const assembly = alteredCopy((_dir, original) => {
      const poster = original.functions.find((fn) => fn.name === 'SlackPoster')!;
      writeFileSync(path.join(poster.assetDir, 'index.js'), 'exports.handler = async () => { throw new TypeError("records is not iterable"); };\n');
    });
    const deployment = await deployOnly(assembly, 'SlackPoster');
    try {
      await expect(deployment.functions.get('SlackPoster')!.invokeJson({ Records: [] })).rejects.toThrow(/^SlackPoster: TypeError: records is not iterable$/);
    } finally {
      await deployment.close();
    }
  }, 60_000);

  it('a function that outlives its timeout', async () => {
    const assembly = alteredCopy((_dir, original) => {
      const poster = original.functions.find((fn) => fn.name === 'SlackPoster')!;
      writeFileSync(path.join(poster.assetDir, 'index.js'), 'exports.handler = () => new Promise(() => setInterval(() => undefined, 1000));\n');
    });
    const deployment = await deployOnly(assembly, 'SlackPoster', 2_000);
    try {
      await expect(deployment.functions.get('SlackPoster')!.invokeJson({ Records: [] })).rejects.toThrow(/^SlackPoster: Task timed out after 2\.00 seconds/);
    } finally {
      await deployment.close();
    }
  }, 60_000);

  it('a response stream that never ends', async () => {
    const assembly = alteredCopy((_dir, original) => {
      const url = original.functions.find((fn) => fn.name === 'FunctionUrl/UrlHandler')!;
      // Writes its first event and never ends the stream (a handler that forgets to).
      writeFileSync(
        path.join(url.assetDir, 'index.js'),
        'exports.handler = awslambda.streamifyResponse(async (event, stream) => { stream.write("data: {}\\n\\n"); await new Promise(() => {}); });\n',
      );
    });
    const deployment = await deployOnly(assembly, 'FunctionUrl/UrlHandler', 3_000);
    try {
      const answer = await deployment.functions.get('FunctionUrl/UrlHandler')!.invoke({ rawPath: '/' });
      expect(answer.mode).toBe('streaming');
      await expect(answer.finished).rejects.toThrow(/^FunctionUrl\/UrlHandler: the response stream did not end within 3000 ms/);
    } finally {
      await deployment.close();
    }
  }, 60_000);
});
