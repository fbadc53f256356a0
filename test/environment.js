// The test environment of every suite: jest's node environment, with a temporary folder of its own for each test
// file. Every synth writes a cloud assembly to a new folder under os.tmpdir() (aws-cdk-lib's App, when no outdir is
// given), with a copy of each asset: the EKS kubectl and AWS CLI layers are ~60 MB per synth. A run of the suite
// synthesizes hundreds of apps, which filled the disk of a CI machine (ENOSPC). Here TMPDIR points at a folder made
// for the file and removed when it ends, so the disk holds at most one file's assemblies per worker.
//
// This runs in the worker's own context (not the test sandbox), so it sets the TMPDIR that os.tmpdir() reads.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

class PerFileTmpEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    this.previousTmpdir = process.env.TMPDIR;
    this.tmp = mkdtempSync(join(tmpdir(), 'cai-test-'));
    process.env.TMPDIR = this.tmp;
    this.global.process.env.TMPDIR = this.tmp;
  }

  async teardown() {
    if (this.previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = this.previousTmpdir;
    rmSync(this.tmp, { recursive: true, force: true });
    await super.teardown();
  }
}

module.exports = PerFileTmpEnvironment;
