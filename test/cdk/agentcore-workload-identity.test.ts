import type { Template } from 'aws-cdk-lib/assertions';
import { onlyResource, SINGLE_ACCOUNT, synthesize, type Synthesized } from './support/synth';

/**
 * The AgentCore runtime's role gets workload access tokens for its own workload identity (named
 * after the runtime) and for no other identity of the account's directory
 * (cdk/constructs/agentcore-execution-host.ts, scopeWorkloadIdentityToOwn).
 */
const TOKEN_ACTIONS = ['bedrock-agentcore:GetWorkloadAccessToken', 'bedrock-agentcore:GetWorkloadAccessTokenForJWT', 'bedrock-agentcore:GetWorkloadAccessTokenForUserId'];

const statementsWith = (template: Template, prefix: string): any[] =>
  Object.values(template.findResources('AWS::IAM::Policy'))
    .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement)
    .filter((statement: any) => [statement.Action].flat().some((action: string) => action.startsWith(prefix)));

describe.each([
  ['one account', { ...SINGLE_ACCOUNT }],
  ['governance=strict (cdk-nag acknowledgements checked)', { ...SINGLE_ACCOUNT, governance: 'strict', dynamodbPrefixListId: 'pl-02cd2c6b' }],
])("the AgentCore runtime's workload identity, %s", (_name, context) => {
  let synth: Synthesized;
  let execution: Template;

  beforeAll(() => {
    synth = synthesize(context);
    execution = synth.execution!;
  });
  afterAll(() => synth?.cleanup());

  it('grants the token actions on the default directory and the identity named after the runtime, nothing wider', () => {
    const runtimeName: string = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime').resource.Properties.AgentRuntimeName;
    expect(runtimeName).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,47}$/);
    const statements = statementsWith(execution, 'bedrock-agentcore:GetWorkloadAccessToken');
    expect(statements).toHaveLength(1);
    expect([statements[0].Action].flat().sort()).toEqual(TOKEN_ACTIONS);
    expect(statements[0].Resource).toEqual([
      `arn:aws:bedrock-agentcore:us-east-1:111111111111:workload-identity-directory/default`,
      `arn:aws:bedrock-agentcore:us-east-1:111111111111:workload-identity-directory/default/workload-identity/${runtimeName}`,
    ]);
  });

  it('leaves no workload-identity wildcard anywhere in the execution zone', () => {
    const policies = JSON.stringify(execution.findResources('AWS::IAM::Policy'));
    expect(policies).not.toMatch(/workload-identity\/\*/);
    expect(policies).toMatch(/workload-identity\//);
  });
});
