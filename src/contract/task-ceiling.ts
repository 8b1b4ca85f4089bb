// Its own module, with no schema library: the verification zone's configuration reads it on the
// Slack ack path, whose bundle carries no full zod (test/cdk/bundling.test.ts).

/**
 * The most one task may be charged, in tokens (input, output and both cache counts together),
 * unless `MAX_TASK_TOKENS` says otherwise: a 200,000-token context read whole plus 50,000 written,
 * more than any one answer of the models this product runs costs.
 */
export const DEFAULT_MAX_TASK_TOKENS = 250_000;
