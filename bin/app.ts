#!/usr/bin/env node
/**
 * The example app: `npm run synth` synthesizes every example offline, with cdk-nag AwsSolutions and NIST 800-53 rev 5
 * checking each stack (an unacknowledged finding fails the synth; every acknowledgement is made, with its reason, by
 * the construct that owns the resource).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import { EksStableDiffusionStack } from '../examples/eks-stable-diffusion';
import { EXAMPLE_ENV } from '../examples/env';
import { SageMakerLlmStack } from '../examples/sagemaker-llm/stack';
// Example stacks: one import and one `new` line per example.

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new NIST80053R5Checks(app));
new SageMakerLlmStack(app, 'SageMakerLlm', { env: EXAMPLE_ENV });
new EksStableDiffusionStack(app, 'EksStableDiffusion', { env: EXAMPLE_ENV });

app.synth();
