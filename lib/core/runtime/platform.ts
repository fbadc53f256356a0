/**
 * Where a class's model server runs, as the runtime binding sees it: the platform, the container port, where the
 * platform puts model data and which directory the container may write its caches to.
 */

export type ServingPlatform = 'sagemaker' | 'eks';

/** SageMaker hosting sends requests to port 8080 of the container and mounts model data at /opt/ml/model (read-only). */
export const SAGEMAKER_PORT = 8080;
export const SAGEMAKER_MODEL_PATH = '/opt/ml/model';
/**
 * Writable directory for the server's caches on SageMaker: /tmp, in the container's own storage (/opt/ml/model is
 * read-only). Fact `sagemaker.behaviour.writable-tmp` (not confirmed: SageMaker does not document its size).
 */
export const SAGEMAKER_CACHE_DIR = '/tmp/cai-cache';

/** Where the class runs. */
export interface RuntimeTarget {
  readonly platform: ServingPlatform;
  /** Container port the server must listen on (8080 on SageMaker). */
  readonly port: number;
  /** Where the platform puts the class's model data inside the container, when it has model data. */
  readonly modelDataPath?: string;
  /**
   * A writable directory, on a volume sized for the engine's caches, that HOME, XDG_CACHE_HOME and the engine's own
   * cache variables point into. @default SAGEMAKER_CACHE_DIR on SageMaker; required on EKS
   */
  readonly cacheDir?: string;
  /**
   * The uid the platform runs the container as, when the platform (not the image) chooses it: EKS runs every model
   * server as SERVER_UID (lib/eks/manifests/workload.ts), which the engine images have no /etc/passwd entry for, so
   * the binding gives the server the account variables a login would (USER, LOGNAME). SageMaker starts the image as
   * the image's own user: ContainerDefinition has no user setting (Image, Environment, ModelDataUrl, ... in
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-sagemaker-model-containerdefinition.html),
   * and that user is one the image's passwd knows. @default - the image's own user (nothing set)
   */
  readonly runAsUser?: number;
}
