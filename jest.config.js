/** @type {import('jest').Config} */
module.exports = {
  // jest's node environment with a temporary folder per test file, removed when the file ends (see the file).
  testEnvironment: '<rootDir>/test/environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // TypeScript sources win over any stray compiled .js beside them.
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    // isolatedModules: type-checking is `npm run typecheck`'s job; per-file transpiling keeps the suite fast.
    // ts-jest, plus a line binding Math, Number, typed arrays... to module constants: a global read inside jest's vm
    // context is ~50x slower than in plain Node, and the simulator reads Math in every event (see the file).
    '^.+\\.ts$': ['<rootDir>/test/transform.js', { diagnostics: false }],
  },
  globalSetup: '<rootDir>/test/global-setup.js',
  // CDK_VALIDATION=false unless set: see the file.
  setupFiles: ['<rootDir>/test/setup-env.js'],
  // Fails the run when any test was skipped (see the file).
  reporters: ['default', '<rootDir>/test/no-skipped-tests.js'],
  // Synthesizing CDK apps is memory-hungry; two workers match the 2-core CI machines.
  maxWorkers: 2,
  testTimeout: 120000,
};
