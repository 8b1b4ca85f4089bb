/**
 * The metadata type of every reply chunk this app posts (`chat.postMessage` `metadata`). Its own
 * file, free of @slack/web-api: the invoker's thread reading tells the bot's replies by it too.
 */
export const REPLY_METADATA_TYPE = 'slack_zone_bridge_reply';
