/**
 * How long one request of aws-eks-v2's kubectl provider (a manifest or a Helm chart, created, updated or deleted) may
 * take. Its handler Lambda and the provider framework's onEvent Lambda both time out after 15 minutes (aws-cdk-lib
 * 2.269.0 aws-eks-v2/lib/kubectl-provider.js, `timeout: Duration.minutes(15)`; custom-resources provider-framework
 * provider.js, `FRAMEWORK_HANDLER_TIMEOUT`), with no isComplete handler and no ServiceTimeout on the custom resource. A
 * request that outlives them is never answered: CloudFormation waits its default hour for the custom resource and
 * then fails it (CREATE_FAILED, UPDATE_ROLLBACK_FAILED or DELETE_FAILED; aws-samples/cdk-eks-karpenter#166).
 */
export const KUBECTL_HANDLER_TIMEOUT_SECONDS = 900;

/**
 * What a Helm request spends beside Helm's own waits: `aws eks update-kubeconfig`, for an OCI chart the registry
 * login and `helm pull`, for a repository chart its index download, each retried on a broken pipe
 * (custom-resource-handlers/dist/aws-eks-v2/kubectl-handler/helm/__init__.py). No upstream figure bounds them; two
 * minutes is this library's allowance for a few network calls.
 */
export const HELM_REQUEST_OVERHEAD_SECONDS = 120;

/**
 * The longest `timeout` an atomic, waited Helm chart may have. A failed `helm upgrade --install --atomic --wait` first
 * waits its timeout for the release, then rolls back and waits the same timeout again (helm v4.1.4, the version the
 * kubectl-v34 layer bundles (@aws-cdk/lambda-layer-kubectl-v34 2.2.2 layer/Dockerfile `HELM_VERSION=4.1.4`):
 * pkg/action/upgrade.go:577-587 `rollin.Timeout = u.Timeout`, and a failed first install uninstalls with it,
 * pkg/action/install.go:578-586). A handler killed meanwhile leaves the release `pending-upgrade`, and the rollback
 * CloudFormation then sends fails with "another operation (install/upgrade/rollback) is in progress":
 * UPDATE_ROLLBACK_FAILED. Pre- and post-upgrade hooks would each wait the timeout too: the charts this library installs
 * have none (Karpenter 1.14.1, KEDA 2.20.2, AWS Load Balancer Controller 3.5.0; Neuron 1.9.0 only a `test-success` one).
 */
export const MAX_ATOMIC_CHART_TIMEOUT_SECONDS = Math.floor((KUBECTL_HANDLER_TIMEOUT_SECONDS - HELM_REQUEST_OVERHEAD_SECONDS) / 2);

/**
 * What a manifest delete spends beside the model servers' own drain: `update-kubeconfig`, and for a Capacity manifest
 * Karpenter's termination of each node's instance. The EC2NodeClass's finalizer waits for its NodeClaims
 * (aws/karpenter-provider-aws@v1.14.1 pkg/controllers/nodeclass/controller.go:214-234), each of which waits for its
 * node's pods and then for its instance until EC2 no longer lists it, `shutting-down` included (kubernetes-sigs/karpenter@v1.14.1
 * pkg/controllers/node/termination/controller.go:279-299 awaitInstanceTermination; aws/karpenter-provider-aws@v1.14.1
 * pkg/providers/instance/instance.go:70-80 instanceStateFilter). EC2 publishes no bound on an instance's shutdown; five minutes is this
 * library's allowance.
 */
export const DELETE_OVERHEAD_SECONDS = 300;

/**
 * The longest a class's pods may take to terminate (`terminationGracePeriodSeconds`: the deregistration delay, then
 * the request deadline) for a delete of its manifests to finish inside the handler: deleting a class or the service
 * deletes its Deployment, then `kubectl delete` of its NodePool and EC2NodeClass, and on destroy of its Namespace,
 * waits for the pods to go and the nodes to terminate.
 */
export const MAX_DRAIN_ON_DELETE_SECONDS = KUBECTL_HANDLER_TIMEOUT_SECONDS - DELETE_OVERHEAD_SECONDS;
