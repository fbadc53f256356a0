/**
 * SageMaker instance families with local NVMe instance storage. CreateEndpointConfig fails when `KmsKeyId` is set and
 * any variant uses such a type: their storage is encrypted by the instance's hardware module instead
 * (SageMaker API reference, CreateEndpointConfig `KmsKeyId`; EC2 user guide, instance store volumes).
 */
const INSTANCE_STORE_FAMILIES = new Set([
  'c5d', 'c6id', 'm5d', 'm6id', 'r5d', 'r6id',
  'g4dn', 'g5', 'g6', 'g6e', 'gr6',
  'p3dn', 'p4d', 'p4de', 'p5', 'p5e', 'p5en', 'p6-b200',
  'trn1', 'trn1n', 'trn2',
]);

/** Whether `ml.<family>.<size>` has local instance storage (so its volumes cannot take a customer KMS key). */
export function hasInstanceStorage(instanceType: string): boolean {
  const family = instanceType.replace(/^ml\./, '').split('.')[0];
  return INSTANCE_STORE_FAMILIES.has(family);
}
