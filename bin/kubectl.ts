/**
 * The user's own kubectl, for the commands that read or change the cluster (verify's pods check, game-day's NodePool
 * cap): no Kubernetes client library, the kubeconfig and credentials the user already has. Injected, so tests fake it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs kubectl with its arguments (no shell) and returns its standard output. */
export type Kubectl = (args: readonly string[]) => Promise<string>;

export function kubectl(context?: string): Kubectl {
  const run = promisify(execFile);
  return async (args) => (await run('kubectl', [...(context ? ['--context', context] : []), ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
}
