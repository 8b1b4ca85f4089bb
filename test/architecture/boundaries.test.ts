import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The zones meet only through src/contract (docs/architecture.md §5). This walks the real import graph
 * (static and dynamic imports) and fails if a boundary is crossed, directly or transitively.
 */
const ROOT = resolve(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // `from '…'`, `import('…')`, `require('…')` and a bare side-effect `import '…'`.
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specifiers
    .map((specifier) => resolve(dirname(file), specifier))
    .map((base) => [`${base}.ts`, join(base, 'index.ts')].find(existsSync))
    .filter((path): path is string => Boolean(path));
}

const graph = new Map<string, string[]>();
for (const file of [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'lambdas'))]) graph.set(file, importsOf(file));

function reachable(from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length) {
    const next = stack.pop()!;
    for (const target of graph.get(next) ?? []) if (!seen.has(target)) stack.push((seen.add(target), target));
  }
  return seen;
}

const rel = (path: string) => relative(ROOT, path);
const inFolder = (folder: string) => (path: string) => rel(path).startsWith(`${folder}/`);

describe('architecture boundaries', () => {
  it.each(['src/verification', 'src/protocols', 'src/transport', 'src/slack', 'src/queue', 'src/secrets', 'src/net', 'src/aws'])('%s never reaches src/execution', (folder) => {
    const offenders = [...graph.keys()]
      .filter(inFolder(folder))
      .flatMap((file) => [...reachable(file)].filter(inFolder('src/execution')).map((target) => `${rel(file)} → ${rel(target)}`));
    expect(offenders).toEqual([]);
  });

  it.each([
    // The two folders deploy separately, often to different accounts: neither bundle may carry the other zone.
    ['lambdas/verification', 'src/execution'],
    ['lambdas/execution', 'src/verification'],
    // The transports, the Slack adapter and what they share (secrets, the loopback check) sit below
    // the verification zone; the Slack adapter and the secrets need no transport.
    ['src/transport', 'src/verification'],
    ['src/secrets', 'src/verification'],
    ['src/net', 'src/verification'],
    ['src/slack', 'src/verification'],
    ['src/slack', 'src/transport'],
    ['src/secrets', 'src/transport'],
  ])('%s never reaches %s', (folder, forbidden) => {
    const offenders = [...graph.keys()]
      .filter(inFolder(folder))
      .flatMap((file) => [...reachable(file)].filter(inFolder(forbidden)).map((target) => `${rel(file)} → ${rel(target)}`));
    expect(graph.size).toBeGreaterThan(0);
    expect([...graph.keys()].some(inFolder(folder))).toBe(true);
    expect(offenders).toEqual([]);
  });

  it('the pipeline sees Slack only through its types-only ports, never the Web API adapter', () => {
    // Prepare
    const adapter = (path: string) => rel(path) === 'src/slack/slack-replies.ts' || inFolder('src/slack/web-api')(path);
    const ports = ['slack-port.ts', 'slack-live.ts', 'slack-assistant.ts', 'feedback-blocks.ts'].map((name) => join(ROOT, 'src', 'slack', name));
    // Act
    const offenders = [...graph.keys()].filter(inFolder('src/verification')).flatMap((file) => (graph.get(file) ?? []).filter(adapter).map((t) => `${rel(file)} → ${rel(t)}`));
    const portValues = ports.flatMap((file) => (/^\s*import\s+(?!type\b)/m.test(readFileSync(file, 'utf8')) ? [rel(file)] : []));
    const sdk = [...graph.keys()].filter(inFolder('src/verification')).filter((file) => /from\s+['"]@slack\/web-api['"]/.test(readFileSync(file, 'utf8'))).map(rel);
    // Assess
    expect(offenders).toEqual([]);
    expect(portValues).toEqual([]);
    expect(sdk).toEqual([]);
  });

  it('the slack-events handler calls no Slack API: what needs Slack goes through a queue (docs/architecture.md §2.1)', () => {
    // Prepare: the handler and everything it reaches, itself included (a call written in the handler counts).
    const handler = join(ROOT, 'lambdas', 'verification', 'slack-events.ts');
    const bundle = [handler, ...reachable(handler)];
    const slackClient = (path: string) => rel(path) === 'src/slack/slack-replies.ts' || inFolder('src/slack/web-api')(path) || rel(path) === 'lambdas/verification/shared/slack.ts';
    // Act
    const adapters = bundle.filter(slackClient).map(rel);
    const sdk = bundle.filter((file) => /(?:from\s+|import\s*\(\s*|require\(\s*)['"]@slack\//.test(readFileSync(file, 'utf8'))).map(rel);
    // Assess
    expect(bundle.length).toBeGreaterThan(1);
    expect(adapters).toEqual([]);
    expect(sdk).toEqual([]);
  });

  it('the Lambda handlers reach Slack only through src/slack, never the Slack SDK of their own', () => {
    // Prepare
    const handlers = [...graph.keys()].filter(inFolder('lambdas'));
    // Act
    const direct = handlers.filter((file) => /(?:from\s+|import\s*\(\s*|require\(\s*)['"]@slack\//.test(readFileSync(file, 'utf8'))).map(rel);
    // Assess
    expect(handlers.length).toBeGreaterThan(4);
    expect(direct).toEqual([]);
  });

  it('no import circle anywhere in src or lambdas', () => {
    // Prepare
    const files = [...graph.keys()];
    // Act
    const circles = files.filter((file) => reachable(file).has(file)).map(rel);
    // Assess
    expect(files.filter(inFolder('src/verification')).length).toBeGreaterThan(40);
    expect(circles).toEqual([]);
  });

  it('src/contract imports nothing else of the project', () => {
    const outside = [...graph.keys()].filter(inFolder('src/contract')).flatMap((file) => [...reachable(file)].filter((t) => !inFolder('src/contract')(t)).map(rel));
    expect(outside).toEqual([]);
  });

  it('src never imports lambdas/ or cdk/', () => {
    const reverse = [...graph.keys()].filter(inFolder('src')).flatMap((file) => (graph.get(file) ?? []).filter((t) => inFolder('lambdas')(t) || inFolder('cdk')(t)).map((t) => `${rel(file)} → ${rel(t)}`));
    expect(reverse).toEqual([]);
  });

  it('the graph is real: the local wiring does reach both zones', () => {
    const local = [...reachable(join(ROOT, 'src/local/local-stack.ts'))];
    expect(local.some(inFolder('src/execution'))).toBe(true);
    expect(local.some(inFolder('src/verification'))).toBe(true);
  });
});
