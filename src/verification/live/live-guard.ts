import type { NumberingState } from '../../guardrail/numbering';
import { Numbering } from '../../guardrail/numbering';
import { releaseWindow, type StreamWindowState } from '../../guardrail/stream-window';
import type { SlackCallOptions } from '../../slack/slack-port';
import type { LiveMask, LiveReply } from '../stores/live-replies';
import type { LiveParts } from './live-parts';

/**
 * live-preview.ts, before a piece of the agent's text is shown (docs/operations.md, "Guardrails"):
 * the piece goes through the output guardrail as a stream — only what no entity could still span
 * is released, checked and shown; the rest is held on the record (`mask`), with the placeholders
 * handed out, so the function that shows the next piece (another Lambda invocation, often)
 * continues the same stream. Placeholders are numbered by first appearance across the answer, as
 * the poster numbers the final answer masked whole (post/guard-output.ts): `[EMAIL-1]` in the
 * preview is `[EMAIL-1]` in the final answer. Detect mode shows as is; a blocked window shows the
 * blocked notice instead, and the record turns dirty (nothing more is shown; the final answer
 * replaces the message).
 */

/** What a piece shows (the agent's text, released and masked; the notice when blocked), and what the record keeps. */
export type GuardedPiece = { show: string; fields: Pick<LiveReply, 'mask' | 'dirty'> };

/** Throws what the guardrail throws (unreachable, too slow): the caller shows nothing more, never the raw text. */
export async function guardPiece(p: LiveParts, record: LiveReply | undefined, fresh: string, call: SlackCallOptions): Promise<GuardedPiece> {
  const guard = p.options.guardrail;
  if (!guard) return { show: fresh, fields: {} };
  const remainingMs = call.deadline === undefined ? undefined : call.deadline - p.clock.now();
  const released = await releaseWindow(guard.guardrail, windowStateOf(record?.mask), fresh, { ...(call.signal ? { signal: call.signal } : {}), ...(remainingMs !== undefined ? { remainingMs } : {}) });
  const mask = liveMaskOf(released.state);
  if (released.action !== 'blocked') return { show: released.text, fields: { mask } };
  // Whatever was shown before passed the guardrail; the notice closes it.
  return { show: `${record?.text ? '\n\n' : ''}${guard.blockedText}`, fields: { mask, dirty: true } };
}

/** The record after a check that failed: previews end here, and what was held goes. */
export function withoutPreviews(record: LiveReply): LiveReply {
  const { pending: _pending, mask: _mask, ...base } = record;
  return { ...base, dirty: true };
}

function windowStateOf(mask: LiveMask | undefined): StreamWindowState {
  return { held: mask?.held ?? '', numbering: new Numbering(mask?.numbering), windows: mask?.windows ?? 0, blocked: mask?.blocked === true };
}

function liveMaskOf(state: StreamWindowState): LiveMask {
  const numbering: NumberingState = state.numbering.state();
  return { held: state.held, numbering, windows: state.windows, ...(state.blocked ? { blocked: true as const } : {}) };
}
