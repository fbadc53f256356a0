import { App, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EnvironmentClaims, environmentKey } from '../../lib/util/environment-key';

const env = { account: '123456789012', region: 'us-east-1' };

describe('EnvironmentClaims: one holder of a name per account and Region of an app', () => {
  test('a claim is found by a later construct of the same app, account and Region, naming where and who', () => {
    const claims = new EnvironmentClaims();
    const app = new App();
    const first = new Construct(new Stack(app, 'A', { env }), 'First');
    const second = new Construct(new Stack(app, 'B', { env }), 'Second');
    expect(claims.find(first, 'chat')).toEqual({ where: '123456789012/us-east-1', claimedBy: undefined });
    claims.claim(first, 'chat');
    expect(claims.find(second, 'chat')).toEqual({ where: '123456789012/us-east-1', claimedBy: 'A/First' });
    expect(claims.find(second, 'other')?.claimedBy).toBeUndefined();
  });

  test('another Region, another app or an environment-agnostic stack does not see it', () => {
    const claims = new EnvironmentClaims();
    const app = new App();
    claims.claim(new Construct(new Stack(app, 'A', { env }), 'First'), 'chat');
    expect(claims.find(new Stack(app, 'West', { env: { ...env, region: 'us-west-2' } }), 'chat')?.claimedBy).toBeUndefined();
    expect(claims.find(new Stack(new App(), 'A', { env }), 'chat')?.claimedBy).toBeUndefined();
    const agnostic = new Stack(app, 'Anywhere');
    expect(environmentKey(agnostic, 'chat')).toBeUndefined();
    expect(claims.find(agnostic, 'chat')).toBeUndefined();
    claims.claim(agnostic, 'chat');
    expect(claims.find(new Stack(app, 'C', { env }), 'chat')?.claimedBy).toBe('A/First');
  });
});
