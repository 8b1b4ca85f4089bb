import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { ContextSchema, parseDeploymentConfig } from '../../cdk/config';
import { ENVIRONMENT_ROUTES, environmentVariablesOf, type EnvironmentRoute } from '../../cdk/environment';
import { ExecutionConfigSchema } from '../../src/execution/config';
import { DEFAULT_TRANSPORT, ENV_VARIABLES, TRANSPORT_VARIABLE, transportConfigFrom } from '../../src/transport/config';
import { defaultMaxTotalBytes } from '../../src/verification/invoke/attachment-limits';
import { VerificationConfigSchema } from '../../src/verification/config';
import { createLogger } from '../../src/observability/logger';
import { DEFAULT_AGENT_PROMPTS } from '../../src/verification/surface/suggested-prompts';
import { EVENT_HANDLERS, INTERACTION_HANDLERS } from '../../src/verification/intake/intake-table';
import type { SlackEventCallback } from '../../src/verification/intake/slack-event';
import { MemoryBotThreads } from '../../src/verification/stores/memory-bot-threads';
import { SINGLE_ACCOUNT, synthesize } from '../cdk/support/synth';

/**
 * The operator docs (README.md, docs/deploy.md, docs/operations.md) against the code and the
 * deployment, both ways: every variable the code reads is documented with its default and its
 * route in a deployment, every documented one is read; every `-c` key exists with the documented
 * default; every stack output named exists; the Slack manifest asks for exactly what the code
 * uses. Each check fails with the whole list of what drifted.
 */

const ROOT = join(__dirname, '..', '..');
const DOC_FILES = ['README.md', 'docs/deploy.md', 'docs/operations.md'] as const;
const DOCS = Object.fromEntries(DOC_FILES.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')])) as Record<(typeof DOC_FILES)[number], string>;
const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{4,}$/;

// ---------------------------------------------------------------------------------------------
// Reading the docs

type Table = { file: string; header: string[]; rows: string[][] };

/** Every Markdown table of a file, cells trimmed (`\|` is a pipe inside a cell). */
function tablesOf(file: string, text: string): Table[] {
  const tables: Table[] = [];
  const lines = text.replace(/^```[\s\S]*?^```/gm, '').split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (!lines[i]!.startsWith('|') || !/^\|[\s|:-]+\|$/.test(lines[i + 1] ?? '')) continue;
    const cells = (line: string) =>
      line
        .slice(1, line.lastIndexOf('|'))
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/\\\|/g, '|'));
    const header = cells(lines[i]!);
    const rows: string[][] = [];
    for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i += 1) rows.push(cells(lines[i]!));
    tables.push({ file, header, rows });
  }
  return tables;
}
const TABLES = DOC_FILES.flatMap((file) => tablesOf(file, DOCS[file]));

/** The `code` spans of a text. */
const spans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/**
 * A cell split at its top-level separators (`, ` and ` / `, not inside backticks or brackets):
 * one part per name when a row names several things and the cell lists one value each.
 */
function parts(cell: string, count: number): string[] {
  const out: string[] = [];
  let depth = 0;
  let code = false;
  let current = '';
  for (let i = 0; i < cell.length; i += 1) {
    const c = cell[i]!;
    if (c === '`') code = !code;
    else if (!code && (c === '(' || c === '[')) depth += 1;
    else if (!code && (c === ')' || c === ']')) depth -= 1;
    const separator = !code && depth === 0 && (cell.startsWith(', ', i) ? 2 : cell.startsWith(' / ', i) ? 3 : 0);
    if (separator) {
      out.push(current.trim());
      current = '';
      i += separator - 1;
    } else current += c;
  }
  out.push(current.trim());
  return out.length === count ? out : Array.from({ length: count }, () => cell);
}

type DocumentedVariable = { name: string; where: string; default: string; route?: string };

/** The rows of every table whose first column is `variable`: names, default and route, per name. */
function documentedVariables(): DocumentedVariable[] {
  return TABLES.filter((table) => table.header[0] === 'variable').flatMap((table) => {
    const defaultColumn = table.header.indexOf('default');
    const routeColumn = table.header.indexOf('in a deployment');
    return table.rows.flatMap((row) => {
      const names = spans(row[0]!).filter((span) => ENV_NAME.test(span));
      const defaults = parts(row[defaultColumn] ?? '', names.length);
      const routes = routeColumn >= 0 ? parts(row[routeColumn] ?? '', names.length) : [];
      return names.map((name, i) => ({ name, where: `${table.file} (${table.header.join(' | ')})`, default: defaults[i]!, ...(routeColumn >= 0 ? { route: routes[i]! } : {}) }));
    });
  });
}

const UNITS: Record<string, number> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, KB: 1000, MB: 1000 ** 2, GB: 1000 ** 3 };

/** Whether a documented default states this value: a `literal`, or a number with a unit (10 MiB). */
function states(text: string, value: string | number | boolean): boolean {
  const literals = spans(text);
  if (typeof value === 'boolean') return literals.includes(String(value));
  if (typeof value === 'number') {
    const numbers = new Set(literals.filter((l) => /^\d+(\.\d+)?$/.test(l)).map(Number));
    for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|KB|MB|GB)\b/g)) numbers.add(Number(m[1]) * UNITS[m[2]!]!);
    return numbers.has(value);
  }
  return literals.includes(value);
}

// ---------------------------------------------------------------------------------------------
// Reading the code

type CodeVariable = { name: string; defaults: Array<string | number | boolean>; readBy: string[] };

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(join(ROOT, path)).isDirectory() ? sourceFiles(path) : /\.(ts|js)$/.test(entry) ? [path] : [];
  });
}
/** Everything the deployed functions and the `zone` command run (not cdk/, which reads CDK's own variables, nor bench/). */
const SOURCES = ['src', 'lambdas', 'bin'].flatMap(sourceFiles).map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

/** Effective defaults the schemas leave open (computed where the value is used), per variable. */
const COMPUTED_DEFAULTS: Record<string, Array<string | number>> = {
  ATTACHMENT_MAX_TOTAL_BYTES: [defaultMaxTotalBytes('https'), defaultMaxTotalBytes('agentcore')],
  EXECUTION_AUTH: ['sigv4', 'none'],
  AGENTCORE_QUALIFIER: ['DEFAULT'],
};

/** `??` fallbacks of direct reads that are not defaults (what a command prints when unset). */
const NOT_DEFAULTS: Record<string, string> = {
  EXECUTION_URL: "src/cli/start.ts prints 'from EXECUTION_AGENTS' when it is unset",
};

function codeVariables(): Map<string, CodeVariable> {
  const found = new Map<string, CodeVariable>();
  const add = (name: string, readBy: string, value?: unknown) => {
    const entry = found.get(name) ?? { name, defaults: [], readBy: [] };
    if (!entry.readBy.includes(readBy)) entry.readBy.push(readBy);
    if ((typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') && !entry.defaults.includes(value)) entry.defaults.push(value);
    found.set(name, entry);
  };

  // 1. The zod schemas each zone parses its environment with (defaults: what parsing nothing gives).
  const schemas: Record<string, { shape: Record<string, unknown>; defaults: Record<string, unknown> }> = {
    VerificationConfigSchema: { shape: VerificationConfigSchema.shape, defaults: VerificationConfigSchema.parse({}) },
    ExecutionConfigSchema: { shape: ExecutionConfigSchema.shape, defaults: ExecutionConfigSchema.parse({}) },
  };
  for (const { path, text } of SOURCES) {
    for (const m of text.matchAll(/\bparseEnv\(\s*(\w+)\s*,/g)) {
      const name = m[1]!;
      if (name === 'schema') continue; // parseEnv itself
      const known = schemas[name];
      if (known) {
        for (const variable of Object.keys(known.shape)) add(variable, `${path} (${name})`, known.defaults[variable]);
        continue;
      }
      // A schema of the same file: its keys and `.default(literal)` values, read from the source.
      const block = new RegExp(`const ${name} = z\\.object\\(\\{([\\s\\S]*?)\\n\\}\\)`).exec(text);
      if (!block) throw new Error(`${path}: parseEnv(${name}, …) reads a schema this test cannot find; teach it (schemas above)`);
      for (const line of block[1]!.matchAll(/^\s*([A-Z][A-Z0-9_]*):(.*)$/gm)) {
        const literal = /\.default\(\s*(?:'([^']*)'|"([^"]*)"|(\d+(?:\.\d+)?)|(true|false))\s*\)/.exec(line[2]!);
        add(line[1]!, `${path} (${name})`, literal ? (literal[1] ?? literal[2] ?? (literal[3] !== undefined ? Number(literal[3]) : literal[4] === 'true')) : undefined);
      }
    }
  }

  // 2. The transport options (src/transport/config.ts), defaults as the transport fills them in.
  add(TRANSPORT_VARIABLE, 'src/transport/config.ts', DEFAULT_TRANSPORT);
  const filled = {
    agentcore: transportConfigFrom({ env: { TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: 'arn:aws:bedrock-agentcore:us-east-1:111111111111:runtime/drift-AbCdEf1234' } }),
    https: transportConfigFrom({ env: { TRANSPORT: 'https', EXECUTION_URL: 'https://example.com/' } }),
  } as const;
  for (const kind of ['agentcore', 'https'] as const) {
    for (const [field, variable] of Object.entries(ENV_VARIABLES[kind] as Record<string, string>)) {
      const isAddress = field === 'runtimeArn' || field === 'url';
      add(variable, 'src/transport/config.ts', isAddress ? undefined : (filled[kind] as Record<string, unknown>)[field]);
    }
  }

  // 3. Direct reads: process.env.X / env.X / env['X'], with a literal `??` (or `??=`) fallback.
  const read = /(?:process\.env|\benv)(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])(?:\s*(?:\?\?=?|\|\|)\s*(?:'([^']*)'|"([^"]*)"|(\d+)\b))?/g;
  for (const { path, text } of SOURCES) {
    for (const m of text.matchAll(read)) {
      const name = (m[1] ?? m[2])!;
      const fallback = m[3] ?? m[4] ?? (m[5] !== undefined ? Number(m[5]) : undefined);
      add(name, path, NOT_DEFAULTS[name] ? undefined : fallback);
    }
  }
  for (const [name, values] of Object.entries(COMPUTED_DEFAULTS)) for (const value of values) add(name, 'computed', value);
  return found;
}

const CODE = codeVariables();
const DOCUMENTED = documentedVariables();

// ---------------------------------------------------------------------------------------------

describe('environment variables: the code and the docs', () => {
  it('finds the variables on both sides (the extraction itself works)', () => {
    expect(CODE.size).toBeGreaterThan(80);
    expect(DOCUMENTED.length).toBeGreaterThan(80);
    expect(CODE.get('THREAD_CONTEXT_MAX_MESSAGES')?.defaults).toEqual([50]);
    expect(CODE.get('EXECUTION_PROTOCOL')?.defaults).toEqual(['execute-task']);
    expect(CODE.get('EXECUTION_PORT')?.defaults).toEqual([8080]);
  });

  it('documents every variable the code reads, in a table of README.md or docs/operations.md', () => {
    const documented = new Set(DOCUMENTED.map((v) => v.name));
    const missing = [...CODE.values()].filter((v) => !documented.has(v.name)).map((v) => `${v.name} (read by ${v.readBy.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('reads every variable the docs name: in the tables, and in `backticks` anywhere in the operator docs', () => {
    const unread = DOCUMENTED.filter((v) => !CODE.has(v.name)).map((v) => `${v.name} in ${v.where}`);
    /** UPPER_CASE spans of the docs that are not variables. */
    const NOT_VARIABLES = new Set([
      'AWS_IAM', // a function URL auth type
      'RATE_LIMIT_EXCEEDED', // google.rpc.ErrorInfo reasons an A2A agent may send
      'RESOURCE_EXHAUSTED',
      'QUOTA_EXCEEDED',
      'TOO_MANY_REQUESTS',
      'DEADLINE_EXCEEDED',
      'UNAVAILABLE',
      'DEFAULT', // the AgentCore endpoint
      'SILENT', // log levels
      'TRACE',
      'DEBUG',
      'INFO',
      'WARN',
      'ERROR',
      'CRITICAL',
    ]);
    for (const file of DOC_FILES) {
      for (const span of spans(DOCS[file])) {
        // `NAME=value`, `NAME[1].key`, a `PREFIX_*` family
        const name = /^([A-Z][A-Z0-9_]*[A-Z0-9*])(?:=|\[|$)/.exec(span)?.[1];
        if (!name || !ENV_NAME.test(name.replace(/_\*$/, '_X')) || NOT_VARIABLES.has(name)) continue;
        const known = name.endsWith('*') ? [...CODE.keys()].some((v) => v.startsWith(name.slice(0, -1))) : CODE.has(name);
        if (!known) unread.push(`\`${span}\` in ${file}`);
      }
    }
    expect([...new Set(unread)]).toEqual([]);
  });

  it('documents each default the code applies', () => {
    const wrong: string[] = [];
    for (const doc of DOCUMENTED) {
      for (const value of CODE.get(doc.name)?.defaults ?? []) {
        if (!states(doc.default, value)) wrong.push(`${doc.name}: the code's default ${JSON.stringify(value)} is not in "${doc.default}" (${doc.where})`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('environment variables: how a deployment sets them', () => {
  /** The route a docs cell states: a context key, CDK, `-c <zone>Environment`, or "not set by CDK". */
  function routeOf(cell: string): EnvironmentRoute | string {
    const keys = [...cell.matchAll(/-c ([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!);
    if (/not set by CDK/.test(cell)) return { set: 'never', why: '' };
    const zones = keys.flatMap((key) => (key === 'verificationEnvironment' ? ['verification' as const] : key === 'executionEnvironment' ? ['execution' as const] : []));
    if (zones.length > 0) return { set: 'environment', zones };
    if (/^CDK\b/.test(cell)) return { set: 'cdk', ...(keys.length ? { keys } : {}) };
    if (keys.length > 0) return { set: 'context', keys };
    return `no route in "${cell}"`;
  }
  const comparable = (route: EnvironmentRoute) => (route.set === 'never' ? { set: 'never' } : route);

  it('every variable the code reads has a route (cdk/environment.ts), and every route is a variable the code reads', () => {
    expect([...CODE.keys()].filter((name) => !ENVIRONMENT_ROUTES[name]).sort()).toEqual([]);
    expect(Object.keys(ENVIRONMENT_ROUTES).filter((name) => !CODE.has(name)).sort()).toEqual([]);
  });

  it('the docs say of each variable what sets it in a deployment, as cdk/environment.ts routes it', () => {
    const wrong: string[] = [];
    for (const doc of DOCUMENTED) {
      const route = ENVIRONMENT_ROUTES[doc.name];
      if (!route) continue; // reported above
      if (doc.route === undefined) {
        wrong.push(`${doc.name}: ${doc.where} has no "in a deployment" column`);
        continue;
      }
      const stated = routeOf(doc.route);
      if (JSON.stringify(typeof stated === 'string' ? stated : comparable(stated)) !== JSON.stringify(comparable(route))) {
        wrong.push(`${doc.name}: the docs say "${doc.route}", cdk/environment.ts routes it ${JSON.stringify(route)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  describe('and the synthesized templates do what the routes say', () => {
    /** Every variable set on any Lambda function or AgentCore runtime of the templates. */
    const variablesOf = (...templates: Array<Template | undefined>) =>
      new Set(
        templates.flatMap((template) =>
          Object.values((template?.toJSON().Resources ?? {}) as Record<string, any>).flatMap((r) =>
            Object.keys(r.Type === 'AWS::Lambda::Function' ? (r.Properties.Environment?.Variables ?? {}) : r.Type === 'AWS::BedrockAgentCore::Runtime' ? (r.Properties.EnvironmentVariables ?? {}) : {}),
          ),
        ),
      );
    /** A valid value for each variable `-c <zone>Environment` takes: its default, else a sample. */
    const SAMPLES: Record<string, string> = {
      SLACK_API_URL: 'https://slack.example.com/api/',
      USER_MESSAGES_JSON: '{"rateLimited":"Slow down, please."}',
      AGENT_PROMPTS_JSON: '{"home":[{"title":"Hi","message":"What can you do?"}]}',
      ATTACHMENT_MAX_TOTAL_BYTES: '2000000',
      AGENTCORE_TIMEOUT_MS: '20000',
      AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'https://bedrock-agentcore.vpce.example.com',
      EXECUTION_SIGV4_SERVICE: 'lambda',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      // Budgets: unset by default (no budget).
      USER_DAILY_TOKEN_BUDGET: '200000',
      CHANNEL_DAILY_TOKEN_BUDGET: '1000000',
      TEAM_DAILY_TOKEN_BUDGET: '20000000',
      GUARDRAIL_PATTERNS_JSON: '[{"name":"EMPLOYEE_ID","pattern":"EMP-\\\\d{6}"}]',
    };
    const sample = (name: string) => SAMPLES[name] ?? String(CODE.get(name)?.defaults[0]);
    const environment = (zone: 'verification' | 'execution') => JSON.stringify(Object.fromEntries(environmentVariablesOf(zone).map((name) => [name, sample(name)])));
    const OPTIONAL_KEYS = { allowedTeamIds: 'T1', allowedUserIds: 'U1', allowedChannelIds: 'C1', slackBotUserId: 'U0BOT', bedrockMaxTokens: '1000', bedrockSystemPrompt: 'Be brief.', userDailyTokenBudget: '200000', channelDailyTokenBudget: '2000000', teamDailyTokenBudget: '20000000', guardrail: 'bedrock', guardrailMode: 'detect', guardrailInputMode: 'mask', guardrailOutputMode: 'block', guardrailId: 'gr0drift1', guardrailVersion: '1' };

    let plain: Set<string>;
    let everything: Set<string>;
    beforeAll(() => {
      const synths = [
        // The defaults, both hosts: what CDK sets without being asked.
        synthesize({ ...SINGLE_ACCOUNT, executionHosts: 'agentcore,https' }),
        // Every optional key, and every variable through -c <zone>Environment.
        synthesize({ ...SINGLE_ACCOUNT, executionHosts: 'agentcore,https', ...OPTIONAL_KEYS, verificationEnvironment: environment('verification'), executionEnvironment: environment('execution') }),
        // Agents this app does not deploy: an AgentCore endpoint, an A2A agent with a bearer token.
        synthesize({ externalExecution: 'true', agentRuntimeArn: 'arn:aws:bedrock-agentcore:us-east-1:333333333333:runtime/agent-AbCdEf1234', agentRuntimeQualifier: 'prod' }),
        synthesize({ externalExecution: 'true', transport: 'https', executionUrl: 'https://agent.example.com/rpc', executionBearerSecretName: 'agent-token', executionAuth: 'bearer', executionProtocol: 'a2a', a2aVersion: '0.3' }),
        // Several agents (EXECUTION_AGENTS): this deployment's runtime and foreign ones.
        synthesize({ ...SINGLE_ACCOUNT, executionAgentsFile: 'test/cdk/fixtures/execution-agents.json' }),
      ];
      try {
        plain = variablesOf(synths[0]!.execution, synths[0]!.verification);
        everything = variablesOf(...synths.flatMap((s) => [s.execution, s.verification]));
      } finally {
        for (const s of synths) s.cleanup();
      }
    });

    it('CDK sets every variable routed to CDK or a context key, and every -c <zone>Environment variable when given', () => {
      const unset = Object.entries(ENVIRONMENT_ROUTES)
        .filter(([name, route]) => route.set !== 'never' && !everything.has(name))
        .map(([name, route]) => `${name} (${route.set})`);
      expect(unset).toEqual([]);
    });

    it('CDK sets no variable routed to -c <zone>Environment unless asked, and never one a deployment does not use', () => {
      const unasked = Object.entries(ENVIRONMENT_ROUTES)
        .filter(([name, route]) => (route.set === 'environment' && plain.has(name)) || (route.set === 'never' && everything.has(name)))
        .map(([name, route]) => `${name} (${route.set})`);
      expect(unasked).toEqual([]);
    });
  });
});

describe('CDK context: the docs and cdk/config.ts', () => {
  const SCHEMA_KEYS = Object.keys(ContextSchema.shape);
  const DEFAULTS = parseDeploymentConfig({}).context as Record<string, unknown>;
  const contextTable = TABLES.find((table) => table.file === 'docs/deploy.md' && table.header[0] === 'key');
  const tableKeys = () => contextTable!.rows.flatMap((row) => spans(row[0]!).map((key, i, all) => ({ key, default: parts(row[1]!, all.length)[i]! })));

  it('every `-c key` the docs use is a key of the context schema, and a literal value is one it takes', () => {
    const wrong: string[] = [];
    for (const file of DOC_FILES) {
      // -c key=value, -c key (a column naming the key), -c 'key={"JSON":…}'
      for (const m of DOCS[file].matchAll(/-c (?:'([a-zA-Z][a-zA-Z0-9]*)=([^']*)'|([a-zA-Z][a-zA-Z0-9]*)(?:=([^\s`'"]+))?)/g)) {
        const key = m[1] ?? m[3];
        const value = m[2] ?? m[4];
        if (key === 'key') continue; // `-c key=value`, the syntax itself
        const schema = (ContextSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean } }>)[key!];
        if (!schema) wrong.push(`-c ${key} (${file}) is not a context key`);
        else if (value !== undefined && !/[…<>$]/.test(value) && !schema.safeParse(value).success) wrong.push(`-c ${key}=${value} (${file}) is refused by the schema`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the context reference (docs/deploy.md) lists every key of the schema, with its default', () => {
    expect(contextTable).toBeDefined();
    const documented = tableKeys();
    expect(SCHEMA_KEYS.filter((key) => !documented.some((d) => d.key === key))).toEqual([]);
    expect(documented.filter((d) => !SCHEMA_KEYS.includes(d.key)).map((d) => d.key)).toEqual([]);
    const wrong = documented
      .filter((d) => DEFAULTS[d.key] !== undefined && !states(d.default, DEFAULTS[d.key] as string | number | boolean))
      .map((d) => `${d.key}: the default ${JSON.stringify(DEFAULTS[d.key])} is not in "${d.default}"`);
    expect(wrong).toEqual([]);
  });

  it('every cdk deploy or destroy in a ```sh block names the region of the first deploy (else the CLI default Region gets a second pair of stacks)', () => {
    const unpinned: string[] = [];
    for (const file of DOC_FILES) {
      for (const block of DOCS[file].matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
        const lines = block[1]!.replace(/\\\n/g, ' ').split('\n');
        for (const line of lines) if (/npx cdk (deploy|destroy)/.test(line) && !/-c region=|\$CTX/.test(line)) unpinned.push(`${file}: ${line.trim()}`);
      }
    }
    expect(unpinned).toEqual([]);
  });
});

describe('stack outputs: the docs and the synthesized templates', () => {
  let outputs: { ExecutionZone: Set<string>; VerificationZone: Set<string> };
  beforeAll(() => {
    const both = synthesize({ ...SINGLE_ACCOUNT, executionHosts: 'agentcore,https' });
    try {
      // The app's own outputs have a description; CDK's (weak cross-stack references, the REST API's endpoint) have none.
      const names = (template?: Template) =>
        new Set(Object.entries((template?.toJSON().Outputs ?? {}) as Record<string, { Description?: string }>).filter(([, output]) => output.Description).map(([name]) => name));
      outputs = { ExecutionZone: names(both.execution), VerificationZone: names(both.verification) };
    } finally {
      both.cleanup();
    }
  });

  /** The outputs table of docs/deploy.md: stack (or "both") → output names. */
  const outputsTable = () =>
    TABLES.filter((table) => table.file === 'docs/deploy.md' && table.header[1] === 'output').flatMap((table) =>
      table.rows.flatMap((row) => spans(row[1]!).map((output) => ({ stack: row[0]!, output }))),
    );

  it('every output the docs name exists: in the outputs table, in jq filters, as "output `X`"', () => {
    const all = new Set([...outputs.ExecutionZone, ...outputs.VerificationZone]);
    const named: Array<{ output: string; where: string }> = outputsTable().map((o) => ({ output: o.output, where: 'docs/deploy.md outputs table' }));
    for (const file of DOC_FILES) {
      for (const jq of DOCS[file].matchAll(/jq -r '([^']+)'/g)) for (const m of jq[1]!.matchAll(/\.([A-Z][A-Za-z]+)/g)) named.push({ output: m[1]!, where: `${file}: jq '${jq[1]}'` });
      for (const m of DOCS[file].matchAll(/\boutputs? `([A-Z][A-Za-z]+)`((?:(?:, | and | or | \/ )`[A-Z][A-Za-z]+`)*)/g)) {
        for (const output of [m[1]!, ...spans(m[2] ?? '')]) named.push({ output, where: `${file}: "${m[0]}"` });
      }
    }
    expect(named.filter((n) => !all.has(n.output) && !['ExecutionZone', 'VerificationZone'].includes(n.output)).map((n) => `${n.output} (${n.where})`)).toEqual([]);
  });

  it('the outputs table lists every output of both stacks, under the stack that has it', () => {
    const table = outputsTable();
    const wrong: string[] = [];
    for (const { stack, output } of table) {
      const stacks = stack === 'both' ? (['ExecutionZone', 'VerificationZone'] as const) : [stack as 'ExecutionZone' | 'VerificationZone'];
      for (const s of stacks) if (!outputs[s]?.has(output)) wrong.push(`${output} is not an output of ${s}`);
    }
    for (const s of ['ExecutionZone', 'VerificationZone'] as const) {
      for (const output of outputs[s]) if (!table.some((t) => t.output === output && (t.stack === s || t.stack === 'both'))) wrong.push(`${s} output ${output} is not in the table`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('links between the docs', () => {
  /** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
  const anchorsOf = (text: string) =>
    new Set(
      [...text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
    );

  it('every link to a section of a Markdown file names a heading it has', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of DOC_FILES) {
      for (const m of DOCS[file].matchAll(/\]\(([^)\s#]*\.md)?#([^)\s]+)\)/g)) {
        checked += 1;
        const target = m[1] ? join(file, '..', m[1]) : file;
        if (!anchorsOf(readFileSync(join(ROOT, target), 'utf8')).has(m[2]!)) broken.push(`${file}: ${m[0]} (no such heading in ${target})`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});

describe('the Slack app manifest and the code', () => {
  const MANIFEST = readFileSync(join(ROOT, 'docs', 'slack-app-manifest.yaml'), 'utf8');
  /** The items of the YAML list under `key:` (indented below it), comments skipped. */
  const listUnder = (key: string) => {
    const lines = MANIFEST.split('\n');
    const start = lines.findIndex((line) => line.trim() === `${key}:`);
    if (start < 0) throw new Error(`no ${key}: in the manifest`);
    const indent = lines[start]!.search(/\S/);
    const items: string[] = [];
    for (const line of lines.slice(start + 1)) {
      if (line.trim() === '' || line.trim().startsWith('#')) continue;
      if (line.search(/\S/) <= indent && !line.trim().startsWith('- ')) break;
      const item = /^\s*- ([\w.:-]+)\s*$/.exec(line);
      if (item) items.push(item[1]!);
    }
    return items.sort();
  };

  /**
   * The bot token scopes each Slack Web API method the code calls needs (docs.slack.dev, the
   * method's "Scopes"; none for views.open and auth.test). A method not here fails the test: look its scopes up
   * and add it.
   */
  const METHOD_SCOPES: Record<string, string[]> = {
    'chat.postMessage': ['chat:write'],
    'files.getUploadURLExternal': ['files:write'],
    'files.completeUploadExternal': ['files:write'],
    'files.info': ['files:read'],
    'chat.postEphemeral': ['chat:write'],
    'chat.update': ['chat:write'],
    'chat.startStream': ['chat:write'],
    'chat.appendStream': ['chat:write'],
    'chat.stopStream': ['chat:write'],
    'assistant.threads.setStatus': ['chat:write'],
    'assistant.threads.setSuggestedPrompts': ['assistant:write'],
    // Thread sessions need chat:write; only an app declared an agent (features.agent_view) may create them.
    'agents.sessions.setStatus': ['chat:write'],
    'views.open': [],
    // Who the bot token posts as (a taken-over chunk counts as posted only if it is ours): no scope.
    'auth.test': [],
    'reactions.add': ['reactions:write'],
    'reactions.remove': ['reactions:write'],
    // One per conversation type the bot reads a thread of: public, private, DM, group DM.
    'conversations.replies': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
  };
  /**
   * Bot events → the scope Slack requires to deliver them (none for app_home_opened; the agent
   * events come with the agent declaration, which adds assistant:write), and an event of that kind
   * the intake table takes.
   */
  const EVENTS: Record<string, { scope?: string; events: Array<Record<string, unknown>> }> = {
    app_mention: { scope: 'app_mentions:read', events: [{ type: 'app_mention', text: '<@UBOT> hi', channel: 'C1' }] },
    'message.im': { scope: 'im:history', events: [{ type: 'message', channel_type: 'im', text: 'hi', channel: 'D1' }] },
    'message.channels': { scope: 'channels:history', events: [{ type: 'message', channel_type: 'channel', text: 'hi', channel: 'C1' }, { type: 'message', channel_type: 'channel', text: 'and?', channel: 'C1', thread_ts: '1.000001' }] },
    'message.groups': { scope: 'groups:history', events: [{ type: 'message', channel_type: 'group', text: 'hi', channel: 'G1' }, { type: 'message', channel_type: 'group', text: 'and?', channel: 'G1', thread_ts: '1.000001' }] },
    'message.mpim': { scope: 'mpim:history', events: [{ type: 'message', channel_type: 'mpim', text: 'hi', channel: 'G2' }, { type: 'message', channel_type: 'mpim', text: 'and?', channel: 'G2', thread_ts: '1.000001' }] },
    app_home_opened: { events: [{ type: 'app_home_opened', channel: 'D1', tab: 'messages' }] },
    app_context_changed: { scope: 'assistant:write', events: [{ type: 'app_context_changed', channel: 'D1', context: { entities: [{ type: 'slack#/types/channel_id', value: 'C1' }] } }] },
    agent_session_stopped: { scope: 'assistant:write', events: [{ type: 'agent_session_stopped', channel: 'C1', thread_ts: '1.000001', streaming_message_ts: [] }] },
  };

  const methodsCalled = () => {
    const methods = new Set<string>();
    for (const { text } of SOURCES.filter((s) => s.path.startsWith('src/slack/'))) {
      for (const m of text.matchAll(/\bclient\.((?:chat|conversations|reactions|assistant|agents|files|users|auth|views|apps)(?:\.\w+)+)\(/g)) methods.add(m[1]!);
    }
    return [...methods].sort();
  };
  /** The subscriptions whose events the intake table accepts (a reply in a thread counts as one the bot answered in). */
  const eventsAnswered = async () => {
    const threads = new MemoryBotThreads();
    for (const channel of ['C1', 'G1', 'G2']) await threads.remember({ team_id: 'T1', channel, thread_ts: '1.000001' }, 60);
    const context = { threads, prompts: DEFAULT_AGENT_PROMPTS, log: createLogger('drift-test'), now: Date.now() };
    const answered: string[] = [];
    for (const [name, { events }] of Object.entries(EVENTS)) {
      for (const event of events) {
        const envelope = { type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event: { user: 'U1', ts: '1.000002', event_ts: '1.000002', ...event }, authorizations: [{ user_id: 'UBOT', is_bot: true }] };
        const handler = EVENT_HANDLERS[String(event.type)];
        if (handler && (await handler(envelope as unknown as SlackEventCallback, context)).kind === 'accept') {
          answered.push(name);
          break;
        }
      }
    }
    return answered.sort();
  };
  /** Posting as an execution agent (its displayName and icon: `username`, `icon_emoji`): chat:write.customize. */
  const customizesAuthor = () => SOURCES.some((s) => s.path.startsWith('src/slack/') && /\bicon_emoji\b/.test(s.text) && /\busername\b/.test(s.text));
  /** The invoker downloads shared files (url_private_download) with the bot token: files:read. */
  const downloadsFiles = () => SOURCES.some((s) => s.path.startsWith('src/verification/') && /\.downloadFile\(/.test(s.text));

  it('subscribes to exactly the bot events the code answers', async () => {
    const answered = await eventsAnswered();
    expect(answered.length).toBeGreaterThan(0);
    expect(listUnder('bot_events')).toEqual(answered);
  });

  it('every row of the intake table is an event the manifest subscribes to (a row added without its subscription fails)', async () => {
    // Built from the code's table, not from this test's list: each event type the intake takes
    // must be accepted under a subscription the manifest lists.
    const subscribed = new Set(listUnder('bot_events'));
    const answered = (await eventsAnswered()).filter((name) => subscribed.has(name));
    const typesSubscribed = new Set(answered.flatMap((name) => EVENTS[name]!.events.map((event) => String(event.type))));
    expect(Object.keys(EVENT_HANDLERS).filter((type) => !typesSubscribed.has(type))).toEqual([]);
  });

  it('asks for exactly the scopes of the methods the code calls, the events it answers and the files it downloads', async () => {
    const methods = methodsCalled();
    expect(methods.filter((method) => !METHOD_SCOPES[method])).toEqual([]);
    const eventScopes = (await eventsAnswered()).flatMap((event) => (EVENTS[event]!.scope ? [EVENTS[event]!.scope!] : []));
    const needed = new Set([...methods.flatMap((method) => METHOD_SCOPES[method]!), ...eventScopes, ...(downloadsFiles() ? ['files:read'] : []), ...(customizesAuthor() ? ['chat:write.customize'] : [])]);
    expect(listUnder('bot')).toEqual([...needed].sort());
  });

  it('declares the agent view (its prompts the default ones) and takes interactivity on the events URL', () => {
    const line = (key: string) => new RegExp(`^\\s*${key}:\\s*(.+?)\\s*$`, 'm').exec(MANIFEST)?.[1];
    const quoted = (value: string | undefined) => (value?.startsWith('"') ? (JSON.parse(value) as string) : value);
    // The agent messaging experience; the legacy assistant view is not declared beside it.
    expect(MANIFEST).toMatch(/^features:\n(?: .*\n|\s*#.*\n)*? {2}agent_view:$/m);
    expect(MANIFEST).not.toMatch(/^\s*assistant_view:/m);
    expect(quoted(line('agent_description'))?.length).toBeLessThanOrEqual(300);
    const prompts = [...MANIFEST.matchAll(/^\s*- title: (.+)\n\s*message: (.+)$/gm)].map((m) => ({ title: quoted(m[1]), message: quoted(m[2]) }));
    expect(prompts).toEqual(DEFAULT_AGENT_PROMPTS.home.slice(0, 4));
    // Feedback clicks and the form come as interactivity payloads, on the URL the events use.
    expect(Object.keys(INTERACTION_HANDLERS).length).toBeGreaterThan(0);
    expect(MANIFEST).toMatch(/^ {2}interactivity:\n {4}is_enabled: true$/m);
    const urls = [...MANIFEST.matchAll(/^\s*request_url: (\S+)$/gm)].map((m) => m[1]);
    expect(urls).toHaveLength(2);
    expect(urls[1]).toBe(urls[0]);
  });

  it('docs/deploy.md lists the manifest\'s scopes and events', () => {
    const table = TABLES.find((t) => t.file === 'docs/deploy.md' && t.rows.some((row) => row[0] === 'bot scopes'))!;
    const row = (name: string) => spans(table.rows.find((r) => r[0] === name)![1]!).filter((span) => /^[a-z_]+([:.][a-z_]+)*$/.test(span) && !span.includes('='));
    expect(row('bot scopes').filter((s) => s.includes(':')).sort()).toEqual(listUnder('bot'));
    expect(row('bot events').sort()).toEqual(listUnder('bot_events'));
  });
});
