import { partition } from '@aws-sdk/core/client';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DYNAMODB, SECRETS_MANAGER, SQS, type AwsJsonService } from '../../src/aws/aws-json-client';
import { regionalEndpoint, type EndpointVariant } from '../../src/aws/endpoints';

/**
 * src/aws/endpoints.ts against the SDK's own clients: for a region of every partition the SDK
 * knows, and every variant (standard, FIPS, dual-stack, both), the endpoint the project's client
 * posts to is the one @aws-sdk/client-dynamodb, -sqs and -secrets-manager resolve.
 */

/** Regions of every partition, known ones and ones only its pattern matches (a region the table does not list yet). */
const REGIONS = [
  'us-east-1',
  'eu-west-1',
  'ap-southeast-7',
  'mx-central-1',
  'cn-north-1',
  'cn-northwest-1',
  'us-gov-west-1',
  'us-gov-east-1',
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'eu-isoe-west-1',
  'us-isof-south-1',
  'us-isof-east-1',
  'eusc-de-east-1',
  'eusc-de-west-9',
  'us-isob-west-9',
  // No partition's pattern: the SDK takes `aws`.
  'xx-nowhere-1',
];
const VARIANTS: EndpointVariant[] = [
  { fips: false, dualStack: false },
  { fips: true, dualStack: false },
  { fips: false, dualStack: true },
  { fips: true, dualStack: true },
];
const clients: Array<[string, AwsJsonService, { config: { endpointProvider: (params: Record<string, unknown>) => { url: URL } } }]> = [
  ['DynamoDB', DYNAMODB, new DynamoDBClient({ region: 'us-east-1' }) as never],
  ['SQS', SQS, new SQSClient({ region: 'us-east-1' }) as never],
  ['Secrets Manager', SECRETS_MANAGER, new SecretsManagerClient({ region: 'us-east-1' }) as never],
];

it('the regions cover every partition the SDK knows', () => {
  expect([...new Set(REGIONS.map((region) => partition(region).name))].sort()).toEqual(['aws', 'aws-cn', 'aws-eusc', 'aws-iso', 'aws-iso-b', 'aws-iso-e', 'aws-iso-f', 'aws-us-gov']);
});

describe.each(clients)('%s: the endpoint its SDK client resolves', (_name, service, client) => {
  it.each(REGIONS)('%s: standard, FIPS, dual-stack and both', (region) => {
    const sdk = VARIANTS.map(({ fips, dualStack }) => client.config.endpointProvider({ Region: region, UseFIPS: fips, UseDualStack: dualStack }).url.origin);
    const ours = VARIANTS.map((variant) => new URL(regionalEndpoint(service.endpointPrefix, region, variant, service.endpointRules)).origin);
    expect(ours).toEqual(sdk);
  });
});

it('in words: each partition’s suffixes, and the exceptions the services’ rulesets make', () => {
  const endpoint = (service: AwsJsonService, region: string, fips = false, dualStack = false) => regionalEndpoint(service.endpointPrefix, region, { fips, dualStack }, service.endpointRules);
  expect(endpoint(DYNAMODB, 'eusc-de-east-1')).toBe('https://dynamodb.eusc-de-east-1.amazonaws.eu');
  expect(endpoint(SQS, 'us-iso-east-1', true)).toBe('https://sqs-fips.us-iso-east-1.c2s.ic.gov');
  expect(endpoint(SQS, 'us-isob-east-1', false, true)).toBe('https://sqs.us-isob-east-1.api.aws.scloud');
  expect(endpoint(DYNAMODB, 'cn-north-1', true, true)).toBe('https://dynamodb-fips.cn-north-1.api.amazonwebservices.com.cn');
  // GovCloud's DynamoDB and SQS endpoints are FIPS already; Secrets Manager's in aws, aws-cn and aws-us-gov are dual-stack already.
  expect(endpoint(DYNAMODB, 'us-gov-west-1', true)).toBe('https://dynamodb.us-gov-west-1.amazonaws.com');
  expect(endpoint(SQS, 'us-gov-west-1', true)).toBe('https://sqs.us-gov-west-1.amazonaws.com');
  expect(endpoint(SQS, 'us-gov-west-1', true, true)).toBe('https://sqs-fips.us-gov-west-1.api.aws');
  expect(endpoint(SECRETS_MANAGER, 'us-east-1', false, true)).toBe('https://secretsmanager.us-east-1.amazonaws.com');
  expect(endpoint(SECRETS_MANAGER, 'us-east-1', true, true)).toBe('https://secretsmanager-fips.us-east-1.amazonaws.com');
  expect(endpoint(SECRETS_MANAGER, 'eu-isoe-west-1', false, true)).toBe('https://secretsmanager.eu-isoe-west-1.api.cloud-aws.adc-e.uk');
});
