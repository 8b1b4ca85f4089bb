/**
 * What a caller of an AgentCore runtime is granted: InvokeAgentRuntime, and — because every call
 * names who is asking as `runtimeUserId` (docs/contract.md, "Who is asking") —
 * InvokeAgentRuntimeForUser, which AgentCore requires for a call that sets it.
 */
export const AGENTCORE_INVOKE_ACTIONS = ['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser'];
