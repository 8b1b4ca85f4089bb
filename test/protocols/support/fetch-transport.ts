import { TransportError, type SendOptions, type Transport, type TransportResponse } from '../../../src/transport/transport';

/**
 * A deliberately small fetch-based Transport for loopback test servers, standing in for the real
 * https transport until it lands: POST JSON, 204/empty → undefined, non-2xx → TransportError.
 * It records what it sent, so tests can assert on headers and bodies as they left.
 */
export class LoopbackFetchTransport implements Transport {
  readonly kind = 'https' as const;
  readonly sent: Array<{ body: string; headers: Record<string, string> }> = [];

  constructor(private readonly url: string) {}

  async send(body: string, options: SendOptions): Promise<TransportResponse> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      ...(options.correlationId ? { 'X-Correlation-ID': options.correlationId } : {}),
      ...options.headers,
    };
    this.sent.push({ body, headers });
    let response: Response;
    try {
      response = await fetch(this.url, { method: 'POST', body, headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      throw new TransportError(`POST ${this.url} failed`, 'connection', true, { transport: this.kind }, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) {
      const server = response.status >= 500;
      throw new TransportError(`POST ${this.url} answered HTTP ${response.status}`, server ? 'server' : 'rejected', server, { status: response.status, transport: this.kind });
    }
    return response.status === 204 || text === '' ? undefined : text;
  }

  /** The parsed JSON bodies sent so far. */
  bodies(): Array<Record<string, unknown>> {
    return this.sent.map((entry) => JSON.parse(entry.body) as Record<string, unknown>);
  }
}
