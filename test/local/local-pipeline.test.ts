import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalPipeline } from '../../src/local/local-pipeline';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { SlackReplies } from '../../src/slack/slack-replies';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';

describe('createLocalPipeline', () => {
  it('scales only queue delays and poll deadlines: Slack\'s 5-minute signature window stays real time', async () => {
    // Prepare: 1000× faster queues, so 400 ms of real time is over 6 minutes of queue time.
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({}) });
    const agent = new ExecutionAgent('default', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch));
    const posted: string[] = [];
    const slack: SlackReplies = { post: async (message) => (posted.push(message.text), { ts: '1700000000.000900' }), addReaction: async () => undefined, removeReaction: async () => undefined };
    const pipeline = createLocalPipeline({ agent, slack, signingSecret: 'scaled-clock-secret', timeScale: 0.001, env: { POWERTOOLS_LOG_LEVEL: 'SILENT' } });
    try {
      await sleep(400);
      const { body } = appMentionEnvelope({ text: 'still fresh' });

      // Act
      const response = await pipeline.ingress({ headers: slackSignatureHeaders('scaled-clock-secret', body), body });

      // Assess: a request signed just now is accepted, and answered
      expect(response.statusCode).toBe(200);
      await pipeline.whenIdle({ timeoutMs: 5_000 });
      expect(posted).toEqual(['echo: still fresh']);
    } finally {
      await pipeline.stop();
    }
  });
});
