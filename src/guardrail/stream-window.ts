import type { Guardrail, GuardrailAction, GuardrailCheckOptions, GuardrailFindings } from './guardrail';
import { Numbering } from './numbering';

/**
 * Where a stream through the output guardrail stands (src/guardrail/stream-masker.ts in one
 * process; a live reply's record across functions, src/verification/live/live-guard.ts): the text
 * taken in but not released yet, the placeholders handed out so far, how many windows were
 * checked, and whether a window was blocked (then nothing more is released).
 */
export type StreamWindowState = { held: string; numbering: Numbering; windows: number; blocked: boolean };

/** What a release shows now (maybe ''), what its check did, and the stream's state after it. */
export type StreamRelease = { text: string; action: GuardrailAction; findings: GuardrailFindings; state: StreamWindowState };

export function newStreamWindowState(): StreamWindowState {
  return { held: '', numbering: new Numbering(), windows: 0, blocked: false };
}

/**
 * Takes `chunk` in after what `state` holds and releases, checked, what no entity could still span
 * (Guardrail.holdFrom) — everything when `end`. A guardrail with `streamWindowChars` is asked only
 * once that much can go, except for the first window (the first text is not delayed). Throws what
 * the check throws, and `state` is as it was then (the caller decides what the stream does;
 * a check that throws hands out no placeholder).
 */
export async function releaseWindow(guardrail: Guardrail, state: StreamWindowState, chunk: string, options: Omit<GuardrailCheckOptions, 'numbering'> & { end?: boolean } = {}): Promise<StreamRelease> {
  if (state.blocked) return { text: '', action: 'blocked', findings: {}, state };
  const { end, ...check } = options;
  const pending = state.held + chunk;
  let cut = end ? pending.length : guardrail.holdFrom(pending);
  if (!end && state.windows > 0 && cut < (guardrail.streamWindowChars ?? 0)) cut = 0;
  if (cut <= 0) return { text: '', action: 'none', findings: {}, state: { ...state, held: pending } };
  const numbering = state.numbering;
  const checked = await guardrail.check(pending.slice(0, cut), 'output', { ...check, numbering });
  const blocked = checked.action === 'blocked';
  return { text: blocked ? '' : checked.text, action: checked.action, findings: checked.findings, state: { held: blocked ? '' : pending.slice(cut), numbering, windows: state.windows + 1, blocked } };
}
