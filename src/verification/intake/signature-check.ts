import type { Clock } from '../../clock';
import type { Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { SecretSource } from '../../secrets/secret-source';
import { verifySlackSignature } from './slack-signature';
import { header, type IngressRequest } from './slack-request';

/** A signature mismatch re-reads the signing secret at most this often. */
const SECRET_REFRESH_INTERVAL_MS = 60_000;

/**
 * slack-events' first step: is the request Slack's? The signing secret is cached; a mismatch may
 * mean it was rotated since, so it is read once more — at most once a minute, so a flood of forged
 * requests costs neither a Secrets Manager bill nor an outage.
 */
export function createSignatureCheck(options: { signingSecret: SecretSource; clock: Clock; log: Log; metrics?: PipelineMetrics }): (request: IngressRequest) => Promise<boolean> {
  let lastRefreshAt = -Infinity;
  return async function verified(request) {
    const input = {
      timestamp: header(request, 'x-slack-request-timestamp'),
      signature: header(request, 'x-slack-signature'),
      rawBody: request.body,
      nowSeconds: Math.floor(options.clock.now() / 1000),
    };
    const first = verifySlackSignature({ ...input, secret: await options.signingSecret.get() });
    if (first.ok) return true;
    if (first.reason === 'mismatch' && input.nowSeconds * 1000 - lastRefreshAt >= SECRET_REFRESH_INTERVAL_MS) {
      lastRefreshAt = input.nowSeconds * 1000;
      try {
        const second = verifySlackSignature({ ...input, secret: await options.signingSecret.refresh() });
        if (second.ok) return true;
      } catch (error) {
        options.log.warn('could not re-read the signing secret; the request is refused', { error: error as Error });
      }
    }
    options.log.warn('refused a request with a bad Slack signature', { reason: first.reason });
    options.metrics?.refused(`signature-${first.reason}`);
    return false;
  };
}
