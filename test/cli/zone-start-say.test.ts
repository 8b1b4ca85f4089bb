import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runZone, spawnZone } from '../support/spawn';

describe('zone start + zone say (real processes, as a newcomer runs them)', () => {
  it('starts both zones, prints where they run, and answers `zone say` with the reply', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      expect(stack.output()).toMatch(/playground\s+http:\/\/127\.0\.0\.1:\d+\//);
      expect(stack.output()).toMatch(/execution runtime\s+POST http:\/\/127\.0\.0\.1:\d+\/invocations/);
      expect(stack.output()).toMatch(/signing secret\s+[0-9a-f]{32}\s+\(generated/);
      const said = await runZone(['say', 'hello from the cli', '--url', ingress!, '--wait', '10']);
      expect(said.code).toBe(0);
      expect(said.output).toMatch(/HTTP 200/);
      expect(said.output).toMatch(/reply-posted/);
      expect(said.output).toMatch(/echo: hello from the cli/);
      await stack.waitFor(/reply in CLOCAL/);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say continues a thread (--thread, --follow-up) and shares files (--file, repeatable)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zone-say-'));
    writeFileSync(join(dir, 'notes.md'), '# notes\nremember the milk\n');
    writeFileSync(join(dir, 'fake.png'), '%PDF-1.4 not an image');
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const first = await runZone(['say', 'where is the milk?', '--url', ingress!, '--wait', '10']);
      const thread = /continue this thread: npx zone say --thread (\S+)/.exec(first.output)?.[1];
      expect(thread).toMatch(/^\d+\.\d{6}$/);

      const second = await runZone(['say', 'look at these #context', '--url', ingress!, '--thread', thread!, '--follow-up', '--file', join(dir, 'notes.md'), '--file', join(dir, 'fake.png'), '--wait', '10']);
      expect(second.code).toBe(0);
      expect(second.output).toMatch(/echo: look at these #context\ncontext: 2 turns \(user, assistant\)\nattachment: notes\.md text\/markdown 26 bytes sha256=[0-9a-f]{64}/);
      expect(second.output).toContain("I couldn't read fake.png (its content is not a PNG file).");
      expect(second.output).toContain(`thread ${thread}`);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say prints the files the answer shared, each with its type, size and where the playground serves it', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const said = await runZone(['say', 'a report and a chart #file=report.csv #file=chart.png', '--url', ingress!, '--wait', '15']);
      expect(said.code).toBe(0);
      expect(said.output).toMatch(/files-posted/);
      expect(said.output).toMatch(/📎 report\.csv \(text\/csv, \d+ bytes\)  http:\/\/127\.0\.0\.1:\d+\/api\/files\/F[0-9A-F]+\/report\.csv/);
      const png = /📎 chart\.png \(image\/png, \d+ bytes\)  (\S+)/.exec(said.output)?.[1];
      // The playground serves it as an image, for its preview.
      const served = await fetch(png!);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await served.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
      await stack.waitFor(/📎 file in CLOCAL/);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say prints a streamed answer as it arrives, and the whole answer once', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const text = 'alpha beta gamma delta epsilon zeta eta theta #stream=150';
      const said = await runZone(['say', text, '--url', ingress!, '--wait', '15']);
      expect(said.code).toBe(0);
      expect(said.output).toMatch(/sign-of-life[\s\S]*streaming:/);
      // The answer appears once, whole, even though it was printed in pieces.
      expect(said.output.split(`echo: ${text}`)).toHaveLength(2);
      // Seen while it was still growing (the label comes with the first piece), printed as one text.
      expect(said.output).toMatch(/streaming:\s*\necho: alpha beta gamma/);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say --stop --thread <ts> stops the answer being written there, and says when nothing was running', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https' });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      // Found as `zone say` finds the stack: VERIFICATION_PORT (and the secret `zone start` left for that port).
      const local = { VERIFICATION_PORT: new URL(ingress!).port };
      const words = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen';
      const asking = spawnZone(['say', `${words} #stream=1500`, '--wait', '40'], local);
      const [, thread] = await asking.waitFor(/thread (\d+\.\d{6})\)/);
      // The Stop button shows while the session is processing; the answer is growing by then.
      await stack.waitFor(new RegExp(`agent session "[^"]*" processing \\(thread ${thread!.replace('.', '\\.')}; Stop: npx zone say --stop --thread ${thread!.replace('.', '\\.')}\\)`));
      await asking.waitFor(/streaming:\s*\necho: one/);

      const stopped = await runZone(['say', '--stop', '--thread', thread!], local);
      expect(stopped.code).toBe(0);
      expect(stopped.output).toMatch(new RegExp(`HTTP 200 .*agent_session_stopped, event Ev\\w+, thread ${thread!.replace('.', '\\.')}`));
      expect(stopped.output).toMatch(/stopped request [0-9a-f-]{36} \(cancel_task sent to the execution zone\)/);
      // Its one final message: the words shown so far, then the note; never the whole answer.
      expect(stopped.output).toMatch(/reply-posted\n\necho:[^\n]*\n\n_Stopped\._\n/);
      expect(stopped.output).not.toContain('fourteen');
      // The `zone say` that asked sees the same final message, and ends.
      await asking.waitFor(/_Stopped\._\n\n\(continue this thread/);
      expect(await asking.ended()).toBe(0);

      const again = await runZone(['say', '--stop', '--thread', thread!], local);
      expect(again.code).toBe(0);
      expect(again.output).toContain(`nothing was running in thread ${thread}: nothing to stop`);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say --open opens the agent\'s DM and prints the suggested prompts it offers', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'https', AGENT_PROMPTS_JSON: JSON.stringify({ title: 'Ask me', home: [{ title: 'Costs', message: 'What did we spend last week?' }] }) });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const opened = await runZone(['say', '--open'], { VERIFICATION_PORT: new URL(ingress!).port });
      expect(opened.code).toBe(0);
      expect(opened.output).toMatch(/HTTP 200 .*app_home_opened/);
      expect(opened.output).toContain(`the agent's DM offers (Ask me):\n  • Costs: "What did we spend last week?"`);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });

  it('zone say --stop needs a thread, and sends no text', async () => {
    const noThread = await runZone(['say', '--stop', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(noThread.code).toBe(1);
    expect(noThread.output).toMatch(/--stop needs --thread <ts>/);
    const withText = await runZone(['say', 'hi', '--stop', '--thread', '1.000001', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(withText.code).toBe(1);
    expect(withText.output).toMatch(/--stop sends no message/);
  });

  it('zone say refuses --follow-up without a thread', async () => {
    const said = await runZone(['say', 'hi', '--follow-up', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(said.code).not.toBe(0);
    expect(said.output).toMatch(/--follow-up needs --thread/);
  });

  it('zone say refuses --answer without a message or a thread, and with --stop', async () => {
    const alone = await runZone(['say', '--answer', 'approve', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(alone.code).not.toBe(0);
    expect(alone.output).toMatch(/--answer without a message needs --thread <ts>/);
    const withStop = await runZone(['say', '--stop', '--thread', '1.000001', '--answer', 'approve', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(withStop.code).not.toBe(0);
    expect(withStop.output).toMatch(/--stop answers no question: leave out --answer/);
  });

  it('zone say explains what is missing when nothing listens', async () => {
    const said = await runZone(['say', 'hi', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(said.code).toBe(1);
    expect(said.output).toMatch(/is `npx zone start` running\?/);
  });
});

describe.each(['in-process', 'agentcore'])('zone say shows the agent at work over TRANSPORT=%s (real processes)', (transport) => {
  it('prints three steps ending complete before the answer, and a question answered with --answer resumes the same task', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: transport });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const planned = await runZone(['say', 'plan #steps=3', '--url', ingress!, '--wait', '15']);
      expect(planned.output).toMatch(/● Step 1 — complete[\s\S]*● Step 2 — complete[\s\S]*● Step 3 — complete[\s\S]*^echo: plan #steps=3$/m);
      expect(planned.code).toBe(0);

      const asked = await runZone(['say', 'deploy #ask=Ship it?', '--answer', 'reject', '--url', ingress!, '--wait', '15']);
      expect(asked.output).toMatch(/❓ Ship it\?[\s\S]*clicked Reject[\s\S]*\banswered\b/);
      expect(asked.output).toMatch(/^answer: Reject \(by slack:TLOCAL:ULOCALUSER\)$/m);
      // One execute_task: the click resumed the task the question paused.
      expect(asked.output.match(/execute-sent/g)).toHaveLength(1);
      expect(asked.code).toBe(0);

      // An option the question does not have: a clear error naming the ones it has.
      const wrong = await runZone(['say', 'deploy #ask=Ship it?', '--answer', 'maybe', '--url', ingress!, '--wait', '15']);
      expect(wrong.output).toContain('--answer "maybe" is not one of the options: approve, reject');
      expect(wrong.code).not.toBe(0);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  });
});
