import * as lambda from 'aws-cdk-lib/aws-lambda';
import { latestNodeRuntime } from '../../lib/util/lambda-code';

const node = (v: number) => new lambda.Runtime(`nodejs${v}.x`, lambda.RuntimeFamily.NODEJS);

test('the functions run on the newest Node.js runtime the installed aws-cdk-lib knows, as cdk-nag AwsSolutions-L1 judges it', () => {
  // The devDependency (the oldest supported aws-cdk-lib) knows nodejs24.x as its newest.
  expect(latestNodeRuntime().name).toBe('nodejs24.x');
  const versions = lambda.Runtime.ALL.map((r) => /^nodejs(\d+)\.x$/.exec(r.name)?.[1]).filter((v) => v !== undefined).map(Number);
  expect(latestNodeRuntime().name).toBe(`nodejs${Math.max(...versions)}.x`);
  // A newer aws-cdk-lib's list (2.278.0 added nodejs26.x): the newest wins, whatever the order; other families and the
  // unversioned legacy name do not count.
  expect(latestNodeRuntime([node(22), node(26), lambda.Runtime.PYTHON_3_13, lambda.Runtime.NODEJS, node(24)]).name).toBe('nodejs26.x');
  expect(() => latestNodeRuntime([node(20), lambda.Runtime.PYTHON_3_13])).toThrow('aws-cdk-lib knows no Node.js runtime of 22 or later');
});
