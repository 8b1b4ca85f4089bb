import { runZone, spawnZone } from '../support/spawn';
import { eventually } from '../support/http';

type State = { requests: Array<{ replies: Array<{ ts: string; text: string; feedback?: { requestId: string } }> }>; surface: Array<{ type: string; triggerId?: string }> };

describe('zone feedback (real processes): what people said about the local stack\'s answers', () => {
  it('says there is none yet, then lists each answer\'s last rating and what went wrong, newest first', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, playground] = await stack.waitFor(/playground\s+(http:\/\/\S+)/);
      // Found as `zone say` finds the stack: VERIFICATION_PORT.
      const local = { VERIFICATION_PORT: new URL(playground!).port };

      const none = await runZone(['feedback'], local);
      expect(none.code).toBe(0);
      expect(none.output).toBe('no feedback yet\n');

      for (const text of ['first answer', 'second answer']) expect((await runZone(['say', text, '--wait', '10'], local)).code).toBe(0);
      const answers = await eventually(async () => {
        const state = (await (await fetch(new URL('/api/state', playground))).json()) as State;
        const found = ['first answer', 'second answer'].map((text) => state.requests.flatMap((request) => request.replies).find((reply) => reply.text === `echo: ${text}` && reply.feedback));
        return found.every(Boolean) ? found.map((reply) => reply!) : undefined;
      }, 10_000);
      const click = async (ts: string, value: string) => (await fetch(new URL('/api/feedback/click', playground), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_ts: ts, value }) })).json() as Promise<{ status: number; trigger_id: string }>;

      // 👍 on the first answer; 👎 on the second, then the "what went wrong" form it opens.
      expect((await click(answers[0]!.ts, 'positive')).status).toBe(200);
      await stack.waitFor(/only ULOCALUSER sees: Thanks for the feedback!/);
      const negative = await click(answers[1]!.ts, 'negative');
      await eventually(async () => ((await (await fetch(new URL('/api/state', playground))).json()) as State).surface.some((event) => event.type === 'view' && event.triggerId === negative.trigger_id), 10_000);
      const form = await fetch(new URL('/api/feedback/form', playground), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ trigger_id: negative.trigger_id, text: 'it only\nechoed me' }) });
      expect(form.status).toBe(200);
      await stack.waitFor(/only ULOCALUSER sees: Thanks, that helps us improve the answers\./);

      const listed = await runZone(['feedback'], local);
      expect(listed.code).toBe(0);
      const lines = listed.output.trimEnd().split('\n');
      expect(lines[0]).toBe('2 feedback records, newest first:');
      expect(lines[2]).toMatch(/^when \(UTC\)\s+value\s+agent\s+user\s+answer \(request id\)\s+comment$/);
      const when = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';
      expect(lines[3]).toMatch(new RegExp(`^${when}  👎 negative  default\\s+ULOCALUSER  ${answers[1]!.feedback!.requestId}  it only echoed me$`));
      expect(lines[4]).toMatch(new RegExp(`^${when}  👍 positive  default\\s+ULOCALUSER  ${answers[0]!.feedback!.requestId}  —$`));

      const json = await runZone(['feedback', '--json', '--verification-port', local.VERIFICATION_PORT]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.output)).toEqual([
        expect.objectContaining({ request_id: answers[1]!.feedback!.requestId, value: 'negative', comment: 'it only\nechoed me', user: 'ULOCALUSER', channel: 'CLOCAL' }),
        expect.objectContaining({ request_id: answers[0]!.feedback!.requestId, value: 'positive', user: 'ULOCALUSER', channel: 'CLOCAL' }),
      ]);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('explains what is missing when no local stack listens', async () => {
    const result = await runZone(['feedback', '--verification-port', '9']);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/could not read the feedback from http:\/\/127\.0\.0\.1:9\/api\/feedback \(is `npx zone start` running\?\)/);
  });
});
