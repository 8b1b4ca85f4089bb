import { chromium, type Browser } from 'playwright-core';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { CHROMIUM_ARGS, chromiumExecutable } from '../support/chromium';

describe('the playground page in a real browser (Chromium, playwright-core)', () => {
  let stack: LocalStack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startLocalStack({
      env: { POWERTOOLS_LOG_LEVEL: 'SILENT', SYNC_BUDGET_MS: '300', POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '1' },
      verificationPort: 0,
      executionPort: 0,
      timeScale: 0.3,
      replyWriter: () => undefined,
    });
    browser = await chromium.launch({ executablePath: (await chromiumExecutable()).path, args: CHROMIUM_ARGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('sends a typed message through the real ingress and shows the reply and its trace', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'hello from the browser');
    await page.press('#text', 'Enter');
    const request = page.locator('.request').first();
    await request.locator('.reply', { hasText: 'echo: hello from the browser' }).waitFor({ timeout: 15_000 });
    const trace = await request.locator('table.trace').innerText();
    expect(trace).toMatch(/Slack event verified/);
    expect(trace).toMatch(/task queued/);
    expect(trace).toMatch(/execute_task sent · transport https · protocol execute-task · request id [0-9a-f-]{36}/);
    expect(trace).toMatch(/reply posted to Slack/);
    expect(await request.locator('.state').innerText()).toBe('done');
  });

  it('shows a long task move through accepted and polls before its reply', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'slow one #sleep=2500');
    await page.click('button[type=submit]');
    const request = page.locator('.request').first();
    await request.locator('.state.working').waitFor({ timeout: 10_000 });
    await request.locator('.reply', { hasText: 'echo: slow one #sleep=2500' }).waitFor({ timeout: 20_000 });
    const trace = await request.locator('table.trace').innerText();
    expect(trace).toMatch(/accepted · task task-[0-9a-f]+/);
    expect(trace).toMatch(/poll #1 → pending/);
    expect(trace).toMatch(/poll #\d+ → success/);
  });

  it('continues a thread (the agent gets its earlier turns) and attaches a file', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'first turn');
    await page.press('#text', 'Enter');
    const first = page.locator('.request').first();
    await first.locator('.reply', { hasText: 'echo: first turn' }).waitFor({ timeout: 15_000 });

    await first.locator('[data-thread]').click();
    expect(await page.locator('#thread-bar').isVisible()).toBe(true);
    await page.check('#follow-up');
    await page.setInputFiles('#files', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('remember the milk\n') });
    await page.fill('#text', 'second turn #context');
    await page.press('#text', 'Enter');
    const second = page.locator('.request').first();
    await second.locator('.reply', { hasText: 'context: 2 turns (user, assistant)' }).waitFor({ timeout: 15_000 });
    const reply = await second.locator('.reply').innerText();
    expect(reply).toContain('attachment: notes.txt text/plain 18 bytes');
    expect(await second.locator('.files').innerText()).toContain('notes.txt');
    expect(await second.locator('table.trace').innerText()).toMatch(/2 earlier messages · 1 files/);
  });

  it('shows the answer growing while it is produced, then the whole answer', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    const text = 'one two three four five six seven eight nine ten eleven twelve #stream=120';
    await page.fill('#text', text);
    await page.press('#text', 'Enter');
    const request = page.locator('.request').first();
    // While it streams: a part of the answer, marked as streaming, and the state says so.
    const growing = request.locator('.reply.streaming');
    await growing.waitFor({ timeout: 15_000 });
    const partial = await growing.innerText();
    expect(partial.startsWith('echo: one')).toBe(true);
    expect(partial.length).toBeLessThan(`echo: ${text}`.length);
    await request.locator('.reply:not(.streaming)', { hasText: `echo: ${text}` }).waitFor({ timeout: 15_000 });
    expect(await request.locator('table.trace').innerText()).toMatch(/answer so far shown \(\d+ characters\)/);
  });
});
