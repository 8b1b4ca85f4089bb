/**
 * Numbered placeholders (`[EMAIL-1]`, `[PHONE-2]`): the same entity gets the same number within
 * one text — and within one stream or conversation, when its Numbering is shared — so a reader
 * can still tell "the same address twice" from "two addresses". Entities are compared without
 * their spacing and hyphens (`090-1234-5678` and `09012345678` are one number). The matched text
 * lives only in this map, in memory, for as long as the caller keeps it.
 */
export class Numbering {
  private readonly numbers = new Map<string, number>();
  private readonly lastByType = new Map<string, number>();

  placeholder(type: string, matched: string): string {
    const key = `${type}\u0000${matched.replace(/[\s\-－‐ー.()（）]/g, '').normalize('NFKC')}`;
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = (this.lastByType.get(type) ?? 0) + 1;
      this.lastByType.set(type, number);
      this.numbers.set(key, number);
    }
    return `[${type}-${number}]`;
  }
}
