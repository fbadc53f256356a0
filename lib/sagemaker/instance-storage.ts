import { type CapacityClass } from '../core/service/capacity-class';
import { unpackNeedGiB } from '../core/service/model-disk';
import { modelDataSource } from './class-model';

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

/**
 * The ML storage volume of an instance without local storage. SageMaker gives it a default size ("If the size of the
 * model is larger than 30 GB and you are using an instance without a local disk, you should increase this parameter
 * [VolumeSizeInGB] to be slightly larger than the size of your model": developer guide, large-model-inference-hosting.html);
 * `VolumeSizeInGB` takes 1 to 512 (API ProductionVariant). An instance type with local storage takes no VolumeSizeInGB
 * (aws/sagemaker-python-sdk@v2.257.6 src/sagemaker/utils.py `volume_size_supported`: no `d` family, nor g5, g6, p5 or
 * trn1; PR #4828: the service "throws a service exception"), and the setting is the variant's, for every pool. AWS
 * documents default volume sizes per instance type (host-instance-storage.html); 30 GB is the large-model page's rule,
 * so a type whose default is larger gets no smaller volume from this rule only while the need stays under 30 GB.
 */
export const SAGEMAKER_MODEL_VOLUME = { defaultFitsGb: 30, maxGb: 512 } as const;

const GB_PER_GIB = 1.073741824;

/**
 * GB of ML storage volume a class's model data takes on an instance: its weights, twice for a gzip archive (the
 * archive and the tree unpacked from it may both be on the volume while SageMaker unpacks: not documented, so counted),
 * plus 10%. A class without model data (its engine fetches the model itself into /tmp) counts nothing here.
 */
export function modelVolumeNeedGb(cls: Pick<CapacityClass, 'artifact' | 'footprint'>): number {
  const uri = cls.artifact.modelData?.uri;
  if (uri === undefined) return 0;
  const archive = modelDataSource(uri).compressionType === 'Gzip';
  return Math.ceil(unpackNeedGiB(cls.footprint.weightsGiB, archive) * GB_PER_GIB);
}

/** A variant's VolumeSizeInGB: what the largest model data of its pools needs, or why none can be set. */
export type VariantVolume =
  | { readonly kind: 'default' }
  | { readonly kind: 'size'; readonly gb: number }
  | { readonly kind: 'problem'; readonly message: string };

/**
 * VolumeSizeInGB for a variant of these pools: none while SageMaker's default holds the model data (30 GB); the need
 * when every pool lacks local storage; a problem when the need is over 512 GB, or when a pool that needs it shares the
 * variant with a pool type that has local storage (which takes no VolumeSizeInGB).
 */
export function variantVolume(pools: ReadonlyArray<Pick<CapacityClass, 'name' | 'instanceType' | 'hardware' | 'artifact' | 'footprint'>>): VariantVolume {
  const local = pools.filter((p) => classHasInstanceStorage(p));
  const needs = pools.filter((p) => !local.includes(p)).map((p) => ({ pool: p, gb: modelVolumeNeedGb(p) }));
  const largest = needs.reduce<(typeof needs)[number] | undefined>((a, b) => (a === undefined || b.gb > a.gb ? b : a), undefined);
  if (largest === undefined || largest.gb <= SAGEMAKER_MODEL_VOLUME.defaultFitsGb) return { kind: 'default' };
  const need = largest.gb;
  const what = `class '${largest.pool.name}' (${largest.pool.instanceType}, no local storage) needs a ${need} GB ML storage volume for its model data`;
  if (local.length > 0) {
    return {
      kind: 'problem',
      message: `${what}, above the ${SAGEMAKER_MODEL_VOLUME.defaultFitsGb} GB SageMaker gives by default, but VolumeSizeInGB is the variant's and ` +
        `${local.map((p) => p.instanceType).join(', ')} (local storage) takes none; allowed: pools of one storage kind per variant ` +
        `(put the ${largest.pool.instanceType} pool in a variant of its own)`,
    };
  }
  if (need > SAGEMAKER_MODEL_VOLUME.maxGb) {
    return { kind: 'problem', message: `${what}; VolumeSizeInGB allows 1 to ${SAGEMAKER_MODEL_VOLUME.maxGb}: use an instance type with local storage, or EKS` };
  }
  return { kind: 'size', gb: need };
}
