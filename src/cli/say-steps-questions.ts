/**
 * Used by `zone say` (src/cli/say.ts): what the agent shows while at work, as the terminal prints
 * it — its steps (Slack's task cards, docs/architecture.md §2.5 "Steps") as each changes, and a
 * question it asks (§2.8 "Questions to a person") with its options and how to answer it, clicking
 * the chosen option the way the playground does (a signed block_actions through the real ingress).
 */

import { decodeQuestionRef } from '../verification/questions/question-blocks';

/** A reply as the local stack's trace shows it (src/local/console-slack-replies.ts, RecordedReply). */
export type TracedReply = {
  text: string;
  ts: string;
  streaming?: boolean;
  cards?: Array<{ id: string; title: string; status: string; details?: string }>;
  planTitle?: string;
  buttons?: Array<{ actionId: string; value: string; label: string }>;
};

/** How each status reads in the terminal. */
const STATUS_MARK: Record<string, string> = { pending: '○', in_progress: '◐', complete: '●', error: '✖' };

/**
 * The lines for the steps that changed since the last call (`seen`: step id → the state printed),
 * the plan's title first when it is new. Mutates `seen`.
 */
export function stepLines(replies: readonly TracedReply[], seen: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const reply of replies) {
    if (reply.planTitle && !seen.has(`plan:${reply.ts}`)) {
      seen.set(`plan:${reply.ts}`, reply.planTitle);
      lines.push(`plan: ${reply.planTitle}`);
    }
    for (const card of reply.cards ?? []) {
      const state = `${card.status}|${card.details ?? ''}`;
      if (seen.get(card.id) === state) continue;
      seen.set(card.id, state);
      lines.push(`${STATUS_MARK[card.status] ?? '?'} ${card.title} — ${card.status.replace('_', ' ')}${card.details ? ` (${card.details})` : ''}`);
    }
  }
  return lines;
}

/** The question waiting for an answer in these replies: the last one still carrying its option buttons. */
export function openQuestion(replies: readonly TracedReply[]): TracedReply | undefined {
  return [...replies].reverse().find((reply) => reply.buttons?.some(isOption));
}

/** The question and its options, as printed; with `threadTs`, how to answer it from this terminal too. */
export function questionText(question: TracedReply, threadTs?: string): string {
  const options = (question.buttons ?? []).filter(isOption);
  const freeText = (question.buttons ?? []).some((button) => !isOption(button));
  return [
    `\n❓ ${question.text}`,
    ...options.map((button) => `   • ${button.label}   (--answer ${answerWord(button.label)})`),
    ...(freeText ? ['   • or type an answer (in the playground: a form)'] : []),
    ...(threadTs ? [`\n(answer it: npx zone say --thread ${threadTs} --answer ${answerWord(options[0]?.label ?? 'approve')}  — or click it in the playground)`] : []),
  ].join('\n');
}

/** The option `answer` names (its label, any case; or its number from 1), or an error listing the options. */
export function pickOption(question: TracedReply, answer: string): { actionId: string; label: string } {
  const options = (question.buttons ?? []).filter(isOption);
  const wanted = answer.trim().toLowerCase();
  const chosen = options.find((button) => answerWord(button.label) === wanted || button.label.toLowerCase() === wanted) ?? (/^\d+$/.test(wanted) ? options[Number(wanted) - 1] : undefined);
  if (!chosen) throw new Error(`--answer ${JSON.stringify(answer)} is not one of the options: ${options.map((button) => answerWord(button.label)).join(', ')}`);
  return { actionId: chosen.actionId, label: chosen.label };
}

/** Clicks an option of the question message `messageTs` through the local stack (its playground API). */
export async function clickOption(url: string, messageTs: string, actionId: string): Promise<void> {
  const response = await fetch(new URL('/api/button/click', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(url).origin },
    body: JSON.stringify({ message_ts: messageTs, action_id: actionId }),
  });
  const answer = (await response.json().catch(() => ({}))) as { status?: number; error?: string };
  if (!response.ok || answer.status !== 200) throw new Error(`the click was not taken: ${answer.error ?? `HTTP ${answer.status ?? response.status}`}`);
}

/** A request of the local stack waiting on a question in the thread `threadTs`: its event id, and the question. */
export async function questionInThread(url: string, threadTs: string): Promise<{ eventId: string; question: TracedReply; hops: number } | undefined> {
  const response = await fetch(new URL('/api/state', url));
  if (!response.ok) throw new Error(`the local stack's state answered HTTP ${response.status}`);
  const state = (await response.json()) as { requests: Array<{ eventId?: string; thread_ts?: string; events: unknown[]; replies: TracedReply[] }> };
  for (const request of [...state.requests].reverse()) {
    if (request.thread_ts !== threadTs || !request.eventId) continue;
    const question = openQuestion(request.replies);
    if (question) return { eventId: request.eventId, question, hops: request.events.length };
  }
  return undefined;
}

/** An option button: the question's own answers, not its "Type an answer" (which opens a form). */
function isOption(button: { value: string }): boolean {
  const ref = decodeQuestionRef(button.value);
  return ref !== undefined && ref.choice !== 'text';
}

/** The word `--answer` takes for an option: its label in lower case, spaces as dashes. */
function answerWord(label: string): string {
  return label.trim().toLowerCase().replace(/\s+/g, '-');
}
