import { parseArgs } from 'node:util';
import { ConfigError } from '../config/env';
import { createProbe, DEFAULT_CALL_TIMEOUT_MS, type ConformanceTarget } from '../conformance/probe';
import { LEVELS, LEVEL_SUMMARY, checkedLevels, parseLevelFlag } from '../conformance/levels';
import { formatDetails, formatHeading, formatLevelHeading, formatLevels, formatPlan, formatSummary, tableLayout } from '../conformance/report';
import { DEFAULT_SLOW_MS, STREAM_WORD_MS, levelPlanFor, runConformance, selectCases, type CaseResult } from '../conformance/runner';
import { AUTH_MODES, isAuthMode } from '../transport/config';
import type { Command } from './command';

export const conformanceCommand: Command = {
  name: 'conformance',
  summary: 'check that an execution agent speaks the zone contract (pass/fail table)',
  usage: `zone conformance <url> [options]
       zone conformance --transport agentcore --arn <runtime ARN> [--qualifier <q>] [--endpoint <url>] [options]

Sends the zone contract's cases to an execute_task endpoint and prints a pass/fail table per
level. The core level applies to every agent (success, optional params never refused, accepted +
polling, the error codes, notifications, batches, id echo, malformed bodies); a capability level
is checked only when the agent declares it, in its agent card ("zone_contract": {"levels": [...]})
or with --level:
${LEVELS.filter((level) => level !== 'core').map((level) => `  ${level.padEnd(16)}${LEVEL_SUMMARY[level]}`).join('\n')}
Exit code 0 only if core and every declared level pass; warnings (e.g. the async path not
exercised) and skips (cases the transport cannot carry) do not fail the run.

  --transport https|agentcore  how to reach the agent (default https; the url is its endpoint,
                               e.g. http://127.0.0.1:8080/invocations)
  --auth ${AUTH_MODES.join('|')}     https auth (default none for a loopback url, sigv4 otherwise)
  --bearer-token <token>       with --auth bearer (default $EXECUTION_BEARER_TOKEN)
  --arn <runtime ARN>          agentcore: the runtime to invoke through InvokeAgentRuntime
  --qualifier <name>           agentcore: the runtime endpoint (default: DEFAULT)
  --endpoint <url>             agentcore: the SDK endpoint (default $AWS_ENDPOINT_URL_BEDROCK_AGENTCORE,
                               else AWS); credentials come from the SDK's default chain
  --region <region>            agentcore: used only if the ARN names none
  --slow-ms <ms>               the slow task is "… #sleep=<ms>" (default ${DEFAULT_SLOW_MS}), the streaming
                               one "… #sleep=<ms> #stream=${STREAM_WORD_MS}"; make it longer than the agent's
                               sync budget so it answers accepted
  --slow-text <text>           the slow (and streaming) task's text, for agents that do not obey
                               #sleep=<ms>
  --require-async              fail, rather than warn, when the slow task is answered at once
                               (or, at the streaming level, streams no text)
  --poll-timeout-ms <ms>       how long to poll an accepted task (default slow-ms + 30000)
  --timeout-ms <ms>            per request (default ${DEFAULT_CALL_TIMEOUT_MS})
  --level <a,b>                check these capability levels too, beyond the agent card's
                               (repeatable; "all" for every one); behind AgentCore the card
                               cannot be read, so this is how to declare them
  --only <prefix>              only the cases whose id starts with <prefix> (repeatable)
  --json                       print the report as JSON instead of a table`,
  async run(args) {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        allowPositionals: true,
        options: {
          transport: { type: 'string', default: 'https' },
          auth: { type: 'string' },
          'bearer-token': { type: 'string' },
          arn: { type: 'string' },
          qualifier: { type: 'string' },
          endpoint: { type: 'string' },
          region: { type: 'string' },
          'slow-ms': { type: 'string' },
          'slow-text': { type: 'string' },
          'require-async': { type: 'boolean', default: false },
          'poll-timeout-ms': { type: 'string' },
          'timeout-ms': { type: 'string' },
          only: { type: 'string', multiple: true },
          level: { type: 'string', multiple: true },
          json: { type: 'boolean', default: false },
        },
      });
    } catch (error) {
      return usageError((error as Error).message);
    }
    const { values, positionals } = parsed;

    let target: ConformanceTarget;
    let slowMs: number | undefined;
    let pollTimeoutMs: number | undefined;
    try {
      const timeoutMs = optionalMs(values['timeout-ms'], '--timeout-ms');
      slowMs = optionalMs(values['slow-ms'], '--slow-ms');
      pollTimeoutMs = optionalMs(values['poll-timeout-ms'], '--poll-timeout-ms');
      target = targetOf(values, positionals, timeoutMs);
    } catch (error) {
      if (error instanceof UsageError) return usageError(error.message);
      throw error;
    }

    if (!selectCases({ only: values.only }).length) return usageError(`no case id starts with ${values.only?.join(' or ')}`);
    const levelFlag = parseLevelFlag(values.level ?? []);
    if ('unknown' in levelFlag) return usageError(`--level takes ${LEVELS.join(', ')} or all, not ${JSON.stringify(levelFlag.unknown)}`);

    let probe;
    try {
      probe = createProbe(target);
    } catch (error) {
      if (error instanceof ConfigError) return usageError(error.message);
      throw error;
    }

    // Ctrl-C stops after the case in flight, and the partial report is still printed.
    const stop = new AbortController();
    const onSignal = () => stop.abort(new Error('interrupted'));
    process.once('SIGINT', onSignal);
    const out = (text: string) => process.stdout.write(`${text}\n`);
    try {
      const plan = await levelPlanFor(probe, { levels: levelFlag.levels, signal: stop.signal });
      const cases = selectCases({ only: values.only, plan });
      if (!cases.length) {
        const elsewhere = selectCases({ only: values.only }).map((c) => c.level);
        return usageError(`no case of the levels checked (${checkedLevels(plan).join(', ')}) starts with ${values.only?.join(' or ')}; add --level ${[...new Set(elsewhere)].join(',')}`);
      }
      const layout = tableLayout(cases);
      if (!values.json) {
        out(formatHeading(probe));
        out(formatPlan(plan));
        const slow = cases.some((c) => c.async) ? ' (the async ones wait for a slow task; --slow-ms sets how slow)' : '';
        out(`running ${cases.length === 1 ? '1 case' : `${cases.length} cases`}${slow}`);
      }
      // Cases run level by level: each level's table starts with its heading.
      let level: string | undefined;
      const onResult = (result: CaseResult) => {
        if (result.level !== level) {
          level = result.level;
          out(`\n${formatLevelHeading(result.level, plan.levels.find((entry) => entry.level === result.level)?.declaredBy)}`);
          out(layout.header());
        }
        out(layout.row(result));
      };
      const report = await runConformance(probe, {
        slowMs,
        slowText: values['slow-text'],
        requireAsync: values['require-async'],
        pollTimeoutMs,
        only: values.only,
        plan,
        signal: stop.signal,
        onResult: values.json ? undefined : onResult,
      });
      if (values.json) {
        out(JSON.stringify(report, null, 2));
      } else {
        const details = formatDetails(report.results);
        out('');
        if (details) out(`${details}\n`);
        if (stop.signal.aborted) out(`interrupted after ${report.results.length} of ${cases.length} cases`);
        out(formatLevels(report.levels));
        out(formatSummary(report));
      }
      return report.conforms && !stop.signal.aborted ? 0 : 1;
    } finally {
      process.off('SIGINT', onSignal);
      probe.close();
    }
  },
};

class UsageError extends Error {
  override name = 'UsageError';
}

function usageError(message: string): number {
  process.stderr.write(`zone conformance: ${message}\nRun \`zone conformance --help\` for the options.\n`);
  return 2;
}

function optionalMs(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1) throw new UsageError(`${name} must be a whole number of milliseconds ≥ 1, not ${JSON.stringify(value)}`);
  return ms;
}

type Values = { transport?: string; auth?: string; 'bearer-token'?: string; arn?: string; qualifier?: string; endpoint?: string; region?: string };

function targetOf(values: Values, positionals: string[], timeoutMs: number | undefined): ConformanceTarget {
  if (positionals.length > 1) throw new UsageError(`expected one url, got ${positionals.length}: ${positionals.join(' ')}`);
  const [url] = positionals;
  switch (values.transport) {
    case 'https': {
      if (!url) throw new UsageError('name the agent\'s endpoint, e.g. zone conformance http://127.0.0.1:8080/invocations');
      for (const option of ['arn', 'qualifier', 'endpoint'] as const) {
        if (values[option] !== undefined) throw new UsageError(`--${option} belongs to --transport agentcore`);
      }
      const auth = values.auth;
      if (auth !== undefined && !isAuthMode(auth)) throw new UsageError(`--auth must be one of ${AUTH_MODES.join(', ')}, not ${JSON.stringify(auth)}`);
      const bearerToken = values['bearer-token'] ?? (auth === 'bearer' ? process.env.EXECUTION_BEARER_TOKEN || undefined : undefined);
      if (auth === 'bearer' && !bearerToken) throw new UsageError('--auth bearer needs --bearer-token or EXECUTION_BEARER_TOKEN');
      return { kind: 'https', url, auth, bearerToken, timeoutMs };
    }
    case 'agentcore':
      if (url) throw new UsageError(`--transport agentcore invokes a runtime by --arn; drop the url ${url}`);
      if (!values.arn) throw new UsageError('--transport agentcore needs --arn <runtime ARN>');
      if (values.auth !== undefined || values['bearer-token'] !== undefined) throw new UsageError('--auth and --bearer-token belong to --transport https (AgentCore calls are SigV4-signed by the SDK)');
      return { kind: 'agentcore', runtimeArn: values.arn, qualifier: values.qualifier, endpoint: values.endpoint, region: values.region, timeoutMs };
    default:
      throw new UsageError(`--transport must be https or agentcore, not ${JSON.stringify(values.transport)}`);
  }
}
