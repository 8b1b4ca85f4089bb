import type { TraceEvent, Tracer } from '../verification/trace';

export type RequestTrace = { requestId: string; eventId?: string; events: TraceEvent[] };

/** Keeps the last few hundred requests' hops for the playground, `zone say` and the demo. */
export class TraceRecorder {
  private readonly byRequest = new Map<string, RequestTrace>();
  private readonly requestOfEvent = new Map<string, string>();

  private readonly listeners: Array<(event: TraceEvent) => void> = [];

  constructor(private readonly limit = 500) {}

  /** Called for every hop as it happens (the terminal view of `zone start`). */
  subscribe(listener: (event: TraceEvent) => void): void {
    this.listeners.push(listener);
  }

  readonly tracer: Tracer = (event) => {
    let trace = this.byRequest.get(event.requestId);
    if (!trace) {
      trace = { requestId: event.requestId, events: [] };
      this.byRequest.set(event.requestId, trace);
      if (this.byRequest.size > this.limit) this.byRequest.delete(this.byRequest.keys().next().value!);
    }
    const eventId = event.detail?.event_id;
    if (event.hop === 'ingress' && typeof eventId === 'string') {
      trace.eventId = eventId;
      this.requestOfEvent.set(eventId, event.requestId);
    }
    trace.events.push(event);
    for (const listener of this.listeners) listener(event);
  };

  byEventId(eventId: string): RequestTrace | undefined {
    const requestId = this.requestOfEvent.get(eventId);
    return requestId ? this.byRequest.get(requestId) : undefined;
  }

  byRequestId(requestId: string): RequestTrace | undefined {
    return this.byRequest.get(requestId);
  }

  all(): RequestTrace[] {
    return [...this.byRequest.values()];
  }
}
