import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { ConsoleSlackReplies } from '../../src/local/console-slack-replies';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { slackEventEnvelope } from '../../src/local/slack-event-builder';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { CORPUS_ENTITY_TYPES, guardrailCorpus } from '../support/guardrail-corpus';
import { capturingLog } from '../support/slack-surface';

/**
 * The guardrails through the local pipeline (the four verification functions wired as
 * deployed, in-memory queues and stores, a real execution runtime behind the in-process
 * transport): what reaches the agent is recorded at the transport, and every Slack call — replies,
 * statuses, the agent session and its title — is scanned. docs/operations.md, "Guardrails".
 */
const SIGNING_SECRET = 'guardrail-signing-secret-0123456789';
type Harness = { pipeline: LocalPipeline; atAgent: string[]; slackLines: string[] };

function harness(env: Record<string, string>): Harness {
  const atAgent: string[] = [];
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000' }) });
  const transport = new InProcessTransport(async (bytes) => {
    const body = Buffer.from(bytes).toString();
    if (body.includes('"execute_task"')) atAgent.push(body);
    return runtime.dispatch(bytes);
  });
  const slackLines: string[] = [];
  const pipeline = createLocalPipeline({
    agent: new ExecutionAgent('default', createProtocol('execute-task'), transport),
    slack: new ConsoleSlackReplies((line) => slackLines.push(line)),
    signingSecret: SIGNING_SECRET,
    env: { RATE_LIMIT_PER_MINUTE: '1000', MAX_TEXT_LENGTH: '4000', ...env },
    timeScale: 0.05,
    log: capturingLog(),
  });
  return { pipeline, atAgent, slackLines };
}

let sequence = 0;
async function say(pipeline: LocalPipeline, text: string): Promise<void> {
  const ts = `1700000100.${String((sequence += 1)).padStart(6, '0')}`;
  const { body } = slackEventEnvelope('mention', { text, ts, teamId: 'T0GUARD', userId: 'U0GUARD', channel: 'C0GUARD' });
  const answer = await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body });
  expect(answer.statusCode).toBe(200);
}

// Three messages of every entity type in each language: 48 tasks through the whole pipeline.
const sample = guardrailCorpus(37, 200).filter((_, index) => index % 200 < 24);

describe('GUARDRAIL=builtin through the local pipeline', () => {
  it('holds every entity type in both languages', () => {
    for (const language of ['en', 'ja'] as const) expect(new Set(sample.filter((m) => m.language === language).map((m) => m.entities[0]!.type)).size).toBe(CORPUS_ENTITY_TYPES.length);
  });

  it('mask: no seeded entity reaches the agent or any Slack call; each task crosses with its placeholder', async () => {
    const h = harness({ GUARDRAIL: 'builtin', GUARDRAIL_MODE: 'mask' });
    try {
      for (const message of sample) await say(h.pipeline, message.text);
      await h.pipeline.whenIdle({ timeoutMs: 60_000 });
      expect(h.atAgent).toHaveLength(sample.length);
      const atAgent = h.atAgent.join('\n');
      const slack = h.slackLines.join('\n');
      for (const message of sample) {
        for (const entity of message.entities) {
          // JSON-escaped at the agent (a key block's newlines), as written in Slack.
          expect(atAgent).not.toContain(JSON.stringify(entity.value).slice(1, -1));
          expect(slack).not.toContain(entity.value);
        }
      }
      for (const type of CORPUS_ENTITY_TYPES) expect(atAgent).toContain(`[${type}-1]`);
    } finally {
      await h.pipeline.stop();
    }
  });

  it('block: a message with an entity gets one notice and sends no task; one without passes', async () => {
    const h = harness({ GUARDRAIL: 'builtin', GUARDRAIL_MODE: 'block' });
    try {
      await say(h.pipeline, 'my card is 4111 1111 1111 1111, can you check the order?');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(h.atAgent).toEqual([]);
      const notices = h.slackLines.filter((line) => line.includes(DEFAULT_USER_MESSAGES.guardrailBlocked));
      expect(notices).toHaveLength(1);
      expect(h.slackLines.join('\n')).not.toContain('4111 1111 1111 1111');
      await say(h.pipeline, 'what changed in release v1.10.2 on 2024-05-01?');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(h.atAgent).toHaveLength(1);
    } finally {
      await h.pipeline.stop();
    }
  });

  it('detect: the task crosses unchanged', async () => {
    const h = harness({ GUARDRAIL: 'builtin', GUARDRAIL_MODE: 'detect' });
    try {
      await say(h.pipeline, 'write to taro@example.co.jp please');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(h.atAgent.join('')).toContain('taro@example.co.jp');
    } finally {
      await h.pipeline.stop();
    }
  });

  it('output: the final answer is masked before Slack shows it, even where the input was only detected', async () => {
    const h = harness({ GUARDRAIL: 'builtin', GUARDRAIL_INPUT_MODE: 'detect', GUARDRAIL_OUTPUT_MODE: 'mask' });
    try {
      await say(h.pipeline, 'repeat after me: hanako.sato@example.co.jp and 090-1234-5678');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      // The agent had them (detect), and its echo carried them back …
      expect(h.atAgent.join('')).toContain('hanako.sato@example.co.jp');
      // … but no Slack call showed them.
      const slack = h.slackLines.join('\n');
      expect(slack).toContain('[EMAIL-1]');
      expect(slack).not.toContain('hanako.sato@example.co.jp');
      expect(slack).not.toContain('090-1234-5678');
    } finally {
      await h.pipeline.stop();
    }
  });

  it('output block: the answer is replaced by its notice', async () => {
    const h = harness({ GUARDRAIL: 'builtin', GUARDRAIL_INPUT_MODE: 'detect', GUARDRAIL_OUTPUT_MODE: 'block' });
    try {
      await say(h.pipeline, 'echo AKIAABCDEFGHIJKLMNOP back');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      const slack = h.slackLines.join('\n');
      expect(slack).toContain(DEFAULT_USER_MESSAGES.guardrailBlockedAnswer);
      expect(slack).not.toContain('AKIAABCDEFGHIJKLMNOP');
    } finally {
      await h.pipeline.stop();
    }
  });
});
