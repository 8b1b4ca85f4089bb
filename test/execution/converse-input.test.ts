import type { ExecuteTaskParams, ThreadMessage } from '../../src/contract';
import { converseMessages, documentName } from '../../src/execution/executors/converse-input';

const user = (text: string, user_id?: string, ts = '1.1'): ThreadMessage => ({ role: 'user', text, ts, ...(user_id ? { user_id } : {}) });
const assistant = (text: string, ts = '1.2'): ThreadMessage => ({ role: 'assistant', text, ts });
const file = (name: string, mimetype: string, bytes: Buffer) => ({ name, mimetype, size: bytes.length, data: bytes.toString('base64') });

describe('converseMessages: turns', () => {
  it('without a thread, the current message is the one user turn', () => {
    expect(converseMessages({ text: 'hi', user_id: 'U1' })).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], skipped: [] });
  });

  it('keeps alternating turns in order, the current message last', () => {
    const { messages } = converseMessages({ text: 'and now?', user_id: 'U1', messages: [user('question', 'U1'), assistant('answer')] });
    expect(messages).toEqual([
      { role: 'user', content: [{ text: 'question' }] },
      { role: 'assistant', content: [{ text: 'answer' }] },
      { role: 'user', content: [{ text: 'and now?' }] },
    ]);
  });

  it('drops leading assistant turns, merges consecutive same-role turns with a blank line, skips empty texts', () => {
    const { messages } = converseMessages({
      text: 'current',
      user_id: 'U1',
      messages: [assistant('greeting'), assistant('more greeting'), user('a', 'U1'), user('', 'U1'), user('   ', 'U1'), user('b', 'U1'), assistant('x'), assistant(''), assistant('y'), user('c', 'U1')],
    });
    expect(messages).toEqual([
      { role: 'user', content: [{ text: 'a\n\nb' }] },
      { role: 'assistant', content: [{ text: 'x\n\ny' }] },
      // The thread ended with a user's message: it merges into the current one.
      { role: 'user', content: [{ text: 'c\n\ncurrent' }] },
    ]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('a thread of assistant messages only leaves just the current message', () => {
    const { messages } = converseMessages({ text: 'hello', messages: [assistant('one'), assistant('two')] });
    expect(messages).toEqual([{ role: 'user', content: [{ text: 'hello' }] }]);
  });

  it('an empty-text assistant between two user turns does not keep them apart', () => {
    const { messages } = converseMessages({ text: 'now', user_id: 'U1', messages: [user('first', 'U1'), assistant(''), user('second', 'U1')] });
    expect(messages).toEqual([{ role: 'user', content: [{ text: 'first\n\nsecond\n\nnow' }] }]);
  });

  it('does not change the params it is given', () => {
    const params: ExecuteTaskParams = { text: 'now', messages: [user('before', 'U1')] };
    const copy = structuredClone(params);
    converseMessages(params);
    converseMessages(params);
    expect(params).toEqual(copy);
  });
});

describe('converseMessages: who said what', () => {
  it('with one person (thread and asker), no prefixes', () => {
    const { messages } = converseMessages({ text: 'mine', user_id: 'U1', messages: [user('also mine', 'U1'), assistant('reply')] });
    expect(messages[0]!.content).toEqual([{ text: 'also mine' }]);
    expect(messages[2]!.content).toEqual([{ text: 'mine' }]);
  });

  it('with several people, every user text with a known id is prefixed <@ID>: ', () => {
    const { messages } = converseMessages({
      text: 'what do you think?',
      user_id: 'U2',
      messages: [user('I propose A', 'U1'), user('no id here'), assistant('Both work'), user('I prefer B', 'U2')],
    });
    expect(messages).toEqual([
      { role: 'user', content: [{ text: '<@U1>: I propose A\n\nno id here' }] },
      { role: 'assistant', content: [{ text: 'Both work' }] },
      { role: 'user', content: [{ text: '<@U2>: I prefer B\n\n<@U2>: what do you think?' }] },
    ]);
  });

  it('another person only in the thread is enough; the asker without an id gets no prefix', () => {
    const { messages } = converseMessages({ text: 'q', messages: [user('a', 'U1'), assistant('r'), user('b', 'U3')] });
    expect(messages[0]!.content).toEqual([{ text: '<@U1>: a' }]);
    expect(messages[2]!.content).toEqual([{ text: '<@U3>: b\n\nq' }]);
  });

  it('a person whose only message is empty does not count', () => {
    const { messages } = converseMessages({ text: 'q', user_id: 'U1', messages: [user('', 'U9'), user('a', 'U1'), assistant('r')] });
    expect(messages[0]!.content).toEqual([{ text: 'a' }]);
  });
});

describe('converseMessages: attachments', () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
  const pdf = Buffer.from('%PDF-1.7\n binary \u00ff\u0000 tail');
  const csv = Buffer.from('a,b\n1,2\n');

  it('become image and document blocks of the final user turn, after its text, with the decoded bytes', () => {
    const { messages, skipped } = converseMessages({
      text: 'look at these',
      messages: [user('earlier', 'U1')],
      user_id: 'U1',
      attachments: [file('chart.png', 'image/png', png), file('Q3 report.pdf', 'application/pdf', pdf), file('data.csv', 'text/csv; charset=utf-8', csv)],
    });
    expect(skipped).toEqual([]);
    expect(messages).toHaveLength(1);
    const [text, image, document, table] = messages[0]!.content!;
    expect(text).toEqual({ text: 'earlier\n\nlook at these' });
    expect(image).toEqual({ image: { format: 'png', source: { bytes: expect.any(Buffer) } } });
    expect(document).toEqual({ document: { format: 'pdf', name: 'Q3 report', source: { bytes: expect.any(Buffer) } } });
    expect(table).toEqual({ document: { format: 'csv', name: 'data', source: { bytes: expect.any(Buffer) } } });
    expect(Buffer.compare(image!.image!.source!.bytes as Buffer, png)).toBe(0);
    expect(Buffer.compare(document!.document!.source!.bytes as Buffer, pdf)).toBe(0);
    expect(Buffer.compare(table!.document!.source!.bytes as Buffer, csv)).toBe(0);
  });

  it('an unsupported type is left out and reported by position, type and size', () => {
    const zip = Buffer.from('PK\u0003\u0004zip');
    const { messages, skipped } = converseMessages({
      text: 'files',
      attachments: [file('archive.zip', 'application/zip', zip), file('pic.gif', 'image/gif', png)],
    });
    expect(messages[0]!.content).toEqual([{ text: 'files' }, { image: { format: 'gif', source: { bytes: png } } }]);
    expect(skipped).toEqual([{ index: 0, mimetype: 'application/zip', size: zip.length }]);
  });

  it('document names are sanitized for Converse and made unique within the request', () => {
    const bytes = Buffer.from('x');
    const names = [
      'notes.txt',
      'notes.md',
      'NOTES.csv',
      'notes (2).txt',
      'my_file.v2.final.docx',
      'résumé – 2024: draft!!.pdf',
      '  spaced\t\tout   name .txt',
      '報告書.pdf',
      '.env',
      'a [b] (c) - d.html',
    ];
    const mimetypes = ['text/plain', 'text/markdown', 'text/csv', 'text/plain', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/pdf', 'text/plain', 'application/pdf', 'text/plain', 'text/html'];
    const { messages } = converseMessages({ text: 'docs', attachments: names.map((name, index) => file(name, mimetypes[index]!, bytes)) });
    const got = messages[0]!.content!.slice(1).map((block) => block.document!.name);
    expect(got).toEqual(['notes', 'notes (2)', 'NOTES (3)', 'notes (2) (2)', 'my-file-v2-final', 'resume 2024 draft', 'spaced out name', 'document', 'env', 'a [b] (c) - d']);
    for (const name of got) {
      expect(name).toMatch(/^[A-Za-z0-9\s\-()[\]]+$/);
      expect(name).not.toMatch(/\s\s/);
      expect(name).toBe(name!.trim());
    }
    expect(new Set(got.map((name) => name!.toLowerCase())).size).toBe(got.length);
  });

  it('documentName: never empty, never longer than Converse allows', () => {
    expect(documentName('!!!.pdf')).toBe('document');
    expect(documentName('')).toBe('document');
    expect(documentName('plain')).toBe('plain');
    expect(documentName(`${'a '.repeat(300)}.txt`).length).toBeLessThanOrEqual(200);
    expect(documentName(`${'a '.repeat(300)}.txt`)).toBe(documentName(`${'a '.repeat(300)}.txt`).trim());
  });

  it('images are not named, and do not take a document name', () => {
    const { messages } = converseMessages({ text: 't', attachments: [file('same.png', 'image/png', png), file('same.pdf', 'application/pdf', pdf)] });
    expect(messages[0]!.content![1]).not.toHaveProperty('image.name');
    expect(messages[0]!.content![2]!.document!.name).toBe('same');
  });
});
