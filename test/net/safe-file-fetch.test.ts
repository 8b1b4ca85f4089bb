import { FileFetchError, fetchAllowedFile, isAllowedFileUrl, parseHostAllowlist, type SafeFetchOptions } from '../../src/net/safe-file-fetch';
import { isPublicAddress } from '../../src/net/public-address';
import { startFileHost, type FileHost } from '../support/file-host';

/** The safe URL fetcher (docs/contract.md, "Files") against a real https host on loopback. */

const toLoopback = async () => [{ address: '127.0.0.1', family: 4 }];

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('takes %s as public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', 'files.test'])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe('FILE_URL_ALLOWLIST', () => {
  const allowlist = parseHostAllowlist(' files.example.com, *.cdn.example.net ,');
  it.each([
    ['https://files.example.com/a.csv', true],
    ['https://FILES.example.com./a.csv', true],
    ['https://eu.cdn.example.net/a.png', true],
    ['https://cdn.example.net/a.png', false],
    ['http://files.example.com/a.csv', false],
    ['https://user:pw@files.example.com/a.csv', false],
    ['https://files.example.com.evil.test/a.csv', false],
    ['https://evil.test/files.example.com', false],
  ])('%s allowed: %s', (url, allowed) => {
    expect(isAllowedFileUrl(new URL(url), allowlist)).toBe(allowed);
  });

  it('allows nothing when unset, and refuses an entry that is not a host', () => {
    expect(isAllowedFileUrl(new URL('https://files.example.com/a'), parseHostAllowlist(undefined))).toBe(false);
    expect(() => parseHostAllowlist('https://files.example.com/')).toThrow(/FILE_URL_ALLOWLIST: "https:\/\/files.example.com\/" is not a host name/);
  });
});

describe('fetchAllowedFile', () => {
  let host: FileHost;
  beforeAll(async () => {
    host = await startFileHost();
  });
  afterAll(() => host.close());
  beforeEach(() => host.requests.splice(0));

  const options = (extra: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
    allowlist: parseHostAllowlist('files.test,*.files.test'),
    maxBytes: 1000,
    timeoutMs: 5_000,
    resolve: toLoopback,
    allowPrivateAddresses: true,
    ca: host.ca,
    ...extra,
  });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileFetchError);
    return error as FileFetchError;
  };

  it('fetches a file from an allowed host, sending no credentials', async () => {
    // Act
    const bytes = await fetchAllowedFile(host.urlFor('files.test', '/file/a.csv?bytes=300'), options());
    // Assess
    expect(bytes.length).toBe(300);
    expect(host.requests).toHaveLength(1);
    expect(host.requests[0]!.headers).not.toHaveProperty('authorization');
    expect(host.requests[0]!.headers).not.toHaveProperty('cookie');
  });

  it('refuses a host off the list, fetching nothing', async () => {
    const error = await refusal(fetchAllowedFile(host.urlFor('elsewhere.test', '/file/a.csv'), options()));
    expect(error.reason).toBe('not-allowed');
    expect(host.requests).toHaveLength(0);
  });

  it('refuses plain http, fetching nothing', async () => {
    const error = await refusal(fetchAllowedFile(`http://files.test:${host.port}/file/a.csv`, options()));
    expect(error.reason).toBe('not-allowed');
    expect(host.requests).toHaveLength(0);
  });

  it('follows a redirect within the list, and refuses one off it before fetching there', async () => {
    // Act
    const within = await fetchAllowedFile(host.urlFor('files.test', `/redirect?to=${encodeURIComponent(host.urlFor('other.files.test', '/file/b.csv?bytes=5'))}`), options());
    const off = await refusal(fetchAllowedFile(host.urlFor('files.test', `/redirect?to=${encodeURIComponent(host.urlFor('elsewhere.test', '/file/b.csv'))}`), options()));
    // Assess
    expect(within.length).toBe(5);
    expect(off.reason).toBe('not-allowed');
    expect(host.requests.map((request) => request.url)).toEqual([expect.stringMatching(/^\/redirect/), '/file/b.csv?bytes=5', expect.stringMatching(/^\/redirect/)]);
  });

  it('refuses an allowed name that resolves to a private or loopback address, connecting nowhere', async () => {
    // Act: the real check, without the tests' switch.
    const loopback = await refusal(fetchAllowedFile(host.urlFor('files.test', '/file/a.csv'), options({ allowPrivateAddresses: false })));
    const metadata = await refusal(fetchAllowedFile(host.urlFor('files.test', '/file/a.csv'), options({ allowPrivateAddresses: false, resolve: async () => [{ address: '8.8.8.8', family: 4 }, { address: '169.254.169.254', family: 4 }] })));
    // Assess
    expect(loopback).toMatchObject({ reason: 'not-allowed', message: 'files.test resolves to 127.0.0.1, not a public address' });
    expect(metadata).toMatchObject({ reason: 'not-allowed', message: 'files.test resolves to 169.254.169.254, not a public address' });
    expect(host.requests).toHaveLength(0);
  });

  it('refuses a literal private address even when it is on the list', async () => {
    const error = await refusal(fetchAllowedFile(host.urlFor('127.0.0.1', '/file/a.csv'), options({ allowlist: parseHostAllowlist('127.0.0.1'), allowPrivateAddresses: false })));
    expect(error).toMatchObject({ reason: 'not-allowed', message: '127.0.0.1 is not a public address' });
    expect(host.requests).toHaveLength(0);
  });

  it('refuses a file over the cap: by its declared length, and while reading when it declares none', async () => {
    const declared = await refusal(fetchAllowedFile(host.urlFor('files.test', '/file/big?bytes=5000'), options()));
    const undeclared = await refusal(fetchAllowedFile(host.urlFor('files.test', '/file/big?bytes=200000&chunked'), options()));
    expect(declared).toMatchObject({ reason: 'too-large', message: '5000 bytes, more than 1000' });
    expect(undeclared).toMatchObject({ reason: 'too-large', message: 'more than 1000 bytes' });
  });

  it('gives up on a host that stalls, by its timeout', async () => {
    const error = await refusal(fetchAllowedFile(host.urlFor('files.test', '/slow'), options({ timeoutMs: 200 })));
    expect(error.reason).toBe('timed-out');
  });

  it('refuses a certificate it does not trust', async () => {
    const { ca: _ca, ...untrusting } = options();
    const error = await refusal(fetchAllowedFile(host.urlFor('files.test', '/file/a.csv'), untrusting));
    expect(error.reason).toBe('failed');
  });
});
