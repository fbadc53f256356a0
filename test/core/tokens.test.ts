import { Token } from 'aws-cdk-lib';
import { isUnresolved } from '../../lib/core/validation/tokens';

describe('isUnresolved', () => {
  test('recognises string, number and list tokens made by aws-cdk-lib', () => {
    expect(isUnresolved(Token.asString({ Ref: 'X' }))).toBe(true);
    expect(isUnresolved(Token.asNumber({ Ref: 'X' }))).toBe(true);
    expect(isUnresolved(Token.asList({ Ref: 'X' }))).toBe(true);
  });
  test('treats literals as resolved', () => {
    expect(isUnresolved('g5.xlarge')).toBe(false);
    expect(isUnresolved(-5)).toBe(false);
    expect(isUnresolved(['a'])).toBe(false);
    expect(isUnresolved(undefined)).toBe(false);
  });
});
