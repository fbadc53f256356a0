// Runs in every test file before it loads: aws-cdk-lib's built-in CloudFormation validation costs ~3 s and 330 MiB
// per synth, and the floor of our peer range (2.269.0) can switch it off only through this variable (no
// AppProps.builtinCloudFormationValidation there). The example tests turn it back on for their one synth
// (builtinValidationOn() in test/util.ts).
process.env.CDK_VALIDATION = 'false';

// Assets are fingerprinted but not copied into each synth's cloud assembly (aws-cdk-lib's DISABLE_ASSET_STAGING
// context, the one SAM uses): the EKS layers alone are ~60 MB a synth, and the suite synthesizes hundreds of apps.
// A test that reads a staged asset turns staging back on for its app with
// `postCliContext: { 'aws:cdk:disable-asset-staging': false }`, which wins over this environment context.
process.env.CDK_CONTEXT_JSON = JSON.stringify({
  ...JSON.parse(process.env.CDK_CONTEXT_JSON ?? '{}'),
  'aws:cdk:disable-asset-staging': true,
});
