// A jest reporter that fails the run when any test was skipped (test.skip, test.todo, or the rest of a file with
// test.only): a green suite must mean every test ran, on a fresh clone as in CI. Choosing tests on purpose with
// -t/--testNamePattern is exempt, since jest reports the others as skipped.
const { relative } = require('node:path');

class NoSkippedTests {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    if (this.globalConfig.testNamePattern) return;
    const skipped = results.testResults.flatMap((file) =>
      file.testResults
        .filter((t) => t.status === 'pending' || t.status === 'todo' || t.status === 'skipped')
        .map((t) => `${relative(this.globalConfig.rootDir, file.testFilePath)}: ${t.fullName} (${t.status})`),
    );
    if (skipped.length > 0) {
      this.error = new Error(`${skipped.length} test(s) did not run; no test may be skipped:\n  ${skipped.join('\n  ')}`);
      process.stderr.write(`\n${this.error.message}\n`);
    }
  }

  getLastError() {
    return this.error;
  }
}

module.exports = NoSkippedTests;
