/**
 * The example app's stacks (bin/app.ts synthesizes them; `npm run synth`). Each example is two stacks: its trust (the
 * ECR repositories, signed on push, the signing profile, the keys and the verifier) and its serving stack, gated on
 * that trust. Deploy the trust stacks, push and sign the images and model data, then deploy the serving stack (README,
 * "Deploy an example"): the serving stack's checks would find the repositories empty before.
 */
import { type App, type Environment, type Stack } from 'aws-cdk-lib';
import { EksStableDiffusionStack, EksStableDiffusionTrustStack } from './eks-stable-diffusion';
import { EXAMPLE_ENV } from './env';
import { SageMakerLlmStack, SageMakerLlmTrustStack } from './sagemaker-llm/stack';

/** Adds every example's trust stack and serving stack to `app`; returns them in deployment order. */
export function exampleStacks(app: App, env: Environment = EXAMPLE_ENV): Stack[] {
  // Both examples deploy into one account and Region, whose registry has one signing configuration: the SageMaker
  // example's trust manages it and signs the EKS example's repositories with the EKS trust's own profile (the one its
  // checks require). SageMakerLlmTrust reads that profile's ARN, so it deploys after EksStableDiffusionTrust.
  const sdTrust = new EksStableDiffusionTrustStack(app, 'EksStableDiffusionTrust', { env, manageRegistrySigningConfiguration: false });
  const llmTrust = new SageMakerLlmTrustStack(app, 'SageMakerLlmTrust', { env });
  llmTrust.trust.signRepositoriesOf(sdTrust.trust);
  const llm = new SageMakerLlmStack(app, 'SageMakerLlm', { env, trust: llmTrust.trust });
  const sd = new EksStableDiffusionStack(app, 'EksStableDiffusion', { env, trust: sdTrust.trust });
  return [sdTrust, llmTrust, llm, sd];
}
