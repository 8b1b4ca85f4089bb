import type { SessionCheck } from '../../src/verification/queues/polls-queue';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { Queue } from '../../src/queue/queue';
import { conversationKey } from '../../src/verification/queues/slack-thread';
import type { Transport } from '../../src/transport/transport';
import { createAgentCoreSessionStop } from '../../src/verification/stop/agentcore-session-stop';
import { SessionStopSchema, agentCoreSessionStopPolicy } from '../../src/verification/stop/agentcore-session-stop-setting';
import type { ThreadWork } from '../../src/verification/stores/thread-work';
import { capturingLog } from '../support/slack-surface';

/** AGENTCORE_STOP_SESSION's parts on their own (src/verification/session-stop*.ts). */
const thread = { team_id: 'T1', channel: 'C1', ts: '1.000100' };

function parts(latest: ThreadWork['latest']) {
  const stopped: string[] = [];
  const transport = { kind: 'agentcore', send: async () => undefined, stopSession: async (key: string) => void stopped.push(key) } as unknown as Transport;
  const agent = new ExecutionAgent('default', createProtocol('execute-task'), transport);
  const sent: Array<{ body: unknown; delaySeconds?: number }> = [];
  const polls = { send: async (body: unknown, options?: { delaySeconds?: number }) => void sent.push({ body, ...(options?.delaySeconds !== undefined ? { delaySeconds: options.delaySeconds } : {}) }) } as unknown as Queue<unknown>;
  const log = capturingLog();
  const work = { latest } as unknown as ThreadWork;
  return { agent, polls, log, work, stopped, sent };
}

describe('session stop', () => {
  it('reads the setting: never by default, after-answer, quiet-<N>s / quiet-<N>m up to 15 minutes', () => {
    expect(SessionStopSchema.parse(undefined)).toBe('never');
    expect(['never', 'after-answer', 'quiet-30s', 'quiet-2m', 'quiet-15m'].map(agentCoreSessionStopPolicy)).toEqual([
      { kind: 'never' },
      { kind: 'after-answer' },
      { kind: 'quiet', seconds: 30 },
      { kind: 'quiet', seconds: 120 },
      { kind: 'quiet', seconds: 900 },
    ]);
    for (const wrong of ['quiet-16m', 'quiet-0s', 'at-once', 'quiet-5']) expect(SessionStopSchema.safeParse(wrong).success).toBe(false);
  });

  it('quiet: queues a check after the quiet; the check ends the session only when the task is still the thread\'s latest', async () => {
    let latest = 'r1';
    const p = parts(async () => ({ request_id: latest, user_id: 'U1', thread, state: 'done' }));
    const stop = createAgentCoreSessionStop({ policy: { kind: 'quiet', seconds: 120 }, agent: p.agent, work: p.work, polls: p.polls, log: p.log });
    await stop.settled({ ...thread, request_id: 'r1', received_at: 0 }, { ended: 'answered', agent: 'default' });
    expect(p.sent).toEqual([{ body: { kind: 'session-check', ...thread, request_id: 'r1', agent: 'default' }, delaySeconds: 120 }]);
    latest = 'r2';
    await stop.check(p.sent[0]!.body as SessionCheck);
    expect(p.stopped).toEqual([]);
    latest = 'r1';
    await stop.check(p.sent[0]!.body as SessionCheck);
    // The conversation's session: the key every call of the thread uses.
    expect(p.stopped).toEqual([conversationKey(thread)]);
  });

  it('a check that fails is logged and never fails its message (no apology for an answered task)', async () => {
    const p = parts(async () => {
      throw new Error('DynamoDB is away');
    });
    const stop = createAgentCoreSessionStop({ policy: { kind: 'quiet', seconds: 60 }, agent: p.agent, work: p.work, polls: p.polls, log: p.log });
    await expect(stop.check({ kind: 'session-check', ...thread, request_id: 'r1' })).resolves.toBeUndefined();
    expect(p.log.lines.find((line) => line.message === 'a session check failed; the idle timeout will end the session')).toBeDefined();
    expect(p.stopped).toEqual([]);
  });
});
