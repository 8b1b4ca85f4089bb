/**
 * Every price the cost model (tools/cost-model.ts) uses, in one place: US dollars, list prices of
 * one Region, on-demand, no free tier and no Savings Plans. Each entry says what it is per, the
 * page it was read from and when; change a price here and `npm run model` and the docs table
 * follow (test/tools/cost-model.test.ts fails until docs/operations.md is regenerated).
 */

export const PRICE_REGION = 'us-east-1';

export type Price = {
  /** US dollars per `per`. */
  usd: number;
  per: string;
  source: string;
  /** The day the price was read (YYYY-MM-DD). */
  checked: string;
};

const LAMBDA = 'https://aws.amazon.com/lambda/pricing/';
const AGENTCORE = 'https://aws.amazon.com/bedrock/agentcore/pricing/';
const BEDROCK = 'https://aws.amazon.com/bedrock/pricing/';
const VPC = 'https://aws.amazon.com/vpc/pricing/';
const CHECKED = '2026-11-25';

export const PRICES = {
  /** The functions are arm64 (cdk/constructs/zone-function.ts); first 7.5 billion GB-s a month. */
  lambdaArmGbSecond: { usd: 0.0000133334, per: 'GB-second (arm64)', source: LAMBDA, checked: CHECKED },
  lambdaRequest: { usd: 0.2 / 1e6, per: 'request', source: LAMBDA, checked: CHECKED },
  /** REST API (the Slack events endpoint), first 333 million a month. */
  apiGatewayRestRequest: { usd: 3.5 / 1e6, per: 'REST API request', source: 'https://aws.amazon.com/api-gateway/pricing/', checked: CHECKED },
  /** The web ACL in front of it (on by default, `-c waf`). */
  wafRequest: { usd: 0.6 / 1e6, per: 'request inspected', source: 'https://aws.amazon.com/waf/pricing/', checked: CHECKED },
  /** Standard queues; a request is up to 64 KB of payload. */
  sqsRequest: { usd: 0.4 / 1e6, per: 'request (standard queue)', source: 'https://aws.amazon.com/sqs/pricing/', checked: CHECKED },
  /** On-demand, standard table class (the November 2024 prices). */
  dynamoWriteUnit: { usd: 0.625 / 1e6, per: 'write request unit (1 KB)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', checked: CHECKED },
  dynamoReadUnit: { usd: 0.125 / 1e6, per: 'read request unit (4 KB strongly consistent)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', checked: CHECKED },
  secretsManagerCall: { usd: 0.05 / 1e4, per: 'API call', source: 'https://aws.amazon.com/secrets-manager/pricing/', checked: CHECKED },
  secretsManagerSecretMonth: { usd: 0.4, per: 'secret-month', source: 'https://aws.amazon.com/secrets-manager/pricing/', checked: CHECKED },
  /** Consumption based: CPU only while consumed, memory at its peak for the whole session (idle included), 128 MB minimum. */
  agentcoreVcpuHour: { usd: 0.0895, per: 'vCPU-hour', source: AGENTCORE, checked: CHECKED },
  agentcoreGbHour: { usd: 0.00945, per: 'GB-hour', source: AGENTCORE, checked: CHECKED },
  natGatewayHour: { usd: 0.045, per: 'NAT gateway-hour', source: VPC, checked: CHECKED },
  natGatewayGb: { usd: 0.045, per: 'GB processed by the NAT gateway', source: VPC, checked: CHECKED },
  /** The NAT gateway's Elastic IP: every public IPv4 address is billed. */
  publicIpv4Hour: { usd: 0.005, per: 'public IPv4 address-hour', source: VPC, checked: CHECKED },
  interfaceEndpointAzHour: { usd: 0.01, per: 'interface endpoint-hour per AZ', source: 'https://aws.amazon.com/privatelink/pricing/', checked: CHECKED },
  interfaceEndpointGb: { usd: 0.01, per: 'GB processed by interface endpoints (first PB)', source: 'https://aws.amazon.com/privatelink/pricing/', checked: CHECKED },
  kmsKeyMonth: { usd: 1, per: 'customer-managed key-month', source: 'https://aws.amazon.com/kms/pricing/', checked: CHECKED },
  kmsRequest: { usd: 0.03 / 1e4, per: 'KMS request (symmetric)', source: 'https://aws.amazon.com/kms/pricing/', checked: CHECKED },
  /**
   * GUARDRAIL=bedrock (docs/operations.md, "Guardrails"): the sensitive-information filter's managed
   * PII entities, per text unit — up to 1,000 characters of one ApplyGuardrail call, so a call of 50
   * characters is a unit too; its custom regexes and word filters are free.
   */
  guardrailPiiTextUnit: { usd: 0.1 / 1000, per: 'text unit (≤ 1,000 characters a call), sensitive-information filter', source: BEDROCK, checked: '2026-11-29' },
} as const satisfies Record<string, Price>;

export type PriceName = keyof typeof PRICES;

/** A Bedrock model's on-demand text prices (cross-Region inference costs the same: the source Region's price). */
export type ModelPrice = {
  id: string;
  name: string;
  input: Price;
  output: Price;
};

const perThousand = (usd: number): Price => ({ usd: usd / 1000, per: 'token (listed per 1,000)', source: BEDROCK, checked: CHECKED });

export const BEDROCK_MODELS: readonly ModelPrice[] = [
  { id: 'amazon.nova-micro-v1:0', name: 'Amazon Nova Micro', input: perThousand(0.000035), output: perThousand(0.00014) },
  { id: 'amazon.nova-lite-v1:0', name: 'Amazon Nova Lite', input: perThousand(0.00006), output: perThousand(0.00024) },
  /** The deployment's default model (cdk/config.ts CONTEXT_DEFAULTS.bedrockModelId). */
  { id: 'us.anthropic.claude-3-5-haiku-20241022-v1:0', name: 'Claude 3.5 Haiku', input: perThousand(0.0008), output: perThousand(0.004) },
  { id: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', name: 'Claude Sonnet 4.5', input: perThousand(0.003), output: perThousand(0.015) },
];

/** Every price entry, the models' included, for the checks that each has a date and a source. */
export function allPrices(): Array<{ name: string; price: Price }> {
  return [
    ...Object.entries(PRICES).map(([name, price]) => ({ name, price: price as Price })),
    ...BEDROCK_MODELS.flatMap((m) => [
      { name: `${m.name} input`, price: m.input },
      { name: `${m.name} output`, price: m.output },
    ]),
  ];
}

/** Hours in the month the fixed costs are counted over (AWS bills 730 for a month of a running resource). */
export const HOURS_PER_MONTH = 730;
