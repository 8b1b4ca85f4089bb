import { createHash } from 'node:crypto';
import type { Guardrail } from '../../guardrail/guardrail';
import type { StepsShown } from '../../protocols/outcome';
import type { LiveTask } from '../../slack/slack-live';
import { DEFAULT_USER_MESSAGES, fill } from '../messages/user-messages';
import { guardedOutput } from '../../guardrail/guarded-output';
import type { ReplyMessage } from '../queues/replies-queue';

/**
 * The agent's steps as Slack shows them (docs/architecture.md §2.5, "Steps"), for live-steps.ts
 * (task cards in the live message) and slack-poster (the final cards, or the line they fold to):
 * each step a card with its latest status, its title and details through the output guardrail
 * first, and — where the answer is no stream — the steps folded to one line.
 */

/** The texts of the folded line (USER_MESSAGES_JSON may change them): `{title}` is the step's. */
export type StepLineTexts = { stepDone: string; stepFailed: string; stepWorking: string; stepHidden: string };

/** The line's texts given (USER_MESSAGES_JSON), else the defaults. */
export function stepLineTexts(given?: StepLineTexts): StepLineTexts {
  const { stepDone, stepFailed, stepWorking, stepHidden } = DEFAULT_USER_MESSAGES;
  return given ?? { stepDone, stepFailed, stepWorking, stepHidden };
}

/**
 * The steps a final answer ended with, ready for slack-poster: the cards through the guardrail,
 * and the line they fold to where the answer is no stream.
 */
export async function finalCards(guardrail: Guardrail | undefined, shown: StepsShown, given: StepLineTexts | undefined, call: { signal?: AbortSignal; remainingMs?: number }): Promise<{ cards: StepCards; line: string }> {
  const texts = stepLineTexts(given);
  const cards = await guardedCards(guardrail, cardsOf(shown), texts.stepHidden, call);
  return { cards, line: stepsLine(cards, texts) };
}

/** The steps to show: the cards (their latest states), the plan's title. */
export type StepCards = { tasks: LiveTask[]; planTitle?: string };

/** Slack's limits on a card: `title` and `details` are cut to them. */
const MAX_TITLE = 256;
const MAX_DETAILS = 256;
/** A card lists at most this many sources. */
const MAX_SOURCES = 5;

/**
 * The steps as the replies queue carries them to slack-poster: each title, details and source cut
 * to what Slack shows, so a reply stays far below SQS's 256 KiB whatever an agent sent.
 */
export function queuedSteps(shown: StepsShown): NonNullable<ReplyMessage['steps']> {
  const steps = shown.steps.map((step) => ({
    id: step.id,
    title: cut(step.title, MAX_TITLE),
    status: step.status,
    ...(step.details ? { details: cut(step.details, MAX_DETAILS) } : {}),
    ...(step.sources?.length ? { sources: step.sources.slice(0, MAX_SOURCES).map((source) => ({ url: source.url, ...(source.title ? { title: cut(source.title, MAX_TITLE) } : {}) })) } : {}),
  }));
  return { steps, ...(shown.planTitle ? { plan_title: cut(shown.planTitle, MAX_TITLE) } : {}) };
}

/** The steps a reply message carries, as the cards take them. */
export function stepsOfReply(queued: NonNullable<ReplyMessage['steps']>): StepsShown {
  return { steps: queued.steps, ...(queued.plan_title ? { planTitle: queued.plan_title } : {}) };
}

/** The cards of the steps as the agent gave them, within Slack's limits (no guardrail: see guardedCards). */
export function cardsOf(shown: StepsShown): StepCards {
  const tasks = shown.steps.map((step): LiveTask => {
    const sources = (step.sources ?? []).slice(0, MAX_SOURCES).map((source) => ({ url: source.url, text: cut(source.title ?? source.url, MAX_TITLE) }));
    return { id: step.id, title: cut(step.title, MAX_TITLE), status: step.status, ...(step.details ? { details: cut(step.details, MAX_DETAILS) } : {}), ...(sources.length ? { sources } : {}) };
  });
  return { tasks, ...(shown.planTitle ? { planTitle: cut(shown.planTitle, MAX_TITLE) } : {}) };
}

/**
 * The cards with their words through the output guardrail, as a final answer's are
 * (guardrail/guarded-output.ts): masked where it masks; a title it blocks shows `hidden` in its place,
 * details it blocks are left out. A check that fails throws (the caller shows no card).
 */
export async function guardedCards(guardrail: Guardrail | undefined, cards: StepCards, hidden: string, call: { signal?: AbortSignal; remainingMs?: number } = {}): Promise<StepCards> {
  if (!guardrail) return cards;
  const check = (text: string) => guardedOutput(guardrail, text, call);
  const tasks = await Promise.all(
    cards.tasks.map(async (task): Promise<LiveTask> => {
      const { details: rawDetails, ...rest } = task;
      const title = (await check(task.title)) ?? hidden;
      const details = rawDetails ? await check(rawDetails) : undefined;
      return { ...rest, title, ...(details ? { details } : {}) };
    }),
  );
  const planTitle = cards.planTitle ? await check(cards.planTitle) : undefined;
  return { tasks, ...(planTitle ? { planTitle } : {}) };
}

/** The key under which the record remembers the plan's title, beside the steps' ids. */
export const PLAN_KEY = '#plan';

/** What a card shows, in a few characters: the record keeps it per step, so a card unchanged is never sent again. */
export function cardPrint(task: LiveTask): string {
  return createHash('sha256').update(JSON.stringify([task.status, task.title, task.details ?? '', task.sources ?? []])).digest('base64url').slice(0, 12);
}

/** The cards (and plan title) that show something other than what `shown` says they last showed, and the prints after them. */
export function changedCards(cards: StepCards, shown: Readonly<Record<string, string>> = {}): { changed: StepCards; prints: Record<string, string> } {
  const prints: Record<string, string> = { ...shown };
  const tasks: LiveTask[] = [];
  for (const task of cards.tasks) {
    const print = cardPrint(task);
    if (prints[task.id] === print) continue;
    prints[task.id] = print;
    tasks.push(task);
  }
  const plan = cards.planTitle && prints[PLAN_KEY] !== cards.planTitle ? cards.planTitle : undefined;
  if (plan) prints[PLAN_KEY] = plan;
  return { changed: { tasks, ...(plan ? { planTitle: plan } : {}) }, prints };
}

/** The cards still open (pending, in progress), id → title: what a task that fails ends as errors. */
export function openCards(cards: StepCards): Record<string, string> {
  return Object.fromEntries(cards.tasks.filter((task) => task.status === 'pending' || task.status === 'in_progress').map((task) => [task.id, task.title]));
}

/** The open cards of a record, ended as errors (a task that failed or was stopped). */
export function failedCards(open: Readonly<Record<string, string>> = {}): LiveTask[] {
  return Object.entries(open).map(([id, title]) => ({ id, title, status: 'error' }));
}

/** Whether there is anything to send. */
export function anyCards(cards: StepCards): boolean {
  return cards.tasks.length > 0 || cards.planTitle !== undefined;
}

/** The steps folded to one line, for an answer that is not a stream: "✓ Searched the wiki · ✓ Drafted the answer". Empty without steps. */
export function stepsLine(cards: StepCards, texts: StepLineTexts): string {
  const line = cards.tasks
    .map((task) => fill(task.status === 'complete' ? texts.stepDone : task.status === 'error' ? texts.stepFailed : texts.stepWorking, { title: task.title }))
    .join(' · ');
  return cut(line, MAX_LINE);
}

/** The folded line is at most this long: it sits above the answer, in the answer's first message. */
const MAX_LINE = 1_000;

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
