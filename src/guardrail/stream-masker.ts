import type { Guardrail, GuardrailAction, GuardrailCheckOptions, GuardrailFindings } from './guardrail';
import { Numbering } from './numbering';
import { releaseWindow, type StreamWindowState } from './stream-window';

/** What a streamed answer may show now: `text` to append (maybe ''), and what this piece's check did. */
export type StreamPiece = { text: string; action: GuardrailAction; findings: GuardrailFindings };

/**
 * An answer streamed through the output guardrail in one process (docs/operations.md,
 * "Guardrails"): fed the text as it is appended, it releases only what no entity could still span
 * — the guardrail says how much to hold back (Guardrail.holdFrom: the end of a word or number for
 * the built-in one, the last unfinished sentence for Bedrock) — checks that, and holds the rest
 * for the next piece (src/guardrail/stream-window.ts); `end` checks what is left. So a masked
 * entity is never visible, not even for a moment, and the answer is delayed by at most the entity
 * or sentence still forming. Placeholders are numbered across the whole answer. Once a piece is
 * blocked, the stream is: nothing more is released. A live reply keeps the same state on its
 * record instead (src/verification/live/live-guard.ts).
 */
export class StreamMasker {
  private state: StreamWindowState;

  constructor(private readonly guardrail: Guardrail, private readonly options: Omit<GuardrailCheckOptions, 'numbering'> & { numbering?: Numbering } = {}) {
    const { numbering, ...check } = options;
    this.options = check;
    this.state = { held: '', numbering: numbering ?? new Numbering(), windows: 0, blocked: false };
  }

  get isBlocked(): boolean {
    return this.state.blocked;
  }

  /** Characters taken in but not yet released. */
  get held(): number {
    return this.state.held.length;
  }

  /** Pieces must be pushed one after another (each awaited), as they were appended. */
  push(chunk: string, options: Omit<GuardrailCheckOptions, 'numbering'> = {}): Promise<StreamPiece> {
    return this.release(chunk, options, false);
  }

  /** The answer is complete: everything held is checked and released. */
  end(options: Omit<GuardrailCheckOptions, 'numbering'> = {}): Promise<StreamPiece> {
    return this.release('', options, true);
  }

  private async release(chunk: string, options: Omit<GuardrailCheckOptions, 'numbering'>, end: boolean): Promise<StreamPiece> {
    let released;
    try {
      released = await releaseWindow(this.guardrail, this.state, chunk, { ...this.options, ...options, end });
    } catch (error) {
      // A check that failed releases nothing: the piece is held with the rest, for the next try.
      this.state = { ...this.state, held: this.state.held + chunk };
      throw error;
    }
    this.state = released.state;
    return { text: released.text, action: released.action, findings: released.findings };
  }
}
