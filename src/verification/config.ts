import { z } from 'zod';
import { envBool, envInt, envList, envNumber, parseEnv } from '../config/env';
import { QUEUE_SETTINGS } from './pipeline-settings';
import { DEFAULT_POLL_SCHEDULE, type PollSchedule } from './poll-schedule';

/**
 * Verification-zone configuration, parsed once per function (src/verification/wiring.ts turns it
 * into each function's options). The execution agent (TRANSPORT, EXECUTION_PROTOCOL, …) is
 * parsed by src/protocols/agent-config.ts.
 */
export const VerificationConfigSchema = z.object({
  SLACK_SIGNING_SECRET: z.string().optional(),
  SLACK_SIGNING_SECRET_ARN: z.string().optional(),
  SLACK_BOT_TOKEN: z.string().optional(),
  SLACK_BOT_TOKEN_ARN: z.string().optional(),
  SLACK_API_URL: z.string().url().optional(),
  SLACK_BOT_USER_ID: z.string().optional(),
  ALLOWED_TEAM_IDS: envList(),
  ALLOWED_USER_IDS: envList(),
  ALLOWED_CHANNEL_IDS: envList(),
  RATE_LIMIT_PER_MINUTE: envInt(20),
  MAX_TEXT_LENGTH: envInt(4000, 1),
  EVENT_CLAIM_TTL_SECONDS: envInt(3600, 60),
  STATE_TABLE_NAME: z.string().optional(),
  TASK_QUEUE_URL: z.string().optional(),
  POLL_QUEUE_URL: z.string().optional(),
  REPLY_QUEUE_URL: z.string().optional(),
  TASK_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.tasks.maxReceiveCount, 1),
  POLL_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.polls.maxReceiveCount, 1),
  REPLY_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.replies.maxReceiveCount, 1),
  POLL_FIRST_DELAY_S: envInt(DEFAULT_POLL_SCHEDULE.firstDelaySeconds, 0, 900),
  POLL_BACKOFF_FACTOR: envNumber(DEFAULT_POLL_SCHEDULE.factor, 1),
  POLL_MAX_DELAY_S: envInt(DEFAULT_POLL_SCHEDULE.maxDelaySeconds, 0, 900),
  POLL_DEADLINE_S: envInt(DEFAULT_POLL_SCHEDULE.deadlineSeconds, 1),
  SLACK_REACTIONS: envBool(false),
  /** Opt-in: send the bot token to the execution zone as `bot_token` (it is never logged). */
  EXECUTION_SEND_BOT_TOKEN: envBool(false),
  USER_MESSAGES_JSON: z.string().optional(),
});
export type VerificationConfig = z.infer<typeof VerificationConfigSchema>;

export function loadVerificationConfig(env: NodeJS.ProcessEnv = process.env): VerificationConfig {
  return parseEnv(VerificationConfigSchema, env, 'verification');
}

export function pollScheduleOf(config: VerificationConfig): PollSchedule {
  return {
    firstDelaySeconds: config.POLL_FIRST_DELAY_S,
    factor: config.POLL_BACKOFF_FACTOR,
    maxDelaySeconds: config.POLL_MAX_DELAY_S,
    deadlineSeconds: config.POLL_DEADLINE_S,
  };
}
