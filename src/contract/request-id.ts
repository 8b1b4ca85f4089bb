/**
 * A fresh UUID v4 string: the request id the verification zone always sends. In a file of its own
 * so the Slack ack path, which makes one for each event, loads none of the contract's schemas.
 */
export function newRequestId(): string {
  return globalThis.crypto.randomUUID();
}
