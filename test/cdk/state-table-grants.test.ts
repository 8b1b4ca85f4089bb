import type { Template } from 'aws-cdk-lib/assertions';
import { DynamoDb } from '../../src/aws/dynamodb';
import type { VerificationFunction } from '../../src/verification/pipeline-settings';
import { STATE_KEYS, statePrefixesOf } from '../../src/verification/stores/state-keys';
import { functionId, onlyResource, SINGLE_ACCOUNT, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/**
 * Each verification function may touch only the state table's items under its own key prefixes
 * (src/verification/stores/state-keys.ts): its one DynamoDB statement carries
 * `ForAllValues:StringLike` on `dynamodb:LeadingKeys` (docs/deploy.md, "Who may touch which keys").
 */
const FUNCTIONS: ReadonlyArray<[string, VerificationFunction]> = [
  ['slack-events', 'slackEvents'],
  ['agent-invoker', 'agentInvoker'],
  ['async-result', 'asyncResult'],
  ['slack-poster', 'slackPoster'],
];

const dynamoStatements = (template: Template, description: string) =>
  statementsOfFunction(template, functionId(template, description)).filter((statement) => [statement.Action].flat().some((action: string) => action.startsWith('dynamodb:')));

const leadingKeysOf = (statement: any): string[] => statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];

describe.each([
  ['standard', { ...SINGLE_ACCOUNT }],
  ['governance=strict (a customer-managed key)', { ...SINGLE_ACCOUNT, governance: 'strict', dynamodbPrefixListId: 'pl-02cd2c6b' }],
])('the state table grants, %s', (_name, context) => {
  let synth: Synthesized;
  let template: Template;
  let tableArn: unknown;

  beforeAll(() => {
    synth = synthesize(context);
    template = synth.verification!;
    tableArn = { 'Fn::GetAtt': [onlyResource(template, 'AWS::DynamoDB::Table').id, 'Arn'] };
  });
  afterAll(() => synth?.cleanup());

  it.each(FUNCTIONS)('%s: one statement, Get/Put/UpdateItem on the table, only under its own prefixes', (description, fn) => {
    const statements = dynamoStatements(template, description);
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': statePrefixesOf(fn).map((prefix) => `${prefix}*`) } },
      },
    ]);
  });

  it('gives no function the whole table, and each one what the others keep to themselves', () => {
    const granted = Object.fromEntries(FUNCTIONS.map(([description, fn]) => [fn, leadingKeysOf(dynamoStatements(template, description)[0])]));
    for (const patterns of Object.values(granted)) {
      expect(patterns.length).toBeGreaterThan(0);
      expect(patterns).not.toContain('*');
      expect(patterns.length).toBeLessThan(Object.keys(STATE_KEYS).length);
    }
    // The ack path claims events and counts messages; nothing downstream may.
    expect(granted.slackEvents).toEqual(expect.arrayContaining(['event#*', 'interaction#*', 'rate#*']));
    for (const fn of ['agentInvoker', 'asyncResult', 'slackPoster']) expect(granted[fn]).not.toEqual(expect.arrayContaining(['event#*']));
    // Replies are posted once by slack-poster alone; budgets are kept by the two functions that run tasks.
    expect(granted.slackPoster).toEqual(expect.arrayContaining(['reply#*', 'stop-note#*', 'files-out:*']));
    for (const fn of ['slackEvents', 'agentInvoker', 'asyncResult']) expect(granted[fn]).not.toEqual(expect.arrayContaining(['reply#*']));
    expect(granted.agentInvoker).toEqual(expect.arrayContaining(['budget#*', 'usage#*']));
    for (const fn of ['slackEvents', 'slackPoster']) expect(granted[fn]).not.toEqual(expect.arrayContaining(['budget#*']));
  });

  it('grants no Scan, Query, BatchWriteItem or DeleteItem on the state table (LeadingKeys would not bound a Scan)', () => {
    for (const [description] of FUNCTIONS) {
      const actions = dynamoStatements(template, description).flatMap((statement) => [statement.Action].flat());
      expect(actions.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    }
  });
});

describe('what the stores can ask DynamoDB', () => {
  it('is one item by its key: the actions LeadingKeys bounds (a Query, a Scan or a batch would need the grant thought anew)', () => {
    expect(Object.getOwnPropertyNames(DynamoDb.prototype).sort()).toEqual(['constructor', 'getItem', 'putItem', 'updateItem']);
  });
});

describe('the key list', () => {
  it('names every prefix once, none the start of another nor holding an IAM wildcard', () => {
    const prefixes = Object.values(STATE_KEYS).map((key) => key.prefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    for (const prefix of prefixes) {
      expect(prefix).not.toMatch(/[*?]/);
      expect(prefixes.filter((other) => other !== prefix && other.startsWith(prefix))).toEqual([]);
    }
  });

  it('gives every prefix to at least one function', () => {
    for (const key of Object.values(STATE_KEYS)) expect(key.usedBy.length).toBeGreaterThan(0);
  });
});
