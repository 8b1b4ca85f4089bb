import type { IncomingMessage } from 'node:http';

/** The whole body of a request to one of the rehearsal's loopback servers (they take what they are sent: no limit). */
export function requestBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
