import { wireSlackPoster } from '../../src/verification/wiring';
import { botThreads, claimStore, records } from './shared/clients';
import { functionContext } from './shared/function-context';
import { livePortsOf, slackOf } from './shared/slack';
import { sqsBatchHandler } from './shared/sqs-batch';

/** slack-poster: SQS replies → chat.postMessage in the thread, once per chunk even on redelivery. */
const context = functionContext('slack-poster');

export const handler = sqsBatchHandler(wireSlackPoster(context, { slack: slackOf(context), claims: claimStore(context.config.STATE_TABLE_NAME), threads: botThreads(context.config.STATE_TABLE_NAME), live: livePortsOf(context), agent: () => slackOf(context), records: records(context.config.STATE_TABLE_NAME) }), context);
