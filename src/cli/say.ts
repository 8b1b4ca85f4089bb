import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { basename, extname } from 'node:path';
import { systemClock } from '../clock';
import { ATTACHMENT_TYPES } from '../contract';
import { postSignedEvent, slackEventEnvelope } from '../local/slack-event-builder';
import type { Command } from './command';
import { localSecretFile } from './start';

export const sayCommand: Command = {
  name: 'say',
  summary: 'sign a Slack event (a mention, or a reply in a thread) and post it to the local ingress, then show the reply',
  usage: `zone say "<text>" [--url http://127.0.0.1:3000/slack/events] [--thread <ts>] [--follow-up] [--file <path>]… [--wait 30]

Signs the event with SLACK_SIGNING_SECRET (or the secret \`zone start\` generated) exactly as
Slack would, posts it, and waits up to --wait seconds for the reply in the local playground's
record (replies printed by \`zone start\` when no SLACK_BOT_TOKEN is set).

  --thread <ts>   say it in that thread (the ts \`zone say\` printed): the agent gets the
                  thread's earlier messages
  --follow-up     with --thread: a reply without a mention, as in a thread the bot answered in
  --file <path>   share a file with the message (repeatable); the local stack hosts it and the
                  invoker downloads it as it would from Slack`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        thread: { type: 'string' },
        'follow-up': { type: 'boolean' },
        file: { type: 'string', multiple: true },
        wait: { type: 'string' },
        secret: { type: 'string' },
      },
    });
    const text = positionals.join(' ').trim();
    const filePaths = values.file ?? [];
    if (!text && filePaths.length === 0) throw new Error('say what? e.g. zone say "hello"');
    if (values['follow-up'] && !values.thread) throw new Error('--follow-up needs --thread <ts>: a follow-up is a reply in a thread');
    const url = values.url ?? `http://127.0.0.1:${process.env.VERIFICATION_PORT ?? 3000}/slack/events`;
    const secretFile = localSecretFile(new URL(url).port || '80');
    const secret = values.secret ?? process.env.SLACK_SIGNING_SECRET ?? (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : undefined);
    if (!secret) throw new Error('no signing secret: set SLACK_SIGNING_SECRET to the one `zone start` uses');

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
          body: JSON.stringify({ text, ...(values.thread ? { thread_ts: values.thread } : {}), follow_up: values['follow-up'] === true, files }),
        });
        const answer = (await response.json()) as { status?: number; event_id?: string; ts?: string; error?: string };
        if (!response.ok) throw new Error(answer.error ?? `HTTP ${response.status}`);
        ack = { status: answer.status ?? 0, text: '' };
        eventId = answer.event_id ?? '';
        threadTs = values.thread ?? answer.ts ?? '';
      } else {
        const kind = values['follow-up'] ? 'thread-reply' : 'mention';
        const built = slackEventEnvelope(kind, { text, ...(values.thread ? { threadTs: values.thread } : {}) });
        eventId = built.eventId;
        threadTs = values.thread ?? built.ts;
        ack = await postSignedEvent(url, built.body, secret);
      }
    } catch (error) {
      throw new Error(`could not reach ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
    }
    process.stdout.write(`→ ${url}  HTTP ${ack.status} in ${systemClock.now() - started} ms  (event ${eventId}, thread ${threadTs})\n`);
    if (ack.status !== 200) return 1;

    const waitMs = Number(values.wait ?? 30) * 1000;
    const stateUrl = new URL(`/api/events/${encodeURIComponent(eventId)}`, url);
    let printed = 0;
    // A live answer is printed as it grows; the final replies then add only what is not out yet.
    let streamedOut = '';
    while (systemClock.now() - started < waitMs) {
      const response = await fetch(stateUrl).catch(() => undefined);
      if (response?.ok) {
        const trace = (await response.json()) as { events: Array<{ hop: string; at: number; detail?: Record<string, unknown> }>; replies: Array<{ text: string; streaming?: boolean }> };
        // Hops until the answer starts to stream; then only the answer, so it reads as one text.
        for (const event of trace.events.slice(printed)) {
          if (event.hop !== 'streamed' && !streamedOut) process.stdout.write(`  +${String(event.at - started).padStart(6)} ms  ${event.hop}\n`);
        }
        printed = trace.events.length;
        const growing = trace.replies.find((reply) => reply.streaming);
        if (growing && growing.text.startsWith(streamedOut) && growing.text.length > streamedOut.length) {
          if (!streamedOut) process.stdout.write(`  +${String(systemClock.now() - started).padStart(6)} ms  streaming:\n\n`);
          process.stdout.write(growing.text.slice(streamedOut.length));
          streamedOut = growing.text;
        }
        if (trace.events.some((event) => event.hop === 'reply-posted' || event.hop === 'refused')) {
          for (const [index, reply] of trace.replies.entries()) {
            if (index === 0 && streamedOut && reply.text.startsWith(streamedOut)) process.stdout.write(`${reply.text.slice(streamedOut.length)}\n`);
            else process.stdout.write(`\n${reply.text}\n`);
          }
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
  },
};

/** The mimetype Slack would declare for a file, by its extension (unknown: octet-stream). */
function mimetypeOf(path: string): string {
  const extension = extname(path).slice(1).toLowerCase();
  return Object.entries(ATTACHMENT_TYPES).find(([, type]) => type.aliases.includes(extension))?.[0] ?? 'application/octet-stream';
}
