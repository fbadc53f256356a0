import { type Duration, type Size } from 'aws-cdk-lib';

/** How one capacity class is served on EKS. Every field has a default derived from the class and the capacity plan. */
export interface EksClassOptions {
  /**
   * Name of the class's Karpenter NodePool and EC2NodeClass (an RFC 1123 label, unique in the cluster).
   * @default - `<service>-<class>`
   */
  readonly nodePoolName?: string;
  /**
   * More instance types the NodePool may launch besides the class's own. Each must carry the accelerator the artifact
   * targets, have enough tensor-parallel units for one replica, and hold the model in memory.
   * @default - only the class's instance type
   */
  readonly additionalInstanceTypes?: readonly string[];
  /**
   * EC2 purchase options. Spot suits fallback classes whose standby may be interrupted. Karpenter's `reserved` needs
   * capacity reservation selector terms on the EC2NodeClass, which the library does not render: it is refused.
   * @default ['on-demand']
   */
  readonly capacityTypes?: ReadonlyArray<'on-demand' | 'spot'>;
  /**
   * Fewest replicas KEDA keeps.
   * @default - the capacity plan's minReplicas (the preferred class's steady fleet, a fallback's warm standby)
   */
  readonly minReplicas?: number;
  /**
   * Most replicas KEDA may run; at most the class's quota (`maxReplicas` of the class).
   * @default - the capacity plan's maxReplicas (replicas for peak, bounded by quota)
   */
  readonly maxReplicas?: number;
  /**
   * Scaling target: ALB requests per target per metric period that one replica takes while holding its SLO.
   * @default - the plan's targetRequestsPerSecondPerReplica (envelope / (1 + headroom)) x the metric period
   */
  readonly targetRequestsPerReplicaPerPeriod?: number;
  /** Container port of the model server. @default 8080 */
  readonly port?: number;
  /**
   * Liveness/startup path (process up). For an engine the library knows, a path other than its own draws a warning at
   * synth: a path the server does not answer keeps every pod from turning Ready.
   * @default - the engine's own: '/health' (vLLM, TGI, custom), '/v2/health/live' (Triton), '/ping' (DJL LMI)
   */
  readonly healthPath?: string;
  /**
   * Readiness path: answers 200 only once the model is loaded. Also the target group's health check. Warned at synth
   * like `healthPath`.
   * @default - the engine's own: '/health' (vLLM, TGI), '/v2/health/ready' (Triton), '/ping' (DJL LMI), '/ready' (custom)
   */
  readonly readyPath?: string;
  /**
   * A warm-up request (an HTTP GET that runs a real inference) that must answer within `maxLatency` before the pod's
   * start is over, so that it turns Ready warm. It is the startup probe, asked only until it first succeeds: readiness
   * stays `readyPath` for the pod's whole life, so a slow inference under peak load never takes a loaded pod out of
   * the target group. `startupTimeout` covers the warm-up too.
   * @default - the start is over once `healthPath` answers; readiness is the model-ready endpoint alone
   */
  readonly warmup?: { readonly path: string; readonly maxLatency: Duration };
  /**
   * Longest the server may take to start once its container runs: load the weights (and download any it fetches
   * itself), then warm up with `warmup`. It does not count the init container that fetches `artifact.modelData`:
   * probes start only with the server's container, after every init container has completed
   * (https://kubernetes.io/docs/concepts/workloads/pods/init-containers/), and nothing bounds that download.
   * @default Duration.minutes(30)
   */
  readonly startupTimeout?: Duration;
  /**
   * Scratch space for the weights downloaded at start and the engine's caches (HOME, XDG_CACHE_HOME, compile caches):
   * at least weights + 10 GiB. @default - 2 x weights, at least 20 GiB
   */
  readonly modelCacheSize?: Size;
  /**
   * Node data volume (images and every replica's model volume, an emptyDir there). At least 12 GiB (gp3 at 6,000 IOPS
   * provisions at most 500 IOPS per GiB) and the model volumes of the replicas the class's fullest node holds.
   * @default - modelCacheSize x the replicas the class's fullest node holds + 100 GiB
   */
  readonly nodeVolumeSize?: Size;
}
