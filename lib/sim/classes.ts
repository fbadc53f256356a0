import { type CapacityClass } from '../core/service/capacity-class';
import { type ServiceContract } from '../core/service/contract';
import { routedClassFacts } from '../core/reconciler/routing-facts';
import { type CapacityPlan, inFlightAtEnvelope, replicasAtTarget } from '../core/service/sizing';
// What the deployed servers really admit (the runtime contract): the same function the runtime binding follows.
import { serverAdmission } from '../core/runtime/admission';
import { engineCountsGeneratedTokens } from '../core/runtime/engine-metrics';
import { type ServiceModel, type SimClass } from './model';

/** How one class behaves at run time, beyond what the capacity-class declaration says. */
export interface ClassRuntimeBehavior {
  /** Seconds from launch to ready (instance boot + image pull + weight load + warm-up); a range draws per replica. */
  readonly provisioningSeconds: number | readonly [number, number];
  /** Autoscaling lower bound. @default the plan's warm standby for fallbacks; 1 for the preferred class */
  readonly minReplicas?: number;
  /**
   * Ready replicas at time 0. @default minReplicas; for the preferred class, when `simClassesFromPlan` is given the
   * demand at time 0, the replicas that carry it at the class's scaling target (up to its maximum, never below
   * minReplicas): time 0 follows an hour of steady operation at that demand (MetricHistory), and a fleet sized below it
   * starts with a deficit its own history calls sustained.
   */
  readonly initialReplicas?: number;
}

/**
 * The simulator's classes from the library's own capacity classes and capacity plan: envelope, price and quota
 * come from the declaration, scaling targets and warm standby from `planCapacity` (the same numbers the constructs
 * deploy). The preferred class autoscales from `minReplicas` up to the plan's bound rather than running the plan's
 * peak fleet all day, so that a shortage of scale-out capacity matters.
 */
export function simClassesFromPlan(
  classes: readonly CapacityClass[],
  plan: CapacityPlan,
  behavior: Readonly<Record<string, ClassRuntimeBehavior>>,
  contract: ServiceContract,
  demandAtZeroTokensPerSecond?: number,
): SimClass[] {
  return classes.map((cls) => {
    const p = plan.classes.find((x) => x.name === cls.name);
    const b = behavior[cls.name];
    if (!p) throw new Error(`The capacity plan has no entry for class '${cls.name}'`);
    if (!b) throw new Error(`No run-time behavior (provisioning delay) given for class '${cls.name}'`);
    const minReplicas = b.minReplicas ?? (p.role === 'preferred' ? 1 : p.minReplicas);
    const atZero = p.role === 'preferred' && demandAtZeroTokensPerSecond !== undefined
      ? replicasAtTarget(demandAtZeroTokensPerSecond, cls.envelope.tokensPerSecondPerReplica, plan.headroom) : undefined;
    const steady = atZero === undefined ? minReplicas : Math.max(minReplicas, Math.min(p.maxReplicas, atZero));
    return {
      ...routedClassFacts(cls, p.maxReplicas),
      provisioningSeconds: b.provisioningSeconds,
      minReplicas,
      initialReplicas: b.initialReplicas ?? steady,
      targetTokensPerSecondPerReplica: p.targetTokensPerSecondPerReplica,
      targetRequestsPerSecondPerReplica: p.targetRequestsPerSecondPerReplica,
      targetConcurrencyPerReplica: p.targetConcurrencyPerReplica,
      admission: serverAdmission(cls, contract),
      countsGeneratedTokens: engineCountsGeneratedTokens(cls.runtime.engine),
      engine: cls.runtime.engine,
      envelopeInFlight: inFlightAtEnvelope(cls.envelope, contract.requestShape.meanOutputTokens),
    };
  });
}

/** The per-request deadline model from a service contract. */
export function serviceModelFromContract(contract: ServiceContract, prefillWeight: number, envelopeUtilization?: number): ServiceModel {
  return {
    ttftSeconds: contract.slo.ttftP95Ms / 1000,
    itlSeconds: (contract.slo.itlP95Ms ?? 0) / 1000,
    deadlineSeconds: contract.slo.deadlineMs / 1000,
    prefillWeight,
    ...(envelopeUtilization !== undefined ? { envelopeUtilization } : {}),
  };
}

