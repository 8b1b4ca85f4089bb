import { countFindings, type Guardrail, type GuardrailAction, type GuardrailCheckOptions, type GuardrailFindings } from './guardrail';
import { Numbering } from './numbering';

/** What a streamed answer may show now: `text` to append (maybe ''), and what this piece's check did. */
export type StreamPiece = { text: string; action: GuardrailAction; findings: GuardrailFindings };

/**
 * An answer streamed through the output guardrail (docs/operations.md, "Guardrails"): fed the
 * text as it is appended, it releases only what no entity could still span — the guardrail says
 * how much to hold back (Guardrail.holdFrom: the end of a word or number for the built-in one, the
 * last unfinished sentence for Bedrock) — checks that, and holds the rest for the next piece; `end`
 * checks what is left. So a masked entity is never visible, not even for a moment, and the answer
 * is delayed by at most the entity or sentence still forming. Placeholders are numbered across the
 * whole answer. Once a piece is blocked, the stream is: nothing more is released.
 */
export class StreamMasker {
  private pending = '';
  private blocked = false;
  private readonly numbering: Numbering;

  constructor(private readonly guardrail: Guardrail, private readonly options: Omit<GuardrailCheckOptions, 'numbering'> & { numbering?: Numbering } = {}) {
    this.numbering = options.numbering ?? new Numbering();
  }

  get isBlocked(): boolean {
    return this.blocked;
  }

  /** Characters taken in but not yet released. */
  get held(): number {
    return this.pending.length;
  }

  /** Pieces must be pushed one after another (each awaited), as they were appended. */
  push(chunk: string, options: Omit<GuardrailCheckOptions, 'numbering'> = {}): Promise<StreamPiece> {
    if (this.blocked) return Promise.resolve(blockedPiece());
    this.pending += chunk;
    return this.release(this.guardrail.holdFrom(this.pending), options);
  }

  /** The answer is complete: everything held is checked and released. */
  end(options: Omit<GuardrailCheckOptions, 'numbering'> = {}): Promise<StreamPiece> {
    if (this.blocked) return Promise.resolve(blockedPiece());
    return this.release(this.pending.length, options);
  }

  private async release(cut: number, options: Omit<GuardrailCheckOptions, 'numbering'>): Promise<StreamPiece> {
    if (cut <= 0) return { text: '', action: 'none', findings: {} };
    const window = this.pending.slice(0, cut);
    const checked = await this.guardrail.check(window, 'output', { ...this.options, ...options, numbering: this.numbering });
    // Only once the check answered is the window taken out: a check that failed leaves it held.
    this.pending = this.pending.slice(cut);
    if (checked.action === 'blocked') {
      this.blocked = true;
      this.pending = '';
    }
    return { text: checked.text, action: checked.action, findings: checked.findings };
  }
}

function blockedPiece(): StreamPiece {
  return { text: '', action: 'blocked', findings: countFindings([]) };
}
