import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { appMentionEnvelope, postSignedEvent } from '../local/slack-event-builder';
import type { Command } from './command';
import { localSecretFile } from './start';

export const sayCommand: Command = {
  name: 'say',
  summary: 'sign a Slack app_mention event and post it to the local ingress, then show the reply',
  usage: `zone say "<text>" [--url http://127.0.0.1:3000/slack/events] [--thread <ts>] [--wait 30]

Signs the event with SLACK_SIGNING_SECRET (or the secret \`zone start\` generated) exactly as
Slack would, posts it, and waits up to --wait seconds for the reply in the local playground's
record (replies printed by \`zone start\` when no SLACK_BOT_TOKEN is set).`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { url: { type: 'string' }, thread: { type: 'string' }, wait: { type: 'string' }, secret: { type: 'string' } },
    });
    const text = positionals.join(' ').trim();
    if (!text) throw new Error('say what? e.g. zone say "hello"');
    const url = values.url ?? `http://127.0.0.1:${process.env.VERIFICATION_PORT ?? 3000}/slack/events`;
    const secretFile = localSecretFile(new URL(url).port || '80');
    const secret = values.secret ?? process.env.SLACK_SIGNING_SECRET ?? (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : undefined);
    if (!secret) throw new Error('no signing secret: set SLACK_SIGNING_SECRET to the one `zone start` uses');

    const { body, eventId } = appMentionEnvelope({ text, threadTs: values.thread });
    const started = Date.now();
    let ack: { status: number; text: string };
    try {
      ack = await postSignedEvent(url, body, secret);
    } catch (error) {
      throw new Error(`could not reach ${url} (is \`npx zone start\` running?): ${(error as Error).message}`);
    }
    process.stdout.write(`→ ${url}  HTTP ${ack.status} in ${Date.now() - started} ms  (event ${eventId})\n`);
    if (ack.status !== 200) return 1;

    const waitMs = Number(values.wait ?? 30) * 1000;
    const stateUrl = new URL(`/api/events/${encodeURIComponent(eventId)}`, url);
    let printed = 0;
    while (Date.now() - started < waitMs) {
      const response = await fetch(stateUrl).catch(() => undefined);
      if (response?.ok) {
        const trace = (await response.json()) as { events: Array<{ hop: string; at: number; detail?: Record<string, unknown> }>; replies: Array<{ text: string }> };
        for (const event of trace.events.slice(printed)) process.stdout.write(`  +${String(event.at - started).padStart(6)} ms  ${event.hop}\n`);
        printed = trace.events.length;
        if (trace.events.some((event) => event.hop === 'reply-posted' || event.hop === 'refused')) {
          for (const reply of trace.replies) process.stdout.write(`\n${reply.text}\n`);
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
