import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { functionId, SINGLE_ACCOUNT, synthesize, type Synthesized } from './support/synth';

/**
 * The deployable artifacts, bundled for real by the local esbuild (no Docker): the AgentCore
 * zip and the Lambda bundles. Slower than the other CDK tests, so one synth serves them all.
 */
let synth: Synthesized;

/**
 * Secrets as an operator's shell may hold them while running `cdk deploy` (the zones' variables,
 * set for a local run): nothing of them may reach the cloud assembly, bundles included.
 */
const SHELL_SECRETS = {
  SLACK_BOT_TOKEN: 'shell-bot-token-not-for-cdk-1111111111-2222222222',
  SLACK_SIGNING_SECRET: 'shell-signing-secret-3c9f1e0d7b5a',
  EXECUTION_BEARER_TOKEN: 'shell-execution-bearer-8e2d4c6a0b1f',
};

beforeAll(() => {
  const saved = Object.fromEntries(Object.keys(SHELL_SECRETS).map((name) => [name, process.env[name]]));
  Object.assign(process.env, SHELL_SECRETS);
  try {
    synth = synthesize({ ...SINGLE_ACCOUNT }, { bundling: ['**'] });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}, 60_000);
afterAll(() => synth?.cleanup());

/** The staged asset directory behind an S3 key (`<hash>.zip`) in the cloud assembly. */
const assetDir = (s3Key: string) => path.join(synth.outdir, `asset.${s3Key.replace(/\.zip$/, '')}`);
const runtimeKey = (s: Synthesized) =>
  (Object.values(s.execution!.findResources('AWS::BedrockAgentCore::Runtime'))[0] as any).Properties.AgentRuntimeArtifact.CodeConfiguration.Code.S3.Prefix as string;

describe('AgentCore code bundle', () => {
  it('is main.js (CommonJS, everything bundled) with its source map and {"type":"commonjs"} at the zip root', () => {
    const dir = assetDir(runtimeKey(synth));
    expect(fs.readdirSync(dir).sort()).toEqual(['main.js', 'main.js.map', 'package.json']);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const main = fs.readFileSync(path.join(dir, 'main.js'), 'utf8');
    // AgentCore has no AWS SDK preinstalled: nothing may be left to require at run time but Node built-ins.
    expect(packagesRequired(main)).toEqual([]);
    // Node finds the map (NODE_OPTIONS=--enable-source-maps) through this trailing comment.
    expect(main.trimEnd().endsWith('//# sourceMappingURL=main.js.map')).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'main.js.map'), 'utf8')).sourcesContent).toBeUndefined();
  });

  it('starts the runtime host that answers /ping and /invocations', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['main.js'], {
      cwd: assetDir(runtimeKey(synth)),
      env: { PATH: process.env.PATH, EXECUTION_PORT: String(port), EXECUTION_HOST: '127.0.0.1', EXECUTOR: 'echo', TASK_STORE: 'memory', POWERTOOLS_LOG_LEVEL: 'SILENT', AWS_REGION: 'us-east-1' },
      stdio: 'ignore',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/ping`)).ok, child);
      expect(await (await fetch(`${base}/ping`)).json()).toEqual(expect.objectContaining({ status: 'Healthy' }));
      const response = await fetch(`${base}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-amzn-bedrock-agentcore-runtime-session-id': 'a'.repeat(33) },
        body: JSON.stringify({ jsonrpc: '2.0', id: '2f1c3c1e-8a55-4b43-9d6b-1f0b1a2f7c11', method: 'execute_task', params: { text: 'hello' } }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(expect.objectContaining({ jsonrpc: '2.0', id: '2f1c3c1e-8a55-4b43-9d6b-1f0b1a2f7c11', result: expect.objectContaining({ status: 'success' }) }));
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('hashes the same sources to the same asset, so an unchanged runtime is not redeployed', () => {
    const again = synthesize({ ...SINGLE_ACCOUNT }, { bundling: ['ExecutionZone'] });
    try {
      expect(runtimeKey(again)).toBe(runtimeKey(synth));
    } finally {
      again.cleanup();
    }
  }, 60_000);
});

describe('Lambda bundles', () => {
  it.each([['slack-events'], ['agent-invoker'], ['async-result'], ['slack-poster']])('%s: minified index.js with every package it uses inside (none left to require), with a linked source map', (prefix) => {
    const fn = synth.verification!.toJSON().Resources[functionId(synth.verification!, prefix)];
    const dir = assetDir(fn.Properties.Code.S3Key);
    expect(fs.readdirSync(dir).sort()).toEqual(['index.js', 'index.js.map']);
    const code = fs.readFileSync(path.join(dir, 'index.js'), 'utf8');
    expect(packagesRequired(code)).toEqual([]);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=index.js.map')).toBe(true);
    // Minified: a handful of very long lines (the rest are newlines inside template literals).
    expect(code.length / code.split('\n').length).toBeGreaterThan(2_000);
  });

  it('slack-events, the ack path, carries no AWS SDK client and no full zod, and loads no network module when it loads', () => {
    const fn = synth.verification!.toJSON().Resources[functionId(synth.verification!, 'slack-events')];
    const dir = assetDir(fn.Properties.Code.S3Key);
    const sources: string[] = JSON.parse(fs.readFileSync(path.join(dir, 'index.js.map'), 'utf8')).sources;
    expect(sources.filter((source) => /@aws-sdk\/client-/.test(source))).toEqual([]);
    // Of the SDK, only the pieces src/aws takes for what is security-critical, each loaded at the first
    // AWS call: the signer (@smithy/signature-v4, its hash and @smithy/core's serde and HTTP request
    // parts) and the partition table (@aws-sdk/core's `partition`) — no client, middleware or retry stack.
    const sdkPackages = new Set(sources.flatMap((source) => /node_modules\/(@smithy\/[^/]+|@aws-sdk\/[^/]+)\//.exec(source)?.[1] ?? []));
    expect([...sdkPackages].sort()).toEqual(['@aws-sdk/core', '@smithy/core', '@smithy/hash-node', '@smithy/signature-v4', '@smithy/types']);
    expect(sources.filter((source) => /@aws-sdk\/core\/dist-es\/submodules\/(?!client\/(index\.js|util-endpoints\/))|@smithy\/core\/dist-es\/submodules\/(retry|schema|event-streams)\//.test(source))).toEqual([]);
    expect(sources.filter((source) => /zod\/v4\/classic\//.test(source))).toEqual([]);
    expect(sources.some((source) => /zod\/v4\/mini\//.test(source))).toBe(true);
    // node:http(s), node:net and node:zlib come with the first AWS call, not with the module (src/aws/aws-json-client.ts).
    const code = fs.readFileSync(path.join(dir, 'index.js'), 'utf8');
    expect([...code.matchAll(/require\("(?:node:)?(https?|net|tls|zlib)"\)/g)].map((m) => m[1])).toEqual([]);
    expect(fs.statSync(path.join(dir, 'index.js')).size).toBeLessThan(200 * 1024);
  });
});

describe('the bundle sizes README.md gives (its table of the Lambda bundles)', () => {
  /** The README's row of each function: its bundle and gzip sizes in KiB. */
  const readmeSizes = (): Map<string, { bundle: number; gzip: number }> => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const kib = (cell: string) => Number(/^([\d.]+) KiB$/.exec(cell.trim())?.[1]);
    return new Map(
      [...readme.matchAll(/^\| ([a-z-]+) \| ([\d.]+ KiB) \| ([\d.]+ KiB) \|/gm)].map((m) => [m[1]!, { bundle: kib(m[2]!), gzip: kib(m[3]!) }]),
    );
  };
  /** index.js of a function (by the start of its description) in a synthesized stack, in KiB, and gzipped at level 9. */
  const measured = (template: Synthesized['verification'], outdir: string, description: string) => {
    const fn = template!.toJSON().Resources[functionId(template!, description)];
    const code = fs.readFileSync(path.join(outdir, `asset.${String(fn.Properties.Code.S3Key).replace(/\.zip$/, '')}`, 'index.js'));
    return { bundle: code.length / 1024, gzip: gzipSync(code, { level: 9 }).length / 1024 };
  };
  const within = (written: number, real: number) => Math.abs(written - real) / real <= 0.1;

  it('are within 10 % of what CDK bundles today, for each function of both zones', () => {
    // Prepare: the verification functions from this file's synth; the execution functions exist with transport=https.
    const https = synthesize({ ...SINGLE_ACCOUNT, transport: 'https' }, { bundling: ['ExecutionZone'] });
    try {
      const real: Array<[string, { bundle: number; gzip: number }]> = [
        ...['slack-events', 'agent-invoker', 'async-result', 'slack-poster'].map((name) => [name, measured(synth.verification, synth.outdir, name)] as [string, { bundle: number; gzip: number }]),
        ['execution-url', measured(https.execution, https.outdir, 'Execution zone behind a function URL')],
        ['execution-worker', measured(https.execution, https.outdir, 'Execution zone worker')],
      ];
      // Act
      const written = readmeSizes();
      const stale = real.flatMap(([name, size]) => {
        const row = written.get(name);
        return row && within(row.bundle, size.bundle) && within(row.gzip, size.gzip) ? [] : [`${name}: README ${row ? `${row.bundle} / ${row.gzip}` : 'has no row'}, synthesized ${size.bundle.toFixed(1)} KiB / ${size.gzip.toFixed(1)} KiB`];
      });
      // Assess
      expect(stale).toEqual([]);
    } finally {
      https.cleanup();
    }
  }, 120_000);
});

it('leaves no secret value in the templates or anywhere in cdk.out, staged bundles included, at any depth', () => {
  for (const template of [synth.execution!, synth.verification!]) {
    for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret')) as any[]) expect(secret.Properties.SecretString).toBeUndefined();
  }
  const files = filesUnder(synth.outdir);
  // Every kind of file there: templates and manifests, and the staged assets (bundles, maps, package.json).
  expect(files.some((file) => file.endsWith('.template.json'))).toBe(true);
  expect(files.some((file) => /[/\\]asset\.[^/\\]+[/\\]index\.js$/.test(file))).toBe(true);
  expect(files.some((file) => /[/\\]asset\.[^/\\]+[/\\]main\.js$/.test(file))).toBe(true);
  const leaks: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file).toString('latin1');
    for (const [name, value] of Object.entries(SHELL_SECRETS)) if (text.includes(value)) leaks.push(`${path.relative(synth.outdir, file)}: ${name}`);
    const token = /xox[abp]-[0-9A-Za-z-]+/.exec(text);
    if (token) leaks.push(`${path.relative(synth.outdir, file)}: a Slack token (${token[0].slice(0, 9)}…)`);
    if (file.endsWith('.json') && text.includes('"SecretString"')) leaks.push(`${path.relative(synth.outdir, file)}: SecretString`);
  }
  expect(leaks).toEqual([]);
});

/** Every file below a directory, at any depth. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}

const BUILTINS = new Set(require('node:module').builtinModules as string[]);

/**
 * Packages a bundle still requires at run time (Node built-ins aside). The SDK's SigV4a error
 * message quotes `require("@aws-sdk/signature-v4-crt")` as advice; that text is not a require.
 */
function packagesRequired(code: string): string[] {
  const text = code.replace(/\[require\("@aws-sdk\/signature-v4-crt"\);\]/g, '');
  const names = [...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!);
  return [...new Set(names.filter((name) => !name.startsWith('node:') && !BUILTINS.has(name.split('/')[0]!)))];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(ready: () => Promise<boolean>, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the bundle exited with code ${child.exitCode}`);
    try {
      if (await ready()) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the bundle did not start listening in time');
}
