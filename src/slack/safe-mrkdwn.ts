/**
 * Makes a reply safe to post as Slack mrkdwn (docs/architecture.md §2.4). The text comes from a
 * model (or, with the echo executor, from the user), so it must not be able to broadcast or to
 * disguise a link. Slack treats `&`, `<` and `>` as control characters and decodes only `&amp;`,
 * `&lt;` and `&gt;` ("Formatting text for app surfaces", Escaping text); everything Slack would
 * act on is a `<…>` sequence, so each one is read and either kept, rewritten or escaped:
 *
 * | in the text | posted as | why |
 * |---|---|---|
 * | `<!here>`, `<!channel>`, `<!everyone>`, `<!group>` (with or without `\|label`) | `@here`, `@channel`, … as plain text | no broadcast; the reader still sees what was meant |
 * | `<!subteam^S123\|@team>` (a user-group ping) | `@team` (`@S123` without a label) | no group ping |
 * | any other `<!…>` but `<!date^…>` | the literal text, escaped | Slack may act on commands we do not know |
 * | `<!date^…\|fallback>` | kept, without its optional `^link` | a date shown in the reader's time zone; notifies no one and leads nowhere |
 * | `<@U123>` / `<@W123\|label>` (a user mention) | `<@U123>`, the label dropped | kept: it addresses one person and is often wanted ("<@U123>, here is…"); without a label Slack always shows the real name |
 * | `<#C123\|name>` (a channel link) | kept | notifies no one; Slack shows the real channel name |
 * | `<https://a\|label>`, `<mailto:…\|label>`, `<https://a>` | kept | an ordinary link |
 * | `<https://evil\|https://bank>`: a label with an address that is not where the link goes | `<https://evil>` | the link shows its real target |
 * | any other `<…>`, e.g. `<div>` or `Map<K, V>`, and a stray `<`, `>` or `&` | `&lt;div&gt;`, `&amp;` … | shown as written, never parsed by Slack |
 * | `&amp;`, `&lt;`, `&gt;` | kept | already escaped text |
 * | `>` at the start of a line | kept | a block quote, as mrkdwn means it |
 *
 * Plain `@channel` text is not a mention: Slack links it only when chat.postMessage is sent
 * `link_names` or `parse=full`, and the poster sends neither (test/slack/safe-mrkdwn.test.ts checks
 * the request). Code blocks get the same treatment: Slack parses `<…>` inside them too. The result
 * is stable: running it again changes nothing. Linear in the text's length.
 */
export function toSafeMrkdwn(text: string): string {
  // One pass; unchanged stretches of the text are copied as slices.
  const parts: string[] = [];
  let copied = 0;
  const replace = (at: number, length: number, replacement: string) => {
    parts.push(text.slice(copied, at), replacement);
    copied = at + length;
  };
  // Where the last `>` kept as a quote marker ended, so `>>>` (a multi-line quote) stays whole.
  let quoteMarkerEnd = -1;
  const controlCharacter = /[<>&]/g;
  for (let found = controlCharacter.exec(text); found; found = controlCharacter.exec(text)) {
    const at = found.index;
    switch (text.charCodeAt(at)) {
      case LESS_THAN: {
        const end = sequenceEnd(text, at);
        if (end === -1) {
          replace(at, 1, '&lt;');
        } else {
          replace(at, end + 1 - at, controlSequence(text.slice(at + 1, end)));
          controlCharacter.lastIndex = end + 1;
        }
        break;
      }
      case AMPERSAND:
        if (!ENTITY_NAMES.some((name) => text.startsWith(name, at + 1))) replace(at, 1, '&amp;');
        break;
      default:
        if (at === 0 || text.charCodeAt(at - 1) === NEWLINE || at === quoteMarkerEnd) quoteMarkerEnd = at + 1;
        else replace(at, 1, '&gt;');
    }
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
const AMPERSAND = 0x26;
const NEWLINE = 0x0a;
/** The entities Slack decodes, after their `&`. */
const ENTITY_NAMES = ['amp;', 'lt;', 'gt;'];

/**
 * The index of the `>` that closes the `<` at `start`, or -1: a sequence is one line with nothing
 * nested. Each scan stops at the next `<`, so the whole text is read at most twice.
 */
function sequenceEnd(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === GREATER_THAN) return at;
    if (code === LESS_THAN || code === NEWLINE) return -1;
  }
  return -1;
}

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;
const BROADCAST = /^(?:here|channel|everyone|group)$/i;
const USER_GROUP = /^subteam\^([A-Z0-9]+)$/;
const DATE = /^date\^\d+\^/;
const LINK_TARGET = /^(?:https?|mailto):\S+$/i;

/** Escapes `&` that does not begin one of the three entities; the text has no `<` or `>` (sequenceEnd saw to that). */
const escapeAmpersands = (text: string) => text.replace(/&(?!(?:amp|lt|gt);)/g, '&amp;');
const literal = (body: string) => `&lt;${escapeAmpersands(body)}&gt;`;
const decode = (text: string) => text.replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name]!);

function controlSequence(body: string): string {
  const bar = body.indexOf('|');
  const target = bar === -1 ? body : body.slice(0, bar);
  const label = bar === -1 ? undefined : body.slice(bar + 1);
  switch (target[0]) {
    case '@':
      return USER_ID.test(target.slice(1)) ? `<${target}>` : literal(body);
    case '#':
      return CHANNEL_ID.test(target.slice(1)) ? `<${target}${label === undefined ? '' : `|${escapeAmpersands(label)}`}>` : literal(body);
    case '!':
      return specialCommand(target.slice(1), label, body);
    default:
      return link(target, label, body);
  }
}

function specialCommand(command: string, label: string | undefined, body: string): string {
  if (BROADCAST.test(command)) return `@${command}`;
  const group = USER_GROUP.exec(command);
  if (group) return `@${escapeAmpersands(label?.replace(/^@/, '').trim() || group[1]!)}`;
  if (DATE.test(command)) {
    // `date^<unix time>^<format>[^<link>]`: the optional link goes; a date is not a link.
    const [, time, format] = command.split('^');
    return `<!date^${time}^${escapeAmpersands(format!)}${label === undefined ? '' : `|${escapeAmpersands(label)}`}>`;
  }
  return literal(body);
}

function link(target: string, label: string | undefined, body: string): string {
  if (!LINK_TARGET.test(target)) return literal(body);
  const href = escapeAmpersands(target);
  if (label === undefined || label.trim() === '' || labelMisleads(decode(target), decode(label))) return `<${href}>`;
  return `<${href}|${escapeAmpersands(label)}>`;
}

/** An address a label shows: a web address (host and what follows it) or an email address. */
type Shown = { kind: 'web'; scheme?: string; host: string; rest: string } | { kind: 'email'; address: string };

/** True when some word of the label reads as an address other than the link's target. */
export function labelMisleads(target: string, label: string): boolean {
  const destination = addressOf(target, true);
  for (const word of label.split(/\s+/)) {
    const shown = addressOf(word.replace(WORD_EDGES, ''), false);
    if (shown && !(destination && leadsTo(shown, destination))) return true;
  }
  return false;
}

/** Formatting and punctuation around a word: `*https://a.example*`, `(bank.example).` */
const WORD_EDGES = /^[*_~`("'“‘[{]+|[*_~`)"'”’\]},.;:!?]+$/g;
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const EMAIL = /^[^\s@/:]+@[^\s@/:]+\.[^\s@/:]+$/;
/** `host.tld` with an optional port and path; the last label is letters only ("3.14" is no address). */
const BARE_HOST = /^(?:[\p{L}\p{N}-]+\.)+(\p{L}{2,})(?::\d+)?(?:[/?#]\S*)?$/u;
/** Endings that make a word a file name, not a host, in a label like `README.md` or `Node.js`. */
const FILE_ENDINGS = new Set(
  'md txt json js mjs cjs ts tsx jsx py rb go rs java kt swift c h cpp cs php sh ps1 yml yaml toml lock xml html htm css csv log sql pdf png jpg jpeg gif svg zip gz tar ini cfg conf env tf ipynb'.split(' '),
);

function addressOf(word: string, isTarget: boolean): Shown | undefined {
  if (/^mailto:/i.test(word)) return { kind: 'email', address: safeDecode(word.slice('mailto:'.length).split('?')[0]!).toLowerCase() };
  if (!isTarget && EMAIL.test(word)) return { kind: 'email', address: word.toLowerCase() };
  const scheme = SCHEME.exec(word)?.[1];
  let url: URL | undefined;
  if (scheme) url = parseUrl(word);
  else if (!isTarget && (/^www\./i.test(word) || isBareHost(word))) url = parseUrl(`http://${word}`);
  else return undefined;
  // An address that does not even parse matches nothing.
  if (!url) return { kind: 'web', host: '', rest: word };
  const rest = url.pathname + url.search + url.hash;
  return { kind: 'web', ...(scheme ? { scheme: scheme.toLowerCase() } : {}), host: url.host.replace(/^www\./, ''), rest: rest === '/' ? '' : rest };
}

function isBareHost(word: string): boolean {
  const tld = BARE_HOST.exec(word)?.[1];
  return tld !== undefined && !FILE_ENDINGS.has(tld.toLowerCase());
}

/** The label's address is the target's: same host (and scheme, if the label states one), and the target is at or below the label's path. */
function leadsTo(shown: Shown, destination: Shown): boolean {
  if (shown.kind === 'email') return destination.kind === 'email' && shown.address === destination.address;
  if (destination.kind === 'email') return false;
  if (!shown.host || shown.host !== destination.host) return false;
  if (shown.scheme && shown.scheme !== destination.scheme) return false;
  return destination.rest.startsWith(shown.rest.replace(/\/$/, ''));
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
