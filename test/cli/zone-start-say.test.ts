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

  it('zone say explains what is missing when nothing listens', async () => {
    const said = await runZone(['say', 'hi', '--url', 'http://127.0.0.1:9/slack/events', '--secret', 'x']);
    expect(said.code).toBe(1);
    expect(said.output).toMatch(/is `npx zone start` running\?/);
  });
});
