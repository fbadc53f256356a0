// The static checks `npm test` runs before jest, in two lanes at once (the CI machines have 2 cores; tsc and the
// README compile are mostly single-threaded): `npm run typecheck` then the README examples, and `npm run lint` then
// the vendored schema digests. Each lane's output is printed whole when it ends, so lanes never interleave; the exit
// code is 1 when any check fails.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const lanes = [
  [[npm, ['run', '--silent', 'typecheck']], [process.execPath, ['scripts/check-readme.mjs']]],
  [[npm, ['run', '--silent', 'lint']], [process.execPath, ['scripts/check-schemas.mjs']]],
];

function run([command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('error', (e) => resolve({ ok: false, output: `${output}${command}: ${e.message}\n` }));
    child.on('close', (code) => resolve({ ok: code === 0, output }));
  });
}

async function lane(steps) {
  for (const step of steps) {
    const { ok, output } = await run(step);
    const label = [step[0] === npm ? 'npm' : 'node', ...step[1]].join(' ');
    process.stdout.write(`> ${label}${ok ? '' : ' FAILED'}\n${output}`);
    if (!ok) return false;
  }
  return true;
}

const results = await Promise.all(lanes.map(lane));
if (results.includes(false)) process.exitCode = 1;
