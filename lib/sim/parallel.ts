import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type Job, type JobResult, runJob } from './suite';

export interface RunJobsOptions {
  /** Worker threads; 1 runs in this thread. @default the number of CPUs */
  readonly concurrency?: number;
  /** Called after each job, e.g. to print progress; `index` is the finished job's position in `jobs`. */
  readonly onProgress?: (done: number, total: number, last: JobResult, index: number) => void;
}

/**
 * Runs jobs on worker threads (each job: one scenario and seed, every policy), returning results in job order.
 * From TypeScript sources (ts-node in development) the workers register ts-node themselves.
 */
export async function runJobs(jobs: readonly Job[], options: RunJobsOptions = {}): Promise<JobResult[]> {
  const concurrency = Math.max(1, Math.min(options.concurrency ?? cpus().length, jobs.length));
  const results: JobResult[] = new Array(jobs.length);
  let done = 0;
  if (concurrency === 1) {
    jobs.forEach((job, i) => {
      results[i] = runJob(job);
      options.onProgress?.(++done, jobs.length, results[i], i);
    });
    return results;
  }
  const fromSource = extname(__filename) === '.ts';
  const file = join(__dirname, `worker${extname(__filename)}`);
  const project = resolve(__dirname, '..', '..', 'tsconfig.json');
  let next = 0;
  const workers: Worker[] = [];
  try {
    await Promise.all(Array.from({ length: concurrency }, () => new Promise<void>((resolvePool, rejectPool) => {
      const worker = new Worker(file, {
        execArgv: fromSource ? ['--require', 'ts-node/register/transpile-only'] : [],
        env: fromSource && existsSync(project) ? { ...process.env, TS_NODE_PROJECT: project } : process.env,
      });
      workers.push(worker);
      let current = -1;
      const feed = () => {
        if (next >= jobs.length) {
          resolvePool();
          return;
        }
        current = next++;
        worker.postMessage(jobs[current]);
      };
      worker.on('message', (msg: { ok: boolean; result?: JobResult; error?: string }) => {
        if (!msg.ok || !msg.result) {
          rejectPool(new Error(`Job ${JSON.stringify(jobs[current])} failed: ${msg.error}`));
          return;
        }
        results[current] = msg.result;
        options.onProgress?.(++done, jobs.length, msg.result, current);
        feed();
      });
      worker.on('error', rejectPool);
      feed();
    })));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}
