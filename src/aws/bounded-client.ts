/**
 * Every AWS client here — the SDK's (boundedClientConfig) and the project's JSON client
 * (src/aws/aws-json-client.ts) — has a timeout on each request and a bounded number of attempts
 * (docs/architecture.md §6): an SDK client's defaults wait forever for a connection or an answer,
 * so one stalled endpoint would hold a Lambda until it is killed — with the cleanup in its `catch`
 * never run. Worst case per call: `maxAttempts × (connection + request timeout)` plus a short
 * backoff, which must stay below the calling function's time.
 */
export type ClientBounds = {
  /** Time to open a connection. */
  connectionTimeoutMs: number;
  /** Time for the request and its whole response, per attempt. */
  requestTimeoutMs: number;
  /** Attempts in all, the first included (the SDK's standard retry mode). */
  maxAttempts: number;
};

/** For calls on the Slack ack path and the queue hops: SQS, DynamoDB. 3 × (1 + 2) s ≈ 9 s at worst, under slack-events' 10 s. */
export const QUICK_CALL: ClientBounds = { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxAttempts: 3 };

/** Constructor options for any AWS SDK v3 client. */
export function boundedClientConfig(bounds: ClientBounds = QUICK_CALL) {
  return {
    maxAttempts: bounds.maxAttempts,
    requestHandler: {
      connectionTimeout: bounds.connectionTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      // Without this the SDK only logs a warning when requestTimeout passes, and keeps waiting.
      throwOnRequestTimeout: true,
    },
  };
}
