import { createHash } from 'node:crypto';
import type { ExecuteTaskParams } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import { EchoExecutor, words } from '../../src/execution/executors/echo-executor';
import { createLogger } from '../../src/observability/logger';

/** The echo executor's streaming (ECHO_STREAM_MS, `#stream=<ms>`): pieces, pauses, and the same answer. */
type Piece = { text: string; at: number };

async function run(executor: EchoExecutor, params: ExecuteTaskParams, signal = new AbortController().signal) {
  const pieces: Piece[] = [];
  const started = Date.now();
  const output = await executor.execute(params, { taskId: 't', signal, log: createLogger('test'), onText: (text) => pieces.push({ text, at: Date.now() - started }) });
  return { output, pieces, texts: pieces.map((piece) => piece.text) };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('EchoExecutor streaming', () => {
  it('splits a text into words that keep their whitespace and add up to it', () => {
    expect(words('echo: a  b\tc ')).toEqual(['echo: ', 'a  ', 'b\t', 'c ']);
    expect(words('  lead')).toEqual(['  ', 'lead']);
    expect(words('')).toEqual([]);
  });

  it('with ECHO_STREAM_MS hands over the echo word by word, pausing after each, and answers with all of it', async () => {
    // Act
    const { output, pieces, texts } = await run(new EchoExecutor(0, 40), { text: 'one two three' });
    // Assess
    expect(texts).toEqual(['echo: ', 'one ', 'two ', 'three']);
    expect(output).toEqual({ response_text: 'echo: one two three', usage: { input_tokens: 3, output_tokens: 4, model: 'echo' } });
    expect(texts.join('')).toBe(output.response_text);
    // A pause after each word: the pieces come ~40 ms apart, not at once.
    for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.at - pieces[i - 1]!.at).toBeGreaterThanOrEqual(30);
  });

  it('#stream=<ms> streams one task without the setting; without either, onText gets the answer in one piece', async () => {
    // Act
    const directive = await run(new EchoExecutor(), { text: 'hi #stream=5' });
    const whole = await run(new EchoExecutor(), { text: 'hi there' });
    // Assess
    expect(directive.texts).toEqual(['echo: ', 'hi ', '#stream=5']);
    expect(directive.output.response_text).toBe('echo: hi #stream=5');
    expect(whole.texts).toEqual(['echo: hi there']);
    expect(whole.output.response_text).toBe('echo: hi there');
  });

  it('the context and attachment lines come at the end, one piece each, and still add up to response_text', async () => {
    // Prepare
    const bytes = Buffer.from('notes\n');
    const params: ExecuteTaskParams = {
      text: 'sum up #context',
      messages: [{ role: 'user', text: 'q', ts: '1.1' }],
      attachments: [{ name: 'notes.txt', mimetype: 'text/plain', size: bytes.length, data: bytes.toString('base64') }],
    };
    // Act
    const { output, texts } = await run(new EchoExecutor(0, 1), params);
    // Assess
    expect(texts).toEqual(['echo: ', 'sum ', 'up ', '#context', '\ncontext: 1 turns (user)', `\nattachment: notes.txt text/plain 6 bytes sha256=${sha256(bytes)}`]);
    expect(texts.join('')).toBe(output.response_text);
    expect(output.response_text).toBe(`echo: sum up #context\ncontext: 1 turns (user)\nattachment: notes.txt text/plain 6 bytes sha256=${sha256(bytes)}`);
  });

  it('keeps #sleep (first), #fail and #crash: a task that fails hands over no text', async () => {
    // Act
    const slept = await run(new EchoExecutor(0, 1), { text: '#sleep=60 late' });
    const failed = run(new EchoExecutor(0, 1), { text: 'no #fail' });
    // Assess
    expect(slept.pieces[0]!.at).toBeGreaterThanOrEqual(50);
    expect(slept.texts.join('')).toBe('echo: #sleep=60 late');
    await expect(failed).rejects.toMatchObject({ code: -32000 });
  });

  it('stops streaming when the signal aborts, mid-way through a pause', async () => {
    // Prepare
    const controller = new AbortController();
    const pieces: string[] = [];
    const executor = new EchoExecutor(0, 1_000);
    // Act
    const running = executor.execute({ text: 'a b c d' }, { taskId: 't', signal: controller.signal, log: createLogger('test'), onText: (text) => pieces.push(text) });
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    // Assess
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(pieces).toEqual(['echo: ']);
  });

  it('ECHO_STREAM_MS and STREAM_FIRST_TEXT_MS are read from the environment (defaults 0 and 300)', () => {
    expect(loadExecutionConfig({})).toMatchObject({ ECHO_STREAM_MS: 0, STREAM_FIRST_TEXT_MS: 300 });
    expect(loadExecutionConfig({ ECHO_STREAM_MS: '200', STREAM_FIRST_TEXT_MS: '50' })).toMatchObject({ ECHO_STREAM_MS: 200, STREAM_FIRST_TEXT_MS: 50 });
  });
});
