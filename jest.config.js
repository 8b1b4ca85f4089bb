/**
 * One transform for the whole repo (test/support/esbuild-jest-transform.js): esbuild compiles our
 * TypeScript and the ESM-only packages (@middy, jose) to CommonJS, so jest runs without
 * --experimental-vm-modules.
 * @type {import('jest').Config}
 */
const os = require('node:os');

module.exports = {
  testEnvironment: 'node',
  // Most suites wait on loopback servers, not the CPU: jest's default (cores − 1, so one worker on
  // two cores) leaves the machine idle. 1.5 workers a core, 2 to 4, runs the suite in ~2.5 min
  // instead of ~6 on two cores.
  maxWorkers: Math.max(2, Math.min(4, Math.ceil(os.cpus().length * 1.5))),
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The deployment rehearsal needs tools/rehearse's own install (Node 22 and aws-lambda-ric, a native
  // build with cmake): not on a machine with only Node, so `npm test` leaves it to
  // `npm run test:rehearse`, which CI runs after it (.ci/run).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/rehearse/'],
  transform: {
    '^.+\\.(t|j|mj)s$': '<rootDir>/test/support/esbuild-jest-transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|jose)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  setupFiles: ['<rootDir>/test/support/jest-env.ts'],
  testTimeout: 30000,
};
