/**
 * The entity types the built-in guardrail finds, named as Bedrock Guardrails names its PII types
 * where it has one (so metrics read the same with GUARDRAIL=builtin and GUARDRAIL=bedrock), and
 * our own names for what Bedrock covers only as custom regexes.
 */
export const ENTITY_TYPES = {
  email: 'EMAIL',
  phone: 'PHONE',
  card: 'CREDIT_DEBIT_CARD_NUMBER',
  iban: 'INTERNATIONAL_BANK_ACCOUNT_NUMBER',
  awsAccessKey: 'AWS_ACCESS_KEY',
  awsSecretKey: 'AWS_SECRET_KEY',
  slackToken: 'SLACK_TOKEN',
  privateKey: 'PRIVATE_KEY',
} as const;

export type BuiltinEntityType = (typeof ENTITY_TYPES)[keyof typeof ENTITY_TYPES];
