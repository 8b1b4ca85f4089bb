import { PLAYGROUND_HTML } from '../../src/local/playground-page';

// The playground's script lives in a template string, where an escape such as `\/` is eaten: a
// regex written there can come out broken and the whole page dead. Parsed here, without a browser.
it('the playground page carries scripts that parse', () => {
  const scripts = [...PLAYGROUND_HTML.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
  expect(scripts.length).toBeGreaterThan(0);
  for (const script of scripts) expect(() => new Function(script)).not.toThrow();
});
