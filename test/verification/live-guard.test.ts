import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import type { Guardrail, GuardrailMode } from '../../src/guardrail/guardrail';
import { guardrailFromSettings } from '../../src/guardrail/guardrail-from-settings';
import { parseGuardrailSettings } from '../../src/guardrail/guardrail-config';
import { createLogger } from '../../src/observability/logger';
import { SlackApiError } from '../../src/slack/slack-api-error';
import type { LiveMessage, SlackLive } from '../../src/slack/slack-live';
import type { LiveTarget } from '../../src/verification/live/live-parts';
import { createLiveReply } from '../../src/verification/live/live-reply';
import type { LiveReplies } from '../../src/verification/stores/live-replies';
import { DynamoDbLiveReplies } from '../../src/verification/stores/dynamodb-live-replies';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';
import { applyGuardrailEnv, startApplyGuardrailStandIn, type ApplyGuardrailStandIn } from '../support/apply-guardrail-stand-in';
import { CORPUS_ENTITY_TYPES, guardrailCorpus } from '../support/guardrail-corpus';
import { useStateTable } from '../support/dynalite';

/**
 * Previews through the output guardrail (src/verification/live/live-guard.ts), the live-answer
 * logic over a recording stand-in for Slack (one function's unit test; the whole path against the
 * fake Slack API is test/integration/guardrail-stream.test.ts). Each piece is shown by a live reply
 * of its own over one store, as separate Lambda invocations continue one live message.
 */
const BLOCKED = "Sorry, I can't show that answer here.";
const target: LiveTarget = { team_id: 'T1', channel: 'C1', ts: '100.000001', request_id: 'req-1', user_id: 'U1' };

/** Every text any Slack call carried, in order, and each live message's text as Slack would show it. */
function recordingSlack(refuse: Partial<Record<string, string>> = {}) {
  const sent: string[] = [];
  const texts = new Map<string, string>();
  let ts = 0;
  const record = (method: string, ...args: unknown[]) => {
    sent.push(JSON.stringify(args));
    if (refuse[method]) throw new SlackApiError(`${method} failed`, refuse[method]!, false);
  };
  const slack: SlackLive & { post(message: { channel: string; threadTs: string; text: string }): Promise<{ ts: string }> } = {
    setStatus: async (...args) => record('setStatus', ...args),
    async startStream(stream) {
      record('startStream', stream);
      const id = `s${(ts += 1)}`;
      texts.set(id, stream.markdownText ?? '');
      return { ts: id };
    },
    async appendStream(message: LiveMessage, text: string) {
      record('appendStream', message, text);
      texts.set(message.ts, (texts.get(message.ts) ?? '') + text);
    },
    async stopStream(message: LiveMessage, options = {}) {
      record('stopStream', message, options);
    },
    async update(message: LiveMessage, text: string) {
      record('update', message, text);
      texts.set(message.ts, text);
    },
    async post(message) {
      record('post', message);
      const id = `p${(ts += 1)}`;
      texts.set(id, message.text);
      return { ts: id };
    },
  };
  return { slack, sent, texts };
}

/** The pieces shown one after another, each by a fresh live reply (another function) over one store. */
async function streamPieces(guardrail: Guardrail, pieces: string[], options: { refuse?: Partial<Record<string, string>>; store?: LiveReplies; deadline?: number } = {}) {
  const recorded = recordingSlack(options.refuse);
  const store = options.store ?? new MemoryLiveReplies();
  let before = 0;
  for (const piece of pieces) {
    const live = createLiveReply({ slack: recorded.slack, store, workingText: 'working', placeholderText: '…', log: createLogger('test'), guardrail: { guardrail, blockedText: BLOCKED } });
    await live.show(target, before, piece, options.deadline !== undefined ? { deadline: options.deadline } : {});
    before += piece.length;
  }
  const record = await store.get(target.request_id);
  return { ...recorded, record, preview: record?.ts ? recorded.texts.get(record.ts) ?? '' : '' };
}

const builtin = (mode: GuardrailMode) => new BuiltinGuardrail({ input: 'detect', output: mode });
const corpus = guardrailCorpus(37, 200);

describe('previews through the output guardrail', () => {
  it('mask, the corpus cut in two at every point: no entity in any Slack call, and the preview is a start of the final answer masked whole', async () => {
    const guardrail = builtin('mask');
    // Every fourth message: each entity type, in both languages, in every way the corpus writes it.
    for (const message of corpus.filter((_, index) => index % 4 === 0)) {
      const final = (await guardrail.check(message.text, 'output')).text;
      for (let cut = 1; cut < message.text.length; cut++) {
        const { sent, preview } = await streamPieces(guardrail, [message.text.slice(0, cut), message.text.slice(cut)]);
        const calls = sent.join('\n');
        for (const entity of message.entities) expect(calls).not.toContain(JSON.stringify(entity.value).slice(1, -1));
        expect(final.startsWith(preview)).toBe(true);
      }
    }
  });

  it('numbers placeholders across pieces and functions as the final answer does', async () => {
    const guardrail = builtin('mask');
    const answer = 'Write to a.sato@example.com or b@example.org; again: a.sato@example.com, then call 090-1234-5678 now. Done';
    const pieces = ['Write to a.sato@exa', 'mple.com or b@example.org; again: a.sa', 'to@example.com, then call 090-12', '34-5678 now. Done'];
    const { preview, record } = await streamPieces(guardrail, pieces);
    expect(preview).toBe('Write to [EMAIL-1] or [EMAIL-2]; again: [EMAIL-1], then call [PHONE-1] now. ');
    expect((await guardrail.check(answer, 'output')).text.startsWith(preview)).toBe(true);
    // What is held is the last word (it may still grow); no entity is kept as written.
    expect(record?.mask?.held).toBe('Done');
    expect(JSON.stringify(record)).not.toMatch(/sato@|1234-5678/);
  });

  it('the chat.update fallback shows the same masked text', async () => {
    const { sent, preview, record } = await streamPieces(builtin('mask'), ['Mail taro@exam', 'ple.com and ', 'then more'], { refuse: { startStream: 'not_allowed' } });
    expect(record?.mode).toBe('update');
    expect(preview).toBe('Mail [EMAIL-1] and then  …');
    expect(sent.join('\n')).not.toContain('taro@');
  });

  it('detect shows the text as is, still only as far as released', async () => {
    const { preview } = await streamPieces(builtin('detect'), ['Mail taro@exam', 'ple.com and ', 'then']);
    expect(preview).toBe('Mail taro@example.com and ');
  });

  it('block ends the live answer with the notice: nothing of the entity, nothing after it', async () => {
    const { sent, preview, record } = await streamPieces(builtin('block'), ['The key is ', 'AKIAABCDEF', 'GHIJKLMNOP and ', 'more text ', 'after it.']);
    expect(preview).toBe(`The key is \n\n${BLOCKED}`);
    expect(record?.dirty).toBe(true);
    expect(sent.join('\n')).not.toMatch(/AKIA|more text|after it/);
  });

  it('block on the first piece starts the live message with the notice alone', async () => {
    const { preview, record } = await streamPieces(builtin('block'), ['AKIAABCDEFGHIJKLMNOP is it. ', 'And more.']);
    expect(preview).toBe(BLOCKED);
    expect(record?.dirty).toBe(true);
  });

  it('the final answer closes the record: what was held is not kept', async () => {
    const guardrail = builtin('mask');
    const { slack } = recordingSlack();
    const store = new MemoryLiveReplies();
    const live = createLiveReply({ slack, store, workingText: 'working', placeholderText: '…', log: createLogger('test'), guardrail: { guardrail, blockedText: BLOCKED } });
    await live.show(target, 0, 'Call me at 090-1234-56');
    expect((await store.get(target.request_id))?.mask?.held).toBe('090-1234-56');
    await live.finish(target.request_id, 'Call me at [PHONE-1]', 'answer');
    expect((await store.get(target.request_id))?.mask).toBeUndefined();
  });
});

describe('previews through GUARDRAIL=bedrock (a loopback ApplyGuardrail)', () => {
  let standIn: ApplyGuardrailStandIn;
  const savedEnv = { ...process.env };
  const bedrock = (settings: Record<string, string> = {}) =>
    guardrailFromSettings(parseGuardrailSettings({ GUARDRAIL: 'bedrock', GUARDRAIL_ID: standIn.guardrailId, GUARDRAIL_VERSION: standIn.guardrailVersion, GUARDRAIL_INPUT_MODE: 'detect', GUARDRAIL_OUTPUT_MODE: 'mask', ...settings }), { log: createLogger('test') })!;

  beforeAll(async () => {
    standIn = await startApplyGuardrailStandIn(Object.fromEntries(CORPUS_ENTITY_TYPES.map((type) => [type, 'ANONYMIZE' as const])));
    Object.assign(process.env, applyGuardrailEnv(standIn));
  });
  afterAll(async () => {
    process.env = savedEnv;
    await standIn.close();
  });
  beforeEach(() => {
    standIn.failWith = undefined;
    standIn.stall = false;
  });

  it('checks a long answer in windows, not at every append: the first sentence at once, then 500 characters or more at a time', async () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence ${i + 1} mentions ops${i}@example.com today. `);
    const answer = sentences.join('');
    const pieces = answer.match(/[\s\S]{1,23}/g)!;
    const before = standIn.requests.length;
    const { sent, preview } = await streamPieces(bedrock(), pieces);
    const windows = standIn.requests.slice(before);
    // ~1,800 characters in 80 appends: at most the first window and one per 500 characters.
    expect(windows.length).toBeLessThanOrEqual(1 + Math.ceil(answer.length / 500));
    expect(windows.every((window) => window.source === 'OUTPUT')).toBe(true);
    expect(windows.slice(1).every((window) => window.text.length >= 500)).toBe(true);
    expect(sent.join('\n')).not.toContain('@example.com');
    expect(preview.startsWith('Sentence 1 mentions [EMAIL-1] today. ')).toBe(true);
  });

  it('on a guardrail error shows nothing more, never the raw text; the final answer decides', async () => {
    const guardrail = bedrock();
    const store = new MemoryLiveReplies();
    const first = await streamPieces(guardrail, ['Hello there. ', 'More '], { store });
    expect(first.preview).toBe('Hello there. ');
    standIn.failWith = { status: 500, errorType: 'InternalServerException' };
    const more = 'x'.repeat(600);
    const { sent, record } = await streamPieces(guardrail, ['Hello there. ', 'More ', `${more}. Mail a@example.com. `, 'And then. '], { store });
    expect(record?.dirty).toBe(true);
    expect(record?.mask).toBeUndefined();
    expect(sent.join('\n')).not.toMatch(/xxxx|a@example\.com|And then/);
  });

  it('with too little of the function left, Bedrock is not called and nothing is shown', async () => {
    const before = standIn.requests.length;
    const { sent } = await streamPieces(bedrock(), ['Mail a@example.com now. '], { deadline: Date.now() + 200 });
    expect(standIn.requests.length).toBe(before);
    expect(sent.join('\n')).not.toContain('a@example.com');
    expect(sent.join('\n')).not.toContain('Mail');
  });
});

describe('previews through the output guardrail, the stream carried on the DynamoDB record (dynalite)', () => {
  const stateTable = useStateTable();

  it('each function goes on from what the last one held, with its numbers; the record holds no entity as written', async () => {
    const store = new DynamoDbLiveReplies({ dynamodb: stateTable().dynamodb, tableName: 'state' });
    const pieces = ['Write to a.sato@exa', 'mple.com or b@example.org; again: a.sa', 'to@example.com, then call 090-12', '34-5678 now. Done'];
    const { preview, record, sent } = await streamPieces(builtin('mask'), pieces, { store });
    expect(preview).toBe('Write to [EMAIL-1] or [EMAIL-2]; again: [EMAIL-1], then call [PHONE-1] now. ');
    expect(record?.mask?.held).toBe('Done');
    const item = await stateTable().dynamodb.getItem({ TableName: 'state', Key: { pk: { S: `live#${target.request_id}` } } });
    expect(JSON.stringify(item)).not.toMatch(/sato@|b@example|1234-5678/);
    expect(sent.join('\n')).not.toMatch(/sato@|b@example|1234-5678/);
  });
});

describe('what the record holds back, when previews stopped on a fault', () => {
  it('goes with the final answer too', async () => {
    const guardrail = builtin('mask');
    const { slack } = recordingSlack();
    // An append whose answer never came: it may be shown, so the record counts it and turns dirty.
    slack.appendStream = () => Promise.reject(new SlackApiError('no answer', 'request_error', true, { outcome: 'unknown' }));
    const store = new MemoryLiveReplies();
    const live = createLiveReply({ slack, store, workingText: 'working', placeholderText: '…', log: createLogger('test'), guardrail: { guardrail, blockedText: BLOCKED } });
    await live.show(target, 0, 'Hello there, ');
    await live.show(target, 13, 'call 090-1234-56');
    const stopped = await store.get(target.request_id);
    expect(stopped?.dirty).toBe(true);
    expect(stopped?.mask?.held).toBe('090-1234-56');
    await live.finish(target.request_id, 'Hello there, call [PHONE-1]', 'answer');
    expect((await store.get(target.request_id))?.mask).toBeUndefined();
  });
});
