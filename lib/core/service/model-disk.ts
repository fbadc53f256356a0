/**
 * Disk a class's model data takes where it is unpacked (the EKS model volume, the SageMaker ML storage volume): one
 * rule for both platforms. Pure.
 */

/** Headroom over the bytes that coexist there: tar headers, files the server writes beside the model. */
const MODEL_DISK_MARGIN = 1.1;

/**
 * GiB that coexist while model data lands: a gzip archive and the tree unpacked from it (twice the weights; on EKS
 * until the fetch script removes the archive, on SageMaker not documented, so counted), or one copy; each plus 10%.
 */
export function unpackNeedGiB(weightsGiB: number, archive: boolean): number {
  return (archive ? 2 : 1) * weightsGiB * MODEL_DISK_MARGIN;
}
