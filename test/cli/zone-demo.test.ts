import { runZone } from '../support/spawn';

describe('npm run demo (zone demo)', () => {
  it('sends the four scenarios, prints their hops, and exits 0 when each got exactly one reply', async () => {
    const { code, output } = await runZone(['demo', '--transport', 'in-process'], {}, 60_000);
    expect(output).toMatch(/✔ quick answer/);
    // Held: text appended as it comes, no poll between the stream and the answer.
    expect(output).toMatch(/✔ streamed answer \(held, text as it comes\)[^✔✘]*accepted\s+task_id=task-\S+ hold_ms=\d+[^✔✘]*streamed\s+chars=\d+[^✔✘]*reply-posted/);
    expect(output).not.toMatch(/✔ streamed answer[^✔✘]*poll\s+attempt/);
    // Quiet: held, let go after a second without text, then polled.
    expect(output).toMatch(/✔ quiet long task \(held, let go, polled\)[^✔✘]*accepted\s+task_id=task-\S+ hold_ms=\d+[^✔✘]*poll\s+attempt=1/);
    expect(output).toMatch(/✔ failure in the execution zone[\s\S]*failed\s+code=-32000/);
    expect(output).toMatch(/All 4 got exactly one reply/);
    expect(code).toBe(0);
  });

  it('refuses an unknown --transport, naming the choices, before starting anything', async () => {
    const { code, output } = await runZone(['demo', '--transport', 'pigeon']);
    expect(code).toBe(1);
    expect(output).toMatch(/--transport must be one of agentcore, https, in-process/);
    expect(output).not.toMatch(/local stack:/);
  });
});
