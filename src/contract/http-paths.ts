/**
 * Where an execution agent on an HTTP host publishes its agent card (docs/contract.md, "On HTTP
 * hosts"); the same well-known path A2A clients read an agent's card from.
 */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
