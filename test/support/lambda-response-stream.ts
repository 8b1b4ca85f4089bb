import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

/** What a streamified handler sends before its body: the HTTP status and headers of a function URL's response. */
export type ResponsePrelude = { statusCode?: number; headers?: Record<string, string> };

/**
 * The response stream Lambda's Node.js runtime hands a streamified handler, as a test sees it:
 * what the handler writes, chunk by chunk, and the prelude `awslambda.HttpResponseStream.from`
 * gave it. `onChunk` sees each chunk as it is written, before the handler is done.
 */
export class FakeResponseStream extends Writable {
  prelude: ResponsePrelude | undefined;
  readonly chunks: string[] = [];
  private readonly chunkListeners: Array<(chunk: string) => void> = [];

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
    this.chunks.push(text);
    for (const listener of this.chunkListeners) listener(text);
    callback();
  }

  onChunk(listener: (chunk: string) => void): void {
    this.chunkListeners.push(listener);
  }

  get text(): string {
    return this.chunks.join('');
  }
}

/**
 * The `awslambda` global of Lambda's Node.js runtime, as far as a streamified handler uses it:
 * `streamifyResponse` (the runtime then calls the handler with `(event, responseStream, context)`)
 * and `HttpResponseStream.from` (the status and headers, which the real one writes ahead of the
 * body; here they are kept on the stream). Install it before importing a module that wraps its
 * handler (middy reads it at wrap time). The object may exist already: Powertools' invoke store
 * keeps its own member in it.
 */
export function installAwsLambdaGlobal(): void {
  const runtime = globalThis as { awslambda?: Record<string, unknown> };
  const awslambda = (runtime.awslambda ??= {});
  awslambda.streamifyResponse ??= <H>(handler: H): H => handler;
  awslambda.HttpResponseStream ??= {
    from(stream: FakeResponseStream, prelude: ResponsePrelude): FakeResponseStream {
      stream.prelude = prelude;
      return stream;
    },
  };
}

/** A streamified handler, as the runtime calls it. */
export type StreamingHandler<E> = (event: E, responseStream: Writable, context: Context) => Promise<void>;

export type StreamedResponse = { statusCode: number | undefined; headers: Record<string, string>; body: string; stream: FakeResponseStream };

/** Invokes a streamified handler as the runtime does and resolves once it has returned, with what it wrote. */
export async function invokeStreaming<E>(handler: StreamingHandler<E>, event: E, context: Context, stream = new FakeResponseStream()): Promise<StreamedResponse> {
  await handler(event, stream, context);
  return { statusCode: stream.prelude?.statusCode, headers: stream.prelude?.headers ?? {}, body: stream.text, stream };
}

/** The data of each server-sent event of a body (comments left out). */
export function sseData(body: string): string[] {
  return body
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}
