import { Annotations, Duration, Lazy, Names, RemovalPolicies, RemovalPolicy, Resource, Stack, Token } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { type Construct } from 'constructs';
import { type BlueGreenSteps } from '../core/platform/blue-green-deployment';
import { SAGEMAKER_SCALING_DEFAULTS, variantScalingDefaults } from '../core/platform/control-loop';
import { overriddenTargetNote } from '../core/service/target-override';
import { type ServingDescription } from '../core/reconciler/serving';
import { servingRecord } from '../core/service/serving-record';
import { hostMemoryNote } from '../core/service/host-memory';
import { readOnlyWeightsNote } from '../core/service/weights-conversion';
import { ungatedArtifactNote } from '../core/trust/ungated';
import { recordServing } from '../control/serving-record';
import { type IInferenceServing } from '../control/serving';
import { type HardwareCatalog } from '../core/hardware/catalog';
import { perPoolConcurrencyQueries, sageMakerVariantDimensions, type TargetTrackingQuery } from '../core/metrics/aws-published';
import { AwsMetrics } from '../core/metrics/contract';
import { type SageMakerRoutingFacts } from '../core/reconciler/routing-facts';
import { type PlacementOptions } from '../core/reconciler/config';
import { hasInstancePools } from '../core/reconciler/targets/sagemaker-instances';
import { rejectionStatusClass } from '../core/runtime/engines';
import { SAGEMAKER_MODEL_PATH } from '../core/runtime/platform';
import { type CapacityClass, type CapacityClassSpec } from '../core/service/capacity-class';
import { type ClassProblem, checkCapacityClasses } from '../core/service/checks';
import { isPlannableContract, type ServiceContract } from '../core/service/contract';
import { type CapacityPlan, planCapacity } from '../core/service/sizing';
import { parseEcrImage } from '../core/trust/image-reference';
import { SAGEMAKER_RULES } from '../core/validation/rules';
import { durationSeconds } from '../util/duration';
import { newLogGroupKey } from '../util/log-encryption';
import { acknowledgeNistRules } from '../util/nag';
import { subnetZones } from '../util/subnet-zones';
import { type IClassArtifactGate } from '../trust/gate';
import { modelDataKeyFacts } from '../trust/model-data-key';
import { ClassModel, sageMakerModelDataNote, sageMakerRuntime } from './class-model';
import { classHasInstanceStorage, variantVolume } from './instance-storage';
import {
  blueGreenQuotaNote, type FleetCost, fleetCost, type PlannedVariant, planAsDeployed, planVariants, recordedVariants, variantCoverageProblems,
  variantRoutingFacts,
  type VariantSpec,
} from './variants';
import { capacityPlanProblems, NO_CLASSES } from '../core/service/checks';
import { VARIANT_SCALABLE_DIMENSION, variantResourceId } from '../core/platform/sagemaker-scalable-target';
import { DEFAULT_POLICY_CONFIG } from '../core/policy/defaults';
import { Checker } from '../core/validation/checker';
import { ConstructValidationError, type Problem, throwIfInvalid } from '../core/validation/error';

/** What `addVariant()` takes: a routing group of classes, one instance pool each when it has several. */
export interface EndpointVariantOptions extends Omit<VariantSpec, 'provisionTimeoutSeconds'> {
  /**
   * How long SageMaker tries to provision the variant's instances across all its pools before the operation fails
   * (300 to 3600 seconds).
   * @default - the endpoint's provisionTimeout
   */
  readonly provisionTimeout?: Duration;
}

/** Model monitor data capture of the endpoint. */
export interface EndpointDataCaptureOptions {
  /** Bucket that receives captured requests and responses (encrypted with the endpoint's key). */
  readonly bucket: s3.IBucket;
  /** @default 'data-capture/' */
  readonly prefix?: string;
  /** Percentage of requests captured, 1 to 100. @default 5 */
  readonly samplingPercentage?: number;
}

/**
 * Deployment guardrail of the endpoint: a blue/green update with all at once traffic shifting, a bake, and automatic
 * rollback on alarms (`AWS::SageMaker::Endpoint.DeploymentConfig`). The only mode this endpoint's shape supports safely;
 * see docs/sagemaker-endpoint.md, "Deployment guardrails", for why not canary, linear or rolling.
 */
export interface EndpointDeploymentOptions {
  /**
   * How long the old fleet stays up after the new one takes all traffic, while the rollback alarms watch
   * (`TerminationWaitInSeconds`), 60 to 3600 seconds. The endpoint stays `Updating` for it: no autoscaling and no
   * reconciler write until it ends, and both fleets are billed.
   */
  readonly bakeTime: Duration;
  /**
   * Alarms whose `ALARM` state during the deployment rolls it back to the old fleet (1 to 10 in all, with
   * `addRollbackAlarm()`). Any alarm on the endpoint's metrics; one that fires on the old fleet's behaviour also rolls
   * back ("if your old fleet trips the alarm during the deployment, SageMaker terminates your deployment", SageMaker
   * guide, deployment-guardrails-configuration.html).
   * Metric alarms only: a composite alarm is refused, and one imported (`CompositeAlarm.fromCompositeAlarmArn`) cannot
   * be told from a metric alarm at synth, so the alarm-scoped grant would let no role read it (DescribeAlarms returns
   * composite alarms only to a permission scoped to `*`).
   * @default - none here; add them with addRollbackAlarm() (at least one by synth)
   */
  readonly rollbackAlarms?: readonly cloudwatch.IAlarm[];
  /**
   * Time limit of the whole deployment (`MaximumExecutionTimeoutInSeconds`), 600 to 28800 seconds, and at least what
   * the deployment's own steps may take: `bakeTime` + the longest variant's `provisionTimeout` +
   * `modelDataDownloadTimeout` + `containerStartupHealthCheckTimeout` (the new fleet is provisioned, downloads the model
   * and passes its health check before the traffic shift and the bake), checked at synth. That sum is a lower bound, not
   * an estimate: the instance launch once capacity is found, the image pull and the traffic shift have no documented
   * duration and are not counted. Set it with room to spare for a large model, whose download and start-up are long.
   * @default - none rendered: SageMaker's own default (undocumented) applies
   */
  readonly maximumExecutionTimeout?: Duration;
}

/** `AWS::SageMaker::EndpointConfig.MetricsConfig`. */
export interface EndpointMetricsOptions {
  /** @default true */
  readonly enhancedMetrics?: boolean;
  /**
   * 10, 30, 60, 120, 180, 240 or 300 seconds; at most 60 while `enhancedMetrics` is on, since they then publish the
   * invocation metrics the Reconciler, the dashboards and the alarms read per minute at this frequency too ("When
   * EnableEnhancedMetrics is set to True, this interval applies to both utilization and invocation metrics", API
   * reference, MetricsConfig). `ConcurrentRequestsPerModel`, the metric each variant scales on, is one of those
   * invocation metrics (SageMaker guide, monitoring-cloudwatch.html), and its high-resolution form "emit[s] data every
   * 10 seconds" (endpoint-auto-scaling-add-code-define.html). Whether a longer interval here slows it is not documented,
   * so with enhanced metrics on the default is 10 s: scale-out keeps its 10-second datapoints either way. At 30 or 60 s,
   * if the interval does apply to it, target tracking sees one datapoint per interval, and a burst may wait minutes
   * for a scale-out that the 10-second metric starts in about 30 s (docs/sagemaker-endpoint.md, "Per-pool targets").
   * Without enhanced metrics the interval applies to utilization metrics only and the invocation metrics stay at 60 s.
   * @default - Duration.seconds(10) with enhancedMetrics on, Duration.minutes(1) (SageMaker's default) with it off
   */
  readonly publishFrequency?: Duration;
  /** @default false */
  readonly detailedObservability?: boolean;
}

/** Properties of a {@link SageMakerCapacityEndpoint}. */
export interface SageMakerCapacityEndpointProps {
  /** The service contract: SLO, request shape and peak demand. Scaling targets, weights and admission limits derive from it. */
  readonly contract: ServiceContract;
  /**
   * Capacity classes in preference order (the first is preferred). More can be added with `addClass()`.
   * @default - none; add them with addClass()
   */
  readonly classes?: readonly CapacityClassSpec[];
  /**
   * Production variants (routing groups). More can be added with `addVariant()`. Every class must be in exactly one.
   * @default - none; add them with addVariant()
   */
  readonly variants?: readonly EndpointVariantOptions[];
  /** @default HardwareCatalog.builtIn() */
  readonly catalog?: HardwareCatalog;
  /**
   * Verifies each class's artifacts before its model is created; each class's Model depends on
   * `gateFor(this, class, { requireCurrentVersion: true })` (SageMaker reads the model data key's current object).
   * Without it a class's `artifact.signingProfileName` and `artifact.modelData.versionId` do nothing (a synth warning).
   * @default - no deploy-time verification
   */
  readonly artifactGate?: IClassArtifactGate;
  /**
   * Default `VariantInstanceProvisionTimeoutInSeconds`: total time SageMaker tries the pools of a variant (300 to
   * 3600 seconds). Capacity provisioning only; model download and container start come on top. A scale-out short of
   * capacity keeps the endpoint Updating up to this long, and the Reconciler writes nothing to an endpoint that is not
   * InService. Raise it only when waiting for capacity is worth a frozen routing (a variant with several pools).
   * @default Duration.minutes(5), the minimum (`SAGEMAKER_SCALING_DEFAULTS.provisionTimeoutSeconds`)
   */
  readonly provisionTimeout?: Duration;
  /** Time the container has to pass its health check after start (model load). @default Duration.minutes(20) */
  readonly containerStartupHealthCheckTimeout?: Duration;
  /** Time SageMaker has to download the model data to an instance. @default Duration.minutes(20) */
  readonly modelDataDownloadTimeout?: Duration;
  /**
   * Instances each fallback variant keeps warm (the plan's standby): its default scaling minimum, so at most its planned
   * maximum (the instances its largest pool needs for the planned peak with headroom, within that class's maxReplicas);
   * a larger value fails. To keep more warm in one variant, set its `scaling.minInstances` (and `maxInstances`).
   * @default 1
   */
  readonly standbyInstances?: number;
  /**
   * Largest initial traffic share of a fallback variant (its warm floor, further bounded by what its standby carries),
   * 0 to 0.2. The initial weights are the routing policy's cost plan at planned demand (the rule EKS uses too).
   * @default 0.02 - the reconciler's warm floor (DEFAULT_POLICY_CONFIG.warmFloorShare)
   */
  readonly warmFloorShare?: number;
  /** Cooldown after a scale-out: short, so that a burst gets capacity fast. @default Duration.minutes(1) */
  readonly scaleOutCooldown?: Duration;
  /** Cooldown after a scale-in: long, so that a lull does not drop warm capacity. @default Duration.minutes(15) */
  readonly scaleInCooldown?: Duration;
  /**
   * Key for data capture and for the instances' storage volumes. Volume encryption applies only when no pool type has
   * local instance storage (those volumes are hardware-encrypted and CreateEndpointConfig rejects a KmsKeyId).
   * @default - a new key with rotation enabled, created only when something uses it (data capture, or a class on an
   * instance type without instance storage)
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * Key of the model-data bucket when it uses SSE-KMS; each class's role may decrypt through S3 only.
   * @default - model data is not KMS-encrypted with a customer key
   */
  readonly modelDataEncryptionKey?: kms.IKey;
  /** @default - no data capture */
  readonly dataCapture?: EndpointDataCaptureOptions;
  /**
   * The endpoint configuration's `MetricsConfig`. Enhanced metrics (instance-level invocation and utilization metrics,
   * https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html) are on by default,
   * published every `publishFrequency` (10 s by default, so as not to slow the high-resolution metric autoscaling
   * reads; see `EndpointMetricsOptions.publishFrequency`). Detailed observability is off by default: its container
   * metrics (token rates, engine queue) are OpenTelemetry metrics read with PromQL, not with the GetMetricData the
   * reconciler and CloudWatch alarms use, so the control loop would not read them (see docs/signals.md).
   * @default - { enhancedMetrics: true, publishFrequency: Duration.seconds(10), detailedObservability: false }
   */
  readonly metrics?: EndpointMetricsOptions;
  /**
   * VPC for the model containers.
   * @default - SageMaker-managed network
   */
  readonly vpc?: ec2.IVpc;
  /**
   * 1 to 16 subnets (VpcConfig.Subnets), in at least two Availability Zones as SageMaker asks (a synth warning otherwise).
   * Only with `vpc`.
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** 1 to 5 security groups (VpcConfig.SecurityGroupIds). Only with `vpc`. @default - a new security group without ingress rules */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Network isolation of the model containers (no outbound network calls; SageMaker fetches the model data).
   * @default true
   */
  readonly networkIsolation?: boolean;
  /**
   * Endpoint name (letters, digits and '-', at most 63 characters).
   * @default - a name generated from the construct path
   */
  readonly endpointName?: string;
  /** Retention of the endpoint's log group `/aws/sagemaker/Endpoints/<name>`. @default logs.RetentionDays.THREE_MONTHS */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Key that encrypts the endpoint's log group (the model containers' output).
   * @default - a new key with rotation, usable by CloudWatch Logs for this account's log groups
   */
  readonly logEncryptionKey?: kms.IKey;
  /**
   * Keep the live variant weights and instance counts when a deployment updates the endpoint
   * (`RetainAllVariantProperties`). Without it, every deployment that changes the endpoint configuration resets the
   * weights the reconciler set and the instance counts autoscaling reached to their initial values (each variant's
   * minimum instances and initial weight).
   *
   * Data capture: whether a retained update also keeps the running endpoint's data capture settings is not documented.
   * The API lists `DataCaptureConfig` among the variant properties an update may take from the new configuration
   * instead, "(Not currently supported.)" (`VariantProperty`), so the endpoint does not ask for it. To be sure that a
   * change of `dataCapture` (on, off, bucket, prefix, sampling) reaches a running endpoint, deploy it with this `false`:
   * that deployment also starts every variant at its minimum instances and initial weights, so under load the endpoint
   * serves on its minimum fleet until autoscaling adds instances again (each one provisioned and its model loaded) and
   * the reconciler's next run sets the weights. See docs/sagemaker-endpoint.md, "Weights and deployments".
   * @default true
   */
  readonly retainVariantPropertiesOnUpdate?: boolean;
  /**
   * Deployment guardrail for updates that replace the endpoint configuration with the same variants (a new image,
   * model data or pools; whether a changed pool list counts as the instance-type change that fails an update of an
   * autoscaled variant is not confirmed): the new fleet takes all traffic, the old one stays up for `bakeTime`, and an alarm in `ALARM`
   * rolls the traffic back to it. A change of the variants' names (adding, removing or renaming one) is not covered: a
   * blue/green deployment needs "the same variant name as the old endpoint configuration" (SageMaker guide,
   * deployment-guardrails-exclusions.html). Opt-in: the bake keeps the endpoint `Updating` (no autoscaling, no
   * reconciler writes) and doubles the fleet for its length.
   * @default - SageMaker's default update: all at once, no bake, no rollback on alarms
   */
  readonly deployment?: EndpointDeploymentOptions;
}

/** Options of the metric helpers. */
export interface SageMakerVariantMetricOptions extends cloudwatch.MetricOptions {
  /**
   * Only the instances of this type: the series with an `InstanceType` dimension, which SageMaker publishes besides the
   * variant-level one for a variant with instance pools ("Monitoring instance pools",
   * https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html). A variant with several
   * classes only: one with a single class has no pools (it runs on a plain `InstanceType`), so the option is refused
   * for it; its variant-level series is that class's.
   * @default - the whole variant
   */
  readonly instanceType?: string;
}

/** Service-linked role Application Auto Scaling uses for SageMaker variants (created on first use). */
const SCALING_SERVICE_LINKED_ROLE =
  'aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint';

interface Resolved {
  readonly classes: CapacityClass[];
  readonly plan: CapacityPlan;
  readonly variants: PlannedVariant[];
  /** Problems of the input given so far: thrown at construction and by each later `addClass()` / `addVariant()`. */
  readonly problems: ClassProblem[];
  /**
   * Problems only a complete endpoint can have (no class, no variant, a class in no variant, a variant naming an
   * undeclared class, a peak beyond every quota): thrown when the endpoint is first read (`servingDescription()`) or
   * at synth, whichever comes first.
   */
  readonly pending: Problem[];
}

const CONSTRUCT = 'SageMakerCapacityEndpoint';

/**
 * `MetricPublishFrequencyInSeconds` when the props set none. With enhanced metrics on, the interval "applies to both
 * utilization and invocation metrics" (botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json:35744, shape
 * MetricsConfig), and ConcurrentRequestsPerModel is listed among the invocation metrics
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html). The high-resolution predefined metric
 * each variant scales on "emit[s] data every 10 seconds" (https://docs.aws.amazon.com/sagemaker/latest/dg/
 * endpoint-auto-scaling-add-code-define.html, high-resolution metrics). Whether a 60 s interval would slow it is not
 * documented, so 10 s, the shortest value accepted, keeps it at its own resolution either way (fail safe). The
 * Reconciler, the dashboards, the alarms and the per-pool scaling policy read whole-minute periods, which aggregate the
 * datapoints within each (a Sum adds them, a Maximum takes the largest): no reader assumes one datapoint a minute.
 * With enhanced metrics off the interval applies to utilization metrics only and invocation metrics stay at 60 s:
 * SageMaker's own default, 60, is kept.
 */
const PUBLISH_FREQUENCY_SECONDS = { enhanced: 10, standard: 60 } as const;

/**
 * The resource types `applyRemovalPolicy()` reaches in this construct: a running endpoint's own resources and what it
 * needs to keep running and to be deleted later (see there). A custom resource of an artifact gate placed under the
 * endpoint is not among them: it only verifies at deploy.
 */
const RETAINED_WITH_THE_ENDPOINT = [
  'AWS::SageMaker::Endpoint', 'AWS::SageMaker::EndpointConfig', 'AWS::SageMaker::Model', 'AWS::IAM::Role', 'AWS::IAM::Policy',
  'AWS::ApplicationAutoScaling::ScalableTarget', 'AWS::ApplicationAutoScaling::ScalingPolicy', 'AWS::EC2::SecurityGroup',
] as const;

/** `ContainerStartupHealthCheckTimeoutInSeconds` and `ModelDataDownloadTimeoutInSeconds` when the props set none. */
const CONTAINER_STARTUP_DEFAULT_SECONDS = 1200;
const MODEL_DATA_DOWNLOAD_DEFAULT_SECONDS = 1200;
/** Model size above which AWS advises a longer model data download timeout (large-model-inference-hosting.html). */
const LARGE_MODEL_DOWNLOAD_GB = 40;

/**
 * A SageMaker real-time endpoint that survives a shortage of its preferred instance type.
 *
 * Each capacity class becomes a SageMaker Model (own image by digest, own model data, own least-privilege role, runtime
 * settings and admission limits as container environment). Classes are grouped into production variants; in a variant
 * of several classes each class is one instance pool (priority 1 to 5, `ModelNameOverride` to its model), so SageMaker
 * falls back pool by pool on insufficient capacity, and a variant of one class runs on that class's instance type
 * (`InstanceType`, no pools). Variants are the routing groups whose weights the reconciler moves with
 * UpdateEndpointWeightsAndCapacities; each variant scales with target tracking on concurrent requests per instance,
 * with its target and range from the capacity plan.
 *
 * Why `ConcurrentRequestsPerModel` (the high-resolution predefined metric) and not `InvocationsPerInstance`: LLM
 * requests last seconds to minutes, so invocations per minute mixes the arrival rate with the request length, and the
 * same rate can be idle or saturated. The envelope measures safe *concurrency*; by Little's law concurrency is what
 * fills the KV cache and sets queueing, and target tracking on it keeps each instance at the requests it holds in
 * flight at its envelope / (1 + headroom) (`inFlightAtEnvelope`, lib/core/service/sizing.ts). The metric counts the
 * requests a model container is receiving, those queued within it included and a stream until its last token
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html, review R261; read in
 * translated copies of the page): Little's law's count. Whether its high-resolution datapoint is a mean or a maximum
 * over the 10 s is not documented there (a maximum would scale out earlier: the safe side). Its 10-second resolution
 * also lets scale-out react within a minute; enhanced metrics are published every 10 s by default so that their
 * interval does not slow it (`EndpointMetricsOptions.publishFrequency`).
 */
export class SageMakerCapacityEndpoint extends Resource implements sagemaker.IEndpoint, IInferenceServing {
  /** The endpoint name (also the `EndpointName` dimension of its metrics). */
  public readonly endpointName: string;
  /** The endpoint ARN. */
  public readonly endpointArn: string;
  /** The ARNs grants name: `endpointArn`, and the ARN with the name as written where that has capitals. */
  private readonly endpointArns: string[];
  public readonly endpoint: sagemaker.CfnEndpoint;
  public readonly endpointConfig: sagemaker.CfnEndpointConfig;
  /** Key for data capture and (where the instance types allow) storage volumes; undefined while nothing needs one. */
  public get encryptionKey(): kms.IKey | undefined {
    return this.key;
  }
  /** Log group the model containers write to. */
  public readonly logGroup: logs.LogGroup;
  /** The key of the log group. */
  public readonly logEncryptionKey: kms.IKey;
  /** The service contract. */
  public readonly contract: ServiceContract;

  private readonly props: SageMakerCapacityEndpointProps;
  private readonly specs: CapacityClassSpec[] = [];
  private readonly variantSpecs: EndpointVariantOptions[] = [];
  private readonly classModels = new Map<string, ClassModel>();
  private readonly scalableTargets = new Map<string, appscaling.ScalableTarget>();
  private readonly securityGroups: ec2.ISecurityGroup[] = [];
  private readonly subnetIds: string[] = [];
  private readonly scalingRole: iam.IRole;
  private readonly rollbackAlarms: cloudwatch.IAlarm[] = [];
  private cached?: Resolved;
  /** The placement of the Reconciler on this endpoint (`applyPlacement`): the initial weights honour it. */
  private placement: PlacementOptions = {};
  private key?: kms.IKey;
  private constructed = false;
  /** Whether a control construct has read the endpoint (`servingDescription()`, `routingFacts()`): its variants are then final. */
  private read = false;

  constructor(scope: Construct, id: string, props: SageMakerCapacityEndpointProps) {
    super(scope, id);
    this.props = props;
    this.contract = props.contract;
    this.endpointName = props.endpointName ?? Names.uniqueResourceName(this, { maxLength: 63, separator: '-', allowedSpecialCharacters: '-' });
    const arnOf = (resourceName: string) => Stack.of(this).formatArn({ service: 'sagemaker', resource: 'endpoint', resourceName });
    // SageMaker lower-cases names in ARNs.
    this.endpointArn = arnOf(Token.isUnresolved(this.endpointName) ? this.endpointName : this.endpointName.toLowerCase());
    // Grants name the endpoint in both spellings where they differ. Requests on an endpoint named with capitals were
    // evaluated against the lower-cased ARN (philschmid/cdk-samples#2: "not authorized to perform: sagemaker:InvokeEndpoint
    // on resource: ...:endpoint/endpoint-setu4993--labse" for a name written with "LaBSE"), but no AWS page states which
    // spelling IAM evaluates, and reports differ (aws-solutions/research-service-workbench-on-aws#1048 grants both).
    // Both name one endpoint: the name "is case-insensitive in CreateEndpoint" (CreateEndpoint EndpointName, SageMaker
    // API reference), so the second ARN grants nothing more.
    this.endpointArns = Token.isUnresolved(this.endpointName) || this.endpointName === this.endpointName.toLowerCase()
      ? [this.endpointArn] : [this.endpointArn, arnOf(this.endpointName)];
    this.key = props.encryptionKey;
    if (props.dataCapture) this.ensureKey();
    if (props.vpc) {
      const selected = props.vpc.selectSubnets(props.vpcSubnets ?? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS });
      this.subnetIds.push(...selected.subnetIds);
      this.warnIfOneZone(selected.subnets);
      if (!selected.isPendingLookup) this.warnIfIsolated(props.vpc, selected.subnets); // a lookup's placeholder VPC reuses its ids
      this.securityGroups.push(
        ...(props.securityGroups ?? [
          new ec2.SecurityGroup(this, 'SecurityGroup', {
            vpc: props.vpc,
            description: `Model containers of SageMaker endpoint ${this.endpointName}`,
            allowAllOutbound: true,
          }),
        ]),
      );
    }
    this.logEncryptionKey = props.logEncryptionKey ?? newLogGroupKey(this, 'LogKey', `Log group of SageMaker endpoint ${this.endpointName}`);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/sagemaker/Endpoints/${this.endpointName}`,
      retention: props.logRetention ?? logs.RetentionDays.THREE_MONTHS,
      encryptionKey: this.logEncryptionKey,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.scalingRole = iam.Role.fromRoleArn(
      this,
      'ScalingRole',
      Stack.of(this).formatArn({ service: 'iam', region: '', resource: 'role', resourceName: SCALING_SERVICE_LINKED_ROLE }),
      { mutable: false },
    );

    const enhancedMetrics = props.metrics?.enhancedMetrics ?? true;
    this.endpointConfig = new sagemaker.CfnEndpointConfig(this, 'Config', {
      productionVariants: Lazy.any({ produce: () => this.renderVariants() }),
      kmsKeyId: Lazy.string({ produce: () => (this.volumesTakeKey() ? this.key?.keyArn : undefined) }),
      dataCaptureConfig: this.renderDataCapture(),
      metricsConfig: {
        enableEnhancedMetrics: enhancedMetrics,
        // Fractional seconds are reported by the publishFrequency rule below, with this construct's path.
        metricPublishFrequencyInSeconds: props.metrics?.publishFrequency?.toSeconds({ integral: false })
          ?? (enhancedMetrics ? PUBLISH_FREQUENCY_SECONDS.enhanced : PUBLISH_FREQUENCY_SECONDS.standard),
        enableDetailedObservability: props.metrics?.detailedObservability ?? false,
      },
    });
    this.endpoint = new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointName: this.endpointName,
      endpointConfigName: this.endpointConfig.attrEndpointConfigName,
      // Weights and instance counts stay with the reconciler and autoscaling. No ExcludeRetainedVariantProperties:
      // DesiredWeight and DesiredInstanceCount would reset what is retained, and DataCaptureConfig is "(Not currently
      // supported.)" (botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json:51123, shape VariantProperty;
      // the same on the CloudFormation page aws-properties-sagemaker-endpoint-variantproperty): at best ignored, at
      // worst a refused UpdateEndpoint on every deployment that replaces the configuration. How a data-capture change
      // reaches a running endpoint: the retainVariantPropertiesOnUpdate prop docs.
      retainAllVariantProperties: props.retainVariantPropertiesOnUpdate ?? true,
      deploymentConfig: props.deployment ? Lazy.any({ produce: () => this.renderDeploymentConfig() }) : undefined,
    });
    for (const alarm of props.deployment?.rollbackAlarms ?? []) this.addRollbackAlarm(alarm);
    this.endpoint.node.addDependency(this.logGroup);

    for (const spec of props.classes ?? []) this.addClass(spec);
    for (const variant of props.variants ?? []) this.addVariant(variant);
    // Input is checked when it is given: the props now, each later addClass()/addVariant() at its call. Whether the
    // endpoint is complete is known only when it is read (servingDescription()) or synthesized.
    this.constructed = true;
    this.throwIfInvalid({ complete: false });
    recordServing(this, CONSTRUCT, this.contract.name, () => {
      const { classes, plan, variants } = this.resolve();
      return servingRecord('sagemaker', this.contract, classes, plan, recordedVariants(variants));
    });
    this.node.addValidation({ validate: () => this.validationErrors() });
    // Decided at synth, when every class is known (classes may be added after construction).
    this.node.addValidation({
      validate: () => {
        if (!this.volumesTakeKey()) {
          acknowledgeNistRules(this.endpointConfig, {
            SageMakerEndpointConfigurationKMSKeyConfigured: 'A pool type has local NVMe instance storage, which its hardware encrypts: ' +
              'CreateEndpointConfig rejects a KmsKeyId for such types (g5, g6, g6e, p4d, p5, trn1 and others). Data capture stays KMS-encrypted.',
          });
        }
        return [];
      },
    });
    // Decided at synth, when every variant's minimum is known.
    this.node.addValidation({ validate: () => this.warnIfBlueGreenOverQuota() });
  }

  /**
   * Adds a capacity class, after the ones declared so far in preference order, and creates its Model and role. Only
   * before the endpoint is read (a Reconciler or observability construct on it is created).
   */
  public addClass(spec: CapacityClassSpec): this {
    this.throwIfRead('addClass()', `class '${spec.name}'`);
    this.specs.push(spec);
    this.cached = undefined;
    if (this.classModels.has(spec.name)) return this.checked(); // duplicate name
    const resolved = this.checkClasses().classes.find((c) => c.name === spec.name && c.preferenceRank === this.specs.length - 1);
    if (!resolved) return this.checked(); // invalid class
    if (!classHasInstanceStorage(resolved)) this.ensureKey();
    const runtime = sageMakerRuntime(resolved, this.contract);
    const capture = this.captureOptions();
    // One id per topic and class, as EksInferenceService gives them, so each can be acknowledged alone.
    for (const w of runtime.warnings) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:${w.topic}-${spec.name}`, w.message);
    const classModel = new ClassModel(this, `Class-${spec.name}`, {
      capacityClass: resolved,
      environment: { ...runtime.env },
      endpointName: this.endpointName,
      networkIsolation: this.props.networkIsolation ?? true,
      vpc: this.props.vpc,
      subnetIds: this.subnetIds,
      securityGroupIds: this.securityGroups.map((sg) => sg.securityGroupId),
      modelDataEncryptionKey: this.props.modelDataEncryptionKey,
      dataCapture: capture ? { bucket: capture.bucket, prefix: capture.prefix, key: this.ensureKey() } : undefined,
    });
    // SageMaker reads the model data key's current object at each instance launch (no version id): the gate must prove
    // that the approved version is the current one.
    if (this.props.artifactGate) {
      classModel.model.node.addDependency(this.props.artifactGate.gateFor(this, resolved, { requireCurrentVersion: true }));
    }
    this.classModels.set(spec.name, classModel);
    for (const alarm of this.rollbackAlarms) grantDescribeAlarm(classModel.role, alarm);
    this.warnIfUngated(resolved);
    // The instance's memory, which the OS and the serving stack share with the load (a container memory limit below it,
    // if SageMaker sets one, is not documented: unconfirmed).
    const memory = hostMemoryNote(resolved.runtime.engine, resolved.footprint.weightsGiB, resolved.hardware.memoryGiB, `of ${resolved.instanceType}'s memory`);
    if (memory) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-host-memory-${resolved.name}`, `class '${resolved.name}': ${memory}`);
    this.warnIfDownloadTimeoutDefault(resolved);
    this.warnIfWeightsConverted(resolved);
    const archive = sageMakerModelDataNote(resolved);
    if (archive) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-model-data-archive-${resolved.name}`, archive);
    return this.checked();
  }

  /**
   * Adds a production variant (routing group) and its target-tracking autoscaling. Only before the endpoint is read (a
   * Reconciler or observability construct on it is created).
   */
  public addVariant(options: EndpointVariantOptions): this {
    this.throwIfRead('addVariant()', `variant '${options.name}'`);
    this.variantSpecs.push(options);
    this.cached = undefined;
    if (this.scalableTargets.has(options.name)) return this.checked(); // duplicate name
    const name = options.name;
    const target = new appscaling.ScalableTarget(this, `Scaling-${name}`, {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: variantResourceId(this.endpointName, name),
      scalableDimension: VARIANT_SCALABLE_DIMENSION,
      minCapacity: Lazy.number({ produce: () => this.plannedVariant(name)?.minInstances ?? 1 }),
      maxCapacity: Lazy.number({ produce: () => this.plannedVariant(name)?.maxInstances ?? 1 }),
      role: this.scalingRole,
    });
    // The variant exists only once the endpoint does.
    target.node.addDependency(this.endpoint);
    // A cooldown that is no whole number of seconds is reported at synth; aws-cdk-lib would throw first without a path.
    // Defaults shared with the simulator's SageMaker model (lib/core/platform/control-loop.ts).
    const scaleOutCooldown = wholeSeconds(this.props.scaleOutCooldown) ?? Duration.seconds(SAGEMAKER_SCALING_DEFAULTS.scaleOutCooldownSeconds);
    const scaleInCooldown = wholeSeconds(this.props.scaleInCooldown) ?? Duration.seconds(SAGEMAKER_SCALING_DEFAULTS.scaleInCooldownSeconds);
    target.scaleToTrackMetric('ConcurrencyPerInstance', {
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
      targetValue: Lazy.number({ produce: () => this.plannedVariant(name)?.targetConcurrencyPerInstance ?? 1 }),
      scaleOutCooldown,
      scaleInCooldown,
    });
    // perPoolTargets: a second policy holds each instance type to its own pool's target (variantScalingDefaults,
    // lib/core/platform/control-loop.ts). Their targets are known once the plan resolves; a variant the plan refuses
    // fails synth before this renders.
    if (options.scaling?.perPoolTargets === true) {
      new appscaling.CfnScalingPolicy(this, `Scaling-${name}-ConcurrencyPerPool`, {
        policyName: Lazy.string({ produce: () => `${Names.uniqueId(target)}-ConcurrencyPerPool`.slice(-255) }),
        policyType: 'TargetTrackingScaling',
        scalingTargetId: target.scalableTargetId,
        targetTrackingScalingPolicyConfiguration: {
          targetValue: 1,
          customizedMetricSpecification: {
            metrics: Lazy.any({ produce: () => this.perPoolQueries(name) }),
          },
          scaleOutCooldown: scaleOutCooldown.toSeconds(),
          scaleInCooldown: scaleInCooldown.toSeconds(),
        },
      });
    }
    this.scalableTargets.set(name, target);
    return this.checked();
  }

  /** The SageMaker Model of a class (undefined for an unknown or invalid class). */
  public modelFor(className: string): sagemaker.CfnModel | undefined {
    return this.classModels.get(className)?.model;
  }

  /** The execution role of a class's model. */
  public roleFor(className: string): iam.IRole | undefined {
    return this.classModels.get(className)?.role;
  }

  /**
   * Adds an alarm that rolls a deployment back (`deployment` must be set): for alarms made after the endpoint, such as
   * `InferenceAlarms`' deadline exhaustion alarm, whose name the endpoint then references (no cycle: that alarm reads
   * the endpoint's metrics by name, not its resources). Each class's role may describe it: the guide asks the
   * "execution role" for `cloudwatch:DescribeAlarms` on the rollback alarms (deployment-guardrails-configuration.html),
   * and which role a model-based endpoint uses is not documented, so every class's role gets it.
   */
  public addRollbackAlarm(alarm: cloudwatch.IAlarm): this {
    if (!this.props.deployment) {
      throwIfInvalid(CONSTRUCT, this.node.path, [{
        field: 'addRollbackAlarm()',
        message: `got alarm '${alarm.node.path}' but deployment is not set; allowed: set deployment: { bakeTime } to bake and roll back deployments`,
      }]);
    }
    if (alarm instanceof cloudwatch.CompositeAlarm) {
      // DescribeAlarms returns a composite alarm only to a permission "scoped to *" (CloudWatch API reference,
      // DescribeAlarms): the alarm-scoped grant below would let no role read it, and whether SageMaker rolls back on a
      // composite alarm is not documented.
      throwIfInvalid(CONSTRUCT, this.node.path, [{
        field: 'deployment.rollbackAlarms',
        message: `got composite alarm '${alarm.node.path}'; allowed: metric alarms (pass the metric alarms the composite combines)`,
      }]);
    }
    this.rollbackAlarms.push(alarm);
    this.cached = undefined;
    for (const m of this.classModels.values()) grantDescribeAlarm(m.role, alarm);
    return this.checked();
  }

  /** The scalable target of a variant. */
  public scalableTargetFor(variantName: string): appscaling.ScalableTarget | undefined {
    return this.scalableTargets.get(variantName);
  }

  /**
   * The capacity plan of the valid classes declared so far, its steady fleet and cost as the variants deploy them: the
   * same as `plannedCost` (a lower-priority pool of a variant runs no standby of its own). The serving record carries it.
   */
  public get capacityPlan(): CapacityPlan {
    return this.resolve().plan;
  }

  /** The variants as planned (pools, ranges, targets, initial weights) from the classes and variants declared so far. */
  public get plannedVariants(): readonly PlannedVariant[] {
    return this.resolve().variants;
  }

  /** Hourly and monthly cost of the planned fleet: every variant at its scaling minimum, including fallback standby. */
  public get plannedCost(): FleetCost {
    return fleetCost(this.resolve().variants);
  }

  /**
   * Called by a Reconciler on this endpoint. Nothing to deploy: the reconciler raises a variant's desired instance
   * count to its replica floor itself, with the UpdateEndpointWeightsAndCapacities permission it has for the weights.
   */
  public enableReplicaFloors(): void {
    // Intentionally empty: see above.
  }

  /**
   * Called by a Reconciler on this endpoint with the placement it enforces: the variants' initial weights (rendered at
   * synth) then give a variant it forbids (one with a pool of `allowSensitive: false`, when the service's requests are
   * sensitive) no weight, as its runs never do, and an explicit `initialWeight` above 0 on such a variant fails.
   */
  public applyPlacement(placement: PlacementOptions): void {
    this.placement = placement;
    this.cached = undefined;
    this.checked();
  }

  /**
   * Contract, routing facts and signal producers, for the Reconciler and InferenceObservability. SageMaker publishes
   * no capacity-error or token metric readable with GetMetricData: the loop sees shortages as desired > ready
   * instances (DescribeEndpoint) and estimates tokens as invocations x the contract's mean output tokens. Call it
   * after the last `addClass()` / `addVariant()`: once it has returned, they throw.
   */
  public servingDescription(): ServingDescription {
    // A control construct reading an incomplete or invalid endpoint gets the endpoint's own problems, never its own
    // complaint about the facts they produce (a missing variant would read as "no capacity classes").
    this.throwIfInvalid({ complete: true });
    this.read = true;
    return {
      service: this.contract.name,
      tokensPerRequest: this.contract.requestShape.meanOutputTokens,
      latencySloP95Ms: this.contract.slo.deadlineMs,
      headroom: this.resolve().plan.headroom,
      routing: this.routingFacts(),
      // Only what the server sheds overload with: SageMaker publishes no capacity-error or token metric to read.
      signals: {
        classes: Object.fromEntries(this.resolve().variants.flatMap((v) => v.pools.map((p) => p.capacityClass))
          .flatMap((c) => {
            const rejectionStatus = rejectionStatusClass(c.runtime.engine);
            return rejectionStatus ? [[c.name, { rejectionStatus }]] : [];
          })),
      },
    };
  }

  /** The routing facts (part of `servingDescription()`); once they have been read, `addClass()` / `addVariant()` throw. */
  public routingFacts(): SageMakerRoutingFacts {
    this.throwIfInvalid({ complete: true });
    this.read = true;
    return {
      kind: 'sagemaker',
      endpointName: this.endpointName,
      endpointArn: this.endpointArn,
      // A token (Fn::GetAtt of the configuration, whose name CloudFormation generates): a function that embeds it depends
      // on the configuration, so it gets facts naming a new one only once that exists, and the run tells which one the
      // endpoint runs. A Reconciler in another stack leaves it out (an export would block every replacement).
      endpointConfigName: this.endpointConfig.attrEndpointConfigName,
      variants: variantRoutingFacts(this.resolve().variants),
    };
  }

  /** The reference aws-cdk-lib's `sagemaker.IEndpointRef` consumers read. */
  public get endpointRef(): { readonly endpointArn: string } {
    return { endpointArn: this.endpointArn };
  }

  /**
   * Applies `policy` to what a running endpoint needs: the endpoint, its configuration, every class's Model, execution
   * role and the role's policies, each variant's scalable target and scaling policies, and the security group the
   * construct creates. A retained endpoint without them would run with no autoscaling and no role: SageMaker assumes the
   * model's role to fetch the image and the model data "for deployment on ML compute instances" (CreateModel
   * ExecutionRoleArn, boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json:14929-14931), which every
   * replaced or added instance is, and DeleteEndpoint needs it: "Do not delete or revoke the permissions for your
   * ExecutionRoleArn, otherwise SageMaker cannot delete these resources" (:1355-1361). Keys and the log groups keep
   * their own policies (retained by default). Applied at synth (`RemovalPolicies`, an aspect), so classes, variants and
   * grants added after the call are covered. `Resource`'s default would need a single default child, and this construct
   * has several.
   */
  public override applyRemovalPolicy(policy: RemovalPolicy): void {
    RemovalPolicies.of(this).apply(policy, { applyToResourceTypes: [...RETAINED_WITH_THE_ENDPOINT] });
  }

  /** Lets `grantee` call the endpoint (InvokeEndpoint and its response-streaming form). */
  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'],
      resourceArns: this.endpointArns,
    });
  }

  /**
   * The reconciler's routing writes on this endpoint (IInferenceServing): DescribeEndpoint and
   * UpdateEndpointWeightsAndCapacities (variant weights, or one variant's desired instance count) on the endpoint, and
   * Application Auto Scaling DescribeScalableTargets, which reads each variant's live bounds so a capacity write never
   * passes them (lambda/reconciler/targets/sagemaker.ts). That action "supports no resource-level permissions" in
   * the sense of the Service Authorization Reference: its row lists no resource type and no condition key
   * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsapplicationautoscaling.html), so it
   * is granted on "*" (a read; the Reconciler names it in its cdk-nag acknowledgement).
   */
  public grantRouting(grantee: iam.IGrantable): iam.Grant {
    return this.grantUpdateWeights(grantee).combine(iam.Grant.addToPrincipal({
      grantee, actions: ['application-autoscaling:DescribeScalableTargets'], resourceArns: ['*'],
    }));
  }

  /** Lets `grantee` read the endpoint and set its variant weights and capacities (`grantRouting` adds the scaling bounds read). */
  public grantUpdateWeights(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'],
      resourceArns: this.endpointArns,
    });
  }

  /** Any AWS/SageMaker endpoint metric of a variant, optionally of one instance type of its pools. */
  public metric(metricName: string, variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    const { instanceType, ...props } = options;
    const c = new Checker(SAGEMAKER_RULES);
    const declared = this.variantSpecs.map((v) => v.name);
    if (c.cross('metric(variantName)', { variantName, declared }, 'variantName') && instanceType !== undefined && !Token.isUnresolved(instanceType)) {
      const variant = this.variantSpecs.find((v) => v.name === variantName)!;
      const poolTypes = variant.classes
        .map((p) => this.specs.find((s) => s.name === (typeof p === 'string' ? p : p.className))?.instanceType)
        .filter((t): t is string => t !== undefined);
      c.cross('metric(instanceType)', { instanceType, variantName, poolTypes }, 'options.instanceType');
    }
    throwIfInvalid(CONSTRUCT, this.node.path, c.problems.map((p) => ({ ...p, field: `metric('${metricName}').${p.field}` })));
    return new cloudwatch.Metric({
      namespace: AwsMetrics.sageMaker.namespace,
      metricName,
      period: Duration.minutes(1),
      ...props,
      dimensionsMap: { ...sageMakerVariantDimensions(this.endpointName, variantName, instanceType || undefined), ...props.dimensionsMap },
    });
  }

  /** In-flight requests per model container (the autoscaling metric). Average over 1 minute. */
  public metricConcurrentRequestsPerModel(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.concurrentRequestsPerModel, variantName, { statistic: 'Average', ...options });
  }

  /** Requests sent to the variant. Sum over 1 minute. */
  public metricInvocations(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.invocations, variantName, { statistic: 'Sum', ...options });
  }

  /** Requests per instance. Sum over 1 minute. */
  public metricInvocationsPerInstance(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.invocationsPerInstance, variantName, { statistic: 'Sum', ...options });
  }

  /** Time the model container takes to answer, in microseconds. p95 over 1 minute. */
  public metricModelLatency(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.modelLatency, variantName, { statistic: 'p95', ...options });
  }

  /** Time SageMaker adds around the model, in microseconds. p95 over 1 minute. */
  public metricOverheadLatency(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.overheadLatency, variantName, { statistic: 'p95', ...options });
  }

  /** Requests answered with 4xx (including sheds at the admission limit). Sum over 1 minute. */
  public metricInvocation4xxErrors(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.invocation4xxErrors, variantName, { statistic: 'Sum', ...options });
  }

  /** Requests answered with 5xx. Sum over 1 minute. */
  public metricInvocation5xxErrors(variantName: string, options: SageMakerVariantMetricOptions = {}): cloudwatch.Metric {
    return this.metric(AwsMetrics.sageMaker.invocation5xxErrors, variantName, { statistic: 'Sum', ...options });
  }

  // No ModelSetupTime: SageMaker documents it for serverless endpoints only (fact sagemaker.metric.ModelSetupTime), and
  // these variants run on instances.

  private checkClasses() {
    return checkCapacityClasses(this.specs, { catalog: this.props.catalog, contract: this.contract, platform: 'sagemaker', requireClasses: false });
  }

  /**
   * A class or variant added after the endpoint was read would be deployed but missing from what read it (the
   * Reconciler's configuration, the dashboard, the alarms), which read the variants once, when they are created.
   * Checked before anything is added, so the endpoint stays as it was read.
   */
  private throwIfRead(call: string, what: string): void {
    const c = new Checker(SAGEMAKER_RULES);
    c.cross('addClass()/addVariant()@read', { what, read: this.read }, call);
    throwIfInvalid(CONSTRUCT, this.node.path, c.problems);
  }

  /**
   * Without an artifact gate nothing reads a class's signing profile, and its model data's version id pins nothing:
   * SageMaker downloads the key's current object (S3ModelDataSource has S3Uri, S3DataType, CompressionType, access
   * configs, ManifestS3Uri and ETags, no VersionId: aws-sdk-sagemaker@1.189.0 src/protocol_serde/shape_s3_model_data_source.rs;
   * `sageMakerModelDataProblems` in ./class-model). A warning, not an error: the class is served as declared; only the
   * checks it names do not run.
   */
  private warnIfUngated(cls: CapacityClass): void {
    if (this.props.artifactGate) return;
    const note = ungatedArtifactNote(cls, 'sagemaker');
    if (note) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-artifact-ungated-${cls.name}`, note);
  }

  /**
   * AWS: "If the size of your model is larger than 40 GB, then you should increase this quota"
   * (ModelDataDownloadTimeoutInSeconds, https://docs.aws.amazon.com/sagemaker/latest/dg/large-model-inference-hosting.html;
   * review R229). The weights stand for the model data's size; a download that outlasts the timeout fails every new
   * instance of the class, scale-outs included, so a warning where the default is kept.
   */
  private warnIfDownloadTimeoutDefault(cls: CapacityClass): void {
    const gb = (cls.footprint.weightsGiB * 2 ** 30) / 1e9;
    if (this.props.modelDataDownloadTimeout !== undefined || !(gb > LARGE_MODEL_DOWNLOAD_GB)) return;
    Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-download-timeout-${cls.name}`,
      `class '${cls.name}': its weights are ${gb.toFixed(0)} GB, over the ${LARGE_MODEL_DOWNLOAD_GB} GB above which AWS says to raise ` +
      `ModelDataDownloadTimeoutInSeconds, and modelDataDownloadTimeout keeps the default ${MODEL_DATA_DOWNLOAD_DEFAULT_SECONDS} s; set it for the ` +
      'download from S3 at your bucket\'s throughput (at most 3600 s), or acknowledge this warning');
  }

  /**
   * Model data lands in /opt/ml/model, which SageMaker mounts read-only (fact sagemaker.behaviour.writable-tmp): an
   * engine that converts weights beside them at start (weights-conversion.ts) cannot. The artifact's file list is not
   * known at synth, so a warning for every such class. Not warned: weights in the image (SageMaker documents no read-only
   * root filesystem) and a hub id (downloaded, and converted, under the cache in /tmp).
   */
  private warnIfWeightsConverted(cls: CapacityClass): void {
    if (!cls.artifact.modelData) return;
    const note = readOnlyWeightsNote(cls.runtime.engine, `${SAGEMAKER_MODEL_PATH}, which SageMaker mounts read-only`,
      'no instance of the class passes its health check and the endpoint\'s creation or update fails (the stack rolls back)');
    if (note) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-weights-conversion-${cls.name}`, `class '${cls.name}': ${note}`);
  }

  /** After construction, a call that adds input throws its problems at once. */
  private checked(): this {
    if (this.constructed) this.throwIfInvalid({ complete: false });
    return this;
  }

  /**
   * Throws the problems of the input so far; with `complete`, also those only a finished endpoint can have. Once it
   * throws, it lists both: every problem at once.
   */
  private throwIfInvalid(options: { complete: boolean }): void {
    const { problems, pending } = this.resolve();
    if (problems.length > 0 || options.complete) throwIfInvalid(CONSTRUCT, this.node.path, [...problems, ...pending]);
  }

  private resolve(): Resolved {
    if (this.cached) return this.cached;
    const { classes, problems } = this.checkClasses();
    // The deadline rule (envelope vs deadline) is a core class check now, the same on EKS.
    for (const cls of classes) {
      problems.push(...sageMakerRuntime(cls, this.contract).problems);
      const image = cls.artifact.image;
      const repo = Token.isUnresolved(image) ? undefined : parseEcrImage(image);
      const region = Stack.of(this).region;
      if (!Token.isUnresolved(image) && !repo) {
        problems.push({
          className: cls.name,
          field: 'artifact.image',
          message: `'${image}' is not an Amazon ECR image (<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<digest>); SageMaker hosting pulls from ECR`,
        });
      } else if (repo && !Token.isUnresolved(region) && repo.region !== region) {
        problems.push({
          className: cls.name,
          field: 'artifact.image',
          message: `is in ${repo.region} but the endpoint is in ${region}; SageMaker pulls model images from ECR in the endpoint's own region (replicate the repository)`,
        });
      }
    }
    // Never plan with numbers that failed their checks (an infinite peak, a token): the problems are reported instead.
    const standby = this.props.standbyInstances ?? 1;
    const plannable = isPlannableContract(this.contract) && Number.isInteger(standby) && standby >= 1 ? classes : [];
    // A contract without its request shape (JavaScript, a configuration file: reported by the class checks) is planned
    // without demand, for the same reason: the plan reads it.
    const contract = this.contract.requestShape ? this.contract : { ...this.contract, requestShape: { meanPromptTokens: 0, meanOutputTokens: 0 } };
    const plan = planCapacity(contract, plannable, { standbyReplicas: plannable.length > 0 ? standby : 1 });
    const variantSpecs = this.variantSpecs.map((v) => this.toVariantSpec(v));
    const layout = planVariants(plannable, plan, variantSpecs, {
      provisionTimeoutSeconds: durationSeconds(this.props.provisionTimeout) ?? SAGEMAKER_SCALING_DEFAULTS.provisionTimeoutSeconds,
      warmFloorShare: this.props.warmFloorShare ?? DEFAULT_POLICY_CONFIG.warmFloorShare,
      placement: this.placement,
    });
    problems.push(...layout.problems);
    for (const v of layout.variants) {
      const volume = variantVolume(v.pools.map((p) => p.capacityClass));
      if (volume.kind === 'problem') problems.push({ field: `variants[${v.name}]`, message: volume.message });
    }
    problems.push(...this.otherProblems(layout.variants));
    const pending: Problem[] = [
      ...(this.specs.length === 0 ? [NO_CLASSES] : []),
      ...(this.variantSpecs.length === 0 ? [{
        field: 'variants',
        message: "no variants are declared; group the classes into production variants with addVariant() (for example 'preferred' and 'fallback', or one per class)",
      }] : []),
      ...variantCoverageProblems(this.specs.map((s) => s.name), variantSpecs),
      ...capacityPlanProblems(this.contract, plannable, plan),
    ];
    this.cached = { classes, plan: planAsDeployed(plan, layout.variants), variants: layout.variants, problems, pending };
    return this.cached;
  }

  private toVariantSpec(v: EndpointVariantOptions): VariantSpec {
    const { provisionTimeout, ...rest } = v;
    return { ...rest, provisionTimeoutSeconds: durationSeconds(provisionTimeout) };
  }

  private otherProblems(variants: readonly PlannedVariant[]): ClassProblem[] {
    const c = new Checker(SAGEMAKER_RULES);
    const p = this.props;
    c.check('endpointName', this.endpointName);
    c.optional('dataCapture.samplingPercentage', this.captureOptions()?.samplingPercentage);
    if (c.optional('standbyInstances', p.standbyInstances) && p.standbyInstances !== undefined) {
      for (const v of variants.filter((planned) => planned.role === 'fallback')) {
        if (this.variantSpecs.find((spec) => spec.name === v.name)?.scaling?.minInstances !== undefined) continue;
        const pools = v.pools.map((pool) => ({
          name: pool.capacityClass.name, replicasForPeak: pool.plan.replicasForPeak,
          quota: pool.capacityClass.maxReplicas, maxReplicas: pool.plan.maxReplicas,
        }));
        c.cross('standbyInstances@variants', { standby: p.standbyInstances, variant: v.name, pools }, 'standbyInstances');
      }
    }
    if (!p.vpc) {
      if (p.vpcSubnets !== undefined) c.cross('vpcSubnets@vpc', false, 'vpcSubnets');
      if (p.securityGroups !== undefined) c.cross('securityGroups@vpc', false, 'securityGroups');
    }
    const classNames = this.specs.map((s) => s.name);
    for (const v of this.variantSpecs) {
      const variantClasses = v.classes.map((pool) => (typeof pool === 'string' ? pool : pool.className));
      c.cross('variants[].name@classes', { variantName: v.name, classNames: variantClasses, allClassNames: classNames }, `variants['${v.name}'].name`);
    }
    const fleetTimeoutsValid = [
      c.optional('containerStartupHealthCheckTimeout', durationSeconds(p.containerStartupHealthCheckTimeout)),
      c.optional('modelDataDownloadTimeout', durationSeconds(p.modelDataDownloadTimeout)),
    ].every(Boolean);
    c.optional('scaleOutCooldown', durationSeconds(p.scaleOutCooldown));
    c.optional('scaleInCooldown', durationSeconds(p.scaleInCooldown));
    if (p.modelDataEncryptionKey) c.cross('modelDataEncryptionKey', modelDataKeyFacts(p.modelDataEncryptionKey));
    const frequency = durationSeconds(p.metrics?.publishFrequency);
    if (frequency !== undefined) {
      c.cross('metrics.publishFrequency', frequency);
      c.cross('metrics.publishFrequency@enhancedMetrics', { seconds: frequency, enhancedMetrics: p.metrics?.enhancedMetrics ?? true }, 'metrics.publishFrequency');
    }
    const d = p.deployment;
    if (d) {
      const bake = durationSeconds(d.bakeTime);
      const timeout = durationSeconds(d.maximumExecutionTimeout);
      const bakeValid = c.check('deployment.bakeTime', bake);
      // Only literal, valid step limits are added up; the others are reported by their own rules.
      if (c.optional('deployment.maximumExecutionTimeout', timeout) && timeout !== undefined && bakeValid && fleetTimeoutsValid) {
        c.cross('deployment.maximumExecutionTimeout@steps', { timeout, steps: this.deploymentSteps(variants) }, 'deployment.maximumExecutionTimeout');
      }
      if (this.rollbackAlarms.length > 10) c.cross('deployment.rollbackAlarms', this.rollbackAlarms.length);
      c.cross('deployment@instanceTypes', this.specs.map((s) => s.instanceType), 'deployment');
    }
    return [...c.problems, ...(p.vpc ? this.vpcConfigProblems() : [])];
  }

  /**
   * AWS::SageMaker::Model VpcConfig takes 1 to 5 SecurityGroupIds and 1 to 16 Subnets (CloudFormation reference
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-sagemaker-model-vpcconfig.html;
   * botocore@1.43.67 service-2.json shapes VpcSecurityGroupIds and Subnets). A list token (one encoded element) has no
   * count at synth and is left to CloudFormation.
   */
  private vpcConfigProblems(): Problem[] {
    const problems: Problem[] = [];
    const counted = (ids: readonly string[]) => !(ids.length === 1 && Token.isUnresolved(ids));
    const groupIds = this.securityGroups.map((sg) => sg.securityGroupId);
    if (counted(groupIds) && (groupIds.length < 1 || groupIds.length > 5)) {
      problems.push({
        field: 'securityGroups',
        message: `has ${groupIds.length} security groups; allowed: 1 to 5 (AWS::SageMaker::Model VpcConfig.SecurityGroupIds), or leave it unset for a new group`,
      });
    }
    if (counted(this.subnetIds) && (this.subnetIds.length < 1 || this.subnetIds.length > 16)) {
      problems.push({
        field: 'vpcSubnets',
        message: `selects ${this.subnetIds.length} subnets; allowed: 1 to 16 (AWS::SageMaker::Model VpcConfig.Subnets), in at least two Availability Zones`,
      });
    }
    return problems;
  }

  /**
   * SageMaker's hosting guide: "You must create at least two subnets in different availability zones in your private
   * VPC, even if you have only one hosting instance" (https://docs.aws.amazon.com/sagemaker/latest/dg/host-vpc.html,
   * "Configure a Model for Amazon VPC Access"). What CreateModel does with subnets in one zone is not documented, so
   * this warns and does not refuse; a zone not known at synth (`subnetZones`: a token, a list token's element, an
   * imported subnet without one): no warning.
   */
  private warnIfOneZone(subnets: readonly ec2.ISubnet[]): void {
    const zones = subnetZones(subnets);
    if (!zones) return;
    const distinct = [...new Set(zones)];
    if (distinct.length !== 1) return;
    Annotations.of(this).addWarningV2(
      'cdk-capacity-aware-inference:sagemaker-subnets-one-az',
      `the selected subnets are all in ${distinct[0]}; SageMaker asks for subnets in at least two Availability Zones even for one instance ` +
        '(https://docs.aws.amazon.com/sagemaker/latest/dg/host-vpc.html): select private subnets in two or more zones with vpcSubnets',
    );
  }

  /**
   * Isolated subnets have no route out: SageMaker's containers there "can't connect to the Amazon S3 buckets that
   * contain your data unless you create a VPC endpoint" (https://docs.aws.amazon.com/sagemaker/latest/dg/host-vpc.html,
   * "Create an Amazon S3 VPC Endpoint"), and the endpoint never becomes InService. Whether the VPC has one is not known
   * here (the library creates none), so a warning, not a refusal.
   */
  private warnIfIsolated(vpc: ec2.IVpc, subnets: readonly ec2.ISubnet[]): void {
    const isolated = new Set(vpc.isolatedSubnets.map((n) => n.subnetId));
    if (subnets.length === 0 || !subnets.every((n) => isolated.has(n.subnetId))) return;
    Annotations.of(this).addWarningV2(
      'cdk-capacity-aware-inference:sagemaker-subnets-isolated',
      'the selected subnets are isolated (no route out): the model containers reach the model data only through an S3 gateway ' +
        'endpoint in the VPC (https://docs.aws.amazon.com/sagemaker/latest/dg/host-vpc.html); add one, or select private subnets with egress',
    );
  }

  /** `blueGreenQuotaNote` per variant, once the endpoint is valid (an invalid one fails synth on its problems). */
  private warnIfBlueGreenOverQuota(): string[] {
    const { problems, pending, variants } = this.resolve();
    if (problems.length > 0 || pending.length > 0) return [];
    const { plan } = this.resolve();
    for (const v of variants) {
      const note = blueGreenQuotaNote(v);
      if (note) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-blue-green-quota-${v.name}`, note);
      const scaling = this.variantSpecs.find((spec) => spec.name === v.name)?.scaling;
      const set = scaling?.targetConcurrencyPerInstance;
      const planned = variantScalingDefaults(v.pools.map((p) => p.plan), scaling?.perPoolTargets === true).targetConcurrencyPerInstance;
      const target = set === undefined ? undefined : overriddenTargetNote({
        subject: `variant '${v.name}'`, field: 'scaling.targetConcurrencyPerInstance', target: set, planned, headroom: plan.headroom,
      });
      if (target) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:sagemaker-target-overridden-${v.name}`, target);
    }
    return [];
  }

  /** At synth: everything, completeness included (CDK prefixes the construct path). */
  private validationErrors(): string[] {
    const { problems, pending } = this.resolve();
    const all = [...problems, ...pending, ...this.rollbackAlarmCountProblems()];
    return all.length === 0 ? [] : [new ConstructValidationError(CONSTRUCT, this.node.path, all).message];
  }

  private plannedVariant(name: string): PlannedVariant | undefined {
    return this.resolve().variants.find((v) => v.name === name);
  }

  /** The per-pool policy's metric math of a variant (an invalid plan fails synth before this is rendered). */
  private perPoolQueries(name: string): TargetTrackingQuery[] {
    const v = this.plannedVariant(name);
    if (!v?.poolTargets) return [];
    return perPoolConcurrencyQueries(this.endpointName, name, v.pools.map((p, i) => ({
      instanceType: p.capacityClass.instanceType,
      targetConcurrency: v.poolTargets![i],
    })));
  }

  private ensureKey(): kms.IKey {
    this.key ??= new kms.Key(this, 'Key', {
      enableKeyRotation: true,
      description: `Data capture and volume encryption of SageMaker endpoint ${this.endpointName}`,
    });
    return this.key;
  }

  private volumesTakeKey(): boolean {
    return this.resolve().variants.every((v) => v.pools.every((p) => !classHasInstanceStorage(p.capacityClass)));
  }

  private captureOptions(): Required<EndpointDataCaptureOptions> | undefined {
    const c = this.props.dataCapture;
    return c ? { bucket: c.bucket, prefix: c.prefix ?? 'data-capture/', samplingPercentage: c.samplingPercentage ?? 5 } : undefined;
  }

  private renderDataCapture(): sagemaker.CfnEndpointConfig.DataCaptureConfigProperty | undefined {
    const c = this.captureOptions();
    if (!c) return undefined;
    return {
      enableCapture: true,
      initialSamplingPercentage: c.samplingPercentage,
      destinationS3Uri: `s3://${c.bucket.bucketName}/${c.prefix}`,
      kmsKeyId: this.ensureKey().keyArn,
      captureOptions: [{ captureMode: 'Input' }, { captureMode: 'Output' }],
      captureContentTypeHeader: { jsonContentTypes: ['application/json'] },
    };
  }

  /**
   * Checked at synth only, not when the endpoint is read: the alarm a deployment usually rolls back on is made from the
   * endpoint's own description (`InferenceAlarms`' deadline exhaustion alarm, then `addRollbackAlarm()`), so a read
   * that failed for want of it would make it impossible to create (review R122).
   */
  private rollbackAlarmCountProblems(): Problem[] {
    if (!this.props.deployment || this.rollbackAlarms.length > 0) return [];
    const c = new Checker(SAGEMAKER_RULES);
    c.cross('deployment.rollbackAlarms', this.rollbackAlarms.length);
    return c.problems;
  }

  /**
   * Blue/green with all at once traffic shifting, the only guardrail mode this endpoint's shape supports (SageMaker guide,
   * deployment-guardrails-exclusions.html: rolling is not for "Multi-variant inference endpoints"; canary and linear
   * size each step against "the variant's total instance count", which a one-instance standby variant cannot meet,
   * TrafficRoutingConfig in the API reference). With all at once the bake is the wait before the old fleet terminates:
   * the guide's all-at-once example sets only TerminationWaitInSeconds, during which "pre-specified Amazon CloudWatch
   * alarms monitor the performance of the green fleet" and a trip shifts "100% of the traffic ... back to the blue
   * fleet" (deployment-guardrails-blue-green-all-at-once.html). WaitIntervalInSeconds is required by the API
   * (TrafficRoutingConfig, "Required: Yes") and there is no step to wait between: 0.
   */
  private renderDeploymentConfig(): sagemaker.CfnEndpoint.DeploymentConfigProperty | undefined {
    const d = this.props.deployment;
    const { problems, pending } = this.resolve();
    if (!d || problems.length > 0 || pending.length > 0) return undefined;
    return {
      blueGreenUpdatePolicy: {
        trafficRoutingConfiguration: { type: 'ALL_AT_ONCE', waitIntervalInSeconds: 0 },
        terminationWaitInSeconds: durationSeconds(d.bakeTime),
        // Unset, none is rendered and SageMaker's own default applies: the steps' floor is a lower bound, not an estimate
        // (lib/core/platform/blue-green-deployment.ts), and rendering it could only time out a slow deployment sooner.
        maximumExecutionTimeoutInSeconds: durationSeconds(d.maximumExecutionTimeout),
      },
      // None yet: synth fails on it (rollbackAlarmCountProblems); render no empty list meanwhile.
      ...(this.rollbackAlarms.length > 0
        ? { autoRollbackConfiguration: { alarms: this.rollbackAlarms.map((a) => ({ alarmName: a.alarmName })) } }
        : {}),
    };
  }

  /** What a blue/green deployment of this endpoint waits for: the bake and the limits renderVariants() gives each variant. */
  private deploymentSteps(variants: readonly PlannedVariant[]): BlueGreenSteps {
    const { startup, download } = this.fleetTimeouts();
    return {
      bakeSeconds: durationSeconds(this.props.deployment?.bakeTime) ?? 0,
      variants: variants.map((v) => ({
        name: v.name, provisionSeconds: v.provisionTimeoutSeconds, modelDataDownloadSeconds: download, containerStartupSeconds: startup,
      })),
    };
  }

  private fleetTimeouts(): { readonly startup: number; readonly download: number } {
    return {
      startup: durationSeconds(this.props.containerStartupHealthCheckTimeout) ?? CONTAINER_STARTUP_DEFAULT_SECONDS,
      download: durationSeconds(this.props.modelDataDownloadTimeout) ?? MODEL_DATA_DOWNLOAD_DEFAULT_SECONDS,
    };
  }

  private renderVariants(): sagemaker.CfnEndpointConfig.ProductionVariantProperty[] {
    const { startup, download } = this.fleetTimeouts();
    // With problems, synth fails on validation; render nothing computed from invalid input meanwhile (token resolution
    // runs before validation, and a number computed from a token's encoding does not resolve).
    const { problems, pending } = this.resolve();
    if (problems.length > 0 || pending.length > 0) return [];
    return this.resolve().variants.map((v) => ({
      variantName: v.name,
      ...variantInstances(v, (name) => this.classModels.get(name)!.model.attrModelName),
      variantInstanceProvisionTimeoutInSeconds: v.provisionTimeoutSeconds,
      initialInstanceCount: v.minInstances,
      initialVariantWeight: v.initialWeight,
      routingConfig: { routingStrategy: 'LEAST_OUTSTANDING_REQUESTS' },
      containerStartupHealthCheckTimeoutInSeconds: startup,
      modelDataDownloadTimeoutInSeconds: download,
      volumeSizeInGb: volumeSizeOf(v),
    }));
  }
}

/**
 * What a variant runs on. Several classes: `InstancePools`, one per class (priority as planned, `ModelNameOverride` to
 * the class's model), with the priority-1 pool's model as the variant's. One class: a plain `InstanceType` and that
 * class's model, no pools. The API shape takes a one-entry list (InstancePoolList, min 1, max 5: boto/botocore@1.43.67
 * botocore/data/sagemaker/2017-07-24/service-2.json:29400-29405), but no AWS page says SageMaker accepts one: the guide
 * presents pools as what replaces `InstanceType` to fall back over "an ordered list of up to five instance types", with
 * two-pool examples only (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html), and a
 * one-entry list that SageMaker refused would fail every one-class variant at deploy (review R209). A one-class variant
 * has nothing to fall back to, so the form every endpoint had before pools loses nothing. Its provisioning timeout still
 * applies: "it retries with the next instance pool (if configured) or waits until the timeout expires"
 * (VariantInstanceProvisionTimeoutInSeconds, service-2.json:41289-41292).
 */
function variantInstances(
  v: PlannedVariant,
  modelOf: (className: string) => string,
): Pick<sagemaker.CfnEndpointConfig.ProductionVariantProperty, 'modelName' | 'instanceType' | 'instancePools'> {
  const modelName = modelOf(v.pools[0].capacityClass.name);
  if (!hasInstancePools(v.pools.length)) return { modelName, instanceType: v.pools[0].capacityClass.instanceType };
  return {
    modelName,
    instancePools: v.pools.map((p) => ({
      instanceType: p.capacityClass.instanceType,
      priority: p.priority,
      modelNameOverride: modelOf(p.capacityClass.name),
    })),
  };
}

/** The variant's VolumeSizeInGB where its model data needs more than SageMaker's default (`variantVolume`). */
function volumeSizeOf(v: PlannedVariant): number | undefined {
  const volume = variantVolume(v.pools.map((p) => p.capacityClass));
  return volume.kind === 'size' ? volume.gb : undefined;
}

/** The Duration when it is a whole number of seconds (or a token), else undefined: the rule reports it at synth. */
function wholeSeconds(d: Duration | undefined): Duration | undefined {
  const seconds = durationSeconds(d);
  return seconds === undefined || Number.isInteger(seconds) ? d : undefined;
}

/**
 * `cloudwatch:DescribeAlarms` on one alarm. The action's resource type is the alarm (Service Authorization Reference,
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncloudwatch.html).
 */
function grantDescribeAlarm(role: iam.IRole, alarm: cloudwatch.IAlarm): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: [alarm.alarmArn] }));
}
