export * from './endpoint';
export {
  planVariants, fleetCost, SAGEMAKER_ENDPOINT_LIMITS, type VariantPoolOptions, type VariantScalingOptions, type VariantSpec,
  type PlannedPool, type PlannedVariant, type VariantPlanOptions, type VariantCost, type FleetCost,
} from './variants';
export { ClassModel, type ClassModelProps } from './class-model';
