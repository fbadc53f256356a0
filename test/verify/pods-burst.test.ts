/**
 * verify's pods-Ready check (the Deployment manifest in the deployed template against a faked `kubectl get pods -o
 * json`) and the opt-in --burst (a local HTTP server on 127.0.0.1 standing in for an engine with a bounded queue).
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import { clients, main, parseArgs, runVerify, sendBurst, UsageError } from '../../bin/verify';
import { serverAdmission } from '../../lib/core/runtime/admission';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { type ServiceContract } from '../../lib/core/service/contract';
import { SERVING_RECORD_METADATA_KEY, servingRecord } from '../../lib/core/service/serving-record';
import { planCapacity } from '../../lib/core/service/sizing';
import { burstCheck, burstPlan, type BurstPlan } from '../../lib/core/verify/burst';
import { podsReadyCheck, type PodList, renderedWorkloads } from '../../lib/core/verify/pods';
import { llamaChatSpecs } from '../../lib/sim/services';
import { cfn, conformingAccount, resetAccount, TEMPLATE } from './account';

beforeEach(resetAccount);

const ARGS = ['/opt/model', '--max-num-queued-reqs', '25'];
const ENV = [{ name: 'CAI_CLASS', value: 'inf2' }, { name: 'MODEL_BUCKET', value: 'TOKEN_HERE' }, { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }];

/** The manifest as the EKS service's Workload resource carries it: JSON text, here with a reference inside (Fn::Join). */
function workloadResource() {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'sd21-inf2', namespace: 'serving', labels: { 'capacity-aware-inference/class': 'inf2' } },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': 'model-server', 'app.kubernetes.io/instance': 'sd21-inf2' } },
      template: { spec: { containers: [{ name: 'model-server', args: ARGS, env: ENV }] } },
    },
  };
  const [head, tail] = JSON.stringify([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'serving' } }, deployment]).split('TOKEN_HERE');
  return { Type: 'Custom::AWSCDK-EKS-KubernetesResource', Properties: { Manifest: { 'Fn::Join': ['', [head, 's3://', { Ref: 'Bucket' }, '/m', tail]] } } };
}

const READY_ENV = [
  { name: 'CAI_CLASS', value: 'inf2' }, { name: 'MODEL_BUCKET', value: 's3://models-123/m' }, { name: 'POD_IP', value: '10.0.0.1' },
  { name: 'AWS_CONTAINER_CREDENTIALS_FULL_URI', value: 'x' },
];

const pod = (name: string, ready: boolean, args = ARGS, env = READY_ENV) => ({
  metadata: { name }, spec: { containers: [{ name: 'model-server', args, env }] }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('pods-Ready check', () => {
  const template = { Resources: { Workload: workloadResource() } };

  test('reads the class Deployment the template applies, a token in a value read as a wildcard', () => {
    const [w] = renderedWorkloads(template);
    expect(w).toMatchObject({ className: 'inf2', namespace: 'serving', deploymentName: 'sd21-inf2', selector: 'app.kubernetes.io/name=model-server,app.kubernetes.io/instance=sd21-inf2' });
    expect(w.containers[0].env.map((e) => e.name)).toEqual(['CAI_CLASS', 'MODEL_BUCKET', 'POD_IP']);
  });

  test('passes when every pod is Ready with the rendered args and variables (extra variables allowed)', () => {
    const r = podsReadyCheck(renderedWorkloads(template)[0], { items: [pod('a', true), pod('b', true)] });
    expect(r).toMatchObject({ status: 'pass', detail: '2 pod(s) Ready, args and 3 rendered variables as rendered' });
  });

  test('fails on a pod not Ready, on other args, on another value, naming each', () => {
    const w = renderedWorkloads(template)[0];
    expect(podsReadyCheck(w, { items: [pod('a', false)] })).toMatchObject({ status: 'fail', detail: 'a is not Ready' });
    expect(podsReadyCheck(w, { items: [pod('a', true, ['--model', '/opt/model'])] }).detail).toMatch(/^a: model-server args are \["--model","\/opt\/model"\], rendered/);
    const wrong = podsReadyCheck(w, { items: [pod('a', true, ARGS, [{ name: 'CAI_CLASS', value: 'a10g' }, { name: 'MODEL_BUCKET', value: 'gs://x' }])] });
    expect(wrong.detail).toBe('a: model-server CAI_CLASS="a10g", rendered "inf2"; a: model-server MODEL_BUCKET="gs://x", rendered "s3://{token}/m"; a: model-server has no POD_IP');
  });

  test('pods that ended (an evicted one stays listed, Failed) or are being deleted are not judged; the serving ones are', () => {
    const w = renderedWorkloads(template)[0];
    const evicted = { ...pod('evicted', false), status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False' }] } };
    const done = { ...pod('done', false), status: { phase: 'Succeeded' } };
    const leaving = { ...pod('old', false), metadata: { name: 'old', deletionTimestamp: '2026-12-05T04:00:00Z' } };
    expect(podsReadyCheck(w, { items: [evicted, done, leaving, pod('a', true)] })).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^1 pod\(s\) Ready/) });
    expect(podsReadyCheck(w, { items: [evicted, pod('b', false)] })).toMatchObject({ status: 'fail', detail: 'b is not Ready' });
    expect(podsReadyCheck(w, { items: [evicted] }).status).toBe('skip');
  });

  test('no pods: skipped, not passed', () => {
    expect(podsReadyCheck(renderedWorkloads(template)[0], { items: [] }).status).toBe('skip');
  });

  test('the command asks kubectl for the pods of each class (and fails the check when kubectl cannot answer)', async () => {
    conformingAccount();
    const body = { ...TEMPLATE, Resources: { ...TEMPLATE.Resources, Workload: workloadResource() } };
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(body) });
    const calls: string[][] = [];
    const pods: PodList = { items: [pod('sd21-inf2-1', true)] };
    const out: string[] = [];
    const code = await main(['--stack', 'Svc', '--region', 'us-east-1', '--kube-context', 'prod'], { out: (l) => out.push(l), err: (l) => out.push(l) }, clients, (context) => async (args) => {
      calls.push([String(context), ...args]);
      return JSON.stringify(pods);
    });
    expect(out.filter((l) => !l.startsWith('PASS') && !/passed, 0 failed/.test(l))).toEqual([]);
    expect(code).toBe(0);
    expect(calls).toEqual([['prod', 'get', 'pods', '-n', 'serving', '-l', 'app.kubernetes.io/name=model-server,app.kubernetes.io/instance=sd21-inf2', '-o', 'json']]);
    expect(out.join('\n')).toContain("PASS  class inf2's pods (serving/sd21-inf2) are Ready with the flags and environment the library rendered");
    const failing = await runVerify('Svc', clients('us-east-1'), { kubectl: async () => {
      throw new Error('error: context "prod" does not exist');
    } });
    expect(failing.find((r) => r.id === 'pods:serving/sd21-inf2')).toMatchObject({ status: 'fail', detail: expect.stringContaining('context "prod" does not exist') });
  });
});

describe('--burst', () => {
  const contract: ServiceContract = {
    name: 'sd21', slo: { ttftP95Ms: 1500, itlP95Ms: 50, deadlineMs: 6000 }, requestShape: { meanPromptTokens: 8, meanOutputTokens: 100 }, peakRequestsPerSecond: 10,
  };
  const specs = llamaChatSpecs().filter((s) => s.name !== 'inf2');
  // a10g on TGI (sheds with 429, a hard bound) and l40s on vLLM (503, arrivals spaced).
  const classes = defineCapacityClasses(specs.map((s) => (s.name === 'a10g' ? { ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.3.7' } } : { ...s, runtime: { ...s.runtime, engineVersion: '0.29.0' } })), { contract, platform: 'ec2' });
  const tgi = classes.find((c) => c.name === 'a10g')!;
  const vllm = classes.find((c) => c.name === 'l40s')!;
  const tgiBound = serverAdmission(tgi, contract).maxInFlight!;

  /** An engine on 127.0.0.1: admits `limit` in flight, holds each 300 ms, sheds the rest at once with `status`. */
  async function engine(limit: number, status: number, path: string): Promise<{ server: Server; url: string; bodies: unknown[] }> {
    let inFlight = 0;
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        bodies.push({ method: req.method, url: req.url, body: JSON.parse(body) });
        if (req.url !== path) return void res.writeHead(404).end();
        if (inFlight >= limit) return void res.writeHead(status).end('{"error":"overloaded"}');
        inFlight++;
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"generated_text":"x"}');
        }, 300);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
  }
  const close = (s: Server) => new Promise((resolve) => s.close(resolve));

  test('the plan: the bound the library set, a few requests above it, the contract request shape, each engine its route', () => {
    const plan = burstPlan(tgi, contract, 'http://127.0.0.1:8080/') as BurstPlan;
    expect(plan).toMatchObject({
      url: 'http://127.0.0.1:8080/generate', bound: tgiBound, requests: tgiBound + Math.max(2, Math.ceil(tgiBound / 4)), staggerMs: 0, rejectionStatus: 429,
      body: { inputs: 'hello hello hello hello hello hello hello hello', parameters: { max_new_tokens: 100 } }, timeoutMs: 12000,
    });
    expect(burstPlan(vllm, contract, 'http://x')).toMatchObject({ url: 'http://x/v1/completions', rejectionStatus: 503, staggerMs: 50, body: { max_tokens: 100 } });
    expect(burstPlan({ ...tgi, runtime: { ...tgi.runtime, engine: 'triton' } }, contract, 'http://x')).toEqual({ skip: expect.stringContaining("engine 'triton'") });
  });

  test('passes when the engine sheds with its own status above the bound (local TGI stand-in)', async () => {
    const e = await engine(tgiBound, 429, '/generate');
    try {
      const plan = burstPlan(tgi, contract, e.url) as BurstPlan;
      const answers = await sendBurst(plan);
      expect(answers.filter((a) => a === 429)).toHaveLength(plan.requests - tgiBound);
      expect(burstCheck(plan, answers)).toMatchObject({ status: 'pass' });
      expect(e.bodies[0]).toEqual({ method: 'POST', url: '/generate', body: plan.body });
    } finally {
      await close(e.server);
    }
  });

  test('fails when nothing is shed, when it sheds below the bound, or with another status', async () => {
    const cases = [[1000, 429, /nothing was shed/], [tgiBound - 3, 429, /sheds below the bound/], [tgiBound, 503, /nothing was shed/]] as const;
    for (const [limit, status, why] of cases) {
      const e = await engine(limit, status, '/generate');
      try {
        const plan = burstPlan(tgi, contract, e.url) as BurstPlan;
        const r = burstCheck(plan, await sendBurst(plan));
        expect(r.status).toBe('fail');
        expect(r.detail).toMatch(why);
      } finally {
        await close(e.server);
      }
    }
  });

  test('a refused connection or a timeout counts as an error, never as shed', async () => {
    const plan = { ...(burstPlan(tgi, contract, 'http://127.0.0.1:9') as BurstPlan), requests: 3, timeoutMs: 500 };
    expect(await sendBurst(plan)).toEqual(['error', 'error', 'error']);
  });

  test('the command bursts the class named, from the serving record in the template', async () => {
    conformingAccount();
    const record = servingRecord('eks', contract, classes, planCapacity(contract, classes));
    const body = { ...TEMPLATE, Metadata: { [SERVING_RECORD_METADATA_KEY]: { sd21: record } } };
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(body) });
    const e = await engine(tgiBound, 429, '/generate');
    try {
      const results = await runVerify('Svc', clients('us-east-1'), { bursts: [{ className: 'a10g', url: e.url }] });
      expect(results.find((r) => r.id === 'burst:a10g')).toMatchObject({ status: 'pass', settles: `class a10g (tgi) sheds with 429 above the bound the library set (${tgiBound} in flight per replica)` });
      await expect(runVerify('Svc', clients('us-east-1'), { bursts: [{ className: 'h100', url: e.url }] })).rejects.toThrow(/--burst h100: no class of that name .*l40s, a10g/);
    } finally {
      await close(e.server);
    }
  });

  test('--burst takes <class>=<url>, once per class', () => {
    expect(parseArgs(['--stack', 'S', '--burst', 'a10g=http://127.0.0.1:8080']).bursts).toEqual([{ className: 'a10g', url: 'http://127.0.0.1:8080' }]);
    expect(() => parseArgs(['--stack', 'S', '--burst', 'a10g'])).toThrow(UsageError);
    expect(() => parseArgs(['--stack', 'S', '--burst', 'a=http://x', '--burst', 'a=http://y'])).toThrow(/class a twice/);
  });
});
