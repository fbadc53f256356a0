/**
 * The user's own kubectl, for the commands that read or change the cluster (verify's pods check, game-day's NodePool
 * cap): no Kubernetes client library, the kubeconfig and credentials the user already has. Injected, so tests fake it.
 */
import { spawn } from 'node:child_process';

/** Runs kubectl with its arguments (no shell) and returns its standard output. */
export type Kubectl = (args: readonly string[]) => Promise<string>;

/** The most standard output kept from one kubectl run (a large `get -o json`). */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * A failed run: its exit code or signal, and what it printed. kubectl deletes (and patches) one object at a time, so
 * the standard output of a failed `delete a b` names the ones it did delete.
 */
export class KubectlError extends Error {
  constructor(
    args: readonly string[], readonly stdout: string, readonly stderr: string, readonly code: number | null, readonly signal: string | null,
  ) {
    super(`kubectl ${args.join(' ')} failed (${code !== null ? `exit ${code}` : `signal ${signal}`})${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    this.name = 'KubectlError';
  }
}

/**
 * Each run is spawned `detached` (not on Windows): "the child process will be made the leader of a new process group
 * and session" (Node.js docs, child_process, options.detached: https://nodejs.org/api/child_process.html#optionsdetached;
 * setsid(2)), so the Ctrl-C a terminal sends to its foreground process group reaches the game day, which restores, and
 * not the kubectl that is patching the restore. The parent still waits for it ("By default, the parent will wait for the
 * detached child to exit", same page). execFile does not pass `detached` on to spawn (Node 20 lib/child_process.js
 * execFile), hence spawn. `executable`: the kubectl to run (tests give a fake one).
 */
export function kubectl(context?: string, executable = 'kubectl'): Kubectl {
  return (args) => new Promise((resolve, reject) => {
    const all = [...(context ? ['--context', context] : []), ...args];
    const child = spawn(executable, all, { detached: process.platform !== 'win32', windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) child.kill();
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8');
      if (size > MAX_OUTPUT_BYTES) reject(new KubectlError(all, stdout, `standard output over ${MAX_OUTPUT_BYTES} bytes`, code, signal));
      else if (code === 0) resolve(stdout);
      else reject(new KubectlError(all, stdout, Buffer.concat(err).toString('utf8'), code, signal));
    });
  });
}
