// Lambda constructs deploy prebuilt bundles from assets/lambda; build them once before the suite.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = async () => {
  execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'bundle-lambdas.mjs')], {
    stdio: 'inherit',
    env: { ...process.env, QUIET_BUNDLE: '1' },
  });
};
