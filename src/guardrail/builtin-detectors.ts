import { digitsOf, isCardNumber, isIban } from './check-digits';
import { ENTITY_TYPES } from './entity-types';

/**
 * The built-in guardrail's detectors (GUARDRAIL=builtin; docs/operations.md, "Guardrails"): a
 * pattern finds a candidate, and `accept` keeps it — whole, or a shorter start of it — only when
 * it is what it looks like (a card number passes Luhn with a network's prefix and length, an IBAN
 * its mod-97 check, a phone number has as many digits as a phone number has). Written for English
 * and Japanese text: full-width digits and hyphens, no spaces around an entity.
 */
export type Detector = {
  type: string;
  /** Global, so one pass finds every candidate. */
  pattern: RegExp;
  /** Cheap test on the whole text: a text it fails cannot hold this entity, and the pattern is not run. */
  mayContain?: (text: string) => boolean;
  /** The part of a candidate that is the entity (the candidate itself, or a start of it), or undefined. */
  accept?: (candidate: string) => string | undefined;
};

const D = '[0-9０-９]';
const NOT_DIGIT_BEFORE = '(?<![0-9０-９A-Za-z_+＋\\-－./])';
const NOT_DIGIT_AFTER = '(?![0-9０-９A-Za-z])';
const HYPHEN = '[\\-－‐‑–ー]';
const hasDigit = (text: string) => /[0-9０-９]/.test(text);

/** A Japanese number within Japan: 03-1234-5678, 090-1234-5678, 0120-123-456, (03)1234-5678, 03(1234)5678, full-width or not. */
const JAPANESE_PHONE = new RegExp(
  `${NOT_DIGIT_BEFORE}(?:0${D}{1,4}${HYPHEN}?${D}{1,4}${HYPHEN}?${D}{3,4}|[(（]0${D}{1,4}[)）] ?${D}{1,4}${HYPHEN}?${D}{4}|0${D}{1,4}[(（]${D}{1,4}[)）]${D}{4}|０${D}{1,4}${HYPHEN}?${D}{1,4}${HYPHEN}?${D}{3,4})${NOT_DIGIT_AFTER}`,
  'g',
);
/** A number with its country code: +81 90-1234-5678, +1 (415) 555-0100, +44 20 7946 0958. */
const INTERNATIONAL_PHONE = new RegExp(`(?<![0-9０-９A-Za-z])[+＋][1-9１-９]${D}{0,2}(?:[ \\-.－]?[(（]?${D}{1,5}[)）]?){1,6}${NOT_DIGIT_AFTER}`, 'g');
/** A North American number without its country code: (415) 555-0100, 415-555-0100, 415.555.0100. */
const NATIONAL_PHONE = new RegExp(`${NOT_DIGIT_BEFORE}(?:[(（][2-9２-９]${D}{2}[)）] ?|[2-9２-９]${D}{2}[\\-. ])${D}{3}[\\-. ]${D}{4}${NOT_DIGIT_AFTER}`, 'g');

const phoneDigits = (min: number, max: number) => (candidate: string) => {
  const count = digitsOf(candidate).length;
  return count >= min && count <= max ? candidate : undefined;
};

export const BUILTIN_DETECTORS: readonly Detector[] = [
  {
    type: ENTITY_TYPES.privateKey,
    // Its header to its footer, or to the end of the text when the footer is missing (a key pasted in part).
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)/g,
    mayContain: (text) => text.includes('PRIVATE KEY-----'),
  },
  {
    type: ENTITY_TYPES.slackToken,
    pattern: /(?<![A-Za-z0-9])(?:xox[abposre]|xapp|xwf[a-z])-[A-Za-z0-9-]{8,}/g,
    mayContain: (text) => text.includes('x'),
  },
  {
    type: ENTITY_TYPES.awsAccessKey,
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIPA|ANPA|ANVA|AGPA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    mayContain: (text) => text.includes('A'),
  },
  {
    type: ENTITY_TYPES.awsSecretKey,
    // 40 characters of base64 with upper case, lower case and a digit: a commit hash (hex) or a word is none.
    pattern: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    mayContain: hasDigit,
    accept: (candidate) => (/[A-Z]/.test(candidate) && /[a-z]/.test(candidate) && /[0-9]/.test(candidate) ? candidate : undefined),
  },
  {
    type: ENTITY_TYPES.email,
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
    mayContain: (text) => text.includes('@'),
  },
  {
    type: ENTITY_TYPES.iban,
    pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![a-z0-9])/g,
    mayContain: hasDigit,
    // A word in capitals after it may have been read as one more group: drop trailing groups until the check passes.
    accept: (candidate) => {
      let groups = candidate.split(' ');
      while (groups.length > 0) {
        const compact = groups.join('');
        if (compact.length < 15) return undefined;
        if (isIban(compact)) return groups.join(' ');
        groups = groups.slice(0, -1);
      }
      return undefined;
    },
  },
  {
    type: ENTITY_TYPES.card,
    pattern: new RegExp(`${NOT_DIGIT_BEFORE}${D}(?:[ \\-]?${D}){12,18}${NOT_DIGIT_AFTER}`, 'g'),
    mayContain: hasDigit,
    accept: (candidate) => (isCardNumber(digitsOf(candidate)) ? candidate : undefined),
  },
  { type: ENTITY_TYPES.phone, pattern: INTERNATIONAL_PHONE, mayContain: (text) => /[+＋]/.test(text), accept: phoneDigits(8, 15) },
  { type: ENTITY_TYPES.phone, pattern: JAPANESE_PHONE, mayContain: hasDigit, accept: phoneDigits(10, 11) },
  { type: ENTITY_TYPES.phone, pattern: NATIONAL_PHONE, mayContain: hasDigit, accept: phoneDigits(10, 10) },
];
