/**
 * The Slack Web API adapter's public face: everything that holds a `WebClient` lives in
 * src/slack/web-api/, one small file per port (replies, conversations, live answers, the agent
 * surface) plus the bounded call, the errors and the client set-up. The pipeline never imports
 * this file: it sees only the types-only ports (slack-port.ts, slack-conversations.ts,
 * slack-live.ts, slack-agent.ts); Lambda handlers, the local stack and tests build the adapter here.
 */
export type { ReactionTarget, ReplyMarker, SlackCallOptions, SlackReplies } from './slack-port';
export type { LiveMessage, LiveTask, LiveThread, SlackLive } from './slack-live';
export { SlackApiError, STREAM_REFUSED_ERRORS } from './slack-api-error';
export { REPLY_METADATA_TYPE } from './reply-metadata';
export { toSlackApiError, TOKEN_REFUSED_ERRORS } from './web-api/slack-errors';
export { compareTs } from './web-api/conversations';
export { splitMarkdown } from './web-api/live';
export { WebApiSlackReplies, type SlackPorts } from './web-api/web-api-slack';
export { slackRepliesFromSecret, type RotatingSlackRepliesOptions } from './web-api/rotating-slack';
export { createSlackWebClient, DEFAULT_SLACK_API_URL, lambdaRetryPolicy, slackApiUrl, type SlackWebClientOptions } from './web-api/web-client';
export type { SlackRepliesLog } from './web-api/bounded-call';
