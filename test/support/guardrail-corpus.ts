import { seededRandom, type Random } from '../../tools/session-model';
/**
 * A seeded corpus for the guardrail's tests and bench (docs/operations.md, "Guardrails"): English
 * and Japanese messages, each holding an entity of every type in turn — written the ways people
 * write them (grouped or not, full-width digits, no spaces around it in Japanese) — and
 * look-alikes that must pass untouched (order numbers, dates, versions, timestamps, ids). The same
 * seed gives the same corpus, so a miss is reproducible.
 */
export type CorpusMessage = { language: 'en' | 'ja'; text: string; entities: Array<{ type: string; value: string }>; lookAlikes: string[] };

export const CORPUS_ENTITY_TYPES = ['EMAIL', 'PHONE', 'CREDIT_DEBIT_CARD_NUMBER', 'INTERNATIONAL_BANK_ACCOUNT_NUMBER', 'AWS_ACCESS_KEY', 'AWS_SECRET_KEY', 'SLACK_TOKEN', 'PRIVATE_KEY'] as const;

// The one seeded generator of the repository's models and corpora (tools/session-model.ts).
export { seededRandom };


const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const digits = (random: Random, count: number) => Array.from({ length: count }, () => Math.floor(random() * 10)).join('');
const chars = (random: Random, alphabet: string, count: number) => Array.from({ length: count }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
const toFullWidth = (text: string) => text.replace(/[0-9]/g, (digit) => String.fromCharCode(digit.charCodeAt(0) - 48 + 0xff10)).replace(/-/g, '－');

function luhnComplete(partial: string): string {
  for (let check = 0; check < 10; check++) {
    const candidate = partial + check;
    let sum = 0;
    for (let i = 0; i < candidate.length; i++) {
      let digit = Number(candidate[candidate.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    if (sum % 10 === 0) return candidate;
  }
  throw new Error('unreachable');
}

function group(text: string, size: number, separator: string): string {
  return text.match(new RegExp(`.{1,${size}}`, 'g'))!.join(separator);
}

function ibanOf(country: string, bban: string): string {
  const numeric = (bban + country + '00').replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of numeric) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}

const ENTITY_MAKERS: Record<(typeof CORPUS_ENTITY_TYPES)[number], (random: Random, language: 'en' | 'ja') => string> = {
  EMAIL: (random) => `${pick(random, ['taro', 'hanako.sato', 'j.smith', 'ops+alerts', 'k_tanaka'])}${digits(random, 2)}@${pick(random, ['example.com', 'example.co.jp', 'mail.example.org', 'corp.example.net'])}`,
  PHONE: (random, language) => {
    const forms = [
      () => `+1 ${pick(random, ['415', '212', '646'])} 555 ${digits(random, 4)}`,
      () => `(${pick(random, ['415', '303'])}) 555-${digits(random, 4)}`,
      () => `+44 20 7946 ${digits(random, 4)}`,
      () => `+81 90-${digits(random, 4)}-${digits(random, 4)}`,
      () => `+81-3-${digits(random, 4)}-${digits(random, 4)}`,
      () => `03-${digits(random, 4)}-${digits(random, 4)}`,
      () => `090-${digits(random, 4)}-${digits(random, 4)}`,
      () => `0120-${digits(random, 3)}-${digits(random, 3)}`,
      () => `(03)${digits(random, 4)}-${digits(random, 4)}`,
      () => `080${digits(random, 8)}`,
      () => toFullWidth(`090-${digits(random, 4)}-${digits(random, 4)}`),
    ];
    return pick(random, language === 'ja' ? forms.slice(3) : forms.slice(0, 5))();
  },
  CREDIT_DEBIT_CARD_NUMBER: (random) => {
    const [prefix, length] = pick(random, [['4', 16], ['51', 16], ['55', 16], ['34', 15], ['37', 15], ['3530', 16], ['6011', 16]] as const);
    const number = luhnComplete(prefix + digits(random, length - prefix.length - 1));
    return pick(random, [number, group(number, 4, ' '), group(number, 4, '-')]);
  },
  INTERNATIONAL_BANK_ACCOUNT_NUMBER: (random) => {
    const iban = pick(random, [() => ibanOf('DE', digits(random, 18)), () => ibanOf('GB', `WEST${digits(random, 14)}`), () => ibanOf('FR', digits(random, 23))])();
    return random() < 0.5 ? iban : group(iban, 4, ' ');
  },
  AWS_ACCESS_KEY: (random) => `${pick(random, ['AKIA', 'ASIA'])}${chars(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
  AWS_SECRET_KEY: (random) => `${chars(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 3)}${chars(random, 'abcdefghijklmnopqrstuvwxyz', 3)}${chars(random, '0123456789', 2)}${chars(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+', 32)}`,
  SLACK_TOKEN: (random) => `${pick(random, ['xoxb', 'xoxp', 'xapp'])}-${digits(random, 12)}-${digits(random, 13)}-${chars(random, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 24)}`,
  PRIVATE_KEY: (random) => {
    const kind = pick(random, ['RSA ', 'EC ', 'OPENSSH ', '']);
    const body = Array.from({ length: 3 }, () => chars(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 64)).join('\n');
    return `-----BEGIN ${kind}PRIVATE KEY-----\n${body}\n-----END ${kind}PRIVATE KEY-----`;
  },
};

const LOOK_ALIKES: ReadonlyArray<(random: Random) => string> = [
  (random) => `ORD-2024-${digits(random, 6)}`,
  (random) => `#${digits(random, 5)}`,
  (random) => `2024-${pick(random, ['01', '05', '11'])}-${pick(random, ['01', '15', '28'])}`,
  (random) => `${pick(random, ['2023', '2024'])}年${1 + Math.floor(random() * 12)}月${1 + Math.floor(random() * 28)}日`,
  (random) => `v${Math.floor(random() * 10)}.${Math.floor(random() * 20)}.${Math.floor(random() * 30)}`,
  (random) => `20.${Math.floor(random() * 20)}.${Math.floor(random() * 9)}`,
  (random) => `2024-05-0${1 + Math.floor(random() * 9)}T${10 + Math.floor(random() * 10)}:${digits(random, 1)}5:00Z`,
  (random) => `17${digits(random, 8)}.${digits(random, 6)}`,
  (random) => chars(random, '0123456789abcdef', 40),
  (random) => `${chars(random, '0123456789abcdef', 8)}-${chars(random, '0123456789abcdef', 4)}-4${chars(random, '0123456789abcdef', 3)}-a${chars(random, '0123456789abcdef', 3)}-${chars(random, '0123456789abcdef', 12)}`,
  (random) => `JIRA-${digits(random, 4)}`,
  (random) => `${digits(random, 2)}:${digits(random, 2)}`,
  (random) => `C0${chars(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 8)}`,
  (random) => `1${digits(random, 3)} ${digits(random, 4)}`,
];

const TEMPLATES = {
  en: [
    (e: string, l: string, m: string) => `Hi, can you check order ${l} for me? You can reach me at ${e}. Thanks! (released ${m})`,
    (e: string, l: string, m: string) => `The deploy on ${l} failed again; the config has ${e} in it. Build ${m}.`,
    (e: string, l: string, m: string) => `Summarise ticket ${l}: customer wrote "${e}" and asked about ${m}.`,
    (e: string, l: string, m: string) => `${e}\nis what I pasted by mistake in ${l}, sorry — see ${m}`,
  ],
  ja: [
    (e: string, l: string, m: string) => `注文${l}の件で確認をお願いします。連絡先は${e}です。（${m}時点）`,
    (e: string, l: string, m: string) => `${l}のデプロイが失敗しました。設定に${e}が入っています。ビルド${m}。`,
    (e: string, l: string, m: string) => `お客様から「${e}」と連絡がありました。チケット${l}、${m}を参照してください。`,
    (e: string, l: string, m: string) => `間違えて貼ってしまいました：\n${e}\n${l} と ${m} は関係ありません。`,
  ],
} as const;

/** `perLanguage` messages in English and as many in Japanese; every entity type in every language. */
export function guardrailCorpus(seed = 37, perLanguage = 200): CorpusMessage[] {
  const random = seededRandom(seed);
  const messages: CorpusMessage[] = [];
  for (const language of ['en', 'ja'] as const) {
    for (let i = 0; i < perLanguage; i++) {
      const type = CORPUS_ENTITY_TYPES[i % CORPUS_ENTITY_TYPES.length]!;
      const value = ENTITY_MAKERS[type](random, language);
      const lookAlikes = [pick(random, LOOK_ALIKES)(random), pick(random, LOOK_ALIKES)(random)];
      const text = pick(random, TEMPLATES[language])(value, lookAlikes[0]!, lookAlikes[1]!);
      messages.push({ language, text, entities: [{ type, value }], lookAlikes });
    }
  }
  return messages;
}
