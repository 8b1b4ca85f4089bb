import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { slackEventEnvelope } from '../../src/local/slack-event-builder';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { applyGuardrailEnv, startApplyGuardrailStandIn, type ApplyGuardrailStandIn } from '../support/apply-guardrail-stand-in';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { CORPUS_ENTITY_TYPES, guardrailCorpus, type CorpusMessage } from '../support/guardrail-corpus';
import { capturingLog } from '../support/slack-surface';

/**
 * The output guardrail on streamed answers end to end (docs/operations.md, "Guardrails"): the
 * local pipeline as deployed, a real execution runtime whose echo streams the seeded corpus back a
 * few characters at a time (`#chunk`: entities cut across appends anywhere), held streams, the
 * real @slack/web-api client against the fake Slack API — and every Slack call it made (each
 * post, start, append, update and stop) scanned for the seeded entities. The input is only
 * detected, so the agent has the entities and its echo carries them back.
 */
const SIGNING_SECRET = 'guardrail-stream-signing-secret-0123456789';
const ENV = { POWERTOOLS_LOG_LEVEL: 'SILENT', STREAM_HOLD_S: '1', STREAM_POLL_DELAY_S: '1', SYNC_BUDGET_MS: '5000', STREAM_FIRST_TEXT_MS: '100', RATE_LIMIT_PER_MINUTE: '1000', MAX_TEXT_LENGTH: '4000' };
// Two messages of every entity type in each language: 32 streamed answers per mode.
const sample = guardrailCorpus(37, 200).filter((_, index) => index % 200 < 16);

type Run = { slack: FakeSlackApi; log: ReturnType<typeof capturingLog>; answers: Array<{ message: CorpusMessage; channel: string }> };

async function run(env: Record<string, string>): Promise<Run> {
  const slack = await startFakeSlackApi();
  const log = capturingLog();
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '5000', STREAM_FIRST_TEXT_MS: '100' }), log });
  const pipeline: LocalPipeline = createLocalPipeline({
    agent: new ExecutionAgent('default', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch, runtime.dispatchStream), { streamHoldMs: 1_000 }),
    slack: new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl })),
    signingSecret: SIGNING_SECRET,
    env: { ...slackAppEnv(slack, SIGNING_SECRET), ...ENV, GUARDRAIL_INPUT_MODE: 'detect', ...env },
    timeScale: 0.1,
    log,
  });
  const answers: Run['answers'] = [];
  try {
    await Promise.all(
      sample.map(async (message, index) => {
        const channel = `C0GS${String(index).padStart(3, '0')}`;
        const text = `${message.text} #stream=40 #chunk=${3 + (index % 5)}`;
        const ts = slack.addMessage({ channel, user: 'U0ALICE', text });
        const { body } = slackEventEnvelope('mention', { text, ts, channel, teamId: 'T0FAKE', userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID });
        const answer = await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body });
        expect(answer.statusCode).toBe(200);
        answers.push({ message, channel });
      }),
    );
    await pipeline.whenIdle({ timeoutMs: 90_000 });
  } finally {
    await pipeline.stop();
  }
  return { slack, log, answers };
}

/** Every Slack call's method and body, as one text: what the app asked Slack to show. */
const callsOf = (slack: FakeSlackApi) => slack.requests.map((request) => `${request.method} ${JSON.stringify(request.body)}`).join('\n');
const escaped = (value: string) => JSON.stringify(value).slice(1, -1);

function expectNoEntity(slack: FakeSlackApi, answers: Run['answers']): void {
  const calls = callsOf(slack);
  for (const { message } of answers) for (const entity of message.entities) expect(calls).not.toContain(escaped(entity.value));
}

/** The stream of each answer: what its previews showed (start and appends), and the message it ended as. */
function streamsOf(slack: FakeSlackApi, answers: Run['answers']) {
  return answers.map(({ message, channel }) => {
    const stream = slack.streams.find((candidate) => candidate.channel === channel);
    // An answer done within the first quarter second is posted whole, with no stream.
    const posted = slack.posts.filter((post) => post.channel === channel).at(-1);
    return { message, preview: stream?.text ?? '', appends: stream?.appends.length ?? 0, final: (stream ? slack.messageText(stream.ts) : posted?.text) ?? '' };
  });
}

describe('streamed answers through the output guardrail, against the fake Slack API', () => {
  let standIn: ApplyGuardrailStandIn | undefined;
  const savedEnv = { ...process.env };
  afterAll(async () => {
    process.env = savedEnv;
    await standIn?.close();
  });

  it('holds every entity type in both languages', () => {
    for (const language of ['en', 'ja'] as const) expect(new Set(sample.filter((m) => m.language === language).map((m) => m.entities[0]!.type)).size).toBe(CORPUS_ENTITY_TYPES.length);
  });

  it('builtin mask: no seeded entity in any Slack call; each preview is a start of its final answer, placeholders numbered alike', async () => {
    const { slack, answers } = await run({ GUARDRAIL: 'builtin', GUARDRAIL_OUTPUT_MODE: 'mask' });
    try {
      expect(answers).toHaveLength(sample.length);
      expectNoEntity(slack, answers);
      const streams = streamsOf(slack, answers);
      // Streamed, not posted whole: previews were shown before the final answer.
      expect(streams.filter((stream) => stream.appends > 0).length).toBeGreaterThan(sample.length / 2);
      for (const stream of streams) {
        expect(stream.final).toContain(`[${stream.message.entities[0]!.type}-1]`);
        expect(stream.final.startsWith(stream.preview)).toBe(true);
      }
      expect(streams.some((stream) => /\[[A-Z_]+-1\]/.test(stream.preview))).toBe(true);
    } finally {
      await slack.close();
    }
  });

  it('bedrock mask (the loopback ApplyGuardrail): no seeded entity in any Slack call; previews agree with the final answers', async () => {
    standIn = await startApplyGuardrailStandIn(Object.fromEntries(CORPUS_ENTITY_TYPES.map((type) => [type, 'ANONYMIZE' as const])));
    Object.assign(process.env, applyGuardrailEnv(standIn));
    const { slack, answers } = await run({ GUARDRAIL: 'bedrock', GUARDRAIL_ID: standIn.guardrailId, GUARDRAIL_VERSION: standIn.guardrailVersion, GUARDRAIL_OUTPUT_MODE: 'mask' });
    try {
      expectNoEntity(slack, answers);
      for (const stream of streamsOf(slack, answers)) expect(stream.final.startsWith(stream.preview)).toBe(true);
      expect(standIn.requests.some((request) => request.source === 'OUTPUT')).toBe(true);
    } finally {
      await slack.close();
    }
  });

  it('builtin block: no seeded entity in any Slack call; each answer ends as the notice', async () => {
    const { slack, answers } = await run({ GUARDRAIL: 'builtin', GUARDRAIL_OUTPUT_MODE: 'block' });
    try {
      expectNoEntity(slack, answers);
      for (const stream of streamsOf(slack, answers)) expect(stream.final).toBe(DEFAULT_USER_MESSAGES.guardrailBlockedAnswer);
    } finally {
      await slack.close();
    }
  });

  it('builtin detect: the answers show as they are, and each finding is counted', async () => {
    const { slack, answers, log } = await run({ GUARDRAIL: 'builtin', GUARDRAIL_OUTPUT_MODE: 'detect' });
    try {
      const calls = callsOf(slack);
      for (const { message } of answers) expect(calls).toContain(escaped(message.entities[0]!.value));
      const detected = log.lines.filter((line) => line.message === 'guardrail intervened' && line.extra.direction === 'output' && line.extra.guardrail_action === 'detected');
      // Each answer's entity found at least once in its previews or its final answer; the log names types, never the text.
      expect(detected.length).toBeGreaterThanOrEqual(sample.length);
      for (const { message } of answers) expect(JSON.stringify(detected)).not.toContain(escaped(message.entities[0]!.value));
    } finally {
      await slack.close();
    }
  });
});
