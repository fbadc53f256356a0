import { type IDependable } from 'constructs';
import { type Construct } from 'constructs';
import { type CapacityClass } from '../core/service/capacity-class';

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
   * serving construct (create any per-class resources under it or under the gate itself).
   */
  gateFor(scope: Construct, cls: CapacityClass): IDependable;
}
