import { chromium, type Browser } from 'playwright-core';
import { feedbackCommand } from '../../src/cli/feedback';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { DEFAULT_AGENT_PROMPTS } from '../../src/verification/surface/suggested-prompts';
import { CHROMIUM_ARGS, chromiumExecutable } from '../support/chromium';

describe('the playground page in a real browser (Chromium, playwright-core)', () => {
  let stack: LocalStack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startLocalStack({
      env: { POWERTOOLS_LOG_LEVEL: 'SILENT', SYNC_BUDGET_MS: '300', POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '1', STREAM_QUIET_S: '1' },
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

  it('shows a long quiet task held, let go after STREAM_QUIET_S, and polled before its reply', async () => {
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
    // The state chip says what is happening, not that the task was accepted.
    await request.locator('.state', { hasText: 'streaming the answer' }).waitFor({ timeout: 15_000 });
    const partial = await growing.innerText();
    expect(partial.startsWith('echo: one')).toBe(true);
    expect(partial.length).toBeLessThan(`echo: ${text}`.length);
    await request.locator('.reply:not(.streaming)', { hasText: `echo: ${text}` }).waitFor({ timeout: 15_000 });
    expect(await request.locator('table.trace').innerText()).toMatch(/answer so far shown \(\d+ characters\)/);
  });

  it('draws the agent\'s steps as task cards above the answer, each ending complete', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'plan it #steps=3');
    await page.press('#text', 'Enter');
    const request = page.locator('.request').first();
    await request.locator('.reply:not(.streaming)', { hasText: 'echo: plan it #steps=3' }).waitFor({ timeout: 15_000 });
    const cards = request.locator('.cards li.card');
    expect(await cards.allInnerTexts()).toEqual(expect.arrayContaining([1, 2, 3].map((n) => expect.stringContaining(`Step ${n} (complete)`))));
    expect(await request.locator('.cards li.card.complete', { hasText: 'Step' }).count()).toBe(3);
    expect(await request.locator('.cards .plan').innerText()).toBe('Echo plan');
  });

  it('asks a question with Approve / Reject, says it waits for an answer, and a click resumes the same task', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', 'deploy #ask=Ship it?');
    await page.press('#text', 'Enter');
    const request = page.locator('.request').first();
    const approve = request.locator('button[data-action-id]', { hasText: 'Approve' });
    await approve.waitFor({ timeout: 15_000 });
    expect(await request.locator('button[data-action-id]').allInnerTexts()).toEqual(['Approve', 'Reject']);
    // What a newcomer reads while the task is paused: not "executing", and the session suspended.
    expect(await request.locator('.state').innerText()).toBe('waiting for your answer');
    expect(await request.locator('.session').innerText()).toBe('agent session: suspended');
    expect(await request.locator('table.trace').innerText()).toMatch(/question asked · task task-[0-9a-f]+ paused until someone answers/);
    await approve.click();
    await request.locator('.reply', { hasText: 'answer: Approve' }).waitFor({ timeout: 15_000 });
    // The question's message now says who answered what, without its buttons.
    await request.locator('.reply', { hasText: 'Approve — answered by' }).waitFor({ timeout: 15_000 });
    expect(await request.locator('button[data-action-id]').count()).toBe(0);
    expect(await request.locator('table.trace').innerText()).toMatch(/answered Approve by ULOCALUSER · the same task resumes/);
    expect(await request.locator('.state').innerText()).toBe('done');
  });

  /** A new page that has said `text`: the request it shows for it. */
  async function ask(text: string) {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.fill('#text', text);
    await page.press('#text', 'Enter');
    return { page, request: page.locator('.request').first() };
  }

  it('shows the thread\'s agent session with a Stop button while it works; Stop ends the answer with the stopped note', async () => {
    const { page, request } = await ask('stop me one two three four five six seven eight nine ten eleven twelve thirteen #stream=200');
    await request.locator('.reply.streaming').waitFor({ timeout: 15_000 });
    expect(await request.locator('.session').innerText()).toBe('agent session: processing');
    // Stop: a signed agent_session_stopped through the real ingress; the task is cancelled.
    await request.locator('button.stop').click();
    // The note is Slack mrkdwn, _Stopped._: shown as Slack shows it, in italics, without its underscores.
    const stopped = request.locator('.reply:not(.streaming)', { has: page.locator('em', { hasText: 'Stopped.' }) });
    await stopped.waitFor({ timeout: 15_000 });
    const reply = await stopped.innerText();
    expect(reply).toMatch(/^echo: stop\b[^]*\n\nStopped\.$/);
    expect(await stopped.locator('em').innerText()).toBe('Stopped.');
    expect(reply).not.toContain('thirteen');
    await request.locator('.session', { hasText: 'agent session: active' }).waitFor({ timeout: 5_000 });
    expect(await request.locator('button.stop').count()).toBe(0);
    expect(await request.locator('.state').innerText()).toBe('stopped');
    expect(await request.locator('table.trace').innerText()).toMatch(/Stop pressed → cancel_task sent/);
    // A stopped answer is not rated.
    expect(await request.locator('[data-feedback]').count()).toBe(0);
  });

  it('puts 👍 / 👎 under an answer: a click is recorded (state, `zone feedback`) and thanked to the clicker alone', async () => {
    const { page, request } = await ask('rate this answer');
    await request.locator('.reply', { hasText: 'echo: rate this answer' }).waitFor({ timeout: 15_000 });
    // Named in words, for a screen reader and where no emoji font draws 👍 / 👎 (the emoji is hidden from it).
    expect(await page.getByRole('button', { name: 'Good answer' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Bad answer' }).count()).toBe(1);
    expect(await request.locator('[data-feedback="positive"]').innerText()).toMatch(/Good answer$/);
    expect(await page.getByRole('button', { name: "open the agent's DM" }).count()).toBe(1);
    expect(await page.getByLabel('attach files').count()).toBe(1);
    // 👍: a signed block_actions carrying the button's value, through the real ingress.
    await request.locator('[data-feedback="positive"]').click();
    await request.locator('.ephemeral', { hasText: 'only you see this: Thanks for the feedback!' }).waitFor({ timeout: 10_000 });
    await request.locator('[data-feedback="positive"].given').waitFor({ timeout: 5_000 });
    expect(await request.locator('table.trace').innerText()).toMatch(/feedback recorded 👍/);

    const state = (await (await page.request.get(new URL('/api/state', stack.playgroundUrl).href)).json()) as { requests: Array<{ requestId: string; replies: Array<{ text: string; feedback?: { requestId: string; given?: string } }> }>; feedback: Array<{ request_id: string; value: string; user: string }> };
    const answer = state.requests.flatMap((r) => r.replies).find((reply) => reply.text === 'echo: rate this answer')!;
    expect(answer.feedback).toEqual(expect.objectContaining({ given: 'positive' }));
    expect(state.feedback).toContainEqual(expect.objectContaining({ request_id: answer.feedback!.requestId, value: 'positive', user: 'ULOCALUSER' }));

    const output: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(String(chunk));
      return true;
    });
    try {
      expect(await feedbackCommand.run(['--url', stack.playgroundUrl])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(output.join('')).toMatch(new RegExp(`👍 positive  default\\s+ULOCALUSER  ${answer.feedback!.requestId}  —`));
  });

  it('👎 opens the "what went wrong" form under the answer; what is sent joins the feedback', async () => {
    const { request } = await ask('a wrong answer');
    await request.locator('.reply', { hasText: 'echo: a wrong answer' }).waitFor({ timeout: 15_000 });
    await request.locator('[data-feedback="negative"]').click();
    const form = request.locator('.feedback-form');
    await form.waitFor({ timeout: 10_000 });
    expect(await form.locator('strong').innerText()).toBe('What went wrong?');
    await form.locator('textarea').fill('it only repeated me');
    await form.locator('button[type=submit]').click();
    await request.locator('.ephemeral', { hasText: 'Thanks, that helps us improve the answers.' }).waitFor({ timeout: 10_000 });
    expect(await request.locator('.feedback-form').count()).toBe(0);
    const recorded = await stack.surface.feedback();
    expect(recorded).toContainEqual(expect.objectContaining({ value: 'negative', comment: 'it only repeated me' }));
  });

  it('opens the agent\'s DM: the suggested prompts come as chips that fill the text box', async () => {
    const page = await browser.newPage();
    await page.goto(stack.playgroundUrl);
    await page.click('#open-dm');
    const chip = page.locator('#prompts .chip', { hasText: DEFAULT_AGENT_PROMPTS.home[0]!.title });
    await chip.waitFor({ timeout: 10_000 });
    expect(await page.locator('#prompts .chip').count()).toBe(DEFAULT_AGENT_PROMPTS.home.length);
    expect(await page.locator('#prompts').innerText()).toContain(DEFAULT_AGENT_PROMPTS.title!);
    await chip.click();
    expect(await page.inputValue('#text')).toBe(DEFAULT_AGENT_PROMPTS.home[0]!.message);
  });
});
