import { runZone } from '../support/spawn';

describe('npm run demo (zone demo)', () => {
  it('sends the three scenarios, prints their hops, and exits 0 when each got exactly one reply', async () => {
    const { code, output } = await runZone(['demo', '--transport', 'in-process'], {}, 60_000);
    expect(output).toMatch(/✔ quick answer/);
    expect(output).toMatch(/✔ long task \(accepted, polled\)[\s\S]*accepted\s+task_id=task-[\s\S]*poll\s+attempt=1/);
    expect(output).toMatch(/✔ failure in the execution zone[\s\S]*failed\s+code=-32000/);
    expect(output).toMatch(/All three got exactly one reply/);
    expect(code).toBe(0);
  });

  it('refuses an unknown --transport, naming the choices, before starting anything', async () => {
    const { code, output } = await runZone(['demo', '--transport', 'pigeon']);
    expect(code).toBe(1);
    expect(output).toMatch(/--transport must be one of agentcore, https, in-process/);
    expect(output).not.toMatch(/local stack:/);
  });
});
