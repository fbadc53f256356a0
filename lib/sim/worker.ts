import { parentPort } from 'node:worker_threads';
import { type Job, runJob } from './suite';

// Worker-thread entry of runJobs(): runs one job per message.
parentPort?.on('message', (job: Job) => {
  try {
    parentPort?.postMessage({ ok: true, result: runJob(job) });
  } catch (e) {
    parentPort?.postMessage({ ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
});
