/**
 * Reads a response body up to a byte limit without buffering more than the limit: an execution
 * zone that answers with gigabytes must cost us at most `limit` bytes of memory.
 */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  constructor(readonly limit: number) {
    super(`the response body is larger than ${limit} bytes`);
  }
}

/**
 * Web ReadableStreams (fetch) and Node Readables (the AWS SDK's streaming payloads) are both
 * async iterables of bytes in Node. Leaving the loop early cancels the stream, which frees
 * the socket instead of leaving the rest of the body unread on it.
 */
export async function readBodyLimited(source: AsyncIterable<Uint8Array | string>, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    size += bytes.byteLength;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
