/**
 * The conformance levels (docs/contract.md, "Versioning and levels"): `core`, which every
 * execution agent must pass, and capability levels, checked only when the agent declares them —
 * in its agent card (`"zone_contract": {"levels": [...]}`) or with `zone conformance --level`.
 * An agent written to an earlier contract ignores the newer optional params and passes core.
 */
export const LEVELS = ['core', 'thread-context', 'attachments', 'context', 'streaming', 'cancel', 'usage', 'files', 'steps', 'asker', 'questions'] as const;
export type Level = (typeof LEVELS)[number];

/** What each level is about, one line for the report and `--help`. */
export const LEVEL_SUMMARY: Record<Level, string> = {
  core: 'JSON-RPC envelope, execute_task, accepted + polling, the error codes; optional params never refused',
  'thread-context': 'reads messages (the thread\'s earlier messages) and refuses a malformed one',
  attachments: 'reads attachments (files with their bytes) and refuses a malformed one',
  context: 'reads context (what the user is looking at) and refuses a malformed one',
  streaming: 'stream: true hands out text by cursor before the answer, polled or as a stream of events',
  cancel: 'cancel_task stops a pending task',
  usage: 'the final success reports its token usage (input_tokens, output_tokens, …) in the documented shape',
  files: 'asked for a file, the final success carries it in files (name, media_type, base64 data or an https url)',
  steps: 'a task that shows steps ends with each one complete or error (docs/contract.md, "Steps")',
  asker: 'reads asker (who is asking, slack:<team>:<user>) and refuses a malformed one',
  questions: 'resume_task answers the task it names: -32002 for an unknown one, -32602 without an answer',
};

export function isLevel(name: string): name is Level {
  return (LEVELS as readonly string[]).includes(name);
}

/** Why a level is checked: core always, the others when the agent card or `--level` declares them. */
export type DeclaredBy = 'always' | 'agent card' | '--level';

export type LevelPlan = {
  /** Every level in order; `declaredBy` unset: not declared, its cases are skipped. */
  levels: Array<{ level: Level; declaredBy?: DeclaredBy }>;
  /** What the kit made of the agent card, for the report (read, absent, not readable). */
  card: string;
};

/** What an agent card says of the levels, or why it says nothing. */
export type CardLevels = { levels: Level[]; unknown: string[]; where: string } | { none: string };

/**
 * The levels an agent card declares. A card from a newer agent may name levels this kit does
 * not know: they are reported and ignored, never an error.
 */
export function levelsOfCard(body: string | undefined, where: string): CardLevels {
  if (body === undefined) return { none: `the agent card at ${where} is empty` };
  let card: unknown;
  try {
    card = JSON.parse(body);
  } catch {
    return { none: `the agent card at ${where} is not JSON` };
  }
  const declared = (card as { zone_contract?: { levels?: unknown } } | null)?.zone_contract?.levels;
  if (!Array.isArray(declared)) return { none: `the agent card at ${where} declares no zone_contract.levels` };
  const names = declared.filter((name): name is string => typeof name === 'string');
  return { levels: LEVELS.filter((level) => names.includes(level)), unknown: names.filter((name) => !isLevel(name)), where };
}

/**
 * Which levels are checked: core, the card's, and `--level`'s (which add to the card: a flag
 * never takes back what the agent declares). `extra` may hold `all`.
 */
export function planLevels(card: CardLevels, extra: readonly string[] = []): LevelPlan {
  const fromFlag = new Set<Level>(extra.includes('all') ? LEVELS : extra.filter(isLevel));
  const fromCard = new Set<Level>('levels' in card ? card.levels : []);
  const levels = LEVELS.map((level) => {
    const declaredBy: DeclaredBy | undefined = level === 'core' ? 'always' : fromCard.has(level) ? 'agent card' : fromFlag.has(level) ? '--level' : undefined;
    return declaredBy ? { level, declaredBy } : { level };
  });
  let about: string;
  if ('none' in card) about = card.none;
  else {
    const named = card.levels.length ? card.levels.join(', ') : 'no level this kit knows';
    about = `the agent card at ${card.where} declares ${named}${card.unknown.length ? ` (ignored, unknown to this kit: ${card.unknown.join(', ')})` : ''}`;
  }
  return { levels, card: about };
}

/** The names `--level` takes, or the first one it does not. */
export function parseLevelFlag(values: readonly string[]): { levels: string[] } | { unknown: string } {
  const levels = values.flatMap((value) => value.split(',')).map((name) => name.trim()).filter(Boolean);
  const unknown = levels.find((name) => name !== 'all' && !isLevel(name));
  return unknown === undefined ? { levels } : { unknown };
}

export function checkedLevels(plan: LevelPlan): Level[] {
  return plan.levels.filter((entry) => entry.declaredBy).map((entry) => entry.level);
}
