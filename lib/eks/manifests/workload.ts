import { SERVING_CONTAINER, SERVING_PORT_NAME } from '../../core/runtime/engine-metrics';
import { type ModelDataLanding, modelDataShape } from '../../core/service/model-archive';
import { classTaints, tolerationOf } from './karpenter';
import {
  type Container,
  type Deployment,
  type InitContainer,
  type Namespace,
  type PodDisruptionBudget,
  type PriorityClass,
  type Probe,
  type Service,
  type ServiceAccount,
} from './types';

/** UID/GID the model server runs as: not root (the namespace enforces the `restricted` Pod Security Standard). */
export const SERVER_UID = 1000;

/** Mount point of the model volume (an emptyDir) in every container of the pod. */
export const MODEL_VOLUME_PATH = '/models';
/** Where the init container leaves the verified model: the server's model path. */
export const MODEL_DATA_DIR = `${MODEL_VOLUME_PATH}/model`;

/** One S3 object version to fetch into the model volume and verify before the server starts. */
export interface ModelFetch {
  /** Image with `/bin/sh`, the AWS CLI v2 (`aws`, 2.15.0 or later: EKS Pod Identity), `sha256sum` and, for archives, `tar`; by digest. */
  readonly image: string;
  readonly bucket: string;
  readonly key: string;
  /** The S3 version to fetch. @default - the current version (the digest still has to match) */
  readonly versionId?: string;
  readonly sha256: string;
  /** How the object is unpacked into the model directory. */
  readonly unpack: 'tar' | 'tar.gz' | 'none';
}

/**
 * How an object key unpacks, by the one reading of its suffix in any case (lib/core/service/model-archive.ts): tar
 * archives are extracted, anything else is placed as one file (an archive of another kind is refused at synth:
 * EKS_MODEL_DATA_LANDING).
 */
export function unpackOf(key: string): ModelFetch['unpack'] {
  const shape = modelDataShape(key);
  return shape === 'tar' || shape === 'tar.gz' ? shape : 'none';
}

/** How the init container below lands model data: what `modelDataProblems` (lib/eks/runtime.ts) refuses it by. */
export const EKS_MODEL_DATA_LANDING: ModelDataLanding = {
  platform: 'EKS',
  serves: ['tar', 'tar.gz', 'file'],
  unpacks: "its init container extracts .tar with 'tar -xf' and .tar.gz or .tgz with 'tar -xzf'",
  modelDirectory: MODEL_DATA_DIR,
  consequence: 'its pods would never turn Ready',
  allowed: 'one object: a tar archive ending in .tar, a gzip-compressed one ending in .tar.gz or .tgz, ' +
    `or one non-archive file (placed as ${MODEL_DATA_DIR}/<its name>)`,
};

/**
 * The init container's script. Inputs come as environment variables (never spliced into the script), and every
 * failure exits non-zero with the reason on stderr: the kubelet retries the init container and the server never
 * starts on unverified weights (fail closed).
 */
const FETCH_SCRIPT = [
  'set -eu',
  'fail() { echo "model-data: $*" >&2; exit 1; }',
  'dest="$CAI_MODEL_DIR"; tmp="$CAI_MODEL_VOLUME/.download"; object="$tmp/object"',
  'rm -rf "$dest" "$tmp" && mkdir -p "$dest" "$tmp" || fail "cannot prepare $dest"',
  // EKS puts pod identity credentials into a pod when it is admitted, if the association exists by then; a pod
  // admitted earlier never has them (its environment never changes), so a failed download says so.
  'creds=""; [ -n "${AWS_CONTAINER_CREDENTIALS_FULL_URI:-}" ] || creds=" (this pod has no pod identity credentials: ' +
    'a pod admitted before the pod identity association of its service account existed never gets them; delete the pod)"',
  'version="${CAI_FETCH_VERSION_ID:-}"',
  'echo "model-data: fetching s3://$CAI_FETCH_BUCKET/$CAI_FETCH_KEY version ${version:-current}"',
  'if [ -n "$version" ]; then',
  '  aws s3api get-object --bucket "$CAI_FETCH_BUCKET" --key "$CAI_FETCH_KEY" --version-id "$version" "$object" ' +
    '|| fail "download of s3://$CAI_FETCH_BUCKET/$CAI_FETCH_KEY version $version failed$creds"',
  'else',
  '  aws s3api get-object --bucket "$CAI_FETCH_BUCKET" --key "$CAI_FETCH_KEY" "$object" || fail "download of s3://$CAI_FETCH_BUCKET/$CAI_FETCH_KEY failed$creds"',
  'fi',
  'actual="$(sha256sum "$object" | cut -d " " -f 1)" || fail "cannot hash $object"',
  '[ "$actual" = "$CAI_FETCH_SHA256" ] || { rm -f "$object"; fail "SHA-256 mismatch: expected $CAI_FETCH_SHA256, got $actual"; }',
  'case "$CAI_FETCH_UNPACK" in',
  '  tar) command -v tar >/dev/null || fail "the fetcher image has no tar"; tar -xf "$object" -C "$dest" || fail "cannot unpack the archive" ;;',
  '  tar.gz) command -v tar >/dev/null || fail "the fetcher image has no tar"; tar -xzf "$object" -C "$dest" || fail "cannot unpack the archive" ;;',
  '  *) mv "$object" "$dest/$(basename "$CAI_FETCH_KEY")" || fail "cannot place the object" ;;',
  'esac',
  'rm -rf "$tmp"',
  'echo "model-data: verified sha256 $actual into $dest"',
].join('\n');

const RESTRICTED: Container['securityContext'] = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: SERVER_UID,
  runAsGroup: SERVER_UID,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The init container that fetches and verifies a class's model data into the model volume. */
export function modelFetchContainer(fetch: ModelFetch): InitContainer {
  const env: Record<string, string | undefined> = {
    CAI_FETCH_BUCKET: fetch.bucket,
    CAI_FETCH_KEY: fetch.key,
    ...(fetch.versionId ? { CAI_FETCH_VERSION_ID: fetch.versionId } : {}),
    CAI_FETCH_SHA256: fetch.sha256,
    CAI_FETCH_UNPACK: fetch.unpack,
    CAI_MODEL_VOLUME: MODEL_VOLUME_PATH,
    CAI_MODEL_DIR: MODEL_DATA_DIR,
    // The root file system is read-only: the AWS CLI keeps its cache under HOME.
    HOME: '/tmp',
  };
  return {
    name: 'fetch-model-data',
    image: fetch.image,
    imagePullPolicy: 'IfNotPresent',
    // The AWS CLI image's entrypoint is `aws`; the fetch needs a shell around it.
    command: ['/bin/sh', '-c', FETCH_SCRIPT],
    env: Object.entries(env).flatMap(([name, value]) => (value === undefined ? [] : [{ name, value }])),
    resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } },
    securityContext: RESTRICTED,
    volumeMounts: [
      { name: 'model-cache', mountPath: MODEL_VOLUME_PATH },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
}

/**
 * The label on every object the library applies to a cluster, its pods included: the Load Balancer Controller's pod
 * webhook selects the library's pods by it (lib/eks/load-balancer-controller.ts READINESS_GATE_WEBHOOK_VALUES).
 */
export const MANAGED_BY_LABELS = { 'app.kubernetes.io/managed-by': 'cdk-capacity-aware-inference' } as const;

export function namespace(name: string, labels: Readonly<Record<string, string>>): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: {
        ...labels,
        // Pods that do not meet the restricted profile are rejected at admission, not merely warned about.
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      },
    },
  };
}

/** A service account without a mounted token: model servers do not call the Kubernetes API. */
export function serviceAccount(name: string, ns: string, labels: Readonly<Record<string, string>>): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, labels }, automountServiceAccountToken: false };
}

/**
 * The priority of every model server pod, the same for every class. Above 0 so that no default-priority pod (a
 * DaemonSet that tolerates every taint, say) preempts a model server, since the scheduler preempts only pods of lower
 * priority (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/), and kubelet evicts them
 * after default-priority pods under node pressure. Not ordered by preference: each class runs on its own NodePool, so
 * its pods never compete with another class's for a node, Karpenter sorts pending pods by CPU and memory, not priority
 * (kubernetes-sigs/karpenter@v1.14.1 pkg/controllers/provisioning/scheduling/queue.go:37-107), and consolidation counts
 * priority / 2^25 in a pod's eviction cost (pkg/utils/disruption/disruption.go:62-65), a tie-breaker at most. A value by
 * rank made inserting, removing or reordering a class fail the deploy: Kubernetes refuses to change a PriorityClass's
 * value (`ValidatePriorityClassUpdate`, "may not be changed in an update"). Review R227.
 */
export const MODEL_SERVER_PRIORITY = 100000;

export function priorityClass(name: string, value: number, description: string, labels: Readonly<Record<string, string>>): PriorityClass {
  // Serving pods never preempt others: a fallback class that cannot be placed should wait for capacity, not evict.
  return { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name, labels }, value, preemptionPolicy: 'Never', globalDefault: false, description };
}

/** What readiness means for a model server. */
export interface ReadinessInput {
  /** Path that answers 200 once the process is up (startup and liveness). */
  readonly healthPath: string;
  /** Path that answers 200 once the model is loaded (readiness). */
  readonly readyPath: string;
  /**
   * Optional warm-up: a path that runs a real inference. The start ends only once it answers within the latency floor,
   * so a replica joins the target group only when it is warm; it is not asked again once the pod has started.
   */
  readonly warmup?: { readonly path: string; readonly maxLatencySeconds: number };
  /**
   * Longest the server may take to start before it is restarted, in seconds, counted from its container's start: the
   * startup probe runs only once the init containers (the model data fetch) have completed
   * (https://kubernetes.io/docs/concepts/workloads/pods/init-containers/), so the fetch is not in it.
   */
  readonly startupTimeoutSeconds: number;
}

/**
 * The server's /dev/shm, a memory-backed emptyDir: what is written there counts against the container's memory limit
 * (https://kubernetes.io/docs/concepts/storage/volumes/#emptydir), so it is memory the server's own process cannot use.
 */
export const SHARED_MEMORY_GIB = 2;

export interface DeploymentInput {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Labels that select this Deployment's pods (a subset of labels). */
  readonly selector: Readonly<Record<string, string>>;
  readonly image: string;
  readonly args?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
  readonly acceleratorKind: 'gpu' | 'neuron';
  readonly acceleratorResource: string;
  readonly acceleratorCount: number;
  readonly cpu: string;
  readonly memory: string;
  /** Size of the emptyDir that receives the model weights. */
  readonly modelCacheSize: string;
  /** Model data to fetch and verify before the server starts. @default - weights in the image */
  readonly modelFetch?: ModelFetch;
  readonly nodePoolName: string;
  readonly priorityClassName: string;
  readonly serviceAccountName: string;
  readonly readiness: ReadinessInput;
  /** Seconds the pod keeps serving after it is marked for termination: the target group's deregistration delay. */
  readonly drainSeconds: number;
  /** Seconds in-flight requests may still need after draining (the service deadline). */
  readonly inFlightSeconds: number;
}

/**
 * A model server pod's termination grace: it keeps serving through the target group's deregistration delay (its preStop
 * sleep), then its in-flight requests get the service deadline. The node's grace and the delete-time warning are sized
 * on it too.
 */
export function podTerminationGraceSeconds(drainSeconds: number, inFlightSeconds: number): number {
  return drainSeconds + inFlightSeconds;
}

const PROBE_PERIOD_SECONDS = 10;

function probe(path: string, overrides: Partial<Probe> = {}): Probe {
  return {
    httpGet: { path, port: SERVING_PORT_NAME },
    periodSeconds: PROBE_PERIOD_SECONDS,
    timeoutSeconds: 5,
    successThreshold: 1,
    failureThreshold: 3,
    ...overrides,
  };
}

/**
 * A model-server Deployment pinned to its class's NodePool. No `replicas`: KEDA owns the count. Readiness is "model
 * loaded", never "HTTP up"; with a warm-up the start ends only once one inference answered within the floor. On
 * termination the pod keeps serving for the target group's deregistration delay (preStop sleep, none when the delay
 * is 0) and then has the service deadline to finish what it holds.
 */
export function deployment(input: DeploymentInput): Deployment {
  const r = input.readiness;
  // Loading weights and compiling can take many minutes; liveness must not kill a server that is still loading. The
  // warm-up is asked no more often than it may take (its period at least its timeout), so the start lasts the startup
  // timeout whether its attempts fail at once (the server still loading) or time out.
  const warmupTimeout = r.warmup ? Math.max(1, Math.ceil(r.warmup.maxLatencySeconds)) : 0;
  const startPeriod = Math.max(PROBE_PERIOD_SECONDS, warmupTimeout);
  const startFailures = Math.max(1, Math.ceil(r.startupTimeoutSeconds / startPeriod));
  // The warm-up is the startup probe, which Kubernetes runs until its first success and never again. As the readiness
  // probe it would run for the pod's whole life ("Readiness probes runs on the container during its whole lifecycle",
  // kubernetes.io/docs/concepts/configuration/liveness-readiness-startup-probes/), and at peak load, when an inference
  // takes longer than the floor or a full queue answers 503, it would pull loaded pods out of the target group one
  // after another. Readiness stays the model-ready check, which load does not slow.
  const startupProbe = r.warmup
    ? probe(r.warmup.path, { timeoutSeconds: warmupTimeout, periodSeconds: startPeriod, failureThreshold: startFailures })
    : probe(r.healthPath, { failureThreshold: startFailures });
  // Two failures of 5 s each (within about 20 s) take a pod out, as the target group's health check does (routing.ts).
  // The ready path answers from the server's event loop (vLLM: the errored flag, gonka-ai/gonka#1421; TGI's /health
  // also asks each shard with a small gRPC call, facts tgi.path.*), so a saturated server can answer it late: reports
  // of healthy pods marked NotReady are at 1 s and 2 s timeouts (llm-d/llm-d-benchmark#1734, gonka-ai/gonka#1421),
  // none above 5 s, and the server's bounded queue caps what a replica holds. A longer timeout or threshold would keep a hung server (one that
  // accepts and never answers) in rotation longer, its requests waiting past the deadline; a crashed or erroring
  // one fails at once either way. Kept (review R215); docs/eks-inference-service.md says so.
  const readinessProbe = probe(r.readyPath, { successThreshold: 1, failureThreshold: 2 });
  const container: Container = {
    name: SERVING_CONTAINER,
    image: input.image,
    imagePullPolicy: 'IfNotPresent',
    ...(input.args && input.args.length > 0 ? { args: [...input.args] } : {}),
    env: Object.entries(input.env)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => ({ name, value })),
    ports: [{ name: SERVING_PORT_NAME, containerPort: input.port, protocol: 'TCP' }],
    resources: {
      requests: { cpu: input.cpu, memory: input.memory, [input.acceleratorResource]: String(input.acceleratorCount) },
      limits: { memory: input.memory, [input.acceleratorResource]: String(input.acceleratorCount) },
    },
    startupProbe,
    readinessProbe,
    livenessProbe: probe(r.healthPath, { failureThreshold: 6, timeoutSeconds: 10 }),
    // A 0 s sleep is a no-op that the API server refuses before Kubernetes 1.33 ("Invalid value: 0: must be greater
    // than 0 and less than terminationGracePeriodSeconds"; the PodLifecycleSleepActionAllowZero gate is alpha, off, in
    // 1.32, beta and on in 1.33, stable in 1.34: KEP-4818, kubernetes/enhancements@64765b4b
    // keps/sig-node/4818-allow-zero-value-for-sleep-action-of-prestop-hook/kep.yaml and README.md:75-78). An imported
    // cluster may be older, so with no deregistration delay to wait out there is no hook at all.
    ...(input.drainSeconds > 0 ? { lifecycle: { preStop: { sleep: { seconds: input.drainSeconds } } } } : {}),
    securityContext: RESTRICTED,
    volumeMounts: [
      { name: 'model-cache', mountPath: MODEL_VOLUME_PATH },
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'dshm', mountPath: '/dev/shm' },
    ],
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: input.name, namespace: input.namespace, labels: input.labels },
    spec: {
      revisionHistoryLimit: 5,
      // A new pod's init container (the model data fetch) runs before this start is counted: a fetch longer than about
      // 300 s plus what the start leaves of its timeout marks a rollout ProgressDeadlineExceeded while it still
      // progresses. Only a reported condition ("Kubernetes takes no action on a stalled Deployment other than to report
      // a status condition", kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment) that
      // nothing here reads; the fetch's duration is not known at synth, so it is not added.
      progressDeadlineSeconds: Math.max(600, r.startupTimeoutSeconds + 300),
      selector: { matchLabels: input.selector },
      // Surge one pod at a time: each new server pulls an image and gigabytes of weights.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: input.labels },
        spec: {
          serviceAccountName: input.serviceAccountName,
          automountServiceAccountToken: false,
          priorityClassName: input.priorityClassName,
          nodeSelector: { 'karpenter.sh/nodepool': input.nodePoolName },
          tolerations: classTaints(input.acceleratorKind).map(tolerationOf),
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: input.selector } },
          ],
          terminationGracePeriodSeconds: podTerminationGraceSeconds(input.drainSeconds, input.inFlightSeconds),
          securityContext: { runAsNonRoot: true, fsGroup: SERVER_UID, seccompProfile: { type: 'RuntimeDefault' } },
          ...(input.modelFetch ? { initContainers: [modelFetchContainer(input.modelFetch)] } : {}),
          containers: [container],
          volumes: [
            { name: 'model-cache', emptyDir: { sizeLimit: input.modelCacheSize } },
            { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
            { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: `${SHARED_MEMORY_GIB}Gi` } },
          ],
        },
      },
    },
  };
}

type Labels = Readonly<Record<string, string>>;

export function service(name: string, ns: string, labels: Labels, selector: Labels, port: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, labels },
    spec: { type: 'ClusterIP', selector, ports: [{ name: SERVING_PORT_NAME, port, targetPort: SERVING_PORT_NAME, protocol: 'TCP' }] },
  };
}

/**
 * At most one pod of the class evicted at a time (node drift, upgrades), for as long as Karpenter honours the budget: the
 * NodePool's terminationGracePeriod less the pod's own, which covers a replacement's start (class-unit.ts).
 * `maxUnavailable` rather than `minAvailable`, so a single warm-standby replica never blocks a node drain forever; pods
 * that never turned Ready can always go.
 */
export function podDisruptionBudget(name: string, ns: string, labels: Labels, selector: Labels): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: ns, labels },
    spec: { maxUnavailable: 1, selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  };
}
