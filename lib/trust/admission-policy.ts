import { createHash } from 'node:crypto';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { Construct } from 'constructs';
import { Checker } from '../core/validation/checker';
import { ConstructValidationError, type Problem, throwIfInvalid } from '../core/validation/error';
import { TRUST_RULES } from '../core/validation/rules';

// ---------------------------------------------------------------------------------------------------------------
// Typed manifests (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30)
// ---------------------------------------------------------------------------------------------------------------

export interface ObjectMetadata {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
}

export interface ResourceRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly operations: readonly ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*')[];
  readonly resources: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
}

export interface AdmissionValidation {
  readonly expression: string;
  readonly messageExpression?: string;
  readonly message?: string;
  readonly reason?: string;
}

export interface ValidatingAdmissionPolicy {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'ValidatingAdmissionPolicy';
  readonly metadata: ObjectMetadata;
  readonly spec: {
    readonly failurePolicy: 'Fail' | 'Ignore';
    readonly paramKind: { readonly apiVersion: string; readonly kind: string };
    readonly matchConstraints: { readonly resourceRules: readonly ResourceRule[] };
    readonly variables: readonly { readonly name: string; readonly expression: string }[];
    readonly validations: readonly AdmissionValidation[];
  };
}

export interface ValidatingAdmissionPolicyBinding {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'ValidatingAdmissionPolicyBinding';
  readonly metadata: ObjectMetadata;
  readonly spec: {
    readonly policyName: string;
    readonly paramRef: { readonly name: string; readonly parameterNotFoundAction: 'Deny' | 'Allow' };
    readonly validationActions: readonly ('Deny' | 'Warn' | 'Audit')[];
    readonly matchResources: { readonly namespaceSelector: LabelSelector };
  };
}

/** What the approved-images policy is made of. */
export interface ApprovedImagesPolicyOptions {
  /** Name of the ValidatingAdmissionPolicy; the binding is `<name>-binding`. */
  readonly name: string;
  /** The serving namespace the binding applies to. */
  readonly namespace: string;
  /** Every image a pod in the namespace may run, each pinned by digest (`...@sha256:<64 hex>`). */
  readonly images: readonly string[];
}

const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'cdk-capacity-aware-inference' };

/** The prefix of the annotations on the policy that approve an image each (`imageApproval`). */
export const APPROVAL_ANNOTATION_PREFIX = 'approved-image.cdk-capacity-aware-inference/';

/** One image's approval: an annotation on the policy, `key: image`. */
export interface ImageApproval {
  /**
   * `APPROVAL_ANNOTATION_PREFIX` and the first 40 hex digits of the SHA-256 of the reference: an annotation's name is
   * at most 63 characters of `[-._a-zA-Z0-9]` (Kubernetes object-meta, annotations), which a reference's `/`, `@` and
   * `:` are not.
   */
  readonly key: string;
  /** The image reference, as the policy compares it with a container's `image`. */
  readonly image: string;
}

/** The approval of `image` (the same image always has the same key). */
export function imageApproval(image: string): ImageApproval {
  return { key: `${APPROVAL_ANNOTATION_PREFIX}${createHash('sha256').update(image).digest('hex').slice(0, 40)}`, image };
}

/** Every problem of the options (fields `name`, `namespace`, `images`), each rule from TRUST_RULES `admission.*`. */
export function approvedImagesPolicyProblems(options: ApprovedImagesPolicyOptions): Problem[] {
  const c = new Checker(TRUST_RULES);
  c.cross('admission.policyName', options.name, 'name');
  c.check('admission.namespace', options.namespace, 'namespace');
  c.cross('admission.images', options.images, 'images');
  return c.problems;
}

/**
 * The kinds whose pod template the policy checks besides Pods themselves, so that an unapproved image is rejected when
 * the Deployment (or Job, ...) is applied, not later when its controller's Pods fail to be created and the rollout
 * stalls. Pod template paths: `spec.template.spec` (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1
 * Job) and `spec.jobTemplate.spec.template.spec` (batch/v1 CronJob); https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/
 */
export const POD_TEMPLATE_OWNERS: readonly ResourceRule[] = [
  { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'] },
  { apiGroups: ['batch'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['jobs', 'cronjobs'] },
];

/**
 * A ValidatingAdmissionPolicy that denies a pod, or any pod-template owner (Deployment, ReplicaSet, StatefulSet,
 * DaemonSet, Job, CronJob), unless every image of its containers, init containers and ephemeral containers, and every
 * image volume's reference (`spec.volumes[].image.reference`, https://kubernetes.io/docs/concepts/storage/volumes/#image:
 * the kubelet pulls it like a container image and mounts its contents), is approved. It matches creation and update,
 * and the `pods/ephemeralcontainers` subresource (so `kubectl debug` cannot inject an unapproved image). Scale and
 * status subresources are not matched: scaling a Deployment never needs an image check.
 *
 * The approved images are not in the expression: each is an annotation on the policy itself (`imageApproval`), which
 * is the policy's parameter (`paramKind` ValidatingAdmissionPolicy, and the binding's `paramRef` names the policy), so
 * approving an image takes the same permission as editing the policy, and an approval can be added and removed on its
 * own (`ApprovedImagesAdmission` says why). The `options.images` are checked here and approved by the construct.
 *
 * An update may keep what a container already ran: a container whose name and image the old object had passes, so an
 * update adds no image to any container. A rollout's old ReplicaSet is scaled down after the deployment that retired
 * its image, and the Deployment controller scales it with an update of the whole object (`scaleReplicaSet` in
 * kubernetes/kubernetes pkg/controller/deployment/sync.go calls `ReplicaSets(...).Update`), so judged on the approvals
 * alone that update is denied and the rollout never finishes, with the old pods in service. Names are unique across a
 * pod's containers, init containers and ephemeral containers, and a debug container is a new name: it is judged on
 * the approvals alone. An image volume keeps its reference the same way, by volume name (unique among a pod's volumes).
 */
export function approvedImagesPolicy(options: ApprovedImagesPolicyOptions): ValidatingAdmissionPolicy {
  const problems = approvedImagesPolicyProblems(options);
  if (problems.length > 0) throw new ConstructValidationError('approvedImagesPolicy', undefined, problems);
  const podSpecOf = (o: string) =>
    `${o}.kind == 'Pod' ? ${o}.spec : (${o}.kind == 'CronJob' ? ${o}.spec.jobTemplate.spec.template.spec : ${o}.spec.template.spec)`;
  const containersOf = (spec: string) => `${spec}.containers` +
    ['initContainers', 'ephemeralContainers'].map((f) => ` + (has(${spec}.${f}) ? ${spec}.${f} : [])`).join('');
  const judged = 'c.image in variables.allowed || variables.oldContainers.exists(o, o.name == c.name && o.image == c.image)';
  // `reference` is optional in the schema (a controller may fill it in): a volume without one is refused, not waved through.
  const judgedVolume = 'has(v.image.reference) && (v.image.reference in variables.allowed || ' +
    'variables.oldImageVolumes.exists(o, o.name == v.name && has(o.image.reference) && o.image.reference == v.image.reference))';
  // Image volumes (ImageVolumeSource, core/v1 since Kubernetes 1.31; test/schemas/kubernetes/v1.33.0-standalone-strict
  // has it) are read with has() guards only: on an API server whose schema lacks the field no pod carries it, and the
  // policy's expressions are compiled against `object` as a dynamic type (schema type checking only warns, in
  // status.typeChecking: https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/#type-checking),
  // so the expression is valid on 1.30 too.
  const imageVolumesOf = (spec: string) => `(has(${spec}.volumes) ? ${spec}.volumes : []).filter(v, has(v.image))`;
  const annotations = 'params.metadata.annotations';
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: options.name, labels: MANAGED_BY },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy' },
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods', 'pods/ephemeralcontainers'] },
          ...POD_TEMPLATE_OWNERS,
        ],
      },
      variables: [
        // Only this construct's annotations approve: the policy carries others (kubectl's last-applied-configuration).
        {
          name: 'allowed',
          expression: `has(${annotations}) ? ${annotations}.filter(k, k.startsWith('${APPROVAL_ANNOTATION_PREFIX}')).map(k, ${annotations}[k]) : []`,
        },
        { name: 'podSpec', expression: podSpecOf('object') },
        { name: 'containers', expression: containersOf('variables.podSpec') },
        // On create there is no old object (null): nothing is kept. The old spec falls back to the new one so that the
        // variable always has a pod spec's type.
        { name: 'oldPodSpec', expression: `oldObject == null ? variables.podSpec : (${podSpecOf('oldObject')})` },
        { name: 'oldContainers', expression: `oldObject == null ? [] : ${containersOf('variables.oldPodSpec')}` },
        { name: 'imageVolumes', expression: imageVolumesOf('variables.podSpec') },
        { name: 'oldImageVolumes', expression: `oldObject == null ? [] : ${imageVolumesOf('variables.oldPodSpec')}` },
      ],
      validations: [
        {
          expression: `variables.containers.all(c, ${judged})`,
          messageExpression:
            "object.kind + ' ' + object.metadata.name + ': images not among the approved digests of this namespace: ' + " +
            `variables.containers.filter(c, !(${judged})).map(c, c.image).join(', ')`,
          reason: 'Forbidden',
        },
        {
          expression: `variables.imageVolumes.all(v, ${judgedVolume})`,
          messageExpression:
            "object.kind + ' ' + object.metadata.name + ': image volumes whose reference is not among the approved digests of this namespace: ' + " +
            `variables.imageVolumes.filter(v, !(${judgedVolume}))` +
            ".map(v, v.name + '=' + (has(v.image.reference) ? v.image.reference : '(no reference)')).join(', ')",
          reason: 'Forbidden',
        },
      ],
    },
  };
}

/**
 * Binds the policy to the serving namespace with `Deny`, its parameter the policy itself (a cluster-scoped kind: no
 * namespace); without it every request is denied (`parameterNotFoundAction: Deny`).
 */
export function approvedImagesPolicyBinding(options: ApprovedImagesPolicyOptions): ValidatingAdmissionPolicyBinding {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${options.name}-binding`, labels: MANAGED_BY },
    spec: {
      policyName: options.name,
      paramRef: { name: options.name, parameterNotFoundAction: 'Deny' },
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': options.namespace } } },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Construct
// ---------------------------------------------------------------------------------------------------------------

export interface ApprovedImagesAdmissionProps {
  /** The cluster (Kubernetes 1.30 or newer: ValidatingAdmissionPolicy v1). */
  readonly cluster: eks.ICluster;
  /** The serving namespace. */
  readonly namespace: string;
  /** The approved image digests: every class's `artifact.image` (`ArtifactTrust.approvedImages`), plus any sidecar the namespace runs. */
  readonly images: readonly string[];
  /**
   * Name of the ValidatingAdmissionPolicy.
   * @default `approved-images-<namespace>`
   */
  readonly policyName?: string;
}

/**
 * Applies the approved-images ValidatingAdmissionPolicy and its binding to an EKS cluster: pods, and Deployments,
 * ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs, in the serving namespace whose images are not approved
 * are rejected by the API server when they are applied.
 *
 * Each image is approved by a resource of its own (a merge patch that adds its annotation to the policy and removes it
 * when the resource is deleted), whose construct id is derived from the image. A deployment that changes an image
 * therefore creates the new approval and deletes the old one, and CloudFormation creates before it deletes: an old
 * resource is deleted in `UPDATE_COMPLETE_CLEANUP_IN_PROGRESS`, after the update has succeeded, and a resource the
 * failed update created is deleted in `UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS`, after the resources it updated
 * are rolled back (CloudFormation User Guide, stack status codes, using-cfn-describing-stacks.html). Until the
 * deployment has ended either way, the old image and the new one are both approved, so a stack rollback that returns
 * a Deployment to its old image is admitted, in whatever order CloudFormation rolls resources back. Had the images
 * been a list in the policy, the rollback would re-apply the Deployment while the policy listed only the new image.
 * The deployment ends before the Kubernetes rollout does (the Deployment's apply returns at once): from then until the
 * rollout ends, pods of the old ReplicaSet are refused on creation (docs/artifact-trust.md, review R248).
 *
 * Whatever applies pods in the namespace should depend on this construct (all its approvals), as `EksInferenceService`
 * does.
 */
export class ApprovedImagesAdmission extends Construct {
  public readonly policy: ValidatingAdmissionPolicy;
  public readonly binding: ValidatingAdmissionPolicyBinding;
  /** The policy and its binding. */
  public readonly manifest: eks.KubernetesManifest;
  /** One per image, in the order of `images`: the image's annotation on the policy, applied after the policy. */
  public readonly approvals: readonly eks.KubernetesPatch[];

  constructor(scope: Construct, id: string, props: ApprovedImagesAdmissionProps) {
    super(scope, id);
    const options = { name: props.policyName ?? `approved-images-${props.namespace}`, namespace: props.namespace, images: props.images };
    throwIfInvalid('ApprovedImagesAdmission', this.node.path, approvedImagesPolicyProblems(options).map((p) => ({
      ...p,
      field: p.field === 'name' ? 'policyName' : p.field,
    })));
    this.policy = approvedImagesPolicy(options);
    this.binding = approvedImagesPolicyBinding(options);
    this.manifest = new eks.KubernetesManifest(this, 'Manifest', {
      cluster: props.cluster,
      // The policy before its binding: a binding to a missing policy is ignored until the policy exists.
      manifest: [this.policy, this.binding] as unknown as Record<string, unknown>[],
      // Create, never adopt (aws-cdk-lib 2.269.0 kubectl-handler/apply/__init__.py: `overwrite` makes a create a
      // `kubectl apply`): the policy is cluster-scoped and named by namespace, so another app or stage guarding the same
      // namespace would adopt this one's, and that deploy's rollback would delete it, leaving the namespace unguarded
      // (review R230). A second policy for the namespace fails its create with AlreadyExists instead.
      overwrite: false,
    });
    this.approvals = props.images.map((image) => {
      const approval = imageApproval(image);
      const patch = new eks.KubernetesPatch(this, `Approve-${approval.key.slice(-16)}`, {
        cluster: props.cluster,
        resourceName: `validatingadmissionpolicies.admissionregistration.k8s.io/${options.name}`,
        // A JSON merge patch (RFC 7386): adds the one annotation, and its null removes it, leaving the others.
        patchType: eks.PatchType.MERGE,
        applyPatch: { metadata: { annotations: { [approval.key]: approval.image } } },
        restorePatch: { metadata: { annotations: { [approval.key]: null } } },
      });
      patch.node.addDependency(this.manifest);
      return patch;
    });
  }
}
