import fc from 'fast-check';
import { ResponseSchema } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';

/**
 * Malformed input never crashes the dispatcher: thousands of random and mutated bodies, and
 * every answer is either "no response" or valid JSON-RPC 2.0 whose ids make sense.
 */
const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '5', TASK_TIMEOUT_MS: '50' }) });

function assertValidAnswer(requestBody: unknown, answer: string | undefined): void {
  if (answer === undefined) return;
  const parsed = JSON.parse(answer);
  const responses = Array.isArray(parsed) ? parsed : [parsed];
  if (Array.isArray(parsed)) {
    expect(Array.isArray(requestBody)).toBe(true);
    expect(parsed.length).toBeGreaterThan(0);
  }
  for (const response of responses) {
    const result = ResponseSchema.safeParse(response);
    if (!result.success) throw new Error(`invalid response ${answer} to ${JSON.stringify(requestBody)}`);
  }
  if (!Array.isArray(parsed) && requestBody && typeof requestBody === 'object' && !Array.isArray(requestBody) && 'id' in requestBody) {
    const id = (requestBody as { id: unknown }).id;
    const validId = typeof id === 'string' || typeof id === 'number' || id === null;
    expect(parsed.id === null || (validId && parsed.id === id)).toBe(true);
  }
}

const methods = fc.constantFrom('execute_task', 'get_task_result', 'cancel_task', 'rpc.x', 'other', '');
const ids = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.object());
const params = fc.oneof(
  fc.record({ text: fc.string() }, { requiredKeys: [] }),
  fc.record({ task_id: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: [] }),
  fc.jsonValue(),
);
/** Request-shaped objects with each member possibly missing or of the wrong type. */
const mutatedRequest = fc.record(
  { jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.jsonValue()), method: fc.oneof(methods, fc.jsonValue()), params, id: ids },
  { requiredKeys: [] },
);

describe('dispatcher under random input', () => {
  it('answers arbitrary strings with valid JSON-RPC or nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (body) => {
        assertValidAnswer(undefined, await runtime.dispatch(body));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers arbitrary JSON values with valid JSON-RPC or nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        assertValidAnswer(value, await runtime.dispatch(JSON.stringify(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers mutated requests and batches of them correctly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutatedRequest, fc.array(mutatedRequest, { maxLength: 5 })), async (value) => {
        assertValidAnswer(value, await runtime.dispatch(JSON.stringify(value)));
      }),
      { numRuns: 3000 },
    );
  });

  it('answers random bytes (invalid UTF-8 included) with valid JSON-RPC', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 100 }), async (bytes) => {
        assertValidAnswer(undefined, await runtime.dispatch(bytes));
      }),
      { numRuns: 1000 },
    );
  });
});
