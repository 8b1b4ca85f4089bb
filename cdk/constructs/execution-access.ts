import { Stack } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Construct } from 'constructs';
import { ENV_VARIABLES, TRANSPORT_VARIABLE, transportEnvironment } from '../../src/transport/config';
import type { ExecutionTarget, Transport } from '../config';
import type { AgentGrant, ExecutionAgentPlan } from '../execution-agents';
import { DEFAULT_ENDPOINT, runtimeEndpointArn } from './agentcore-execution-host';
import { AGENTCORE_INVOKE_ACTIONS } from './agentcore-invoke-actions';

/** What the ExecutionZone stack of this app exposes to the verification zone beside it. */
export interface LinkedExecution {
  readonly agentcore?: { readonly runtimeArn: string };
  readonly https?: { readonly url: string; readonly function: IFunction };
}

export interface ExecutionAccessProps {
  readonly transport: Transport;
  readonly target: ExecutionTarget;
  /** Required when the target is `linked`. */
  readonly linked?: LinkedExecution;
  /** EXECUTION_PROTOCOL: execute-task for this app's execution zone; a2a / simple-a2a for other agents. */
  readonly protocol: string;
  readonly a2aVersion?: string;
  /**
   * Several agents (cdk/execution-agents.ts, already checked): the environment is EXECUTION_AGENTS
   * alone, and the grant is each agent's. The own entry's address and grant are the ones the single
   * agent would get from `transport`, `target` and `linked`.
   */
  readonly agents?: readonly ExecutionAgentPlan[];
}

/**
 * How the verification zone reaches the execution zone: the environment that selects the
 * transport in agent-invoker and async-result (TRANSPORT, AGENTCORE_… or EXECUTION_…), and the
 * grant that lets their roles make exactly that call:
 *
 * - agentcore: bedrock-agentcore:InvokeAgentRuntime on the runtime and on the endpoint the call
 *   reaches (both are authorized), spelled out rather than `runtime/*`.
 * - https with SigV4: lambda:InvokeFunctionUrl (auth type AWS_IAM) and lambda:InvokeFunction
 *   (only via the function URL) on that one function, as `grantInvokeUrl` writes them.
 * - https with a bearer token: read access to that one secret.
 */
export class ExecutionAccess extends Construct {
  public readonly environment: Record<string, string>;
  private readonly grantTo: (grantee: IGrantable) => void;
  /** The runtime and endpoint ARNs, for agentcore: what StopRuntimeSession is granted on. */
  private readonly runtimeArns?: string[];

  constructor(scope: Construct, id: string, props: ExecutionAccessProps) {
    super(scope, id);
    if (props.agents) {
      const agents = this.agentsAccess(props, props.agents);
      this.environment = agents.environment;
      this.runtimeArns = agents.runtimeArns;
      this.grantTo = agents.grantTo;
      return;
    }
    const protocol: Record<string, string> = {
      EXECUTION_PROTOCOL: props.protocol,
      ...(props.a2aVersion ? { A2A_VERSION: props.a2aVersion } : {}),
    };
    const target = props.target;
    if (props.transport === 'agentcore') {
      const { runtimeArn, qualifier } = this.runtimeOf(target, props.linked);
      this.environment = { ...transportEnvironment('agentcore', { runtimeArn, qualifier }), ...protocol };
      const resourceArns = [runtimeArn, runtimeEndpointArn(runtimeArn, qualifier ?? DEFAULT_ENDPOINT)];
      this.runtimeArns = resourceArns;
      this.grantTo = (grantee) => Grant.addToPrincipal({ grantee, actions: AGENTCORE_INVOKE_ACTIONS, resourceArns });
      return;
    }
    if (target.kind === 'linked') {
      const https = props.linked?.https;
      if (!https) throw new Error('transport=https, but the linked execution zone runs no https host (executionHosts)');
      this.environment = { ...transportEnvironment('https', { url: https.url, auth: 'sigv4' }), ...protocol };
      this.grantTo = (grantee) => https.function.grantInvokeUrl(grantee);
      return;
    }
    if (target.kind !== 'https-url') throw new Error(`transport=https cannot use the execution target ${target.kind}`);
    // The transport reads a bearer secret by id; a name resolves in this account and region.
    const bearer = target.auth === 'bearer' ? Secret.fromSecretNameV2(this, 'BearerToken', target.bearerSecretName!) : undefined;
    this.environment = { ...transportEnvironment('https', { url: target.url, auth: target.auth, bearerSecretArn: bearer?.secretName }), ...protocol };
    switch (target.auth) {
      case 'sigv4': {
        // Another account's function: its resource policy admits us; this is our half (identity policy).
        const fn = LambdaFunction.fromFunctionAttributes(this, 'ExecutionFunction', { functionArn: target.functionArn!, skipPermissions: true });
        this.grantTo = (grantee) => fn.grantInvokeUrl(grantee);
        break;
      }
      case 'bearer': {
        const secret: ISecret = bearer!;
        this.grantTo = (grantee) => secret.grantRead(grantee);
        break;
      }
      case 'none':
        this.grantTo = () => undefined;
        break;
    }
  }

  /** Lets a caller (agent-invoker, async-result) make exactly the call the environment describes. */
  grantCall(grantee: IGrantable): void {
    this.grantTo(grantee);
  }

  /** AGENTCORE_STOP_SESSION other than never: a caller may end a conversation's session (StopRuntimeSession) on the same runtime. Nothing for https. */
  grantStopSessions(grantee: IGrantable): void {
    if (this.runtimeArns) Grant.addToPrincipal({ grantee, actions: ['bedrock-agentcore:StopRuntimeSession'], resourceArns: this.runtimeArns });
  }

  /**
   * EXECUTION_AGENTS and the grants of several agents:
   * - agentcore: InvokeAgentRuntime on the runtime and the endpoint its qualifier names (another
   *   account's runtime too: this is our half, its resource policy the other);
   * - https with SigV4: InvokeFunctionUrl on the function (grantArn), or execute-api:Invoke on the
   *   route its URL names (in this account unless grantArn says another);
   * - https with a bearer token: GetSecretValue on that secret;
   * - auth none: nothing.
   */
  private agentsAccess(props: ExecutionAccessProps, agents: readonly ExecutionAgentPlan[]): { environment: Record<string, string>; runtimeArns?: string[]; grantTo: (grantee: IGrantable) => void } {
    const grants: Array<(grantee: IGrantable) => void> = [];
    const runtimeArns: string[] = [];
    const entries = agents.map((agent, index) => {
      if (agent.grant.kind === 'own') {
        const own = new ExecutionAccess(this, 'Own', { transport: props.transport, target: props.target, ...(props.linked ? { linked: props.linked } : {}), protocol: String(agent.entry.protocol) });
        grants.push((grantee) => own.grantCall(grantee));
        if (own.runtimeArns) runtimeArns.push(...own.runtimeArns);
        return { ...agent.entry, ...fieldsOf(own.environment) };
      }
      if (agent.grant.kind === 'agentcore') runtimeArns.push(agent.grant.runtimeArn, agent.grant.endpointArn);
      grants.push(this.grantOf(`Agent${index}`, agent.grant));
      return agent.entry;
    });
    return {
      // A JSON string with tokens in it (the own runtime's ARN or URL): toJsonString renders it as CloudFormation resolves it.
      environment: { EXECUTION_AGENTS: Stack.of(this).toJsonString(entries) },
      ...(runtimeArns.length ? { runtimeArns } : {}),
      grantTo: (grantee) => grants.forEach((grant) => grant(grantee)),
    };
  }

  private grantOf(id: string, grant: Exclude<AgentGrant, { kind: 'own' }>): (grantee: IGrantable) => void {
    switch (grant.kind) {
      case 'agentcore':
        return (grantee) => Grant.addToPrincipal({ grantee, actions: AGENTCORE_INVOKE_ACTIONS, resourceArns: [grant.runtimeArn, grant.endpointArn] });
      case 'function-url': {
        const fn = LambdaFunction.fromFunctionAttributes(this, `${id}Function`, { functionArn: grant.functionArn, skipPermissions: true });
        return (grantee) => fn.grantInvokeUrl(grantee);
      }
      case 'execute-api': {
        const stack = Stack.of(this);
        const arn =
          'arn' in grant
            ? grant.arn
            : `arn:${RegionInfo.get(grant.region).partition ?? 'aws'}:execute-api:${grant.region}:${grant.account ?? stack.account}:${grant.resource}`;
        return (grantee) => Grant.addToPrincipal({ grantee, actions: ['execute-api:Invoke'], resourceArns: [arn] });
      }
      case 'secret':
        // GetSecretValue alone: the transport reads the token and nothing else of the secret.
        return (grantee) => Grant.addToPrincipal({ grantee, actions: ['secretsmanager:GetSecretValue'], resourceArns: [grant.secretArn] });
      case 'none':
        return () => undefined;
    }
  }

  private runtimeOf(target: ExecutionTarget, linked: LinkedExecution | undefined): { runtimeArn: string; qualifier?: string } {
    if (target.kind === 'agentcore-arn') return { runtimeArn: target.runtimeArn, ...(target.qualifier ? { qualifier: target.qualifier } : {}) };
    if (target.kind === 'linked' && linked?.agentcore) return { runtimeArn: linked.agentcore.runtimeArn };
    throw new Error('transport=agentcore needs an AgentCore runtime: run the agentcore host in ExecutionZone (executionHosts) or pass agentRuntimeArn');
  }
}

/** The entry fields of a single agent's transport environment (TRANSPORT, AGENTCORE_RUNTIME_ARN, … → runtimeArn, …). */
function fieldsOf(environment: Record<string, string>): Record<string, string> {
  const kind = environment[TRANSPORT_VARIABLE] as Transport;
  const variables = ENV_VARIABLES[kind] as Record<string, string>;
  return Object.fromEntries(Object.entries(variables).flatMap(([field, variable]) => (environment[variable] !== undefined ? [[field, environment[variable]!]] : [])));
}
