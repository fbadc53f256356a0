/**
 * The user's own kubectl, for the commands that read or change the cluster (verify's pods check, game-day's NodePool
 * cap): no Kubernetes client library, the kubeconfig and credentials the user already has. Injected, so tests fake it.
 */
import { spawn } from 'node:child_process';
import { CLI_HTTP_TIMEOUTS } from '../lib/core/sdk-client-profiles';

/** Runs kubectl with its arguments (no shell) and returns its standard output. */
export type Kubectl = (args: readonly string[]) => Promise<string>;

/** The most standard output kept from one kubectl run (a large `get -o json`). */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** How long kubectl may wait, in seconds. */
export interface KubectlTimeouts {
  /**
   * Each request to the API server: kubectl's `--request-timeout` ("The length of time to wait before giving up on a
   * single server request ... A value of zero means don't timeout requests", default "0":
   * https://kubernetes.io/docs/reference/kubectl/generated/kubectl_options/). The same bound as an AWS call's attempt
   * of the commands (CLI_HTTP_TIMEOUTS, lib/core/sdk-client-profiles.ts).
   */
  readonly requestSeconds: number;
  /**
   * The whole run, the backstop for what no request timeout covers (an exec credential plugin that hangs, several
   * requests one after another). Then its process group is sent SIGTERM: the run is its group's leader (detached,
   * below), and a process it started (an exec credential plugin) is in that group and may hold a pipe it inherited, so
   * killing kubectl alone (Node's spawn `timeout`) could leave the run waiting for the pipe to close.
   */
  readonly runSeconds: number;
}

export const KUBECTL_TIMEOUTS: KubectlTimeouts = { requestSeconds: CLI_HTTP_TIMEOUTS.requestTimeoutMs / 1000, runSeconds: 120 };

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
export function kubectl(context?: string, executable = 'kubectl', timeouts: KubectlTimeouts = KUBECTL_TIMEOUTS): Kubectl {
  return (args) => new Promise((resolve, reject) => {
    const all = [...(context ? ['--context', context] : []), `--request-timeout=${timeouts.requestSeconds}s`, ...args];
    const detached = process.platform !== 'win32';
    const child = spawn(executable, all, { detached, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (detached && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
        else child.kill();
      } catch {
        // already gone
      }
    }, timeouts.runSeconds * 1000);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) child.kill();
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      if (timedOut) reject(new KubectlError(all, stdout, `no end within ${timeouts.runSeconds} s: stopped`, code, signal));
      else if (size > MAX_OUTPUT_BYTES) reject(new KubectlError(all, stdout, `standard output over ${MAX_OUTPUT_BYTES} bytes`, code, signal));
      else if (code === 0) resolve(stdout);
      else reject(new KubectlError(all, stdout, Buffer.concat(err).toString('utf8'), code, signal));
    });
  });
}
