import { config } from 'zod/mini';
import { en } from 'zod/v4/locales';

/**
 * zod/mini, with zod's English error messages: the schemas of the verification zone (its
 * configuration, Slack's envelopes, its queue messages) import `z` from here
 * (`import * as z from '…/config/zod-mini'`). The same library as `zod`, in its tree-shakable
 * form: only the validators a schema uses are bundled, so the Slack ack path loads a few dozen KB
 * instead of ~440 KB — tens of ms less of slack-events' cold start (bench part 1, README
 * "Dependencies"). Schemas of both forms run on the same core and mix freely.
 *
 * zod/mini ships without messages ("Invalid input"); `zod` sets these same ones when it loads.
 */
config(en());

export * from 'zod/mini';
