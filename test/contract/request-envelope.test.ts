import { createDispatcher } from '../../src/execution/dispatcher';
import type { Log } from '../../src/observability/logger';

/**
 * What the dispatcher takes as a JSON-RPC 2.0 request envelope (RequestSchema, NotificationSchema
 * for a message without an `id` member), as a caller sees it: a request whose envelope is right
 * reaches its method with its params as sent; any other is answered -32600 with id null, a
 * notification's included.
 */
const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Log;
const dispatch = createDispatcher({ m: async (params) => ({ params: params ?? null }) }, quiet);
const answer = async (body: string) => {
  const text = await dispatch(body);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
};

describe('the request envelope', () => {
  it.each([
    ['a minimal request', '{"jsonrpc":"2.0","method":"m","id":1}', { jsonrpc: '2.0', result: { params: null }, id: 1 }],
    ['params by position', '{"jsonrpc":"2.0","method":"m","params":[1],"id":"a"}', { jsonrpc: '2.0', result: { params: [1] }, id: 'a' }],
    ['a null id', '{"jsonrpc":"2.0","method":"m","id":null}', { jsonrpc: '2.0', result: { params: null }, id: null }],
    ['params with a modified constructor', '{"jsonrpc":"2.0","method":"m","params":{"constructor":{"prototype":1}},"id":1}', { jsonrpc: '2.0', result: { params: { constructor: { prototype: 1 } } }, id: 1 }],
    ['params with an own __proto__ key', '{"jsonrpc":"2.0","method":"m","params":{"__proto__":{"a":1}},"id":1}', { jsonrpc: '2.0', result: { params: JSON.parse('{"__proto__":{"a":1}}') }, id: 1 }],
    ['members the envelope does not name', '{"jsonrpc":"2.0","method":"m","id":2,"extra":true}', { jsonrpc: '2.0', result: { params: null }, id: 2 }],
  ])('takes %s', async (_label, body, expected) => {
    expect(await answer(body)).toEqual(expected);
  });

  it.each([
    ['null params', '{"jsonrpc":"2.0","method":"m","params":null,"id":1}'],
    ['string params', '{"jsonrpc":"2.0","method":"m","params":"x","id":1}'],
    ['a boolean id', '{"jsonrpc":"2.0","method":"m","id":true}'],
    ['an object id', '{"jsonrpc":"2.0","method":"m","id":{}}'],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","method":"m","id":1}'],
    ['no jsonrpc', '{"method":"m","id":1}'],
    ['a method that is not a string', '{"jsonrpc":"2.0","method":1,"id":1}'],
    ['a notification with string params', '{"jsonrpc":"2.0","method":"m","params":"x"}'],
    ['a string', '"m"'],
  ])('answers %s with -32600 and id null', async (_label, body) => {
    expect(await answer(body)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });
  });

  it('answers a notification with nothing, and one for an unknown method too', async () => {
    expect(await answer('{"jsonrpc":"2.0","method":"m","params":{"a":1}}')).toBeUndefined();
    expect(await answer('{"jsonrpc":"2.0","method":"other"}')).toBeUndefined();
  });
});
