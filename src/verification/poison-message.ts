/**
 * A queue message that can never be processed (not JSON, or not the expected shape). Consumers
 * throw it so the record fails like any other: SQS redelivers it up to maxReceiveCount and then
 * moves it to the DLQ, where an operator can read it. Nothing in it is retryable, but telling it
 * apart lets handlers and logs say "malformed" rather than "Slack was down".
 */
export class PoisonMessageError extends Error {
  override name = 'PoisonMessageError';
}
