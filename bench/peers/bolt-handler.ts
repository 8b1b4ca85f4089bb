import { App, AwsLambdaReceiver } from '@slack/bolt';
import type { Context } from 'aws-lambda';

/**
 * What a Slack events Lambda built the usual way looks like: Bolt's AwsLambdaReceiver, one
 * `app_mention` listener that would hand the task on. `botId`/`botUserId` are passed so Bolt
 * never calls auth.test: the handler answers without touching the network, as ours does.
 * Bundled exactly like the project's Lambdas for the cold-start comparison.
 */
const receiver = new AwsLambdaReceiver({ signingSecret: process.env.SLACK_SIGNING_SECRET ?? '' });

const app = new App({
  token: process.env.SLACK_BOT_TOKEN,
  receiver,
  botId: process.env.SLACK_BOT_ID,
  botUserId: process.env.SLACK_BOT_USER_ID,
});

app.event('app_mention', async ({ event }) => {
  // The real work would be queued here; the ack is what Slack waits for.
  void event.text;
});

/** Bolt 5's documented Lambda entry: the receiver's promise-based (event, context) handler. */
export const handler = async (event: unknown, context: Context) => {
  const receive = await receiver.start();
  return receive(event as Parameters<typeof receive>[0], context);
};
