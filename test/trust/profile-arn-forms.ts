/**
 * Signing profile ARNs by whether `parseSigningProfileArn` reads them: the synth checks and the verifier's tests share
 * the table, so the two cannot drift apart (lib/core/trust/artifact-verification.ts cites the forms' sources).
 */
export const ACCEPTED_PROFILE_ARNS: readonly (readonly [arn: string, parts: { region: string; account: string; name: string }])[] = [
  ['arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving_2025', { region: 'us-east-1', account: '123456789012', name: 'serving_2025' }],
  ['arn:aws-cn:signer:cn-north-1:123456789012:/signing-profiles/p1', { region: 'cn-north-1', account: '123456789012', name: 'p1' }],
  ['arn:aws-us-gov:signer:us-gov-west-1:123456789012:/signing-profiles/P_1', { region: 'us-gov-west-1', account: '123456789012', name: 'P_1' }],
  ['arn:aws-iso-b:signer:us-isob-east-1:123456789012:/signing-profiles/ab', { region: 'us-isob-east-1', account: '123456789012', name: 'ab' }],
  [`arn:aws:signer:eu-west-1:210987654321:/signing-profiles/${'n'.repeat(64)}`, { region: 'eu-west-1', account: '210987654321', name: 'n'.repeat(64) }],
  // A name CloudFormation generates when ProfileName is not given (mixed case after `SigningProfile_`): a deployed
  // profile's ARN from github.com/govuk-one-login/authentication-api/pull/4719.
  [
    'arn:aws:signer:eu-west-2:767397776536:/signing-profiles/SigningProfile_Lne9jMArpvlM',
    { region: 'eu-west-2', account: '767397776536', name: 'SigningProfile_Lne9jMArpvlM' },
  ],
];

const OK = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving_2025';
export const REFUSED_PROFILE_ARNS: readonly (readonly [arn: string, why: string])[] = [
  [OK.replace(':/signing', ':signing'), 'no / after the account (not the IAM or ECR form)'],
  [`${OK}/Ab12Cd34Ef`, 'a profile version ARN'],
  [`${OK}/`, 'a trailing /'],
  [OK.replace('serving_2025', 'has-hyphen'), 'a hyphen in the name'],
  [OK.replace('serving_2025', 'x'), 'a one-character name'],
  [OK.replace('serving_2025', 'n'.repeat(65)), 'a 65-character name'],
  [OK.replace('123456789012', '12345678901'), 'an 11-digit account'],
  [OK.replace('123456789012', ''), 'no account'],
  [OK.replace('us-east-1', ''), 'no region'],
  [OK.replace('arn:aws:', 'arn:AWS:'), 'an upper-case partition'],
  [OK.replace('arn:aws:', 'arn:gcp:'), 'not an AWS partition'],
  [OK.replace(':signer:', ':ecr:'), 'another service'],
  [OK.replace('signing-profiles', 'signing-jobs'), 'a signing job'],
  [`${OK} `, 'trailing space'],
];
