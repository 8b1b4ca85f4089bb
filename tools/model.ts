import { DEFAULT_ASSUMPTIONS, renderCostReport, runCostModel, type Assumptions } from './cost-model';
import { BEDROCK_MODELS } from './prices';
import { scanFlags } from './cli-flags';
import { modelCli, parseModelArgs, USAGE as SESSION_USAGE } from './session-model';

/**
 * `npm run model`: the session model (tools/session-model.ts), then what it costs
 * (tools/cost-model.ts) over the same trace. The session model's flags shape both; the cost
 * flags below only the second part.
 */

export const COST_USAGE = `Cost options (the session options above shape the trace both parts use):

  --model <id|name>        Bedrock model of the breakdown: ${BEDROCK_MODELS.map((m) => m.name).join(', ')} (default ${DEFAULT_ASSUMPTIONS.model.name})
  --input-tokens <n>       input tokens per message (default ${DEFAULT_ASSUMPTIONS.inputTokens})
  --output-tokens <n>      output tokens per message (default ${DEFAULT_ASSUMPTIONS.outputTokens})
  --agentcore-memory <GB>  an AgentCore session's peak memory (default ${DEFAULT_ASSUMPTIONS.agentcoreMemoryGb})
  --governed               add the fixed monthly cost of -c governance=strict (NAT, endpoints, KMS)
  --no-cost                the session model only
`;

const COST_VALUE_FLAGS = new Set(['--model', '--input-tokens', '--output-tokens', '--agentcore-memory']);
const COST_BOOLEAN_FLAGS = new Set(['--governed', '--no-cost']);

export type CostCli = { assumptions: Assumptions; governed: boolean; cost: boolean; rest: string[] };

/** Takes the cost flags out of argv; the rest goes to the session model's parser. */
export function parseCostArgs(argv: readonly string[]): CostCli {
  const { flags, values, rest } = scanFlags(argv, { booleans: COST_BOOLEAN_FLAGS, values: COST_VALUE_FLAGS });
  const positive = (flag: string, fallback: number) => {
    const raw = values.get(flag);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw.trim() === '' || !(n > 0) || !Number.isFinite(n)) throw new RangeError(`${flag} must be a number > 0, got ${JSON.stringify(raw)}`);
    return n;
  };
  let model = DEFAULT_ASSUMPTIONS.model;
  const wanted = values.get('--model');
  if (wanted !== undefined) {
    const found = BEDROCK_MODELS.find((m) => m.id === wanted || m.name.toLowerCase() === wanted.toLowerCase());
    if (!found) throw new RangeError(`--model: unknown model ${JSON.stringify(wanted)}; one of ${BEDROCK_MODELS.map((m) => m.name).join(', ')}`);
    model = found;
  }
  // AgentCore bills at least 128 MB of memory.
  const memory = positive('--agentcore-memory', DEFAULT_ASSUMPTIONS.agentcoreMemoryGb);
  return {
    assumptions: {
      ...DEFAULT_ASSUMPTIONS,
      model,
      inputTokens: positive('--input-tokens', DEFAULT_ASSUMPTIONS.inputTokens),
      outputTokens: positive('--output-tokens', DEFAULT_ASSUMPTIONS.outputTokens),
      agentcoreMemoryGb: Math.max(0.125, memory),
    },
    governed: flags.has('--governed'),
    cost: !flags.has('--no-cost'),
    rest,
  };
}

export function fullModelCli(argv: readonly string[]): { code: number; stdout: string; stderr: string } {
  let cost: CostCli;
  try {
    cost = parseCostArgs(argv);
  } catch (error) {
    return { code: 2, stdout: '', stderr: `${(error as Error).message}\n\n${SESSION_USAGE}\n${COST_USAGE}` };
  }
  const sessions = modelCli(cost.rest);
  if (sessions.code !== 0) return { ...sessions, stderr: `${sessions.stderr}${COST_USAGE}` };
  const cli = parseModelArgs(cost.rest);
  if (cli.help) return { code: 0, stdout: `${SESSION_USAGE}\n${COST_USAGE}`, stderr: '' };
  if (!cost.cost) return sessions;
  const inputs = { params: cli.params, assumptions: cost.assumptions };
  const report = runCostModel(inputs);
  const text = renderCostReport(report, inputs, { markdown: cli.markdown, governed: cost.governed });
  return { code: 0, stdout: `${sessions.stdout}\n${text}\n`, stderr: sessions.stderr };
}

if (require.main === module) {
  const { code, stdout, stderr } = fullModelCli(process.argv.slice(2));
  process.stderr.write(stderr);
  process.stdout.write(stdout);
  process.exitCode = code;
}
