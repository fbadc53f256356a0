#!/usr/bin/env node
/**
 * The example app: `npm run synth` synthesizes every example offline, with cdk-nag AwsSolutions and NIST 800-53 rev 5
 * checking each stack (an unacknowledged finding fails the synth; every acknowledgement is made, with its reason, by
 * the construct that owns the resource). Each example is a trust stack and a serving stack (examples/app.ts): deploy
 * the trust stack, push and sign the images, then the serving stack.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import { exampleStacks } from '../examples/app';

const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new NIST80053R5Checks(app));
exampleStacks(app);

app.synth();
