// Jest transform: esbuild compiles our TypeScript and the ESM-only packages (@middy, jose) to
// CommonJS. Chosen over @swc/jest because esbuild is already the bundler, and swc's per-platform
// binaries are not all on the registry mirror `npm ci` installs from.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync, version } = require('esbuild');

// Cached output must change when this file or esbuild changes, not only when the source does.
const SELF = createHash('sha256').update(readFileSync(__filename)).update(version).digest('hex');

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha256').update(SELF).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    const loader = filename.endsWith('.ts') ? 'ts' : 'js';
    const { code, map } = transformSync(source, {
      loader,
      format: 'cjs',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
      // jest's CommonJS runtime cannot run import() without --experimental-vm-modules: make it require().
      supported: { 'dynamic-import': false },
      // Packages written as ESM may read import.meta.url; jest runs them as CommonJS.
      define: loader === 'js' ? { 'import.meta.url': '__importMetaUrl' } : undefined,
      banner: loader === 'js' ? "var __importMetaUrl = require('url').pathToFileURL(__filename).href;" : undefined,
    });
    return { code, map };
  },
};
