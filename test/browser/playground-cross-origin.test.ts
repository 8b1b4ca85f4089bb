import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { CHROMIUM_ARGS, chromiumExecutable } from '../support/chromium';
import { closeServer, listenOnLoopback } from '../support/http';

/** What a page on another origin manages against the playground's API, as Chromium really sends it. */
type Attempt = { state: string; say: string; form: string };

describe('a page on another origin cannot drive the playground (Chromium, playwright-core)', () => {
  let stack: LocalStack;
  let browser: Browser;
  let other: Server;
  let otherBase: string;
  beforeAll(async () => {
    stack = await startLocalStack({
      env: { POWERTOOLS_LOG_LEVEL: 'SILENT', TRANSPORT: 'in-process' },
      verificationPort: 0,
      executionPort: 0,
      timeScale: 0.3,
      replyWriter: () => undefined,
    });
    other = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>elsewhere</title><p>another site'));
    otherBase = await listenOnLoopback(other);
    browser = await chromium.launch({ executablePath: (await chromiumExecutable()).path, args: CHROMIUM_ARGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (other) await closeServer(other);
  });

  it.each([
    ['cross-site (localhost vs 127.0.0.1)', (base: string) => base.replace('127.0.0.1', 'localhost')],
    ['same-site, another port', (base: string) => base],
  ])('%s: cannot read the traces nor say anything', async (_name, pageOrigin) => {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin(otherBase)}/`);
    const playground = stack.playgroundUrl.replace(/\/$/, '');
    const before = stack.traces.all().length;

    const attempt: Attempt = await page.evaluate(async (target) => {
      const outcome = (promise: Promise<unknown>) => promise.then((value) => String(value), (error: Error) => `blocked: ${error.name}`);
      const state = await outcome(fetch(`${target}/api/state`).then((response) => response.text()));
      // A no-cors "simple" POST is sent without a preflight: only the server can stop it.
      const say = await outcome(fetch(`${target}/api/say`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ text: 'said by another site' }) }).then((response) => response.type));
      // So is a form post, into a hidden frame.
      const form = await new Promise<string>((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = 'sink';
        frame.style.display = 'none';
        frame.onload = () => resolve('submitted');
        document.body.append(frame);
        const element = document.createElement('form');
        element.method = 'POST';
        element.action = `${target}/api/say`;
        element.enctype = 'text/plain';
        element.target = 'sink';
        const input = document.createElement('input');
        input.name = '{"text":"said by a form","x":"';
        input.value = '"}';
        element.append(input);
        document.body.append(element);
        element.submit();
        setTimeout(() => resolve('timed out'), 3000);
      });
      return { state, say, form };
    }, playground);

    expect(attempt.state).toMatch(/^blocked/);
    expect(attempt.say).toBe('opaque');
    // The server refused both posts: nothing was said, nothing reached the pipeline.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.traces.all().length).toBe(before);
    await page.close();
  });

  it('the playground’s own page still works (its same-origin requests pass)', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'hello from the own origin');
    await page.press('#text', 'Enter');
    await page.locator('.request').first().locator('.reply', { hasText: 'echo: hello from the own origin' }).waitFor({ timeout: 15_000 });
    await page.close();
  });
});
