import { isLoopbackHost } from '../../src/net/loopback';

describe('isLoopbackHost', () => {
  it.each(['http://127.0.0.1:8080/', 'http://127.255.255.254/', 'http://127.1/', 'http://localhost/', 'http://LOCALHOST./', 'http://[::1]:80/', 'http://[::ffff:127.0.0.1]/'])(
    '%s is loopback',
    (url) => {
      expect(isLoopbackHost(new URL(url).hostname)).toBe(true);
    },
  );

  it.each(['http://128.0.0.1/', 'http://10.0.0.1/', 'http://[::2]/', 'http://localhost.example.com/', 'http://127.0.0.1.nip.io/', 'http://0.0.0.0/', 'http://example.com/'])(
    '%s is not loopback',
    (url) => {
      expect(isLoopbackHost(new URL(url).hostname)).toBe(false);
    },
  );
});
