import * as z from '../../src/config/zod-mini';
import { PoisonMessageError } from '../../src/verification/queues/poison-message';
import { consumeByKind, type QueueTable } from '../../src/verification/queues/queue-consumer';
import { capturingLog } from '../support/slack-surface';

// A queue of two kinds, as the verification zone's queues are: `first` (also what a body without `kind` is) and `second`.
type First = { kind?: 'first'; n: number };
type Second = { kind: 'second'; text: string };
const FirstSchema = z.object({ kind: z.optional(z.literal('first')), n: z.number() });
const SecondSchema = z.object({ kind: z.literal('second'), text: z.string() });

const delivery = (body: unknown) => ({ messageId: 'm1', body: typeof body === 'string' ? body : JSON.stringify(body), receiveCount: 1, attributes: {} });

function consumer(rows: Partial<{ second: 'drop-malformed' | 'absent' }> = {}) {
  const handled: unknown[] = [];
  const log = capturingLog();
  const table: QueueTable<First | Second> = {
    first: { schema: FirstSchema, what: 'first message', handle: async (message) => void handled.push(message) },
    second: rows.second === 'absent' ? undefined : { schema: SecondSchema, what: 'second message', ...(rows.second === 'drop-malformed' ? { malformed: 'drop' as const } : {}), handle: async (message) => void handled.push(message) },
  };
  return { consume: consumeByKind(table, { unmarked: 'first', log }), handled, log };
}

describe('a queue consumer as a kind → handler table', () => {
  it('hands each kind to its own row, parsed; a body without kind is the unmarked kind', async () => {
    const { consume, handled } = consumer();
    await consume(delivery({ kind: 'second', text: 'hi' }), {});
    await consume(delivery({ n: 1 }), {});
    await consume(delivery({ kind: 'first', n: 2 }), {});
    expect(handled).toEqual([{ kind: 'second', text: 'hi' }, { n: 1 }, { kind: 'first', n: 2 }]);
  });

  it('an unknown kind, a kind named like an Object member, a body that is not JSON and a malformed body are poison', async () => {
    const { consume, handled } = consumer();
    for (const body of [{ kind: 'third' }, { kind: 'constructor' }, { kind: '__proto__' }, { kind: 'toString', n: 1 }, '{not json', { kind: 'second', text: 7 }, { kind: 3 }]) {
      await expect(consume(delivery(body), {})).rejects.toBeInstanceOf(PoisonMessageError);
    }
    expect(handled).toEqual([]);
  });

  it('a row that drops malformed bodies logs and drops them; a kind without a row is logged and dropped', async () => {
    const dropping = consumer({ second: 'drop-malformed' });
    await expect(dropping.consume(delivery({ kind: 'second', text: 7 }), {})).resolves.toBeUndefined();
    expect(dropping.log.lines.map((line) => line.message)).toEqual(['a malformed second message was dropped']);
    const absent = consumer({ second: 'absent' });
    await expect(absent.consume(delivery({ kind: 'second', text: 'hi' }), {})).resolves.toBeUndefined();
    expect(absent.handled).toEqual([]);
    expect(absent.log.lines.map((line) => line.message)).toEqual(['a queue message arrived of a kind this deployment does not handle; dropped']);
  });
});
