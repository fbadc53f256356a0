/**
 * The limits the controllers put on the names of a class's Kubernetes objects, beyond the API server's own rules (a
 * Service name is an RFC 1035 label: kubernetes pkg/apis/core/validation/validation.go `ValidateServiceName =
 * apimachineryvalidation.NameIsDNS1035Label`, the `class.objectName` rule). Each is enforced (or silently breaks
 * something) after `cdk deploy`, so the construct checks them at synth.
 */

/**
 * Longest ScaledObject name KEDA's admission webhook admits: it derives the HPA name `keda-hpa-<name>` and rejects one
 * longer than 63 characters (kedacore/keda v2.20.2 apis/keda/v1alpha1/scaledobject_webhook.go:57-58, 210-213,
 * getHpaName at 680-682; the chart enables the webhook by default, kedacore/charts v2.20.2 keda/values.yaml:207-209).
 */
export const SCALED_OBJECT_NAME_MAX = 63 - 'keda-hpa-'.length;

/**
 * Longest NodePool name whose NodeClaims still match `<pool>-*`: Karpenter names a NodeClaim with
 * `generateName: <pool>-` (kubernetes-sigs/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go:154)
 * and the API server cuts a generateName base to 58 characters before adding 5 random ones (kubernetes/apiserver
 * v0.34.0 pkg/storage/names/generate.go:43-54). A 58-character pool loses its '-', so the capacity-error filter
 * (`NodeClaim.name = "<pool>-*"`) never matches and the class's capacity alarm and reconciler signal stay silent.
 */
export const NODE_POOL_NAME_MAX = 63 - 5 - '-'.length;

/**
 * The ServiceAccount every class's model servers run as unless the class reads model data, which gets its own,
 * `<service>-<class>`: a class whose object name is this one would create it a second time.
 */
export const SERVING_SERVICE_ACCOUNT = 'model-server';

/** Why `name` cannot be a ScaledObject's name, or undefined. */
export function scaledObjectNameProblem(name: string): string | undefined {
  return name.length > SCALED_OBJECT_NAME_MAX
    ? `'${name}' is ${name.length} characters; KEDA's webhook rejects a ScaledObject whose HPA name keda-hpa-<name> exceeds 63 characters (at most ${SCALED_OBJECT_NAME_MAX}): shorten the contract name or the class name`
    : undefined;
}

/** Why `name` cannot be a NodePool's name, or undefined. */
export function nodePoolNameProblem(name: string): string | undefined {
  return name.length > NODE_POOL_NAME_MAX
    ? `'${name}' is ${name.length} characters; Karpenter's NodeClaim generateName '<pool>-' is cut to 58 characters, so at most ${NODE_POOL_NAME_MAX} keep NodeClaims matchable by the capacity-error filter: set classOptions.nodePoolName or shorten the names`
    : undefined;
}
