/**
 * The example app's stacks (bin/app.ts synthesizes them; `npm run synth`). Each example is two stacks: its trust (the
 * ECR repositories, signed on push, the signing profile, the keys and the verifier) and its serving stack, gated on
 * that trust. Deploy the trust stack, push and sign the images and model data, then deploy the serving stack (README,
 * "Deploy an example"): the serving stack's checks would find the repositories empty before.
 */
import { type App, type Environment, type Stack } from 'aws-cdk-lib';
import { EksStableDiffusionStack, EksStableDiffusionTrustStack } from './eks-stable-diffusion';
import { EXAMPLE_ENV } from './env';
import { SageMakerLlmStack, SageMakerLlmTrustStack } from './sagemaker-llm/stack';

/** Adds every example's trust stack and serving stack to `app`; returns them in deployment order. */
export function exampleStacks(app: App, env: Environment = EXAMPLE_ENV): Stack[] {
  const llmTrust = new SageMakerLlmTrustStack(app, 'SageMakerLlmTrust', { env });
  const llm = new SageMakerLlmStack(app, 'SageMakerLlm', { env, trust: llmTrust.trust });
  const sdTrust = new EksStableDiffusionTrustStack(app, 'EksStableDiffusionTrust', { env });
  const sd = new EksStableDiffusionStack(app, 'EksStableDiffusion', { env, trust: sdTrust.trust });
  return [llmTrust, llm, sdTrust, sd];
}
