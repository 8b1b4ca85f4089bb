import { createLogger, redactingReplacer, taskLogger } from '../../src/observability/logger';

function captureStdout(run: () => void): string[] {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}

describe('logger redaction', () => {
  const previous = process.env.POWERTOOLS_LOG_LEVEL;
  beforeAll(() => {
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  });
  afterAll(() => {
    process.env.POWERTOOLS_LOG_LEVEL = previous;
  });

  it('masks secrets by key and by shape, and keeps the task ids on every line', () => {
    const log = taskLogger(createLogger('test'), { request_id: 'r-1', task_id: 't-1', event_id: 'Ev1', correlation_id: 'c-1' });
    const lines = captureStdout(() => {
      log.info('calling', {
        bot_token: 'xoxb-123-456-abcdef',
        headers: { Authorization: 'Bearer abc.def.ghi', 'X-Slack-Signature': 'v0=deadbeef' },
        note: 'token xoxp-999-888 leaked in text; Authorization: Bearer sekrit',
        signing_secret: '8f742231b10e8888abcd99yyyzzz85a5',
        input_tokens: 12,
      });
      log.error('failed', { error: new Error('bad token xoxb-1-2-3') });
    });
    const text = lines.join('');
    for (const secret of ['xoxb-123-456-abcdef', 'abc.def.ghi', 'deadbeef', '999-888', 'sekrit', '8f742231b10e8888abcd99yyyzzz85a5', 'xoxb-1-2-3']) {
      expect(text).not.toContain(secret);
    }
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({ request_id: 'r-1', task_id: 't-1', event_id: 'Ev1', correlation_id: 'c-1' });
    }
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!).input_tokens).toBe(12);
  });

  it('leaves ordinary values alone', () => {
    expect(redactingReplacer('text', 'hello world')).toBe('hello world');
    expect(redactingReplacer('task_id', 'task-1')).toBe('task-1');
  });
});
