import { ErrorCode } from '../../src/contract';
import { KEEP_ALIVE, SseFrames, acceptsEventStream } from '../../src/execution/hosts/sse';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { eventually } from '../support/http';
import { echoSuccess } from '../support/echo-usage';

/**
 * Streamed answers (docs/contract.md, "Streamed answers") over the HTTP host, on loopback: an
 * `execute_task` or `get_task_result` with `stream: true` from a caller that sends
 * `Accept: text/event-stream` is answered with server-sent events, one JSON-RPC response each —
 * the task's text by cursor as it is produced, then the answer, or `accepted` with the cursor to
 * poll from when the stream's hold is over. The stream reads the task; it never runs it.
 */
type Answer = { jsonrpc: '2.0'; id: unknown; result?: Record<string, any>; error?: { code: number; message: string; data?: any } };

const SSE = 'text/event-stream, application/json';
/** ~50 ms a word (`#stream=50`): long enough to be read while it runs. */
const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon';

let agent: RunningRuntime;
beforeAll(async () => {
  agent = await startExecutionRuntime({ SYNC_BUDGET_MS: '5000', MAX_CONCURRENT_TASKS: '5' });
});
afterAll(() => agent.close());

let n = 0;
const nextId = () => `sse-${(n += 1)}`;
const request = (method: string, params: unknown, id: unknown = nextId()) => JSON.stringify({ jsonrpc: '2.0', method, params, id });

function post(body: string, accept?: string, signal?: AbortSignal): Promise<Response> {
  return fetch(agent.invocationsUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body, ...(signal ? { signal } : {}) });
}

/** The data of each event of a response, as it arrives (comments skipped). */
async function* eventsOf(response: Response): AsyncGenerator<Answer> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (event.startsWith('data: ')) yield JSON.parse(event.slice('data: '.length)) as Answer;
    }
  }
  expect(buffer).toBe('');
}

async function allEvents(response: Response): Promise<Answer[]> {
  const events: Answer[] = [];
  for await (const event of eventsOf(response)) events.push(event);
  return events;
}

/** Polls get_task_result (plain) with each cursor until success: the texts it got and the answer. */
async function pollFrom(taskId: string, cursor: string): Promise<{ pieces: string[]; responseText: string; first: Record<string, any> }> {
  const pieces: string[] = [];
  let first: Record<string, any> | undefined;
  for (;;) {
    const { result, error } = (await (await post(request('get_task_result', { task_id: taskId, cursor }))).json()) as Answer;
    if (error) throw new Error(`get_task_result failed: ${JSON.stringify(error)}`);
    first ??= result!;
    if (result!.status === 'success') return { pieces, responseText: result!.response_text, first };
    if (result!.text !== undefined) pieces.push(result!.text);
    cursor = result!.cursor;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Checks the progress events of a stream from `from`: each `working`, with text and the cursor right after it. */
function expectProgress(events: Answer[], id: string, taskId: string, from = 0): string {
  let cursor = from;
  for (const event of events) {
    expect(event).toEqual({ jsonrpc: '2.0', result: { status: 'working', task_id: taskId, text: expect.any(String), cursor: expect.any(String) }, id });
    expect(event.result!.text).not.toBe('');
    cursor += event.result!.text.length;
    expect(event.result!.cursor).toBe(String(cursor));
  }
  return events.map((event) => event.result!.text).join('');
}

describe('execute_task with stream: true and Accept: text/event-stream', () => {
  it('streams the text as events while the task runs (the task still working at the first), cursors following on, and ends with the answer', async () => {
    // Prepare
    const id = nextId();
    const text = `${WORDS} #stream=50`;
    // Act
    const response = await post(request('execute_task', { text, stream: true }, id), SSE);
    const events: Answer[] = [];
    let statusAtFirstText: string | undefined;
    for await (const event of eventsOf(response)) {
      if (events.length === 0) statusAtFirstText = (await agent.runtime.store.get(event.result!.task_id))?.status;
      events.push(event);
    }
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(statusAtFirstText).toBe('working');
    const last = events.at(-1)!;
    expect(last).toEqual({ jsonrpc: '2.0', result: echoSuccess(text), id });
    const progress = events.slice(0, -1);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const streamed = expectProgress(progress, id, events[0]!.result!.task_id);
    expect(streamed.startsWith('echo: alpha')).toBe(true);
    expect(`echo: ${text}`.startsWith(streamed)).toBe(true);
  });

  it('hold_ms ends the stream with accepted and the cursor; a get_task_result from that cursor gets exactly the rest, plain or streamed', async () => {
    // Prepare: a task of ~20 words at 50 ms, a hold of 300 ms
    const text = `${WORDS} #stream=50`;
    const id = nextId();
    // Act
    const events = await allEvents(await post(request('execute_task', { text, stream: true, hold_ms: 300 }, id), SSE));
    const accepted = events.at(-1)!.result!;
    const taskId = accepted.task_id as string;
    const streamed = expectProgress(events.slice(0, -1), id, taskId);
    const polled = await pollFrom(taskId, accepted.cursor);
    // Assess
    expect(accepted).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/), cursor: String(streamed.length) });
    expect(polled.responseText).toBe(`echo: ${text}`);
    // No gap and no overlap: what was streamed, then what the polls gave, is how the answer begins.
    expect(polled.responseText.startsWith(streamed + polled.pieces.join(''))).toBe(true);
    expect(polled.first.status === 'success' || polled.first.text === undefined || polled.responseText.slice(streamed.length).startsWith(polled.first.text)).toBe(true);

    // And the same with a streamed get_task_result from the cursor of a second held stream.
    const second = nextId();
    const again = await allEvents(await post(request('execute_task', { text: `${WORDS} again #stream=50`, stream: true, hold_ms: 200 }, second), SSE));
    const held = again.at(-1)!.result!;
    const before = expectProgress(again.slice(0, -1), second, held.task_id);
    const pollId = nextId();
    const rest = await allEvents(await post(request('get_task_result', { task_id: held.task_id, cursor: held.cursor, stream: true }, pollId), SSE));
    const after = expectProgress(rest.slice(0, -1), pollId, held.task_id, Number(held.cursor));
    expect(held).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/), cursor: String(before.length) });
    expect(rest.at(-1)).toEqual({ jsonrpc: '2.0', result: echoSuccess(`${WORDS} again #stream=50`), id: pollId });
    expect(`echo: ${WORDS} again #stream=50`.startsWith(before + after)).toBe(true);
  });

  it('hold_ms 0 ends the stream at once with accepted; the task runs on', async () => {
    const id = nextId();
    const events = await allEvents(await post(request('execute_task', { text: 'held at once #sleep=200', stream: true, hold_ms: 0 }, id), SSE));
    expect(events).toEqual([{ jsonrpc: '2.0', result: { status: 'accepted', task_id: expect.stringMatching(/^task-/), cursor: '0' }, id }]);
    expect((await pollFrom(events[0]!.result!.task_id, '0')).responseText).toBe('echo: held at once #sleep=200');
  });

  it('a client that goes away stops the stream, not the task: it runs to its end and its answer is there to poll', async () => {
    // Prepare
    const text = `${WORDS} #stream=50`;
    const gone = new AbortController();
    const response = await post(request('execute_task', { text, stream: true }), SSE, gone.signal);
    const events = eventsOf(response);
    // Act: read one event, then hang up
    const first = (await events.next()).value as Answer;
    gone.abort();
    await events.return(undefined).catch(() => undefined);
    // Assess
    const taskId = first.result!.task_id as string;
    expect((await agent.runtime.store.get(taskId))?.status).toBe('working');
    // The host stopped reading the task for the stream (its reader no longer watches the task).
    const readers = (agent.runtime.service as unknown as { watchers: Map<string, unknown> }).watchers;
    await eventually(() => (readers.has(taskId) ? undefined : true), 5_000);
    const done = await eventually(async () => {
      const record = await agent.runtime.store.get(taskId);
      return record?.status === 'success' ? record : undefined;
    }, 10_000);
    expect(done.result).toEqual(echoSuccess(text));
  });

  it('a task that fails or is cancelled ends its stream with its error', async () => {
    const failing = nextId();
    const failed = await allEvents(await post(request('execute_task', { text: 'late failure #sleep=100 #fail', stream: true }, failing), SSE));
    expect(failed).toEqual([{ jsonrpc: '2.0', error: { code: -32000, message: 'The echo executor was asked to fail', data: { usage: { input_tokens: 4, output_tokens: 0, model: 'echo' } } }, id: failing }]);

    const cancelled = nextId();
    const response = await post(request('execute_task', { text: `${WORDS} #stream=50`, stream: true }, cancelled), SSE);
    const events = eventsOf(response);
    const first = (await events.next()).value as Answer;
    const cancel = (await (await post(request('cancel_task', { task_id: first.result!.task_id }))).json()) as Answer;
    const rest: Answer[] = [];
    for await (const event of events) rest.push(event);
    // Stopped after its first word: charged what it used until then (docs/contract.md, "Usage").
    const usage = { input_tokens: 21, output_tokens: 1, model: 'echo' };
    expect(cancel.result).toEqual({ status: 'cancelled', task_id: first.result!.task_id, usage });
    expect(rest.at(-1)).toEqual({ jsonrpc: '2.0', error: { code: ErrorCode.TaskCancelled, message: 'Task cancelled', data: { usage } }, id: cancelled });
  });

  it('a repeated id of a running task streams its text from the start; of an ended one, answers its result as plain JSON', async () => {
    const id = nextId();
    const params = { text: `${WORDS} #stream=50`, stream: true };
    const firstStream = eventsOf(await post(request('execute_task', params, id), SSE));
    const first = (await firstStream.next()).value as Answer;
    const repeated = await allEvents(await post(request('execute_task', { ...params, hold_ms: 5_000 }, id), SSE));
    for await (const _ of firstStream);
    expect(repeated[0]!.result).toMatchObject({ status: 'working', task_id: first.result!.task_id, text: expect.stringMatching(/^echo: /) });
    expect(repeated.at(-1)!.result).toEqual(echoSuccess(params.text));

    const ended = await post(request('execute_task', params, id), SSE);
    expect(ended.headers.get('content-type')).toBe('application/json');
    expect(await ended.json()).toEqual({ jsonrpc: '2.0', result: echoSuccess(params.text), id });
  });
});

describe('plain JSON where no stream can be', () => {
  it('without Accept: text/event-stream, stream: true is answered as before: accepted with the first text and a cursor, as JSON', async () => {
    const response = await post(request('execute_task', { text: `${WORDS} #stream=50`, stream: true }));
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(((await response.json()) as Answer).result).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/), text: expect.stringMatching(/^echo: /), cursor: expect.any(String) });
  });

  it('with Accept: text/event-stream but without stream: true, or as a batch or a notification, the answer is the plain one', async () => {
    const single = await post(request('execute_task', { text: 'no stream asked' }), SSE);
    expect(single.headers.get('content-type')).toBe('application/json');
    expect(((await single.json()) as Answer).result).toEqual(echoSuccess('no stream asked'));
    const batch = await post(`[${request('execute_task', { text: 'in a batch', stream: true }, 'b1')}]`, SSE);
    expect(await batch.json()).toEqual([{ jsonrpc: '2.0', result: echoSuccess('in a batch'), id: 'b1' }]);
    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'told', stream: true } }), SSE);
    expect(notification.status).toBe(204);
  });

  it.each<[string, string, number, string | undefined]>([
    ['not JSON', '{"jsonrpc":"2.0","id":"p1","method":"execute_task","params":{"text":"hi","stream":true}', ErrorCode.ParseError, undefined],
    ['empty text', request('execute_task', { text: '', stream: true }, 'p2'), ErrorCode.InvalidParams, 'text'],
    ['hold_ms below 0', request('execute_task', { text: 'hi', stream: true, hold_ms: -1 }, 'p3'), ErrorCode.InvalidParams, 'hold_ms'],
    ['hold_ms not an integer', request('get_task_result', { task_id: 'task-x', stream: true, hold_ms: 1.5 }, 'p4'), ErrorCode.InvalidParams, 'hold_ms'],
    ['an unknown method', request('summarise', { text: 'hi', stream: true }, 'p5'), ErrorCode.MethodNotFound, undefined],
    ['an unknown task', request('get_task_result', { task_id: 'task-unknown', stream: true }, 'p6'), ErrorCode.TaskNotFound, undefined],
    ['a cursor that is not one', request('get_task_result', { task_id: 'task-unknown', cursor: 'next', stream: true }, 'p7'), ErrorCode.InvalidParams, 'cursor'],
  ])('an error before the stream (%s) is one plain JSON answer', async (_what, body, code, path) => {
    const response = await post(body, SSE);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const answer = (await response.json()) as Answer;
    expect(answer.error?.code).toBe(code);
    if (path) expect(answer.error?.data).toEqual([expect.objectContaining({ path })]);
  });

  it('at capacity, a streamed execute_task is refused with -32004 as plain JSON, and nothing starts', async () => {
    const busy = await startExecutionRuntime({ MAX_CONCURRENT_TASKS: '1' });
    try {
      const running = await fetch(busy.invocationsUrl, { method: 'POST', body: request('execute_task', { text: 'hold the slot #sleep=500', stream: true, hold_ms: 0 }), headers: { accept: SSE } });
      await running.text();
      const refused = await fetch(busy.invocationsUrl, { method: 'POST', body: request('execute_task', { text: 'no room', stream: true }, 'c1'), headers: { accept: SSE } });
      expect(refused.headers.get('content-type')).toBe('application/json');
      expect(await refused.json()).toMatchObject({ error: { code: ErrorCode.OverCapacity, data: { retryable: true, limit: 'concurrent_tasks' } }, id: 'c1' });
    } finally {
      await busy.close();
    }
  });
});

describe('the in-process stream (runtime.dispatchStream)', () => {
  it('yields the same response bodies, without SSE framing; a plain answer once, a notification none', async () => {
    const { runtime } = agent;
    const bodies: Answer[] = [];
    for await (const body of runtime.dispatchStream(request('execute_task', { text: 'in process #stream=20', stream: true }, 'i1'))) bodies.push(JSON.parse(body) as Answer);
    expect(bodies.at(-1)).toEqual({ jsonrpc: '2.0', result: echoSuccess('in process #stream=20'), id: 'i1' });
    expect(expectProgress(bodies.slice(0, -1), 'i1', bodies[0]!.result!.task_id).length).toBeGreaterThan(0);

    const plain: string[] = [];
    for await (const body of runtime.dispatchStream(request('execute_task', { text: 'plain' }, 'i2'))) plain.push(body);
    expect(plain.map((body) => JSON.parse(body))).toEqual([{ jsonrpc: '2.0', result: echoSuccess('plain'), id: 'i2' }]);

    const none: string[] = [];
    for await (const body of runtime.dispatchStream(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'told', stream: true } }))) none.push(body);
    expect(none).toEqual([]);
  });

  it('closing it early stops the reading at once, while the task runs to its end', async () => {
    const { runtime } = agent;
    const stream = runtime.dispatchStream(request('execute_task', { text: `${WORDS} #stream=50`, stream: true }, 'i3'));
    const first = JSON.parse((await stream.next()).value as string) as Answer;
    const pending = stream.next();
    await stream.return!(undefined);
    // The read in flight when it was closed ends too, rather than wait for more text.
    expect(await pending).toEqual({ done: true, value: undefined });
    const taskId = first.result!.task_id as string;
    const done = await eventually(async () => {
      const record = await runtime.store.get(taskId);
      return record?.status === 'success' ? record : undefined;
    }, 10_000);
    expect(done.result?.response_text).toBe(`echo: ${WORDS} #stream=50`);
  });
});

describe('server-sent events', () => {
  it('frames each body as one data event, and sends a keep-alive comment while nothing comes', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    async function* bodies() {
      yield '{"a":1}';
      await released;
      yield '{"b":2}';
    }
    const frames = new SseFrames(bodies(), 10);
    expect(await frames.next()).toEqual({ done: false, value: 'data: {"a":1}\n\n' });
    expect(await frames.next()).toEqual({ done: false, value: KEEP_ALIVE });
    release();
    expect(await frames.next()).toEqual({ done: false, value: 'data: {"b":2}\n\n' });
    expect(await frames.next()).toEqual({ done: true, value: undefined });
  });

  it.each<[string | undefined, boolean]>([
    ['text/event-stream', true],
    ['text/event-stream, application/json', true],
    ['application/json;q=0.9, Text/Event-Stream;q=0.5', true],
    ['text/event-stream;q=0', false],
    ['application/json', false],
    ['*/*', false],
    [undefined, false],
  ])('Accept %j takes a stream: %s', (accept, streams) => {
    expect(acceptsEventStream(accept)).toBe(streams);
  });
});
