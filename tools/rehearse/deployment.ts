import { startFunctionUrlGateway, type FunctionUrlGateway } from './function-url-gateway';
import { proxyRoutesOf, startRestApiGateway, type RestApiGateway } from './rest-api-gateway';
import { RehearsalError, startSandbox, type Sandbox } from './lambda-sandbox';
import { startLoopbackAws, type LoopbackAws } from './loopback-aws';
import type { RehearsalRuntime } from './node22';
import { eventSourceMapping, type EventSourceMapping } from './sqs-event-source';
import type { Assembly, TemplateFunction } from './template-functions';

/**
 * The cloud assembly "deployed" on loopback: AWS's services as LoopbackAws serves them, each
 * Lambda function started in its sandbox, each function URL a gateway in front of its function,
 * each SQS event source mapping delivering its queue to its function.
 */
export type Deployment = {
  aws: LoopbackAws;
  /** Sandboxes by construct name (`SlackEvents`, `FunctionUrl/UrlHandler`, …). */
  functions: Map<string, Sandbox>;
  /** Event source mappings by the name of the function they feed. */
  mappings: Map<string, EventSourceMapping>;
  /** Function URLs by the name of their function. */
  urls: Map<string, FunctionUrlGateway>;
  /** REST APIs (their Lambda proxy routes) by stack name. */
  apis: Map<string, RestApiGateway>;
  close(): Promise<void>;
};

export type DeployOptions = {
  runtime: RehearsalRuntime;
  /**
   * What to put in each secret, by the environment variable that names it (SLACK_SIGNING_SECRET_ARN…):
   * CloudFormation creates the secrets with generated values, and the operator puts the real ones.
   */
  secretValues: (variable: string) => string | undefined;
  /** The longest the rehearsal waits for one init or invocation. */
  maxWaitMs: number;
};

export async function deploy(assembly: Assembly, options: DeployOptions): Promise<Deployment> {
  const aws = await startLoopbackAws(assembly);
  const functions = new Map<string, Sandbox>();
  const urls = new Map<string, FunctionUrlGateway>();
  const mappings = new Map<string, EventSourceMapping>();
  const apis = new Map<string, RestApiGateway>();
  const deployment: Deployment = {
    aws,
    functions,
    mappings,
    urls,
    apis,
    close: async () => {
      await Promise.all([...mappings.values()].map((mapping) => mapping.stop()));
      await Promise.all([...functions.values()].map((fn) => fn.stop()));
      await Promise.all([...urls.values(), ...apis.values()].map((gateway) => gateway.close()));
      await aws.close();
    },
  };
  try {
    const stackOf = (name: string) => assembly.stacks.find((s) => s.name === name)!;
    const byLogicalId = (stack: string, logicalId: string) => assembly.functions.find((f) => f.stack === stack && f.logicalId === logicalId);
    const sandboxOf = (fn: TemplateFunction) => () => {
      const sandbox = functions.get(fn.name);
      if (!sandbox) throw new RehearsalError(`${fn.name} is not running`);
      return sandbox;
    };

    for (const stack of assembly.stacks) {
      for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
        if (resource.Type === 'AWS::SecretsManager::Secret') {
          const variable = variableReferring(assembly, stack.name, logicalId);
          const value = variable === undefined ? undefined : options.secretValues(variable);
          if (value !== undefined) aws.secrets.setSecret(aws.secretArn(stack, logicalId), value);
        }
        if (resource.Type !== 'AWS::Lambda::Url') continue;
        const target = resource.Properties?.TargetFunctionArn?.['Fn::GetAtt']?.[0] as string;
        const fn = byLogicalId(stack.name, target);
        // A rehearsal of some functions only (a test's) leaves out the URLs of the others.
        if (!fn) continue;
        const gateway = await startFunctionUrlGateway(sandboxOf(fn), { authType: String(resource.Properties?.AuthType), accountId: stack.account, timeoutMs: options.maxWaitMs });
        urls.set(fn.name, gateway);
        aws.functionUrls.set(logicalId, gateway.url);
      }
    }

    // One at a time: each init duration is the function's own, not a share of a busy machine's.
    for (const fn of assembly.functions) {
      if (fn.runtime !== 'nodejs22.x') throw new RehearsalError(`${fn.name}: runtime ${fn.runtime}; the rehearsal runs nodejs22.x (Node 22) only`);
      const stack = stackOf(fn.stack);
      const environment = Object.fromEntries(Object.entries(fn.environment).map(([name, value]) => [name, aws.resolve(stack, value, `${fn.name} (environment ${name})`)]));
      functions.set(fn.name, await startSandbox({ fn, environment, aws: aws.environmentFor(stack), runtime: options.runtime, maxWaitMs: options.maxWaitMs }));
    }

    for (const stack of assembly.stacks) {
      const routes = proxyRoutesOf(stack);
      if (routes.length === 0) continue;
      const sandboxByLogicalId = (logicalId: string) => sandboxOf(byLogicalId(stack.name, logicalId) ?? ({ name: logicalId } as TemplateFunction))();
      apis.set(stack.name, await startRestApiGateway(routes, sandboxByLogicalId, { accountId: stack.account, timeoutMs: options.maxWaitMs }));
    }

    for (const subscription of assembly.subscriptions) {
      const stack = stackOf(subscription.stack);
      const fn = byLogicalId(subscription.stack, subscription.functionLogicalId);
      const queue = stack.template.Resources[subscription.queueLogicalId];
      if (!fn || !queue) throw new RehearsalError(`event source mapping ${subscription.queueLogicalId} → ${subscription.functionLogicalId}: not found in ${stack.name}`);
      mappings.set(
        fn.name,
        eventSourceMapping({
          name: fn.name,
          sqs: aws.sqs,
          queueName: `${stack.name}-${subscription.queueLogicalId}`,
          queueArn: aws.resolve(stack, { 'Fn::GetAtt': [subscription.queueLogicalId, 'Arn'] }, fn.name),
          region: stack.region,
          batchSize: subscription.batchSize,
          reportsItemFailures: subscription.reportsItemFailures,
          maxReceiveCount: (queue.Properties?.RedrivePolicy?.maxReceiveCount as number | undefined) ?? Number.POSITIVE_INFINITY,
          sandbox: sandboxOf(fn),
        }),
      );
    }
    return deployment;
  } catch (error) {
    await deployment.close();
    throw error;
  }
}

/** The environment variable that holds a resource's `Ref` in some function of its stack. */
function variableReferring(assembly: Assembly, stack: string, logicalId: string): string | undefined {
  for (const fn of assembly.functions.filter((f) => f.stack === stack)) {
    for (const [name, value] of Object.entries(fn.environment)) if ((value as { Ref?: string } | null)?.Ref === logicalId) return name;
  }
  return undefined;
}
