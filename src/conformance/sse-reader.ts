/**
 * Reads server-sent events as the conformance kit must: strictly, so a framing mistake is
 * reported rather than mended. Lines end with CRLF, LF or CR; a line starting with `:` is a
 * comment (a keep-alive); `data:` lines make up an event, which a blank line ends; other fields
 * (`event`, `id`, `retry`) are allowed and play no part. The zone contract sends each JSON-RPC
 * response as one event of one `data:` line (docs/contract.md, "Streamed answers").
 */
export class SseReader {
  private buffer = '';
  private data: string[] | undefined;
  /** A CR ended the last chunk: an LF that opens the next belongs to it. */
  private afterCr = false;
  /** The first framing mistake seen. */
  problem: string | undefined;
  comments = 0;

  /** The events completed by this chunk: each one's data. */
  push(chunk: string): string[] {
    let text = chunk;
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = text.endsWith('\r');
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? '';
    const events: string[] = [];
    for (const line of lines) {
      if (line === '') {
        if (this.data) events.push(this.event(this.data));
        this.data = undefined;
      } else if (line.startsWith(':')) this.comments += 1;
      else {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') (this.data ??= []).push(value);
      }
    }
    return events;
  }

  /** The stream is over: an event it cut off is lost, as SSE has it, and reported. */
  end(): void {
    if (this.data || this.buffer !== '') this.problem ??= 'the stream ended in the middle of an event (each event ends with a blank line)';
  }

  private event(lines: string[]): string {
    if (lines.length > 1) this.problem ??= `an event had ${lines.length} data lines: each response is sent as one data line`;
    return lines.join('\n');
  }
}
