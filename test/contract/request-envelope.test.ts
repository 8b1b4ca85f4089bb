import fc from 'fast-check';
import { RequestSchema, isRequestEnvelope } from '../../src/contract';

/**
 * The dispatcher checks the JSON-RPC envelope by hand (`isRequestEnvelope`); it must accept and
 * refuse exactly what RequestSchema does, for requests and for notifications (no `id` member,
 * checked as if it were null).
 */
const viaSchema = (value: unknown, notification: boolean) => RequestSchema.safeParse(notification ? { ...(value as object), id: null } : value).success;

function agrees(value: unknown): void {
  const notification = typeof value === 'object' && value !== null && !Array.isArray(value) && !('id' in value);
  const expected = typeof value === 'object' && value !== null && !Array.isArray(value) && viaSchema(value, notification);
  if (isRequestEnvelope(value, notification) !== expected) {
    throw new Error(`isRequestEnvelope ${expected ? 'refused' : 'accepted'} ${JSON.stringify(value)} (notification: ${notification})`);
  }
}

const member = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant(undefined),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(Number.NaN),
  fc.constant(-0),
  fc.constant(new Date(0)),
  fc.constant(Object.create(null) as object),
);
const envelope = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.constant(2), member),
    method: fc.oneof(fc.constantFrom('execute_task', 'get_task_result', 'rpc.x', ''), member),
    params: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 })), fc.array(fc.jsonValue({ maxDepth: 1 })), member),
    id: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), member),
  },
  { requiredKeys: [] },
);

describe('isRequestEnvelope', () => {
  it('agrees with RequestSchema on request-shaped objects, with and without an id', () => {
    fc.assert(fc.property(envelope, (value) => agrees(value)), { numRuns: 5000 });
  });

  it('agrees with RequestSchema on arbitrary JSON values, parsed as the dispatcher parses them', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => agrees(JSON.parse(JSON.stringify(value)))), { numRuns: 3000 });
  });

  it.each([
    ['a minimal request', { jsonrpc: '2.0', method: 'm', id: 1 }],
    ['params by position', { jsonrpc: '2.0', method: 'm', params: [1], id: 'a' }],
    ['a null id', { jsonrpc: '2.0', method: 'm', id: null }],
    ['an infinite id', { jsonrpc: '2.0', method: 'm', id: Number.POSITIVE_INFINITY }],
    ['null params', { jsonrpc: '2.0', method: 'm', params: null, id: 1 }],
    ['string params', { jsonrpc: '2.0', method: 'm', params: 'x', id: 1 }],
    ['params with a modified constructor', { jsonrpc: '2.0', method: 'm', params: JSON.parse('{"constructor":{"prototype":1}}'), id: 1 }],
    ['params with an own __proto__ key', { jsonrpc: '2.0', method: 'm', params: JSON.parse('{"__proto__":{"a":1}}'), id: 1 }],
    ['a boolean id', { jsonrpc: '2.0', method: 'm', id: true }],
    ['jsonrpc 1.0', { jsonrpc: '1.0', method: 'm', id: 1 }],
  ])('%s', (_label, value) => agrees(value));
});
