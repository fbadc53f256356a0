export * from './endpoint';
export {
  planVariants, fleetCost, planAsDeployed, type VariantPoolOptions, type VariantScalingOptions, type VariantSpec,
  type PlannedPool, type PlannedVariant, type VariantPlanOptions, type VariantCost, type FleetCost,
} from './variants';
export { ClassModel, type ClassModelProps } from './class-model';
export { SAGEMAKER_ENDPOINT_LIMITS } from '../core/platform/limits';
