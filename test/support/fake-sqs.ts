import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './http';

/**
 * SQS's AWS JSON 1.0 protocol on loopback, as far as the pipeline uses it: SendMessage and
 * SendMessageBatch, with the MD5 of each body the SDK checks. Messages are recorded, never
 * delivered (a test, or bench, hands them to the next function). Point the real SDK at it with
 * AWS_ENDPOINT_URL_SQS and queue URLs from `queueUrl`.
 *
 * Like SQS, it refuses a body with a character XML does not allow (a lone surrogate, U+FFFE,
 * U+FFFF, control characters but tab and line breaks): `InvalidMessageContents`, the whole
 * SendMessage, or that entry of a SendMessageBatch.
 *
 * Faults (`failNext`) make the next sends misbehave as a sick SQS does: stall (accept the request
 * and never answer it, until the client gives up), reset the connection without an answer, or
 * answer an error status. A send that stalls or fails is not recorded — SQS did not take the
 * message — unless the fault says `taken`: SQS took it and the answer was lost, which the client
 * cannot tell from the other (its retry queues a second copy).
 *
 * `onMessage` (an option of startFakeSqs) is told of each message as it is taken, before the
 * answer goes out: the soak hands it on to an in-memory queue that delivers it.
 */
export type FakeSqsMessage = {
  queueUrl: string;
  body: string;
  delaySeconds?: number;
  /** Its string message attributes, when it had any. */
  attributes?: Record<string, string>;
  /** `Date.now()` when SQS took it (a faked clock in tests that fake Date). */
  sentAt: number;
};

export type FakeSqsFault = {
  /** Accept the request and never answer it. Otherwise the request is answered with `status`. */
  stall?: boolean;
  /** Close the connection without an answer (the client sees ECONNRESET / socket hang up). */
  reset?: boolean;
  /** HTTP status of the error answer (not with `stall` or `reset`). @default 500 */
  status?: number;
  /** Only sends to this queue (the last segment of the queue URL) are affected. */
  queue?: string;
  /** Only sends with a message body (of a batch: any entry's) this accepts are affected. */
  match?: (body: string) => boolean;
  /** SQS took the message(s) before the answer stalled or failed. @default false */
  taken?: boolean;
  /** How many sends in a row misbehave. @default 1 */
  times?: number;
};

export type FakeSqs = {
  endpoint: string;
  /** Every message taken, in order. */
  sent: FakeSqsMessage[];
  /** The URL of a queue named `name` on this endpoint. */
  queueUrl(name: string): string;
  /** The messages taken for one queue. */
  messages(queue: string): FakeSqsMessage[];
  /** Makes the next matching send(s) stall or fail; faults queue in the order given. */
  failNext(fault: FakeSqsFault): void;
  /** Send requests received, answered or not. */
  readonly calls: number;
  /** Requests that stalled so far (answered never). */
  readonly stalls: number;
  /** Requests whose connection was reset so far (a `reset` fault). */
  readonly resets: number;
  /** Resolves once at least `count` requests have stalled. */
  waitForStalls(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `queue` holds at least `count` messages. */
  waitForMessages(queue: string, count: number, timeoutMs?: number): Promise<FakeSqsMessage[]>;
  /** Forgets messages, counts and pending faults. */
  reset(): void;
  close(): Promise<void>;
};

const ACCOUNT = '123456789012';

/** The characters SQS takes in a message body: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
const REFUSED_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** SQS's message for a body it refuses, or undefined for a body it takes. */
export function refusedBody(body: string): string | undefined {
  const found = REFUSED_CHARACTER.exec(body)?.[0];
  if (found === undefined) return undefined;
  const hex = found.codePointAt(0)!.toString(16).toUpperCase();
  return `Invalid binary character '#x${hex}' was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF`;
}

export type FakeSqsOptions = {
  /** Called with each message SQS takes, before the answer goes out (a throw is the caller's to log; it does not change the answer). */
  onMessage?: (message: FakeSqsMessage, queue: string) => void;
};

export async function startFakeSqs(options: FakeSqsOptions = {}): Promise<FakeSqs> {
  const sent: FakeSqsMessage[] = [];
  let faults: Array<FakeSqsFault & { times: number }> = [];
  let calls = 0;
  let stalls = 0;
  let resets = 0;
  const held = new Set<ServerResponse>();
  const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
  const queueOf = (url: string) => url.split('/').filter(Boolean).pop() ?? url;

  const answer = (res: ServerResponse, status: number, value: unknown, errorType?: string) => {
    const text = JSON.stringify(value);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
      ...(errorType ? { 'x-amzn-query-error': `${errorType};${status >= 500 ? 'Receiver' : 'Sender'}` } : {}),
    });
    res.end(text);
  };

  const takeFault = (queueUrl: string, bodies: readonly string[]) => {
    const fault = faults.find(
      (candidate) => (candidate.queue === undefined || candidate.queue === queueOf(queueUrl)) && (candidate.match === undefined || bodies.some((body) => candidate.match!(body))),
    );
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) faults = faults.filter((candidate) => candidate !== fault);
    return fault;
  };

  type MessageAttributes = Record<string, { StringValue?: string }> | undefined;
  const take = (queueUrl: string, body: string, delaySeconds: unknown, messageAttributes: MessageAttributes) => {
    const attributes = Object.fromEntries(Object.entries(messageAttributes ?? {}).flatMap(([name, value]) => (typeof value?.StringValue === 'string' ? [[name, value.StringValue]] : [])));
    const message: FakeSqsMessage = {
      queueUrl,
      body,
      ...(typeof delaySeconds === 'number' ? { delaySeconds } : {}),
      ...(Object.keys(attributes).length ? { attributes } : {}),
      sentAt: Date.now(),
    };
    sent.push(message);
    options.onMessage?.(message, queueOf(queueUrl));
    return { MessageId: randomUUID(), MD5OfMessageBody: md5(body) };
  };

  type Entry = { Id: string; MessageBody: string; DelaySeconds?: number; MessageAttributes?: MessageAttributes };
  const takeAll = (target: string, input: Record<string, unknown>) => {
    const queueUrl = String(input.QueueUrl);
    if (target === 'AmazonSQS.SendMessage') return [take(queueUrl, String(input.MessageBody ?? ''), input.DelaySeconds, input.MessageAttributes as MessageAttributes)];
    const entries = (input.Entries ?? []) as Entry[];
    return entries.map((entry) => ({ ...take(queueUrl, entry.MessageBody, entry.DelaySeconds, entry.MessageAttributes), Id: entry.Id }));
  };

  const server = createServer((req, res) => {
    void readText(req).then((raw) => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return answer(res, 400, { __type: 'com.amazon.coral.service#SerializationException', message: 'bad JSON' }, 'SerializationException');
      }
      if (target !== 'AmazonSQS.SendMessage' && target !== 'AmazonSQS.SendMessageBatch') {
        return answer(res, 400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `${target} is not emulated` }, 'UnsupportedOperation');
      }
      calls += 1;
      const bodies = target === 'AmazonSQS.SendMessage' ? [String(input.MessageBody ?? '')] : ((input.Entries ?? []) as Entry[]).map((entry) => String(entry.MessageBody ?? ''));
      const fault = takeFault(String(input.QueueUrl), bodies);
      if (fault?.taken) takeAll(target, input);
      if (fault?.reset) {
        resets += 1;
        req.socket.destroy();
        return;
      }
      if (fault?.stall) {
        stalls += 1;
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      if (fault) return answer(res, fault.status ?? 500, { __type: 'com.amazonaws.sqs#InternalError', message: 'fake SQS: injected fault' }, 'InternalError');
      if (target === 'AmazonSQS.SendMessage') {
        const refused = refusedBody(String(input.MessageBody ?? ''));
        if (refused) return answer(res, 400, { __type: 'com.amazonaws.sqs#InvalidMessageContents', message: refused }, 'InvalidMessageContents');
        return answer(res, 200, takeAll(target, input)[0]);
      }
      const entries = (input.Entries ?? []) as Entry[];
      const failed = entries.flatMap((entry) => {
        const refused = refusedBody(String(entry.MessageBody ?? ''));
        return refused ? [{ Id: entry.Id, SenderFault: true, Code: 'InvalidMessageContents', Message: refused }] : [];
      });
      const refusedIds = new Set(failed.map((entry) => entry.Id));
      const taken = takeAll(target, { ...input, Entries: entries.filter((entry) => !refusedIds.has(entry.Id)) });
      return answer(res, 200, { Successful: taken, Failed: failed });
    });
  });
  const endpoint = await listenOnLoopback(server);

  /** Resolves when `ready()` holds, checking on real timers (tests may fake Date). */
  const until = (ready: () => boolean, timeoutMs: number, what: () => string) =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const check = () => {
        if (ready()) return resolve();
        if (performance.now() - started > timeoutMs) return reject(new Error(`fake SQS: ${what()} within ${timeoutMs} ms`));
        setTimeout(check, 5);
      };
      check();
    });

  const messages = (queue: string) => sent.filter((message) => queueOf(message.queueUrl) === queue);
  return {
    endpoint,
    sent,
    queueUrl: (name) => `${endpoint}/${ACCOUNT}/${name}`,
    messages,
    failNext(fault) {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    get calls() {
      return calls;
    },
    get stalls() {
      return stalls;
    },
    get resets() {
      return resets;
    },
    waitForStalls: (count, timeoutMs = 5_000) => until(() => stalls >= count, timeoutMs, () => `expected ${count} stalled request(s), got ${stalls}`),
    async waitForMessages(queue, count, timeoutMs = 5_000) {
      await until(() => messages(queue).length >= count, timeoutMs, () => `expected ${count} message(s) on ${queue}, got ${messages(queue).length}`);
      return messages(queue);
    },
    reset() {
      sent.length = 0;
      faults = [];
      calls = 0;
      stalls = 0;
      resets = 0;
    },
    close: () => {
      for (const res of held) res.destroy();
      return closeServer(server);
    },
  };
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
