/**
 * One transform for the whole repo: @swc/jest compiles our TypeScript and the ESM-only
 * packages (@middy) to CommonJS, so jest runs without --experimental-vm-modules.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|jose)/)'],
  setupFiles: ['<rootDir>/test/support/jest-env.ts'],
  testTimeout: 30000,
};
