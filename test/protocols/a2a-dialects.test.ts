import { normaliseState, readA2aReply } from '../../src/protocols/a2a-dialects';
import { versionFromAgentCard } from '../../src/protocols/a2a';

describe('normaliseState', () => {
  it.each([
    ['TASK_STATE_INPUT_REQUIRED', 'input-required'],
    ['input-required', 'input-required'],
    ['input_required', 'input-required'],
    ['TASK_STATE_COMPLETED', 'completed'],
    ['cancelled', 'canceled'],
    ['TASK_STATE_UNSPECIFIED', 'unknown'],
    [3, 'completed'],
    [8, 'auth-required'],
    ['finished', 'unknown'],
    [undefined, 'unknown'],
  ])('reads %j as %s', (raw, state) => {
    expect(normaliseState(raw)).toBe(state);
  });
});

describe('readA2aReply', () => {
  it('unwraps 1.0 SendMessage results and reads bare 0.3 ones alike', () => {
    const task = { id: 't1', status: { state: 'TASK_STATE_WORKING' } };

    expect(readA2aReply({ task })).toMatchObject({ kind: 'task', taskId: 't1', state: 'working' });
    expect(readA2aReply({ ...task, kind: 'task', status: { state: 'working' } })).toMatchObject({ kind: 'task', taskId: 't1', state: 'working' });
    expect(readA2aReply({ message: { role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } })).toEqual({ kind: 'message', text: 'hi' });
  });

  it('reads text parts only as text, whatever their spelling: data and files are not text', () => {
    const reply = readA2aReply({ role: 'agent', parts: [{ kind: 'text', text: 'one' }, { type: 'text', text: 'two' }, { kind: 'data', data: { text: 'no' } }, { kind: 'file', file: { uri: 'x' }, text: 'no' }, { text: 'three' }] });

    // The file part is read as a file (test/protocols/a2a-files.test.ts): this one's uri is not https.
    expect(reply).toMatchObject({ kind: 'message', text: 'one\ntwo\nthree' });
  });

  it('prefers artifacts over the history, and the history over the status message', () => {
    const status = { state: 'completed', message: { role: 'agent', parts: [{ text: 'status' }] } };
    const history = [{ role: 'user', parts: [{ text: 'question' }] }, { role: 'agent', parts: [{ text: 'older' }] }, { role: 'ROLE_AGENT', parts: [{ text: 'latest' }] }];

    expect(readA2aReply({ status, history, artifacts: [{ parts: [{ text: 'a' }] }, { parts: [{ text: 'b' }] }] })).toMatchObject({ answer: 'a\nb' });
    expect(readA2aReply({ status, history })).toMatchObject({ answer: 'latest', statusText: 'status' });
    expect(readA2aReply({ status, history: [history[0]] })).toMatchObject({ answer: 'status' });
  });

  it.each([null, 'text', [], { jsonrpc: '2.0' }, { task: 'not an object' }])('does not recognise %j', (result) => {
    expect(readA2aReply(result)).toEqual({ kind: 'unrecognised' });
  });
});

describe('versionFromAgentCard', () => {
  it.each([
    ['a 1.0 card', { supportedInterfaces: [{ protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }, '1.0'],
    ['a 0.3 card', { protocolVersion: '0.3.0', url: 'https://agent' }, '0.3'],
    ['a 0.2 card (message/send already)', { protocolVersion: '0.2.5' }, '0.3'],
    ['a hybrid card offering both', { protocolVersion: '0.3', supportedInterfaces: [{ protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }, '1.0'],
    ['a card offering 1.0 over gRPC only', { protocolVersion: '0.3.0', supportedInterfaces: [{ protocolBinding: 'GRPC', protocolVersion: '1.0' }] }, '0.3'],
    ['a card without versions', { name: 'x' }, undefined],
    ['not a card', 'hello', undefined],
  ])('reads %s as %s', (_what, card, version) => {
    expect(versionFromAgentCard(card)).toBe(version);
  });
});
