import { CreateTableCommand, type AttributeDefinition, type GlobalSecondaryIndex, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../test/support/dynalite';
import { startFakeBedrockRuntime, type FakeBedrockRuntime } from '../../test/support/fake-bedrock-runtime';
import { startFakeSecretsManager, type FakeSecretsManager } from '../../test/support/fake-secrets-manager';
import { startFakeSqs, type FakeSqs } from '../../test/support/fake-sqs';
import type { Assembly, Stack } from './template-functions';

/**
 * The AWS services the stacks' functions call, on loopback, with the resources the templates
 * declare: every DynamoDB table created in dynalite (a DynamoDB implementation from npm) with the
 * template's keys and indexes, every SQS queue a URL on the project's SQS stand-in, every secret an
 * ARN in the Secrets Manager stand-in, Bedrock Runtime a stand-in speaking HTTP/2 as Bedrock does.
 *
 * `resolve` turns a template value into what CloudFormation would write in its place: `Ref`,
 * `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`-free pseudo parameters and a cross-stack `Fn::GetStackOutput`
 * or `Fn::ImportValue`. A value it cannot resolve fails, naming the function and the variable.
 */
export type LoopbackAws = {
  dynamodb: LocalDynamoDb;
  sqs: FakeSqs;
  secrets: FakeSecretsManager;
  bedrock: FakeBedrockRuntime;
  /** What Lambda's network and role give every function: endpoints, region and (stand-in) credentials. */
  environmentFor(stack: Stack): Record<string, string>;
  /** A queue's URL on the SQS stand-in, by its logical id. */
  queueUrl(stack: string, logicalId: string): string;
  /** A secret's ARN, by its logical id. */
  secretArn(stack: Stack, logicalId: string): string;
  resolve(stack: Stack, value: unknown, where: string): string;
  /** Function URLs (AWS::Lambda::Url) by the logical id of the URL resource. */
  functionUrls: Map<string, string>;
  close(): Promise<void>;
};

export async function startLoopbackAws(assembly: Assembly): Promise<LoopbackAws> {
  const [dynamodb, sqs, secrets, bedrock] = await Promise.all([startLocalDynamoDb(), startFakeSqs(), startFakeSecretsManager(), startFakeBedrockRuntime()]);
  // The stand-in sets this for in-process tests; the functions here get their endpoints explicitly.
  delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
  for (const stack of assembly.stacks) await createTables(dynamodb, stack);
  const functionUrls = new Map<string, string>();

  const queueUrl = (stack: string, logicalId: string) => sqs.queueUrl(`${stack}-${logicalId}`);
  const secretArn = (stack: Stack, logicalId: string) => `arn:aws:secretsmanager:${stack.region}:${stack.account}:secret:${stack.name}-${logicalId}-AbCdEf`;

  const resolve = (stack: Stack, value: unknown, where: string): string => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    const intrinsic = value as Record<string, any>;
    if ('Ref' in intrinsic) return ref(stack, intrinsic.Ref as string, where);
    if ('Fn::GetAtt' in intrinsic) return getAtt(stack, intrinsic['Fn::GetAtt'][0], intrinsic['Fn::GetAtt'][1], where);
    if ('Fn::Join' in intrinsic) return (intrinsic['Fn::Join'][1] as unknown[]).map((part) => resolve(stack, part, where)).join(intrinsic['Fn::Join'][0]);
    if ('Fn::GetStackOutput' in intrinsic) return stackOutput(intrinsic['Fn::GetStackOutput'].StackName, intrinsic['Fn::GetStackOutput'].OutputName, where);
    if ('Fn::ImportValue' in intrinsic) return importValue(resolve(stack, intrinsic['Fn::ImportValue'], where), where);
    throw new Error(`${where}: the rehearsal cannot resolve ${JSON.stringify(value)}`);
  };

  const resourceOf = (stack: Stack, logicalId: string, where: string) => {
    const resource = stack.template.Resources[logicalId];
    if (!resource) throw new Error(`${where}: refers to ${logicalId}, which ${stack.name} does not declare`);
    return resource;
  };

  const ref = (stack: Stack, logicalId: string, where: string): string => {
    const pseudo: Record<string, string> = { 'AWS::Region': stack.region, 'AWS::AccountId': stack.account, 'AWS::Partition': 'aws', 'AWS::URLSuffix': 'amazonaws.com', 'AWS::StackName': stack.name };
    if (pseudo[logicalId]) return pseudo[logicalId];
    const resource = resourceOf(stack, logicalId, where);
    switch (resource.Type) {
      case 'AWS::SQS::Queue':
        return queueUrl(stack.name, logicalId);
      case 'AWS::DynamoDB::Table':
        return tableName(stack, logicalId);
      case 'AWS::SecretsManager::Secret':
        return secretArn(stack, logicalId);
      case 'AWS::Lambda::Function':
        return `${stack.name}-${logicalId}`.slice(0, 64);
      default:
        throw new Error(`${where}: refers to ${logicalId} (${resource.Type}), which the rehearsal does not serve`);
    }
  };

  const getAtt = (stack: Stack, logicalId: string, attribute: string, where: string): string => {
    const resource = resourceOf(stack, logicalId, where);
    if (resource.Type === 'AWS::SQS::Queue' && attribute === 'Arn') return `arn:aws:sqs:${stack.region}:${stack.account}:${stack.name}-${logicalId}`;
    if (resource.Type === 'AWS::SQS::Queue' && attribute === 'QueueUrl') return queueUrl(stack.name, logicalId);
    if (resource.Type === 'AWS::DynamoDB::Table' && attribute === 'Arn') return `arn:aws:dynamodb:${stack.region}:${stack.account}:table/${tableName(stack, logicalId)}`;
    if (resource.Type === 'AWS::Lambda::Function' && attribute === 'Arn') return `arn:aws:lambda:${stack.region}:${stack.account}:function:${ref(stack, logicalId, where)}`;
    if (resource.Type === 'AWS::Lambda::Url' && attribute === 'FunctionUrl') {
      const url = functionUrls.get(logicalId);
      if (!url) throw new Error(`${where}: needs the function URL ${logicalId}, which is not served yet`);
      return url;
    }
    throw new Error(`${where}: refers to ${logicalId}.${attribute} (${resource.Type}), which the rehearsal does not serve`);
  };

  const stackOutput = (stackName: string, outputName: string, where: string): string => {
    const stack = assembly.stacks.find((s) => s.name === stackName);
    const output = stack?.template.Outputs?.[outputName];
    if (!stack || !output) throw new Error(`${where}: reads output ${outputName} of stack ${stackName}, which the assembly does not have`);
    return resolve(stack, output.Value, where);
  };

  const importValue = (exportName: string, where: string): string => {
    for (const stack of assembly.stacks) {
      for (const output of Object.values(stack.template.Outputs ?? {}) as Array<{ Value: unknown; Export?: { Name: unknown } }>) {
        if (output.Export && resolve(stack, output.Export.Name, where) === exportName) return resolve(stack, output.Value, where);
      }
    }
    throw new Error(`${where}: imports ${exportName}, which no stack exports`);
  };

  return {
    dynamodb,
    sqs,
    secrets,
    bedrock,
    environmentFor: (stack) => ({
      AWS_REGION: stack.region,
      AWS_DEFAULT_REGION: stack.region,
      // The role's temporary credentials, as Lambda sets them (the stand-ins check signatures' shape, not IAM).
      AWS_ACCESS_KEY_ID: 'ASIAREHEARSAL0000000',
      AWS_SECRET_ACCESS_KEY: 'rehearsal-secret-access-key',
      AWS_SESSION_TOKEN: 'rehearsal-session-token',
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
    }),
    queueUrl,
    secretArn,
    resolve,
    functionUrls,
    close: async () => {
      await Promise.all([dynamodb.close(), sqs.close(), secrets.close(), bedrock.close()]);
    },
  };
}

const tableName = (stack: Stack, logicalId: string) => `${stack.name}-${logicalId}`;

async function createTables(db: LocalDynamoDb, stack: Stack): Promise<void> {
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    const p = resource.Properties ?? {};
    const indexes = p.GlobalSecondaryIndexes as GlobalSecondaryIndex[] | undefined;
    await db.client.send(
      new CreateTableCommand({
        TableName: tableName(stack, logicalId),
        KeySchema: p.KeySchema as KeySchemaElement[],
        AttributeDefinitions: p.AttributeDefinitions as AttributeDefinition[],
        BillingMode: 'PAY_PER_REQUEST',
        ...(indexes?.length ? { GlobalSecondaryIndexes: indexes.map(({ IndexName, KeySchema, Projection }) => ({ IndexName, KeySchema, Projection })) } : {}),
      }),
    );
  }
}
