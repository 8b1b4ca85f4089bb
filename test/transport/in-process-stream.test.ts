import { setTimeout as sleep } from 'node:timers/promises';
import { InProcessTransport } from '../../src/transport/in-process';
import { TransportError } from '../../src/transport/transport';
import { caught, readAll } from './fixtures';

/** The in-process transport's streamed read: the dispatcher's answers as they come, no SSE framing. */

const key = { sessionKey: 'task-0000' };

/** A stand-in for `runtime.dispatchStream`: yields what it is told, records what it got and whether it was stopped. */
function fakeDispatchStream(answers: string[], options: { hang?: boolean } = {}) {
  const seen = { bodies: [] as string[], stopped: false };
  const dispatchStream = async function* (body: Uint8Array) {
    seen.bodies.push(new TextDecoder().decode(body));
    try {
      for (const answer of answers) yield answer;
      if (options.hang) await sleep(60_000, undefined, { ref: false });
    } finally {
      seen.stopped = true;
    }
  };
  return { dispatchStream, seen };
}

const unused = async () => {
  throw new Error('dispatch is not used when a streaming dispatcher is given');
};

describe('InProcessTransport.stream', () => {
  it('hands the dispatcher the bytes and yields each response it produces', async () => {
    const { dispatchStream, seen } = fakeDispatchStream(['{"a":1}', '{"b":2}']);
    const transport = new InProcessTransport(unused, dispatchStream);

    expect(await readAll(transport.stream('{"jsonrpc":"2.0"}', key))).toEqual(['{"a":1}', '{"b":2}']);
    expect(seen.bodies).toEqual(['{"jsonrpc":"2.0"}']);
  });

  it('leaving early tells the dispatcher the caller has gone', async () => {
    const { dispatchStream, seen } = fakeDispatchStream(['{"a":1}', '{"b":2}'], { hang: true });
    for await (const data of new InProcessTransport(unused, dispatchStream).stream('{}', key)) {
      expect(data).toBe('{"a":1}');
      break;
    }

    expect(seen.stopped).toBe(true);
  });

  it("the caller's signal ends a stream waiting on the dispatcher: a retryable timeout", async () => {
    const { dispatchStream, seen } = fakeDispatchStream(['{"a":1}'], { hang: true });
    const controller = new AbortController();
    const events = new InProcessTransport(unused, dispatchStream).stream('{}', { ...key, signal: controller.signal })[Symbol.asyncIterator]();
    await events.next();

    const pending = caught<TransportError>(() => events.next());
    controller.abort();
    const error = await pending;

    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'timeout', retryable: true, details: { transport: 'in-process' } });
    expect(seen.bodies).toHaveLength(1);
  });

  it('refuses a call already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(readAll(new InProcessTransport(unused, fakeDispatchStream([]).dispatchStream).stream('{}', { ...key, signal: controller.signal }))).rejects.toMatchObject({ reason: 'timeout' });
  });

  it('without a streaming dispatcher, yields the one answer of dispatch (nothing for no content)', async () => {
    const transport = new InProcessTransport(async (body) => (new TextDecoder().decode(body) === 'quiet' ? undefined : `got ${new TextDecoder().decode(body)}`));

    expect(await readAll(transport.stream('x', key))).toEqual(['got x']);
    expect(await readAll(transport.stream('quiet', key))).toEqual([]);
  });
});
