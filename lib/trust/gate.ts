import { type IDependable } from 'constructs';
import { type Construct } from 'constructs';
import { type CapacityClass } from '../core/service/capacity-class';

/** What the consumer of a gated class needs the gate to prove besides the approved artifacts. */
export interface ClassArtifactGateOptions {
  /**
   * The consumer reads the model data's key without naming a version (SageMaker: its S3ModelDataSource has no
   * VersionId), so the approved object version must also be the key's current version at deploy time. A consumer that
   * fetches the approved version itself (EKS: `--version-id`) does not need it.
   * @default false
   */
  readonly requireCurrentVersion?: boolean;
}

/**
 * Something that verifies a capacity class's artifacts at deploy time and fails closed.
 *
 * Serving constructs (SageMaker endpoint, EKS serving units) call `gateFor()` for every class and make the
 * class's Model or Deployment depend on the result, so nothing of a class is created before its image and model
 * data are proven to be the approved, signed ones.
 */
export interface IClassArtifactGate {
  /**
   * A dependable that completes only when the artifacts of `cls` verified. Called once per class; `scope` is the
   * serving construct (create any per-class resources under it or under the gate itself); `options` what the
   * serving construct's way of reading the artifacts needs proven too.
   */
  gateFor(scope: Construct, cls: CapacityClass, options?: ClassArtifactGateOptions): IDependable;
}
