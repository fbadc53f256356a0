#!/usr/bin/env node
/**
 * The example app: `npm run synth` synthesizes every example offline, with cdk-nag AwsSolutions checking each
 * stack (an unacknowledged finding fails the synth).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EksStableDiffusionStack } from '../examples/eks-stable-diffusion';
import { EXAMPLE_ENV } from '../examples/env';
import { SageMakerLlmStack } from '../examples/sagemaker-llm/stack';
// Example stacks: one import and one `new` line per example.

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
new SageMakerLlmStack(app, 'SageMakerLlm', { env: EXAMPLE_ENV });
new EksStableDiffusionStack(app, 'EksStableDiffusion', { env: EXAMPLE_ENV });

app.synth();
