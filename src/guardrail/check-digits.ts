/**
 * The check digits that tell a real card number or IBAN from any long number: an order number or
 * a timestamp passes Luhn one time in ten and a card's issuer prefix far less often, and an IBAN's
 * mod-97 check one time in 97 — so neither is masked just for being long.
 */

/** Latin digits of a string, full-width digits (`０`–`９`) read as their Latin twins. */
export function digitsOf(text: string): string {
  let digits = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (code >= 0x30 && code <= 0x39) digits += char;
    else if (code >= 0xff10 && code <= 0xff19) digits += String.fromCharCode(code - 0xff10 + 0x30);
  }
  return digits;
}

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes and lengths of the card networks (Visa, Mastercard, Amex, JCB, Discover, Diners, UnionPay). */
const CARD_NETWORKS: ReadonlyArray<{ prefix: RegExp; lengths: readonly number[] }> = [
  { prefix: /^4/, lengths: [13, 16, 19] },
  { prefix: /^(?:5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/, lengths: [16] },
  { prefix: /^3[47]/, lengths: [15] },
  { prefix: /^35(?:2[89]|[3-8])/, lengths: [16, 17, 18, 19] },
  { prefix: /^(?:6011|64[4-9]|65)/, lengths: [16, 19] },
  { prefix: /^3(?:0[0-5]|[689])/, lengths: [14, 16, 19] },
  { prefix: /^62/, lengths: [16, 17, 18, 19] },
];

export function isCardNumber(digits: string): boolean {
  return CARD_NETWORKS.some((network) => network.prefix.test(digits) && network.lengths.includes(digits.length)) && passesLuhn(digits);
}

/** ISO 13616: the country and check digits moved to the end, letters as 10–35, the whole mod 97 is 1. */
export function isIban(compact: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? char.charCodeAt(0) - 55 : char.charCodeAt(0) - 48;
    remainder = (value > 9 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}
