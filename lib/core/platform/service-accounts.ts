/**
 * The Kubernetes service accounts of the EKS controllers whose AWS roles this library binds by Pod Identity, in one
 * place: the constructs (lib/eks/keda.ts, lib/eks/karpenter.ts) bind them, and the commands (bin/verify.ts,
 * bin/game-day.ts) find those roles in the deployed template by them. Pure data, so the bundled commands can import it
 * without aws-cdk-lib.
 */

/** KEDA's operator: the identity that calls CloudWatch for every `aws` TriggerAuthentication. */
export const KEDA_OPERATOR_SERVICE_ACCOUNT = 'keda-operator';

/** Karpenter's controller (the chart's default name): the identity that launches nodes. */
export const KARPENTER_SERVICE_ACCOUNT = 'karpenter';
