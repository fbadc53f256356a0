import { type CapacityClass, type CapacityClassSpec, DEFAULT_MEMORY_POLICY } from './capacity-class';
import { DEFAULT_HEADROOM, peakTokensPerSecond, type ServiceContract } from './contract';
import { type HardwareProfile } from '../hardware/profile';
import { meanServiceTimeMs } from '../runtime/admission';

const GIB = 1024 ** 3;
export const HOURS_PER_MONTH = 730;

/** Every term of the memory feasibility check for one replica, in GiB. */
export interface MemoryBreakdown {
  /** Tensor-parallel units one replica spans. */
  readonly tensorParallelDegree: number;
  readonly memoryPerUnitGiB: number;
  readonly utilizationCap: number;
  /** degree x memory per unit x utilization cap. */
  readonly usableGiB: number;
  readonly weightsGiB: number;
  readonly workspaceGiB: number;
  /** maxConcurrentSequences x maxSequenceTokens x kvCacheBytesPerToken. */
  readonly kvCacheGiB: number;
  readonly marginGiB: number;
  readonly requiredGiB: number;
  /** max(0, required - usable). */
  readonly shortfallGiB: number;
  /** The largest maxConcurrentSequences that fits (0 when even the weights do not fit). */
  readonly maxConcurrentSequencesThatFit: number;
}

export function kvCacheGiB(sequences: number, sequenceTokens: number, bytesPerToken: number): number {
  return (sequences * sequenceTokens * bytesPerToken) / GIB;
}

/** The memory check (docs/capacity-classes.md, "The checks"): usable = degree x memory x cap >= weights + workspace + KV + margin. */
export function memoryBreakdown(spec: CapacityClassSpec, hardware: HardwareProfile): MemoryBreakdown {
  const { utilizationCap, marginGiB } = { ...DEFAULT_MEMORY_POLICY, ...spec.memory };
  const f = spec.footprint;
  const usableGiB = f.tensorParallelDegree * hardware.memoryPerUnitGiB * utilizationCap;
  const kv = kvCacheGiB(spec.runtime.maxConcurrentSequences, f.maxSequenceTokens, f.kvCacheBytesPerToken);
  const fixedGiB = f.weightsGiB + f.workspaceGiB + marginGiB;
  const requiredGiB = fixedGiB + kv;
  const perSequenceGiB = kvCacheGiB(1, f.maxSequenceTokens, f.kvCacheBytesPerToken);
  const room = usableGiB - fixedGiB;
  const maxFit = room <= 0 ? 0 : perSequenceGiB === 0 ? Number.POSITIVE_INFINITY : Math.floor(room / perSequenceGiB);
  return {
    tensorParallelDegree: f.tensorParallelDegree,
    memoryPerUnitGiB: hardware.memoryPerUnitGiB,
    utilizationCap,
    usableGiB,
    weightsGiB: f.weightsGiB,
    workspaceGiB: f.workspaceGiB,
    kvCacheGiB: kv,
    marginGiB,
    requiredGiB,
    shortfallGiB: Math.max(0, requiredGiB - usableGiB),
    maxConcurrentSequencesThatFit: maxFit,
  };
}

/** USD per million generated tokens when a replica of the class runs at its envelope. */
export function usdPerMillionTokens(cls: Pick<CapacityClass, 'usdPerReplicaHour' | 'envelope'>): number {
  return (cls.usdPerReplicaHour / (3600 * cls.envelope.tokensPerSecondPerReplica)) * 1e6;
}

/**
 * The replicas that carry `tokensPerSecond` with each at its scaling target, envelope / (1 + headroom): the per-replica
 * value the autoscalers the plan configures aim for. The one count of replicas from throughput: the plan's peak fleet,
 * the Reconciler's replica floors and capacity writes (lib/core/policy) and the simulator's fleets at time 0 all take
 * it, so they agree at a boundary, where a count of the rounded target or without a tolerance is one more.
 */
export function replicasAtTarget(tokensPerSecond: number, envelopeTokensPerSecond: number, headroom: number): number {
  if (tokensPerSecond <= 0) return 0;
  // Round before ceil so that 3.0000000001 replicas (floating error) is 3.
  return Math.ceil(Number(((tokensPerSecond * (1 + headroom)) / envelopeTokensPerSecond).toFixed(9)));
}

export interface PlanOptions {
  /** Replicas each fallback class keeps warm so the fallback path stays exercised. @default 1 */
  readonly standbyReplicas?: number;
  /** @default 730 */
  readonly hoursPerMonth?: number;
}

/** The plan of one class. */
export interface ClassPlan {
  readonly name: string;
  readonly role: 'preferred' | 'fallback';
  /** Replicas this class needs to carry the whole peak plus headroom alone (before the quota bound). */
  readonly replicasForPeak: number;
  /** Autoscaling lower bound: the preferred class's steady fleet, or the fallback's warm standby. */
  readonly minReplicas: number;
  /** Autoscaling upper bound: replicas for peak, bounded by quota. */
  readonly maxReplicas: number;
  /**
   * Replicas running in normal operation, the class as a fleet of its own (what the EKS service deploys). In a
   * SageMaker endpoint's plan (`capacityPlan`, the serving record) the layout's instead: the variant's minimum on its
   * priority-1 class, 0 on its other pools.
   */
  readonly steadyReplicas: number;
  /** Instances behind the steady replicas. */
  readonly steadyInstances: number;
  /** Target-tracking value in generated tokens/s per replica (envelope / (1 + headroom)). */
  readonly targetTokensPerSecondPerReplica: number;
  /** Target-tracking value in in-flight requests per replica (`inFlightAtEnvelope` / (1 + headroom), lib/core/service/sizing.ts). */
  readonly targetConcurrencyPerReplica: number;
  /** Target-tracking value in requests/s per replica. */
  readonly targetRequestsPerSecondPerReplica: number;
  /** Tokens/s at which this class saturates with every replica its quota allows. */
  readonly saturationTokensPerSecond: number;
  readonly usdPerMillionTokens: number;
  /** Steady instances x the class's price. */
  readonly steadyUsdPerHour: number;
}

/** The capacity plan of one service. */
export interface CapacityPlan {
  readonly service: string;
  readonly headroom: number;
  readonly peakTokensPerSecond: number;
  /** Peak x (1 + headroom). */
  readonly plannedTokensPerSecond: number;
  readonly classes: readonly ClassPlan[];
  /**
   * Preferred fleet at peak plus the fallbacks' warm standby: the classes' steady instances priced. From
   * `planCapacity()`, every class is a fleet of its own, each fallback with its standby: what the EKS service deploys,
   * and only an estimate before a SageMaker endpoint's variants are known, where a fallback class in a lower-priority
   * pool of a variant runs nothing in steady state. A SageMaker endpoint's plan carries its layout's cost
   * (`planAsDeployed`, equal to `plannedCost`).
   */
  readonly steadyUsdPerHour: number;
  readonly steadyUsdPerMonth: number;
  /** The part of the steady cost that is fallback standby (on SageMaker, the fallback variants' minimum). */
  readonly standbyUsdPerHour: number;
  /** Share of planned peak the fallback classes can absorb if the preferred class gets no capacity at all. */
  readonly fallbackCoverage: number;
  /** Share of peak demand shed in that case (0 when the fallbacks cover it). */
  readonly shedShareWithoutPreferred: number;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Requests one replica holds in flight at its envelope: its safe concurrency, or fewer where the envelope's own rate
 * and latency say so. By Little's law a replica offered lambda requests/s, each answered in a mean time L, holds
 * lambda x L in flight, and L is at most about the envelope's p95 service time (p95 TTFT + mean output tokens x p95
 * ITL). A safe concurrency above that (a batch size, or lambda x L rounded up: P1's Inferentia2 declares 2 at 1.75
 * images/s answered within 0.9 s, 1.6 in flight) is never reached at the envelope's load, and a concurrency target from
 * it (SageMaker's `ConcurrentRequestsPerModel` target tracking) lets the replica run past its envelope before it scales
 * out. At the built-in LLM classes the safe concurrency is the smaller (L40S: 16 against 5.6 requests/s x 8.4 s). An upper
 * bound still: a mean latency is below its p95, so where the product decides, target tracking settles somewhat above
 * envelope / (1 + headroom) (review R261: about 1.2-1.35 x the envelope for P1's classes on a replica whose p95 is 0.9 s
 * at its envelope, against 1.24-1.58 x before); a measured mean in-flight count would be exact, and is not declared.
 */
export function inFlightAtEnvelope(envelope: CapacityClass['envelope'], meanOutputTokens: number): number {
  // Without an ITL an answer of several tokens has no known service time (review R262: a streaming class under a
  // contract with no ITL SLO would read as answering at its first token, its target a third of its safe concurrency).
  if (envelope.itlP95Ms === undefined && meanOutputTokens > 1) return envelope.safeConcurrency;
  const requestsPerSecond = envelope.tokensPerSecondPerReplica / meanOutputTokens;
  return Math.min(envelope.safeConcurrency, (requestsPerSecond * meanServiceTimeMs(envelope, meanOutputTokens)) / 1000);
}

/**
 * Replicas per class from peak demand with headroom (Little's law at each class's measured envelope),
 * scaling targets from the envelope, and cost including the warm standby of fallback classes, each class a fleet of
 * its own (`CapacityPlan.steadyUsdPerHour` says where that is what is deployed).
 * Classes must be in preference order (the first one is preferred).
 */
export function planCapacity(contract: ServiceContract, classes: readonly CapacityClass[], options: PlanOptions = {}): CapacityPlan {
  const headroom = contract.headroom ?? DEFAULT_HEADROOM;
  const standby = options.standbyReplicas ?? 1;
  const hoursPerMonth = options.hoursPerMonth ?? HOURS_PER_MONTH;
  const peak = peakTokensPerSecond(contract);
  const planned = peak * (1 + headroom);

  const plans = classes.map((cls, index): ClassPlan => {
    const tps = cls.envelope.tokensPerSecondPerReplica;
    const replicasForPeak = replicasAtTarget(peak, tps, headroom);
    const maxReplicas = Math.max(1, Math.min(cls.maxReplicas, replicasForPeak));
    const role = index === 0 ? 'preferred' : 'fallback';
    const minReplicas = role === 'preferred' ? maxReplicas : Math.min(standby, maxReplicas);
    const steadyReplicas = minReplicas;
    const steadyInstances = Math.ceil(steadyReplicas / cls.replicasPerInstance);
    const targetTps = tps / (1 + headroom);
    return {
      name: cls.name,
      role,
      replicasForPeak,
      minReplicas,
      maxReplicas,
      steadyReplicas,
      steadyInstances,
      targetTokensPerSecondPerReplica: round(targetTps),
      targetConcurrencyPerReplica: round(inFlightAtEnvelope(cls.envelope, contract.requestShape.meanOutputTokens) / (1 + headroom)),
      targetRequestsPerSecondPerReplica: round(targetTps / contract.requestShape.meanOutputTokens, 4),
      saturationTokensPerSecond: round(cls.maxReplicas * tps),
      usdPerMillionTokens: round(usdPerMillionTokens(cls), 4),
      steadyUsdPerHour: round(steadyInstances * cls.usdPerHour, 4),
    };
  });

  const steadyUsdPerHour = plans.reduce((sum, p) => sum + p.steadyUsdPerHour, 0);
  const standbyUsdPerHour = plans.filter((p) => p.role === 'fallback').reduce((sum, p) => sum + p.steadyUsdPerHour, 0);
  const fallbackTokens = classes.slice(1).reduce((sum, cls) => sum + cls.maxReplicas * cls.envelope.tokensPerSecondPerReplica, 0);
  const fallbackCoverage = planned === 0 ? 1 : Math.min(1, fallbackTokens / planned);
  return {
    service: contract.name,
    headroom,
    peakTokensPerSecond: round(peak),
    plannedTokensPerSecond: round(planned),
    classes: plans,
    steadyUsdPerHour: round(steadyUsdPerHour, 4),
    steadyUsdPerMonth: round(steadyUsdPerHour * hoursPerMonth),
    standbyUsdPerHour: round(standbyUsdPerHour, 4),
    fallbackCoverage: round(fallbackCoverage, 4),
    shedShareWithoutPreferred: round(peak === 0 ? 0 : Math.max(0, 1 - fallbackTokens / peak), 4),
  };
}
