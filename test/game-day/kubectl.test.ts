// The user's kubectl as game-day and verify run it: a child outside the terminal's process group (Ctrl-C must not kill
// a restore's patch), its output returned, and a failure carrying what it printed. A fake kubectl on PATH (offline).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl, KubectlError, KUBECTL_TIMEOUTS } from '../../bin/kubectl';

const bin = join(process.env.TMPDIR!, 'fake-bin');
const fake = join(bin, 'kubectl');

beforeAll(() => {
  mkdirSync(bin, { recursive: true });
  // Prints its arguments and its process group and session; fails (after printing) when asked to.
  writeFileSync(join(bin, 'kubectl'), [
    '#!/bin/sh',
    'echo "args $*"',
    'echo "ids $$ $(ps -o pgid= -p $$ | tr -d \' \') $(ps -o sid= -p $$ | tr -d \' \')"',
    'case "$*" in *fail*) echo \'nodeclaim.karpenter.sh "a" deleted\'; echo \'Error from server (Forbidden): "b"\' >&2; exit 1;; esac',
    // An exec credential plugin that never returns: a child in kubectl's process group holding its standard error.
    'case "$*" in *hang*) sleep 600 >&2 & wait;; esac',
    '',
  ].join('\n'));
  chmodSync(fake, 0o755);
});

test('kubectl runs in its own process group and session, so the terminal\'s Ctrl-C does not reach it', async () => {
  const out = await kubectl('prod', fake)(['get', 'nodepool', 'x']);
  expect(out.split('\n')[0]).toBe('args --context prod --request-timeout=20s get nodepool x');
  const [, pid, pgid, sid] = out.split('\n')[1].split(' ').map(Number);
  expect(pgid).toBe(pid);
  expect(sid).toBe(pid);
  expect(pgid).not.toBe(Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(process.pid)]).toString().trim()));
});

test('a failure carries what kubectl printed: the objects it deleted before failing, and its error', async () => {
  const e = await kubectl(undefined, fake)(['delete', 'nodeclaim', 'a', 'b', 'fail']).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(KubectlError);
  expect((e as KubectlError).stdout).toContain('nodeclaim.karpenter.sh "a" deleted');
  expect((e as KubectlError).message).toBe('kubectl --request-timeout=20s delete nodeclaim a b fail failed (exit 1): Error from server (Forbidden): "b"');
});

test('each request to the API server gives up after 20 s (kubectl\'s own default, 0, waits for ever)', async () => {
  expect(KUBECTL_TIMEOUTS.requestSeconds).toBe(20);
  expect((await kubectl(undefined, fake)(['get', 'pods'])).split('\n')[0]).toBe('args --request-timeout=20s get pods');
});

test('a run that does not end is stopped, with what it started: the call fails instead of waiting', async () => {
  const e = await kubectl(undefined, fake, { requestSeconds: 1, runSeconds: 1 })(['get', 'hang']).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(KubectlError);
  expect((e as KubectlError).message).toBe('kubectl --request-timeout=1s get hang failed (signal SIGTERM): no end within 1 s: stopped');
}, 30_000);
