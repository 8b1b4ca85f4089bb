/**
 * One transform for the whole repo (test/support/esbuild-jest-transform.js): esbuild compiles our
 * TypeScript and the ESM-only packages (@middy, jose) to CommonJS, so jest runs without
 * --experimental-vm-modules.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': '<rootDir>/test/support/esbuild-jest-transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|jose)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  setupFiles: ['<rootDir>/test/support/jest-env.ts'],
  testTimeout: 30000,
};
