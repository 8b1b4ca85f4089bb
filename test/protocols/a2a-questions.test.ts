import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { A2aProtocol } from '../../src/protocols/a2a';
import type { A2aVersion } from '../../src/protocols/a2a-dialects';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { SIGN_IN_URL, startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';

/**
 * An @a2a-js/sdk agent that asks (docs/contract.md, "Questions"): its input-required task is a
 * question, and the answer resumes the same task with a message on its taskId, in A2A 1.0 and 0.3.
 * The asker (docs/contract.md, "Who is asking") rides in the message's metadata.
 */
describe.each<[A2aVersion, boolean]>([
  ['1.0', false],
  ['0.3', true],
])('an A2A %s agent that asks', (version, legacyCompat) => {
  let agent: A2aTestAgent;
  let execution: ExecutionAgent;
  beforeAll(async () => {
    agent = await startSdkA2aAgent({ legacyCompat });
    execution = new ExecutionAgent('asks', new A2aProtocol({ version, blocking: true }), httpsTransport({ url: agent.url, maxAttempts: 1 }));
  });
  afterAll(() => agent.close());

  const sentMessage = (at: number) => (agent.requests[at]!.body as { params: { message: Record<string, unknown> } }).params.message;

  it('asks, and the answer resumes the same task to its end', async () => {
    const call = { requestId: randomUUID(), questions: true as const };
    const before = agent.requests.length;
    const asked = await execution.start({ text: 'the site #confirm', channel: 'C1', thread_ts: '1.2', asker: { id: 'slack:T1:U1' } }, call);
    expect(asked).toMatchObject({ kind: 'input-required', question: { text: 'Deploy the site?', free_text: { label: 'Your answer' } } });
    if (asked.kind !== 'input-required') return;
    expect(sentMessage(before).metadata).toMatchObject({ asker: { id: 'slack:T1:U1' } });

    const answered = await execution.resume(asked.handle, { question_id: asked.question.id, text: 'yes, go', answered_by: { id: 'slack:T1:U1' } }, call);
    expect(answered).toMatchObject({ kind: 'success', text: 'a2a confirmed: yes, go', extra: { taskId: asked.handle.taskId } });
    // The answer went back on the same task and conversation.
    expect(sentMessage(before + 1)).toMatchObject({ taskId: asked.handle.taskId, contextId: asked.handle.contextId });
  });

  it('auth-required is a question of kind auth', async () => {
    expect(await execution.start({ text: '#auth' }, { requestId: randomUUID(), questions: true })).toMatchObject({ kind: 'input-required', question: { kind: 'auth', text: 'sign in first' } });
  });

  it('auth-required with a link: the link is the question\'s auth_url, and out of its text (which the whole thread sees)', async () => {
    const asked = await execution.start({ text: '#signin' }, { requestId: randomUUID(), questions: true });
    if (asked.kind !== 'input-required') throw new Error(`expected a question, got ${asked.kind}`);
    expect(asked.question).toMatchObject({ kind: 'auth', text: 'Sign in at the link sent to the asker', auth_url: `${SIGN_IN_URL}?task=${asked.handle.taskId}` });
  });
});
