import fc from 'fast-check';
import { RequestSchema, ResponseSchema } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';

/**
 * Malformed input never crashes the dispatcher: thousands of random and mutated bodies, and every
 * answer is valid JSON-RPC 2.0 whose ids make sense — and an answer is left out exactly where
 * JSON-RPC says: for a notification (a valid request without an `id` member) or a batch of them
 * only. Anything else, unparsable bytes included, gets an answer.
 */
const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '5', TASK_TIMEOUT_MS: '50' }) });

/** A request object without an `id` member that is otherwise valid: it must get no response. */
function isNotification(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'id' in value) return false;
  return RequestSchema.safeParse({ ...value, id: null }).success;
}

/** What the request body is, once parsed as the dispatcher would (undefined: unparsable). */
function parsedBody(body: string | Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body)) };
  } catch {
    return undefined;
  }
}

function assertValidAnswer(body: string | Uint8Array, answer: string | undefined): void {
  const parsedRequest = parsedBody(body);
  const requestBody = parsedRequest?.value;
  const members = Array.isArray(requestBody) ? requestBody : [requestBody];
  const expectsSilence = parsedRequest !== undefined && members.length > 0 && members.every(isNotification);
  if (expectsSilence !== (answer === undefined)) {
    throw new Error(`${expectsSilence ? 'answered a notification' : 'no answer'} to ${JSON.stringify(requestBody) ?? '(unparsable)'}: ${answer}`);
  }
  if (answer === undefined) return;
  const parsed = JSON.parse(answer);
  const responses = Array.isArray(parsed) ? parsed : [parsed];
  if (Array.isArray(parsed)) {
    expect(Array.isArray(requestBody)).toBe(true);
    // One response per member that is not a notification, none for the notifications.
    expect(parsed.length).toBe(members.filter((member) => !isNotification(member)).length);
  }
  for (const response of responses) {
    const result = ResponseSchema.safeParse(response);
    if (!result.success) throw new Error(`invalid response ${answer} to ${JSON.stringify(requestBody)}`);
  }
  if (parsedRequest === undefined) expect(parsed).toMatchObject({ id: null, error: { code: -32700 } });
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
  it('answers arbitrary strings with valid JSON-RPC, and only a notification with nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (body) => {
        assertValidAnswer(body, await runtime.dispatch(body));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers arbitrary JSON values with valid JSON-RPC, and only notifications with nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        const body = JSON.stringify(value);
        assertValidAnswer(body, await runtime.dispatch(body));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers mutated requests and batches of them correctly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutatedRequest, fc.array(mutatedRequest, { maxLength: 5 })), async (value) => {
        const body = JSON.stringify(value);
        assertValidAnswer(body, await runtime.dispatch(body));
      }),
      { numRuns: 3000 },
    );
  });

  it('answers random bytes (invalid UTF-8 included) with valid JSON-RPC', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 100 }), async (bytes) => {
        assertValidAnswer(bytes, await runtime.dispatch(bytes));
      }),
      { numRuns: 1000 },
    );
  });
});
