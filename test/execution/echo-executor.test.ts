import { createHash } from 'node:crypto';
import type { ExecuteTaskParams } from '../../src/contract';
import { EchoExecutor, countWords } from '../../src/execution/executors/echo-executor';
import { createLogger } from '../../src/observability/logger';
import { post } from '../support/http';
import { startExecutionRuntime } from '../support/execution-runtime';

const context = () => ({ taskId: 't', signal: new AbortController().signal, log: createLogger('test') });
const echo = (params: ExecuteTaskParams) => new EchoExecutor().execute(params, context());
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const file = (name: string, mimetype: string, bytes: Buffer) => ({ name, mimetype, size: bytes.length, data: bytes.toString('base64') });

const thread: ExecuteTaskParams['messages'] = [
  { role: 'user', text: 'q', user_id: 'U1', ts: '1.1' },
  { role: 'assistant', text: 'a', ts: '1.2' },
  { role: 'user', text: '', user_id: 'U2', ts: '1.3' },
];

describe('EchoExecutor: context and attachments', () => {
  it('answers `echo: <text>` alone without the directive and without attachments, thread or not', async () => {
    expect(await echo({ text: 'hello' })).toEqual({ response_text: 'echo: hello', usage: { input_tokens: 1, output_tokens: 2, model: 'echo' } });
    // The thread is read as a model would read it: its words count as input (`q`, `a`, and an empty message).
    expect(await echo({ text: 'hello', messages: thread })).toEqual({ response_text: 'echo: hello', usage: { input_tokens: 3, output_tokens: 2, model: 'echo' } });
  });

  it('reports a token a whitespace-separated word, of the input and of the whole answer', async () => {
    // Act
    const spaced = await echo({ text: '  many\tspaces \n here\u00a0too  ' });
    const withLines = await echo({ text: 'two #context', messages: thread });
    // Assess: tabs, line breaks and no-break spaces separate words; runs of them count once
    expect(spaced.usage).toEqual({ input_tokens: 4, output_tokens: 5, model: 'echo' });
    // `echo: two #context` and `context: 3 turns (user, assistant, user)`: the lines it adds are output too.
    expect(withLines.usage).toEqual({ input_tokens: 4, output_tokens: 9, model: 'echo' });
  });

  it('counts words as \\s+ splits them', () => {
    for (const text of ['', ' ', 'one', ' a b  c ', '\u2028x\u3000y\ufeffz', 'a\r\nb\vc\fd']) expect(countWords(text)).toBe(text.split(/\s+/).filter(Boolean).length);
  });

  it('#context adds the turns it received, roles as received (no merging, empty texts counted)', async () => {
    expect((await echo({ text: 'sum up #context', messages: thread })).response_text).toBe('echo: sum up #context\ncontext: 3 turns (user, assistant, user)');
    expect((await echo({ text: '#context', messages: [{ role: 'assistant', text: 'x', ts: '1' }, { role: 'assistant', text: 'y', ts: '2' }] })).response_text).toBe(
      'echo: #context\ncontext: 2 turns (assistant, assistant)',
    );
    expect((await echo({ text: '#context' })).response_text).toBe('echo: #context\ncontext: 0 turns ()');
    expect((await echo({ text: '#context', messages: [] })).response_text).toBe('echo: #context\ncontext: 0 turns ()');
  });

  it('adds one line per attachment, always, after the context line: name, type, size and SHA-256 of the decoded bytes', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 128]);
    const text = Buffer.from('plain text\n');
    const empty = Buffer.alloc(0);
    const attachments = [file('chart.png', 'image/png', png), file('notes.txt', 'text/plain', text), file('empty.csv', 'text/csv', empty)];
    expect((await echo({ text: 'files', attachments })).response_text).toBe(
      [
        'echo: files',
        `attachment: chart.png image/png 7 bytes sha256=${sha256(png)}`,
        `attachment: notes.txt text/plain 11 bytes sha256=${sha256(text)}`,
        'attachment: empty.csv text/csv 0 bytes sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      ].join('\n'),
    );
    expect((await echo({ text: 'both #context', messages: thread, attachments: [attachments[1]!] })).response_text).toBe(
      ['echo: both #context', 'context: 3 turns (user, assistant, user)', `attachment: notes.txt text/plain 11 bytes sha256=${sha256(text)}`].join('\n'),
    );
  });

  it('over HTTP: the contract validates the new params and the echo shows them', async () => {
    const target = await startExecutionRuntime();
    try {
      const bytes = Buffer.from('%PDF-1.7 whatever');
      const body = {
        jsonrpc: '2.0',
        method: 'execute_task',
        params: { text: 'read #context', user_id: 'U1', messages: thread, attachments: [file('spec.pdf', 'application/pdf', bytes)] },
        id: 'e-1',
      };
      const answer = JSON.parse((await post(target.invocationsUrl, JSON.stringify(body))).text);
      expect(answer.result).toEqual({
        status: 'success',
        response_text: `echo: read #context\ncontext: 3 turns (user, assistant, user)\nattachment: spec.pdf application/pdf ${bytes.length} bytes sha256=${sha256(bytes)}`,
        // Attachments are not counted as input: 2 words of text, 2 of the thread.
        usage: { input_tokens: 4, output_tokens: 15, model: 'echo' },
      });
    } finally {
      await target.close();
    }
  });
});

describe('EchoExecutor: #ask with #stream', () => {
  const streamed = (answers?: Array<{ question_id: string; value: string }>) => {
    const texts: string[] = [];
    const run = new EchoExecutor().execute({ text: 'look #stream=1 #ask=Go on?' }, { ...context(), onText: (text: string) => texts.push(text), ...(answers ? { answers } : {}) });
    return { texts, run };
  };

  it('streams its echo before it asks, and, resumed, answers only what follows it', async () => {
    const asking = streamed();
    await expect(asking.run).rejects.toMatchObject({ name: 'InputRequired', question: { id: 'echo-ask', text: 'Go on?' } });
    expect(asking.texts.join('')).toBe('echo: look #stream=1 #ask=Go on?');

    const resumed = streamed([{ question_id: 'echo-ask', value: 'approve' }]);
    expect(await resumed.run).toMatchObject({ response_text: 'answer: Approve' });
    expect(resumed.texts).toEqual(['answer: Approve']);
  });

  it('asks several questions in turn, one answer line each', async () => {
    const executor = new EchoExecutor();
    const params = { text: 'two #ask=First?#ask=Second?' };
    await expect(executor.execute(params, context())).rejects.toMatchObject({ question: { id: 'echo-ask', text: 'First?' } });
    await expect(executor.execute(params, { ...context(), answers: [{ question_id: 'echo-ask', value: 'approve' }] })).rejects.toMatchObject({ question: { id: 'echo-ask-2', text: 'Second?' } });
    const done = await executor.execute(params, { ...context(), answers: [{ question_id: 'echo-ask', value: 'approve' }, { question_id: 'echo-ask-2', value: 'reject' }] });
    expect(done.response_text).toBe('echo: two #ask=First?#ask=Second?\nanswer: Approve\nanswer: Reject');
  });
});
