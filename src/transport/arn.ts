/** The region field of an ARN (`arn:partition:service:region:account:resource`), if it has one. */
export function regionOfArn(arn: string): string | undefined {
  const parts = arn.split(':');
  return parts[0] === 'arn' && parts.length >= 6 && parts[3] ? parts[3] : undefined;
}

/** `arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/name-id` (any partition). */
export const AGENT_RUNTIME_ARN = /^arn:aws[a-z-]*:bedrock-agentcore:[a-z0-9-]+:\d{12}:runtime\/[A-Za-z0-9_-]+$/;
