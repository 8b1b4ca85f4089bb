import { post } from '../support/http';
import { runZone, spawnZone } from '../support/spawn';
import { echoSuccess } from '../support/echo-usage';

describe('the zone command', () => {
  it('prints help listing its commands', async () => {
    const { code, output } = await runZone(['--help']);
    expect(code).toBe(0);
    expect(output).toMatch(/usage: zone <command>/);
    expect(output).toMatch(/serve\s+run the execution runtime/);
  });

  it('refuses an unknown command with exit code 2', async () => {
    const { code, output } = await runZone(['frobnicate']);
    expect(code).toBe(2);
    expect(output).toMatch(/unknown command "frobnicate"/);
  });

  it('zone serve answers the README curl example and stops cleanly on SIGTERM', async () => {
    const server = spawnZone(['serve', '--port', '0'], { POWERTOOLS_LOG_LEVEL: 'SILENT' });
    try {
      const [, address] = await server.waitFor(/listening on http:\/\/(\S+)/);
      const response = await post(
        `http://${address}/invocations`,
        '{"jsonrpc":"2.0","id":"1","method":"execute_task","params":{"text":"hello"}}',
      );
      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ jsonrpc: '2.0', result: echoSuccess('hello'), id: '1' });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
