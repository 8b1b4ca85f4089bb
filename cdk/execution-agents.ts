import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentSettingsFrom, buildExecutionAgents, type AgentsSettings } from '../src/protocols/agent-config';
import { isLoopbackUrl } from '../src/net/loopback';
import { sigv4TargetOfHost } from '../src/transport/sigv4-signer';
import { PROJECT_ROOT } from './project-root';

/**
 * Several execution agents in a deployment (docs/deploy.md, "Several execution agents"): the list
 * CDK takes from `-c executionAgentsFile=<file>` or `executionAgents` in cdk.json, checked at
 * synthesis with the parser the functions use (src/protocols/agent-config.ts), and what each agent
 * needs granted. Pure: nothing here builds constructs, so cdk/config.ts can refuse a bad list with
 * every other bad key, before any stack exists.
 *
 * An entry is an EXECUTION_AGENTS entry plus two keys only CDK reads, removed from what it writes:
 * - `"own": true`: this deployment's own execution zone. CDK fills in its address (the linked
 *   runtime or function URL, or `-c agentRuntimeArn` / `-c executionUrl` when it lives elsewhere)
 *   and grants what the single-agent deployment grants. Its transport is `-c transport`'s.
 * - `"grantArn"`: for an https agent signed with SigV4 whose URL does not say what to grant (a
 *   function URL, a custom domain): the Lambda function or execute-api ARN the roles may invoke.
 */

/** The keys of an entry CDK reads and the functions never see. */
const CDK_KEYS = ['own', 'grantArn'] as const;
/** An own entry's address comes from the deployment; these keys would contradict it. */
const OWN_ADDRESS_KEYS = ['runtimeArn', 'qualifier', 'url', 'auth', 'bearerToken', 'bearerSecretArn', 'sigv4Service', 'grantArn'] as const;
/** Stand-ins for the own agent's address while the list is checked (the real one is a token until deploy). */
const OWN_PLACEHOLDER = {
  agentcore: { runtimeArn: 'arn:aws:bedrock-agentcore:us-east-1:000000000000:runtime/own-placeholder' },
  https: { url: 'https://own-placeholder.lambda-url.us-east-1.on.aws/', auth: 'sigv4' },
} as const;

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+-[A-Za-z0-9]{6}$/;
const FUNCTION_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[\w-]+$/;
const EXECUTE_API_ARN = /^arn:aws[a-z-]*:execute-api:[a-z0-9-]+:\d{12}:[a-z0-9]+\/\S+$/;
const EXECUTE_API_HOST = /^([a-z0-9]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/;

/** The endpoint AgentCore calls reach when an entry names no qualifier (agentcore-execution-host.ts's DEFAULT_ENDPOINT). */
const DEFAULT_QUALIFIER = 'DEFAULT';

/** What the invoker and poller roles need to call one agent. */
export type AgentGrant =
  /** This deployment's execution zone: what ExecutionAccess grants for the context's target. */
  | { kind: 'own' }
  /** bedrock-agentcore:InvokeAgentRuntime on the runtime and on the endpoint the calls reach. */
  | { kind: 'agentcore'; runtimeArn: string; endpointArn: string }
  /** lambda:InvokeFunctionUrl (and InvokeFunction via the URL) on one function. */
  | { kind: 'function-url'; functionArn: string }
  /** execute-api:Invoke on one route; `account` unset: the verification zone's own account. */
  | { kind: 'execute-api'; arn: string } | { kind: 'execute-api'; region: string; account?: string; resource: string }
  /** secretsmanager:GetSecretValue on one secret. */
  | { kind: 'secret'; secretArn: string }
  /** auth none (a loopback URL, or an agent that asks for nothing): no grant. */
  | { kind: 'none' };

export type ExecutionAgentPlan = {
  readonly name: string;
  readonly transport: 'agentcore' | 'https';
  /** Whether this is the deployment's own execution zone (`"own": true`). */
  readonly own: boolean;
  /** The entry as the functions read it: CDK's keys removed; an own entry still without its address. */
  readonly entry: Readonly<Record<string, unknown>>;
  readonly grant: AgentGrant;
};

export type ExecutionAgentsSource = {
  /** `-c executionAgentsFile`: a JSON file, relative to the project root. */
  file?: string;
  /** `executionAgents` in cdk.json (a list), or `-c executionAgents='[…]'` (its JSON). */
  inline?: unknown;
};

export type PlanContext = {
  /** `-c transport`: the transport an own entry must use (the one the execution target is resolved for). */
  transport: 'agentcore' | 'https';
  /** `-c verificationEnvironment`: fills options an entry leaves out, as on the functions. */
  verificationEnvironment?: Readonly<Record<string, string>>;
  /** The verification zone's account and region, when known. */
  account?: string;
  region?: string;
  /** `-c executionSendBotToken`: the global flag, which the functions refuse while several agents are configured. */
  sendBotToken?: boolean;
};

/** Thrown with every problem of the list, each with its place; cdk/config.ts reports it as a context error. */
export class ExecutionAgentsError extends Error {
  override name = 'ExecutionAgentsError';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}: ${problems.join('; ')}`);
  }
}

/** The context key and file a list came from, as errors name it. */
export function sourceLabel(source: ExecutionAgentsSource): string {
  return source.file !== undefined ? `executionAgentsFile (${source.file})` : 'executionAgents';
}

/** Reads the list from its file or the context value; undefined when neither is given. */
export function readExecutionAgents(source: ExecutionAgentsSource, root: string = PROJECT_ROOT): unknown | undefined {
  const label = sourceLabel(source);
  if (source.file !== undefined && source.inline !== undefined) throw new ExecutionAgentsError('executionAgents', ['give the list once: -c executionAgentsFile or executionAgents, not both']);
  if (source.file !== undefined) {
    const file = path.resolve(root, source.file);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ExecutionAgentsError(label, [code === 'ENOENT' ? `no such file ${file} (the path is relative to the project root)` : `cannot read ${file}: ${(error as Error).message}`]);
    }
    return parseJson(text, label);
  }
  if (source.inline === undefined) return undefined;
  return typeof source.inline === 'string' ? parseJson(source.inline, label) : source.inline;
}

function parseJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ExecutionAgentsError(label, [`is not valid JSON: ${(error as Error).message}`]);
  }
}

/**
 * Checks a list and works out each agent's grant. Refused, each with its place
 * (`EXECUTION_AGENTS[2].channels: …`, as the functions name it): whatever the functions would
 * refuse at start-up, a `bearerToken` (a secret would sit in the template), a bearer secret named
 * other than by its complete ARN, a SigV4 agent whose URL does not say what to grant and that
 * gives no `grantArn`, an own entry that names an address or uses another transport, and the bot
 * token sent to any agent but the own one (`"sendBotToken": true` elsewhere, or the global
 * `executionSendBotToken` with several agents).
 */
export function planExecutionAgents(list: unknown, context: PlanContext, label = 'executionAgents'): ExecutionAgentPlan[] {
  const fail = (problems: string[]): never => {
    throw new ExecutionAgentsError(label, problems);
  };
  if (!Array.isArray(list)) fail(['must be a JSON list of agent entries']);
  const entries = list as unknown[];
  const problems: string[] = [];
  const place = (index: number, key?: string) => `EXECUTION_AGENTS[${index}]${key ? `.${key}` : ''}`;

  // 1. CDK's own keys, and what a template must never hold, before the functions' parser sees the list.
  const stripped = entries.map((raw, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${place(index)}: each agent is a JSON object`);
      return {};
    }
    const { own, grantArn, ...entry } = raw as Record<string, unknown>;
    if (own !== undefined && own !== true) problems.push(`${place(index, 'own')}: is true or left out`);
    if (grantArn !== undefined && typeof grantArn !== 'string') problems.push(`${place(index, 'grantArn')}: is an ARN`);
    if ('bearerToken' in entry) {
      problems.push(`${place(index, 'bearerToken')}: a token would sit in the template and in cdk.out; store it in Secrets Manager and name the secret with bearerSecretArn`);
    }
    // The workspace bot token is this deployment's secret: only its own execution zone may get it.
    if (entry.sendBotToken === true && own !== true) {
      problems.push(`${place(index, 'sendBotToken')}: the bot token goes only to this deployment's own execution zone ("own": true), never to another party's agent`);
    }
    if (own === true) {
      for (const key of OWN_ADDRESS_KEYS) if (key in (raw as object)) problems.push(`${place(index, key)}: an own agent's address and auth are the deployment's; leave ${key} out`);
      if (entry.transport !== context.transport) {
        problems.push(`${place(index, 'transport')}: an own agent uses the transport of -c transport (${context.transport}), not ${JSON.stringify(entry.transport)}`);
      }
    }
    return entry;
  });
  const owns = entries.flatMap((raw, index) => ((raw as { own?: unknown } | null)?.own === true ? [index] : []));
  if (context.sendBotToken && entries.length > 1) {
    problems.push('executionSendBotToken: would send the bot token to every agent of the list; set "sendBotToken": true on the own entry instead');
  } else if (context.sendBotToken && owns.length === 0) {
    problems.push('executionSendBotToken: the one agent of the list is not this deployment\'s own ("own": true), and the bot token goes to no other party');
  }
  if (owns.length > 1) problems.push(`${owns.map((index) => place(index, 'own')).join(', ')}: one entry is this deployment's own execution zone, not ${owns.length}`);
  if (problems.length) fail(problems);

  // 2. The functions' own parser, on the list as they will read it (own addresses stood in for).
  const checked = stripped.map((entry, index) => (owns.includes(index) ? { ...entry, ...OWN_PLACEHOLDER[context.transport] } : entry));
  const env = { ...context.verificationEnvironment, AWS_REGION: context.region ?? 'us-east-1', EXECUTION_AGENTS: JSON.stringify(checked) };
  let settings: AgentsSettings;
  try {
    settings = agentSettingsFrom({ env });
  } catch (error) {
    return fail([(error as Error).message.replace(/^invalid execution agent configuration: /, '')]);
  }
  // Building each agent refuses what only its transport checks (an http:// URL that is not loopback, …).
  settings.agents.forEach((agent, index) => {
    try {
      buildExecutionAgents({ agents: [agent], defaultAgent: agent.name }, { agentCoreClient: {} as never });
    } catch (error) {
      problems.push(`${place(index)} (${JSON.stringify(agent.name)}): ${(error as Error).message}`);
    }
  });
  if (problems.length) fail(problems);

  // 3. What each agent needs granted.
  const plans = settings.agents.map((agent, index): ExecutionAgentPlan | undefined => {
    const raw = entries[index] as Record<string, unknown>;
    const base = { name: agent.name, entry: stripped[index]!, own: owns.includes(index) };
    const transport = agent.transport;
    if (base.own) return { ...base, transport: context.transport, grant: { kind: 'own' } };
    if (transport.kind === 'agentcore') {
      const grantArn = raw.grantArn;
      if (grantArn !== undefined) problems.push(`${place(index, 'grantArn')}: applies to https agents signed with SigV4; an AgentCore agent is granted on its runtimeArn`);
      const qualifier = transport.qualifier ?? DEFAULT_QUALIFIER;
      return { ...base, transport: 'agentcore', grant: { kind: 'agentcore', runtimeArn: transport.runtimeArn, endpointArn: `${transport.runtimeArn}/runtime-endpoint/${qualifier}` } };
    }
    if (transport.kind !== 'https') {
      problems.push(`${place(index, 'transport')}: a deployment reaches agents over agentcore or https, not ${transport.kind}`);
      return undefined;
    }
    const url = new URL(transport.url);
    const auth = transport.auth ?? (isLoopbackUrl(url) ? 'none' : 'sigv4');
    const grantArn = raw.grantArn as string | undefined;
    if (grantArn !== undefined && auth !== 'sigv4') problems.push(`${place(index, 'grantArn')}: applies to agents signed with SigV4 (auth ${auth} needs no IAM grant)`);
    if (auth === 'none') return { ...base, transport: 'https', grant: { kind: 'none' } };
    if (auth === 'bearer') {
      const secretArn = transport.bearerSecretArn;
      if (!secretArn || !SECRET_ARN.test(secretArn)) {
        problems.push(`${place(index, 'bearerSecretArn')}: must be the secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>), so the roles may read exactly that secret`);
        return undefined;
      }
      return { ...base, transport: 'https', grant: { kind: 'secret', secretArn } };
    }
    // SigV4: the ARN the entry gives, else what its URL says.
    if (grantArn !== undefined) {
      if (FUNCTION_ARN.test(grantArn)) return { ...base, transport: 'https', grant: { kind: 'function-url', functionArn: grantArn } };
      if (EXECUTE_API_ARN.test(grantArn)) return { ...base, transport: 'https', grant: { kind: 'execute-api', arn: grantArn } };
      problems.push(`${place(index, 'grantArn')}: must be a Lambda function ARN (arn:aws:lambda:…:function:<name>) or an execute-api ARN (arn:aws:execute-api:<region>:<account>:<api-id>/<stage>/<METHOD>/<path>)`);
      return undefined;
    }
    const api = EXECUTE_API_HOST.exec(url.hostname.toLowerCase());
    const [stage, ...route] = url.pathname.split('/').filter(Boolean);
    if (api && stage) {
      // A REST API's URL: /<stage>/<path>. Calls POST to it (the agent card is read at the origin, which API Gateway does not serve).
      return { ...base, transport: 'https', grant: { kind: 'execute-api', region: api[2]!, resource: `${api[1]}/${stage}/POST/${route.join('/')}`, ...(context.account ? { account: context.account } : {}) } };
    }
    const service = transport.sigv4Service ?? sigv4TargetOfHost(url.hostname).service;
    const what =
      service === 'lambda'
        ? 'a function URL does not name its function: give grantArn (the function\'s ARN), or "own": true for this deployment\'s execution zone'
        : api
          ? 'an API Gateway URL without a stage (an HTTP API\'s $default stage): give grantArn (its execute-api ARN)'
          : `cannot tell what to grant for ${url.hostname}: give grantArn (the Lambda function or execute-api ARN behind it)`;
    problems.push(`${place(index, 'url')}: signed with SigV4, and ${what}`);
    return undefined;
  });
  if (problems.length) fail(problems);
  return plans as ExecutionAgentPlan[];
}
