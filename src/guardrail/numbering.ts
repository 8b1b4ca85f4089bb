import { createHash } from 'node:crypto';

/**
 * What a Numbering has handed out, as it can be stored (a live reply's record carries it from one
 * function to the next: src/verification/live/live-guard.ts): the last number of each type, and
 * each entity's number under a digest of it — never the matched text.
 */
export type NumberingState = { last: Record<string, number>; seen: Record<string, number> };

/**
 * Numbered placeholders (`[EMAIL-1]`, `[PHONE-2]`): the same entity gets the same number within
 * one text — and within one stream or conversation, when its Numbering is shared — so a reader
 * can still tell "the same address twice" from "two addresses". Entities are compared without
 * their spacing and hyphens (`090-1234-5678` and `09012345678` are one number). Numbers go by
 * first appearance, so an answer masked whole and the same answer masked piece by piece, in
 * order, with one Numbering, number alike. Entities are kept as digests, not as they were written.
 */
export class Numbering {
  private readonly numbers: Map<string, number>;
  private readonly lastByType: Map<string, number>;

  constructor(state?: NumberingState) {
    this.numbers = new Map(Object.entries(state?.seen ?? {}));
    this.lastByType = new Map(Object.entries(state?.last ?? {}));
  }

  placeholder(type: string, matched: string): string {
    const key = digest(`${type}\u0000${matched.replace(/[\s\-－‐ー.()（）]/g, '').normalize('NFKC')}`);
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = (this.lastByType.get(type) ?? 0) + 1;
      this.lastByType.set(type, number);
      this.numbers.set(key, number);
    }
    return `[${type}-${number}]`;
  }

  state(): NumberingState {
    return { last: Object.fromEntries(this.lastByType), seen: Object.fromEntries(this.numbers) };
  }
}

/** 96 bits of SHA-256: no two entities of one answer meet, and the record holds no entity as written. */
function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 16);
}
