/**
 * How Application Auto Scaling names a SageMaker production variant's scalable target. The endpoint construct registers
 * it, the Reconciler reads its live bounds, and the game day pins it: all three must name the same target.
 * "Service namespace `sagemaker` ... ResourceId: endpoint/<endpoint-name>/variant/<variant-name> ... ScalableDimension
 * `sagemaker:variant:DesiredInstanceCount` - The number of EC2 instances for a SageMaker model endpoint variant."
 * (https://docs.aws.amazon.com/autoscaling/application/APIReference/API_RegisterScalableTarget.html)
 */
export const VARIANT_SERVICE_NAMESPACE = 'sagemaker';
export const VARIANT_SCALABLE_DIMENSION = 'sagemaker:variant:DesiredInstanceCount';

/** The Application Auto Scaling resource id of a production variant. */
export function variantResourceId(endpointName: string, variantName: string): string {
  return `endpoint/${endpointName}/variant/${variantName}`;
}
