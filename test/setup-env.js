// Runs in every test file before it loads: aws-cdk-lib's built-in CloudFormation validation costs ~3 s and 330 MiB
// per synth, and the floor of our peer range (2.269.0) can switch it off only through this variable (no
// AppProps.builtinCloudFormationValidation there). The example tests turn it back on for their one synth
// (builtinValidationOn() in test/util.ts).
process.env.CDK_VALIDATION = 'false';
