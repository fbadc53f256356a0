/**
 * How long a SageMaker blue/green endpoint deployment (all at once traffic shifting) can take by its own configured
 * step limits: the floor a `MaximumExecutionTimeoutInSeconds` the user gives must not cut into, for the rule that refuses
 * a shorter one (`deployment.maximumExecutionTimeout@steps`, lib/core/validation/rules.ts). When the user gives none,
 * the endpoint renders none and SageMaker's own default applies: the floor is a lower bound, not an estimate (see the
 * end of this comment), so rendering it could only time out a healthy but slow deployment sooner than SageMaker would.
 *
 * The steps, from the SageMaker API reference (boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json):
 * - the deployment "creates a new fleet during the deployment while maintaining the old fleet" and flips traffic to it
 *   (BlueGreenUpdatePolicy, :8967-8985); with ALL_AT_ONCE "Endpoint traffic shifts to the new fleet in a single step"
 *   (TrafficRoutingConfig.Type, :46871-46895), and the guide's baking period begins "once the green fleet starts
 *   receiving traffic" (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green-all-at-once.html);
 * - the new fleet's instances: ProductionVariant.VariantInstanceProvisionTimeoutInSeconds, "for provisioning instances
 *   for the production variant ... applies only to capacity provisioning and does not include the time for model
 *   download or container startup" (300 to 3600 s, :41289-41292, :51105-51110);
 * - ModelDataDownloadTimeoutInSeconds, "to download and extract the model ... to the individual inference instance"
 *   (60 to 3600 s, :41313-41316, :41759-41764);
 * - ContainerStartupHealthCheckTimeoutInSeconds, "for your inference container to pass health check" (60 to 3600 s,
 *   :41317-41320, :41399-41404);
 * - the bake, TerminationWaitInSeconds: "Additional waiting time in seconds after the completion of an endpoint
 *   deployment before terminating the old endpoint fleet" (0 to 3600 s, :8975-8978, :46475-46480). ALL_AT_ONCE has no
 *   step to wait between (WaitIntervalInSeconds 0).
 * MaximumExecutionTimeoutInSeconds is the "Maximum execution timeout for the deployment", 600 to 28800 s, that "should
 * be larger than the total waiting time specified in TerminationWaitInSeconds and WaitIntervalInSeconds" (:8979-8982,
 * :35543-35548); the guide: "the maximum amount of time that the deployment can run before it times out". What
 * SageMaker does on the timeout (roll back to the old fleet or not) and its value when unset are not documented
 * (API reference and AWS::SageMaker::Endpoint BlueGreenUpdatePolicy: "Required: No", no default).
 *
 * Not counted, because AWS documents no duration for them: the time an instance takes to launch once capacity is
 * found (if the provision timeout does not already cover it), the image pull (no limit above names it) and the traffic
 * shift itself. Nor whether the variants of one endpoint are provisioned at once: the floor takes the longest variant,
 * as if they were. So the floor is a lower bound on a limit that lets every step run to its own limit, not an estimate
 * of the deployment's duration.
 */

/** `BlueGreenUpdatePolicy.MaximumExecutionTimeoutInSeconds` bounds (service-2.json:35543-35548). */
export const BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS = { min: 600, max: 28800 } as const;

/** The step limits of one production variant of the new fleet, in seconds. */
export interface BlueGreenVariantSteps {
  readonly name: string;
  /** `VariantInstanceProvisionTimeoutInSeconds`. */
  readonly provisionSeconds: number;
  /** `ModelDataDownloadTimeoutInSeconds`. */
  readonly modelDataDownloadSeconds: number;
  /** `ContainerStartupHealthCheckTimeoutInSeconds`. */
  readonly containerStartupSeconds: number;
}

/** What a blue/green deployment of the endpoint waits for, in seconds. */
export interface BlueGreenSteps {
  /** `TerminationWaitInSeconds`. */
  readonly bakeSeconds: number;
  readonly variants: readonly BlueGreenVariantSteps[];
}

/** The floor and the variant it comes from. */
export interface BlueGreenStepsFloor {
  readonly seconds: number;
  readonly variant: BlueGreenVariantSteps;
}

/** The bake plus the longest variant's provisioning, model download and start-up limits; undefined without a variant. */
export function blueGreenStepsFloor(steps: BlueGreenSteps): BlueGreenStepsFloor | undefined {
  const fleetSeconds = (v: BlueGreenVariantSteps) => v.provisionSeconds + v.modelDataDownloadSeconds + v.containerStartupSeconds;
  const longest = steps.variants.reduce<BlueGreenVariantSteps | undefined>(
    (best, v) => (best === undefined || fleetSeconds(v) > fleetSeconds(best) ? v : best),
    undefined,
  );
  return longest === undefined ? undefined : { seconds: steps.bakeSeconds + fleetSeconds(longest), variant: longest };
}

