import { type CapacityClass } from '../core/service/capacity-class';

/**
 * Whether a SageMaker instance type has local NVMe instance storage. CreateEndpointConfig fails when `KmsKeyId` is set
 * and any variant uses such a type ("If you specify a value for KmsKeyId when using any nitro-based instances with
 * local storage, the call to CreateEndpointConfig fails": SageMaker API reference, CreateEndpointConfig `KmsKeyId`);
 * their storage is encrypted by the instance's hardware module instead (EC2 user guide, instance store volumes).
 *
 * A hardware profile may say so (`localInstanceStorage`). Otherwise the family's name decides: the `d` attribute after
 * its generation (instance store volumes: c5d, m6gd, r7gd, g4dn, p3dn, p4de; EC2 Instance Types guide,
 * instance-type-names.html), or one of the accelerated families below, which carry local NVMe storage without the
 * letter. A family that is neither (a new one) is taken to have none: its profile must say otherwise.
 */
const INSTANCE_STORE_WITHOUT_D = new Set([
  'g5', 'g6', 'g6e', 'gr6',
  'p5', 'p5e', 'p5en', 'p6-b200',
  'trn1', 'trn1n', 'trn2',
  'dl1',
]);

/** A family's attributes (the letters after its generation) include `d`. */
const D_ATTRIBUTE = /^[a-z]+\d+[a-z]*d[a-z]*$/;

/**
 * Whether `ml.<family>.<size>` has local instance storage (so its volumes cannot take a customer KMS key): `stated`, the
 * profile's `localInstanceStorage`, when given.
 */
export function hasInstanceStorage(instanceType: string, stated?: boolean): boolean {
  if (stated !== undefined) return stated;
  const family = instanceType.replace(/^ml\./, '').split('.')[0];
  return INSTANCE_STORE_WITHOUT_D.has(family) || D_ATTRIBUTE.test(family);
}

/** Whether a class's instance type has local instance storage, as its hardware profile states or its name says. */
export function classHasInstanceStorage(cls: Pick<CapacityClass, 'instanceType' | 'hardware'>): boolean {
  return hasInstanceStorage(cls.instanceType, cls.hardware.localInstanceStorage);
}
