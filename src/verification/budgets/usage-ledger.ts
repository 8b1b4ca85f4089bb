import type { Clock } from '../../clock';
import { DEFAULT_MAX_TASK_TOKENS, type Usage } from '../../contract';
import type { Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { TaskMessage } from '../queues/tasks-queue';
import type { Settled, SettledTask } from '../settle/settled';
import type { ListableRecords, Records } from '../stores/records';
import { tokensOf, utcDay, type UsageScope, type UsageStore } from '../stores/usage-store';
import { fill, type UserMessageKey, type UserMessages } from '../messages/user-messages';
import { DEFAULT_POLL_SCHEDULE, reservationLeaseSeconds } from '../poll-schedule';
import { countOnce } from './count-once';

/**
 * What the verification zone keeps of each task's cost (docs/architecture.md §2.7): the day's
 * usage counters per team, channel, user and agent, one audit record per task, and the daily
 * token budgets, reserved before a task reaches its agent and settled when it ends.
 */

/** One task as the audit keeps it: who, where, which agent, when, what it cost, how it ended. No text unless the operator opts in. */
export type AuditRecord = {
  request_id: string;
  team_id: string;
  channel: string;
  thread_ts?: string;
  user?: string;
  agent?: string;
  /** Epoch ms slack-events accepted the message. */
  received_at: number;
  /** Epoch ms the task ended (its reply queued) or was refused. */
  ended_at?: number;
  /** From accepted to ended. */
  latency_ms?: number;
  outcome: 'running' | Settled['ended'] | 'refused-budget';
  usage?: Usage;
  tokens?: number;
  /** The budget that refused it. */
  budget?: { scope: BudgetScope; limit: number; used: number };
  /** The last rating given to its answer (feedback-records.ts keeps the click and the comment). */
  feedback?: 'positive' | 'negative';
  /** The user's message: only with AUDIT_MESSAGE_TEXT=true. */
  text?: string;
};

export type BudgetScope = Exclude<UsageScope, 'agent'>;
export type Budgets = Partial<Record<BudgetScope, number>>;

/** The admission of one task: sent on, refused by a budget (the user is told), or to be asked again shortly. */
export type Admission = { admitted: true } | { admitted: false; scope: BudgetScope; limit: number; used: number; notice: string } | { admitted: 'later' };

export type UsageLedgerOptions = {
  usage: UsageStore;
  records: Records;
  budgets: Budgets;
  usageTtlSeconds: number;
  auditTtlSeconds: number;
  /** AUDIT_MESSAGE_TEXT: the audit record keeps the user's message. */
  auditText: boolean;
  /**
   * With GUARDRAIL: the user's message as the input guardrail passes it to the agent — masked;
   * undefined when blocked or when it could not be checked (then no text is kept). The audit
   * record never keeps what the agent may not have.
   */
  guardText?: (text: string) => Promise<string | undefined>;
  /**
   * MAX_TASK_TOKENS: what each task reserves on a budget — no task is charged more
   * (src/verification/settle/task-charge.ts), so a burst overshoots a limit by at most this.
   */
  maxTaskTokens?: number;
  /**
   * How long a reservation holds (poll-schedule.ts `reservationLeaseSeconds`: the poll deadline plus
   * one function's run): a task that died without settling stops counting against a budget then.
   */
  reservationLeaseSeconds?: number;
  messages: UserMessages;
  clock: Clock;
  log: Log;
  metrics?: PipelineMetrics;
};

const AUDIT = 'audit#';
/** A task's reservations, so whichever function settles it gives them back, and a redelivered task reserves once. */
const RESERVED = 'budget#';
/** Set once a user was told of a budget's refusal in a thread that day: later refusals there are silent. */
const REFUSAL_NOTICE = 'budget-notice#';
/** Reservations outlive the longest a task can run (poll deadline, retries) by far. */
const RESERVATION_TTL_SECONDS = 2 * 24 * 60 * 60;

type Reserved = { request_id: string; day: string; reserved: Array<{ scope: BudgetScope; id: string; estimate: number }> };

/** The default lease of a reservation: the default poll schedule's (30 min deadline + 15 min). */
const DEFAULT_LEASE_SECONDS = reservationLeaseSeconds(DEFAULT_POLL_SCHEDULE);

/** The counters a task counts on: its team, channel, user and agent (users and channels are per team). */
function countersOf(task: { team_id: string; channel: string; user_id?: string }, agent: string | undefined): Array<{ scope: UsageScope; id: string }> {
  return [
    { scope: 'team', id: task.team_id },
    { scope: 'channel', id: `${task.team_id}/${task.channel}` },
    ...(task.user_id ? [{ scope: 'user' as const, id: `${task.team_id}/${task.user_id}` }] : []),
    { scope: 'agent', id: agent ?? 'default' },
  ];
}

/** The time until the next midnight UTC, as a person reads it ("3 h 12 min"). */
export function untilMidnightUtc(now: number): string {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  const minutes = Math.max(1, Math.ceil((next.getTime() - now) / 60_000));
  return minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
}

/** Changes a task's audit record: `change` gets it as it is and returns what to keep (undefined: leave it). */
async function auditChange(options: Pick<UsageLedgerOptions, 'records' | 'auditTtlSeconds'>, requestId: string, change: (current: AuditRecord | undefined) => AuditRecord | undefined): Promise<void> {
  const next = change(await options.records.get<AuditRecord>(AUDIT + requestId));
  if (next) await options.records.put(AUDIT + requestId, next, options.auditTtlSeconds);
}

/** The user's message as the audit record keeps it (AUDIT_MESSAGE_TEXT): through the input guardrail when there is one. */
async function auditTextOf(options: Pick<UsageLedgerOptions, 'guardText' | 'log'>, text: string): Promise<string | undefined> {
  if (!options.guardText) return text;
  try {
    return await options.guardText(text);
  } catch (error) {
    options.log.warn('the input guardrail could not check the text for the audit record; it keeps none', { error_name: (error as Error).name });
    return undefined;
  }
}

/** A task's audit record as it starts: where it was asked, by whom, for which agent; running. */
function base(task: SettledTask | TaskMessage, agent: string | undefined): AuditRecord {
  return {
    request_id: task.request_id,
    team_id: task.team_id,
    channel: task.channel,
    ...(task.thread_ts ? { thread_ts: task.thread_ts } : {}),
    ...(task.user_id ? { user: task.user_id } : {}),
    ...(agent ? { agent } : {}),
    received_at: task.received_at,
    outcome: 'running',
  };
}

export function createUsageLedger(options: UsageLedgerOptions) {
  const { usage, records, clock } = options;
  const limited = (['user', 'channel', 'team'] as const).filter((scope) => options.budgets[scope] !== undefined);
  const maxTaskTokens = options.maxTaskTokens ?? DEFAULT_MAX_TASK_TOKENS;
  const audit = (requestId: string, change: (current: AuditRecord | undefined) => AuditRecord | undefined) => auditChange(options, requestId, change);
  const leaseMs = (options.reservationLeaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
  const giveBack = (reserved: Reserved['reserved'], day: string, requestId: string) => Promise.all(reserved.map(({ scope, id }) => usage.release({ day, scope, id }, requestId, options.usageTtlSeconds)));
  const counting = { usage, records, usageTtlSeconds: options.usageTtlSeconds, recordTtlSeconds: RESERVATION_TTL_SECONDS };

  return {
    /** True when a budget is set: the invoker asks `admit` before each task. */
    budgeted: limited.length > 0,

    /**
     * Reserves the task's tokens on each budget it falls under (user, channel, team); a task
     * redelivered after it was admitted is admitted again without a second reservation. Refused:
     * what was reserved on the other budgets is given back, the refusal counted and audited.
     * `lastChance` (the message's last receive): a task still waiting on another near the limit is
     * refused with `budgetBusy` rather than left to the dead-letter queue.
     */
    async admit(task: TaskMessage, agent: string, lastChance = false): Promise<Admission> {
      if (options.auditText) {
        const text = await auditTextOf(options, task.text);
        await audit(task.request_id, (current) => current ?? { ...base(task, agent), ...(text !== undefined ? { text } : {}) });
      }
      if (limited.length === 0) return { admitted: true };
      if (await records.get<Reserved>(RESERVED + task.request_id)) return { admitted: true };
      const day = utcDay(task.received_at);
      const counters = countersOf(task, agent);
      const reserved: Reserved['reserved'] = [];
      for (const scope of limited) {
        const id = counters.find((counter) => counter.scope === scope)?.id;
        if (id === undefined) continue;
        const limit = options.budgets[scope]!;
        const answer = await usage.reserve({ day, scope, id }, limit, options.usageTtlSeconds, { request_id: task.request_id, estimate: maxTaskTokens, leaseUntil: clock.now() + leaseMs });
        if (answer.admitted) {
          reserved.push({ scope, id, estimate: answer.estimate });
          continue;
        }
        if (reserved.length) await giveBack(reserved, day, task.request_id);
        if (!answer.over && !lastChance) return { admitted: 'later' };
        await countOnce(counting, 'refusal', task.request_id, day, counters.map((counter) => ({ ...counter, delta: { refused: 1 } })));
        const now = clock.now();
        await audit(task.request_id, (current) => ({ ...(current ?? base(task, agent)), outcome: 'refused-budget', ended_at: now, latency_ms: now - task.received_at, budget: { scope, limit, used: answer.used } }));
        options.metrics?.budgetRefused(scope);
        const message: UserMessageKey = answer.over ? `${scope}BudgetExceeded` : 'budgetBusy';
        const notice = fill(options.messages[message], { limit: limit.toLocaleString('en-US'), resets_in: untilMidnightUtc(now) });
        // The line the Logs Insights query in docs/operations.md reads.
        options.log.info('task refused by a budget', { request_id: task.request_id, budget_scope: scope, budget_limit: limit, budget_used: answer.used, user: task.user_id, channel: task.channel, team_id: task.team_id, agent });
        return { admitted: false, scope, limit, used: answer.used, notice };
      }
      await records.put(RESERVED + task.request_id, { request_id: task.request_id, day, reserved }, RESERVATION_TTL_SECONDS);
      return { admitted: true };
    },

    /**
     * Whether this refusal is the first of its user, scope and day in its thread: only that one is
     * told (quiet refusals, docs/operations.md). Claimed once, conditionally, so a redelivered task
     * or two refused at once tell the user once.
     */
    async firstRefusalNotice(task: TaskMessage, scope: BudgetScope): Promise<boolean> {
      const key = `${REFUSAL_NOTICE}${task.team_id}#${task.user_id}#${scope}#${utcDay(task.received_at)}#${task.channel}#${task.thread_ts ?? task.ts}`;
      return records.putIf(key, { request_id: task.request_id }, RESERVATION_TTL_SECONDS, { field: 'request_id', expected: undefined });
    },

    /**
     * FollowUpOptions.onSettled: counts the task's tokens on its counters (giving back its
     * reservations) and writes its audit record — once per task, however often it is settled.
     */
    async settled(task: SettledTask, settled: Settled): Promise<void> {
      const reservation = limited.length ? await records.get<Reserved>(RESERVED + task.request_id) : undefined;
      const day = reservation?.day ?? utcDay(task.received_at);
      const charges = countersOf(task, settled.agent).map((counter) => ({ ...counter, delta: { ...(settled.usage ? { usage: settled.usage } : {}), tasks: 1 } }));
      // The store gives back whatever the task still holds on each counter, keyed by the task: a hold its lease let go is not given back twice.
      if (!(await countOnce(counting, 'usage', task.request_id, day, charges))) return;
      const now = clock.now();
      // One line per task: what the Logs Insights queries of docs/operations.md sum (flat numbers, so `stats sum()` reads them).
      options.log.info('task usage recorded', {
        request_id: task.request_id,
        outcome: settled.ended,
        agent: settled.agent ?? 'default',
        team_id: task.team_id,
        channel: task.channel,
        ...(task.user_id ? { user: task.user_id } : {}),
        input_tokens: settled.usage?.input_tokens ?? 0,
        output_tokens: settled.usage?.output_tokens ?? 0,
        tokens: tokensOf(settled.usage),
        latency_ms: now - task.received_at,
        ...(settled.usage?.model ? { model: settled.usage.model } : {}),
      });
      await audit(task.request_id, (current) => ({
        ...(current ?? base(task, settled.agent)),
        ...(settled.agent ? { agent: settled.agent } : {}),
        outcome: settled.ended,
        ended_at: now,
        latency_ms: now - task.received_at,
        ...(settled.usage ? { usage: settled.usage, tokens: tokensOf(settled.usage) } : {}),
      }));
    },
  };
}

export type UsageLedger = ReturnType<typeof createUsageLedger>;

/**
 * The audit records' side of feedback (assistant-surface.ts). A click's request id must belong to
 * the click's channel and team (`belongs`: true when the task's record says so, or when there is
 * no record to say otherwise — audit off, expired); and the record keeps the rating of the one who
 * asked (`rated`), not of whoever clicked last: others' ratings stay in their feedback records.
 */
export function createAuditFeedback(records: Records, ttlSeconds: number) {
  return {
    async belongs(requestId: string, where: { team_id: string; channel: string }): Promise<boolean> {
      const current = await records.get<AuditRecord>(AUDIT + requestId);
      return !current || (current.team_id === where.team_id && current.channel === where.channel);
    },
    async rated(requestId: string, value: 'positive' | 'negative', user: string): Promise<void> {
      const current = await records.get<AuditRecord>(AUDIT + requestId);
      if (!current || (current.user !== undefined && current.user !== user)) return;
      if (current.feedback !== value) await records.put(AUDIT + requestId, { ...current, feedback: value }, ttlSeconds);
    },
  };
}

export type AuditFeedback = ReturnType<typeof createAuditFeedback>;

/** Every audit record the local stack holds, newest first. */
export async function listAudit(records: ListableRecords): Promise<AuditRecord[]> {
  const entries = await records.list<AuditRecord>(AUDIT);
  return entries.map((entry) => entry.value).sort((a, b) => b.received_at - a.received_at);
}
