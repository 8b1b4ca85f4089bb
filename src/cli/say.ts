import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { localStackBase } from '../local/local-ports';
import { basename, extname } from 'node:path';
import { systemClock } from '../clock';
import { ATTACHMENT_TYPES } from '../contract';
import type { LocalStop } from '../local/local-agent-surface';
import { agentSessionStoppedEnvelope, appHomeOpenedEnvelope, LOCAL_DM_CHANNEL, postSignedEvent, slackEventEnvelope } from '../local/slack-event-builder';
import type { Command } from './command';
import { clickOption, openQuestion, pickOption, questionInThread, questionText, stepLines, type TracedReply } from './say-steps-questions';
import { localSecretFile } from './start';

export const sayCommand: Command = {
  name: 'say',
  summary: 'sign a Slack event (a mention, a reply in a thread, a Stop) and post it to the local ingress, then show what came of it',
  usage: `zone say "<text>" [--url http://127.0.0.1:3000/slack/events] [--channel <id>] [--thread <ts>] [--follow-up] [--file <path>]… [--answer <option>] [--wait 30]
zone say --thread <ts> --answer <option> [--url …] [--wait 30]
zone say --stop --thread <ts> [--url …] [--wait 10]
zone say --open [--url …] [--wait 10]

Signs the event with SLACK_SIGNING_SECRET (or the secret \`zone start\` generated) exactly as
Slack would, posts it, and waits up to --wait seconds for the reply in the local playground's
record (replies printed by \`zone start\` when no SLACK_BOT_TOKEN is set).

  --channel <id>  say it in that channel (a Slack channel id; default the local one): a channel an
                  execution agent answers in (EXECUTION_AGENTS "channels") routes it there; with
                  --thread, the channel the thread is in
  --thread <ts>   say it in that thread (the ts \`zone say\` printed): the agent gets the
                  thread's earlier messages
  --follow-up     with --thread: a reply without a mention, as in a thread the bot answered in
  --file <path>   share a file with the message (repeatable); the local stack hosts it and the
                  invoker downloads it as it would from Slack
  --answer <option>
                  the agent asks a question (its options printed, e.g. approve / reject):
                  click that option when it comes and follow the resumed task to its answer.
                  With --thread and no text: answer the question waiting in that thread
  --stop          with --thread: press Stop on that thread's agent session (a signed
                  agent_session_stopped); prints the stopped answer, or that nothing was running
  --open          open the agent's DM (a signed app_home_opened, messages tab); prints the
                  suggested prompts it offers`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        channel: { type: 'string' },
        thread: { type: 'string' },
        'follow-up': { type: 'boolean' },
        file: { type: 'string', multiple: true },
        wait: { type: 'string' },
        secret: { type: 'string' },
        stop: { type: 'boolean' },
        open: { type: 'boolean' },
        answer: { type: 'string' },
      },
    });
    const text = positionals.join(' ').trim();
    const filePaths = values.file ?? [];
    const surface = values.stop ? '--stop' : values.open ? '--open' : undefined;
    if (values.stop && values.open) throw new Error('--stop and --open are two things: one at a time');
    if (surface && (text || filePaths.length || values['follow-up'])) throw new Error(`${surface} sends no message: leave out the text, --file and --follow-up`);
    if (values.stop && !values.thread) throw new Error('--stop needs --thread <ts>: the thread whose agent session to stop (the ts `zone say` printed)');
    if (values.open && values.thread) throw new Error('--open opens the agent\'s DM, not a thread: leave out --thread');
    if (values.answer !== undefined && !values.answer.trim()) throw new Error('--answer needs an option, e.g. --answer approve');
    if (surface && values.answer) throw new Error(`${surface} answers no question: leave out --answer`);
    const answerLater = !surface && values.answer && !text && filePaths.length === 0;
    if (answerLater && !values.thread) throw new Error('--answer without a message needs --thread <ts>: the thread whose question to answer (the ts `zone say` printed)');
    if (!surface && !text && filePaths.length === 0 && !answerLater) throw new Error('say what? e.g. zone say "hello"');
    if (values.channel !== undefined && !/^[CDG][A-Z0-9]{1,20}$/.test(values.channel)) throw new Error(`--channel takes a Slack channel id (C…), not ${JSON.stringify(values.channel)}`);
    if (values['follow-up'] && !values.thread) throw new Error('--follow-up needs --thread <ts>: a follow-up is a reply in a thread');
    const url = values.url ?? `${localStackBase({}, process.env)}/slack/events`;
    const secretFile = localSecretFile(new URL(url).port || '80');
    const secret = values.secret ?? process.env.SLACK_SIGNING_SECRET ?? (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : undefined);
    if (!secret) throw new Error('no signing secret: set SLACK_SIGNING_SECRET to the one `zone start` uses');
    if (surface) {
      const waitMs = Number(values.wait ?? 10) * 1000;
      return values.stop ? sayStop(url, secret, values.thread!, waitMs) : sayOpen(url, secret, waitMs);
    }
    if (answerLater) return sayAnswer(url, values.thread!, values.answer!, Number(values.wait ?? 30) * 1000);

    const started = systemClock.now();
    let ack: { status: number; text: string };
    let eventId: string;
    let threadTs: string;
    try {
      if (filePaths.length) {
        // Files need a host the invoker can download them from: the local stack shares them and
        // signs the event itself (its playground API).
        const files = filePaths.map((path) => ({ name: basename(path), mimetype: mimetypeOf(path), data: readFileSync(path).toString('base64') }));
        const response = await fetch(new URL('/api/say', url), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text, ...(values.thread ? { thread_ts: values.thread } : {}), ...(values.channel ? { channel: values.channel } : {}), follow_up: values['follow-up'] === true, files }),
        });
        const answer = (await response.json()) as { status?: number; event_id?: string; ts?: string; error?: string };
        if (!response.ok) throw new Error(answer.error ?? `HTTP ${response.status}`);
        ack = { status: answer.status ?? 0, text: '' };
        eventId = answer.event_id ?? '';
        threadTs = values.thread ?? answer.ts ?? '';
      } else {
        const kind = values['follow-up'] ? 'thread-reply' : 'mention';
        const built = slackEventEnvelope(kind, { text, ...(values.thread ? { threadTs: values.thread } : {}), ...(values.channel ? { channel: values.channel } : {}) });
        eventId = built.eventId;
        threadTs = values.thread ?? built.ts;
        ack = await postSignedEvent(url, built.body, secret);
      }
    } catch (error) {
      throw new Error(`could not reach ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
    }
    process.stdout.write(`→ ${url}  HTTP ${ack.status} in ${systemClock.now() - started} ms  (event ${eventId}, thread ${threadTs})\n`);
    if (ack.status !== 200) return 1;

    return followAnswer({ url, eventId, threadTs, started, waitMs: Number(values.wait ?? 30) * 1000, ...(values.answer ? { answer: values.answer } : {}) });
  },
};

/**
 * Follows the event's trace in the local stack and prints it: the hops, the agent's steps as they
 * change, a streamed answer as it grows, a question (answered with `answer` when given), and the
 * replies. `skipHops`: hops already printed by an earlier command (answering a question later).
 */
async function followAnswer(run: { url: string; eventId: string; threadTs: string; started: number; waitMs: number; answer?: string; skipHops?: number }): Promise<number> {
  const { url, threadTs, started } = run;
  const stateUrl = new URL(`/api/events/${encodeURIComponent(run.eventId)}`, url);
  const elapsed = () => `  +${String(systemClock.now() - started).padStart(6)} ms  `;
  let printed = run.skipHops ?? 0;
  let answer = run.answer;
  const steps = new Map<string, string>();
  // A live answer is printed as it grows; the final replies then add only what is not out yet.
  let streamedOut = '';
  while (systemClock.now() - started < run.waitMs) {
    const response = await fetch(stateUrl).catch(() => undefined);
    if (response?.ok) {
      const trace = (await response.json()) as { events: Array<{ hop: string; at: number; detail?: Record<string, unknown> }>; replies: Array<TracedReply & { streaming?: boolean }>; shared_files?: Array<{ name: string; size: number; mimetype: string; url: string }> };
      const done = answered(trace.events);
      // The agent's steps as they change (once the text streams, their end states come with the
      // answer); seen with the answer, they came before it, so they are printed before its hops,
      // untimed (when they changed is not known, only that it was before).
      const stepsNow = !streamedOut || done ? stepLines(trace.replies, steps).map((line) => `${done ? ' '.repeat(14) : elapsed()}${line}\n`).join('') : '';
      if (done) process.stdout.write(stepsNow);
      // Hops until the answer starts to stream; then only the answer, so it reads as one text.
      for (const event of trace.events.slice(printed)) {
        if (event.hop !== 'streamed' && !streamedOut) process.stdout.write(`  +${String(event.at - started).padStart(6)} ms  ${event.hop}\n`);
      }
      printed = trace.events.length;
      if (!done) process.stdout.write(stepsNow);
      const growing = trace.replies.find((reply) => reply.streaming);
      if (growing && growing.text.startsWith(streamedOut) && growing.text.length > streamedOut.length) {
        if (!streamedOut) process.stdout.write(`${elapsed()}streaming:\n\n`);
        process.stdout.write(growing.text.slice(streamedOut.length));
        streamedOut = growing.text;
      }
      const question = done ? undefined : openQuestion(trace.replies);
      if (question) {
        process.stdout.write(`${questionText(question, answer ? undefined : threadTs)}\n`);
        if (!answer) return 0;
        const option = pickOption(question, answer);
        await clickOption(url, question.ts, option.actionId);
        process.stdout.write(`\n${elapsed()}clicked ${option.label}\n`);
        answer = undefined;
      }
      if (done) {
        for (const [index, reply] of trace.replies.entries()) {
          if (index === 0 && streamedOut && reply.text.startsWith(streamedOut)) process.stdout.write(`${reply.text.slice(streamedOut.length)}\n`);
          else process.stdout.write(`\n${reply.text}\n`);
        }
        for (const file of trace.shared_files ?? []) process.stdout.write(`\n📎 ${file.name} (${file.mimetype}, ${file.size} bytes)  ${new URL(file.url, url).href}\n`);
        process.stdout.write(`\n(continue this thread: npx zone say --thread ${threadTs} "…")\n`);
        return 0;
      }
    } else if (response && response.status !== 404) {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  process.stdout.write('(no reply seen yet; it may still come, or replies go to Slack rather than this stack)\n');
  return 0;
}

/** Answers the question waiting in the thread `threadTs` with the option `answer`, then follows the resumed task to its answer. */
async function sayAnswer(url: string, threadTs: string, answer: string, waitMs: number): Promise<number> {
  const started = systemClock.now();
  let waiting: Awaited<ReturnType<typeof questionInThread>>;
  try {
    waiting = await questionInThread(url, threadTs);
  } catch (error) {
    throw new Error(`could not reach ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
  }
  if (!waiting) {
    process.stdout.write(`no question is waiting for an answer in thread ${threadTs} (answered already, expired, or stopped)\n`);
    return 1;
  }
  process.stdout.write(`❓ ${waiting.question.text}\n`);
  const option = pickOption(waiting.question, answer);
  await clickOption(url, waiting.question.ts, option.actionId);
  process.stdout.write(`  +${String(systemClock.now() - started).padStart(6)} ms  clicked ${option.label}\n`);
  return followAnswer({ url, eventId: waiting.eventId, threadTs, started, waitMs, skipHops: waiting.hops });
}

/** The reply is out — and, for an answer with files, its files too (the poster shares them after the text). */
function answered(events: ReadonlyArray<{ hop: string; detail?: Record<string, unknown> }>): boolean {
  if (events.some((event) => event.hop === 'refused')) return true;
  if (!events.some((event) => event.hop === 'reply-posted')) return false;
  const withFiles = events.some((event) => event.hop === 'reply-queued' && typeof event.detail?.files === 'number');
  return !withFiles || events.some((event) => event.hop === 'files-posted');
}

/** Stop pressed on the thread's agent session: what it stopped (and the stopped answer), or that nothing was running. */
async function sayStop(url: string, secret: string, threadTs: string, waitMs: number): Promise<number> {
  const started = systemClock.now();
  const { body, eventId } = agentSessionStoppedEnvelope({ threadTs });
  if (!(await sendSigned(url, () => postSignedEvent(url, body, secret), started, `agent_session_stopped, event ${eventId}, thread ${threadTs}`))) return 1;
  const elapsed = () => `  +${String(systemClock.now() - started).padStart(6)} ms  `;
  // The local stack follows each Stop through the tasks queue to what it did.
  const stop = await pollJson<LocalStop>(new URL(`/api/stops/${encodeURIComponent(eventId)}`, url), (found) => found.state !== 'queued', started + waitMs);
  if (!stop) {
    process.stdout.write('(the Stop was not handled yet; it may still be, or this is not a local stack)\n');
    return 0;
  }
  if (stop.state === 'nothing-running') {
    process.stdout.write(`${elapsed()}nothing was running in thread ${threadTs}: nothing to stop\n`);
    return 0;
  }
  process.stdout.write(`${elapsed()}stopped request ${stop.request_id} (${stop.cancels === 'cancel_task' ? 'cancel_task sent to the execution zone' : 'cancelled when its execute_task returns'})\n`);
  if (!stop.task_event_id) return 0;
  // Its one final message: what was shown so far, and the stopped note.
  const posted = (trace: EventTrace) => trace.events.findIndex((event) => event.hop === 'reply-posted') > trace.events.findIndex((event) => event.hop === 'stop');
  const trace = await pollJson<EventTrace>(new URL(`/api/events/${encodeURIComponent(stop.task_event_id)}`, url), posted, started + waitMs);
  if (!trace) {
    process.stdout.write('(its stopped note is not posted yet)\n');
    return 0;
  }
  process.stdout.write(`${elapsed()}reply-posted\n`);
  for (const reply of trace.replies) process.stdout.write(`\n${reply.text}\n`);
  return 0;
}

/** The agent's DM opened: the suggested prompts it offers. */
async function sayOpen(url: string, secret: string, waitMs: number): Promise<number> {
  const started = systemClock.now();
  const { body, eventId } = appHomeOpenedEnvelope();
  if (!(await sendSigned(url, () => postSignedEvent(url, body, secret), started, `app_home_opened, event ${eventId}`))) return 1;
  // slack-poster traces the Slack call it made for the event under the event's id.
  type State = { requests: Array<{ requestId: string; events: Array<{ hop: string }> }>; surface: Array<{ type: string; channel?: string; title?: string; prompts?: Array<{ title: string; message: string }> }> };
  const state = await pollJson<State>(new URL('/api/state', url), (found) => found.requests.some((trace) => trace.requestId === eventId && trace.events.some((event) => event.hop === 'slack-action')), started + waitMs);
  const offered = state?.surface.filter((event) => event.type === 'prompts' && event.channel === LOCAL_DM_CHANNEL).at(-1);
  if (!offered?.prompts) {
    process.stdout.write('(no prompts offered: AGENT_PROMPTS_JSON may offer none, or replies go to Slack rather than this stack)\n');
    return 0;
  }
  process.stdout.write(`\nthe agent's DM offers${offered.title ? ` (${offered.title})` : ''}:\n`);
  for (const prompt of offered.prompts) process.stdout.write(`  • ${prompt.title}: ${JSON.stringify(prompt.message)}\n`);
  return 0;
}

type EventTrace = { events: Array<{ hop: string }>; replies: Array<{ text: string }> };

/** Posts a signed request and prints the line for it; false when it was not accepted. */
async function sendSigned(url: string, send: () => Promise<{ status: number }>, started: number, what: string): Promise<boolean> {
  let ack: { status: number };
  try {
    ack = await send();
  } catch (error) {
    throw new Error(`could not reach ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
  }
  process.stdout.write(`→ ${url}  HTTP ${ack.status} in ${systemClock.now() - started} ms  (${what})\n`);
  return ack.status === 200;
}

/** GETs `url` every 200 ms until what it answers passes `done`, or `deadline` (epoch ms) comes. */
async function pollJson<T>(url: URL, done: (value: T) => boolean, deadline: number): Promise<T | undefined> {
  while (systemClock.now() < deadline) {
    const response = await fetch(url).catch(() => undefined);
    if (response?.ok) {
      const value = (await response.json()) as T;
      if (done(value)) return value;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

/** The mimetype Slack would declare for a file, by its extension (unknown: octet-stream). */
function mimetypeOf(path: string): string {
  const extension = extname(path).slice(1).toLowerCase();
  return Object.entries(ATTACHMENT_TYPES).find(([, type]) => type.aliases.includes(extension))?.[0] ?? 'application/octet-stream';
}
