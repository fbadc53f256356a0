/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // TypeScript sources win over any stray compiled .js beside them.
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    // isolatedModules: type-checking is `npm run typecheck`'s job; per-file transpiling keeps the suite fast.
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  globalSetup: '<rootDir>/test/global-setup.js',
  // Fails the run when any test was skipped (see the file).
  reporters: ['default', '<rootDir>/test/no-skipped-tests.js'],
  // Synthesizing CDK apps is memory-hungry; two workers match the 2-core CI machines.
  maxWorkers: 2,
  testTimeout: 120000,
};
