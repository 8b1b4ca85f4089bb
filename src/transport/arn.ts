/** `arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/name-id` (any partition). */
export const AGENT_RUNTIME_ARN = /^arn:aws[a-z-]*:bedrock-agentcore:[a-z0-9-]+:\d{12}:runtime\/[A-Za-z0-9_-]+$/;
