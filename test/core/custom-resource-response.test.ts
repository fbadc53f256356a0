import { CUSTOM_RESOURCE_RESPONSE_MAX_BYTES, customResourceResponseBody } from '../../lib/core/platform/custom-resource-response';

const NOTE = "... (see the verifier's log)";
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const response = (Reason: string) => ({
  Status: 'FAILED' as const,
  Reason,
  PhysicalResourceId: 'artifact-gate/l40s/0123456789abcdef0123456789abcdef',
  StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/serving/1',
  RequestId: 'req-1',
  LogicalResourceId: 'LlamaChatVerifyl40s61F0D6B2',
});
/** Whether `text` survives a UTF-8 round trip: a lone surrogate (half of a split pair) becomes U+FFFD. */
const wellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text;

describe('customResourceResponseBody (CloudFormation: "The total size of the response body can\'t exceed 4096 bytes")', () => {
  test('the limit is 4096 bytes', () => {
    expect(CUSTOM_RESOURCE_RESPONSE_MAX_BYTES).toBe(4096);
  });

  test('a body within the limit is sent whole', () => {
    const r = response('x'.repeat(3500));
    expect(customResourceResponseBody(r, NOTE)).toBe(JSON.stringify(r));
  });

  test.each([
    // Under 3,000 characters (the old cap) but over 4,096 bytes: two bytes a character.
    ['two-byte characters', 'é'.repeat(2500), 2],
    // A surrogate pair is one code point of four bytes: never cut between its halves.
    ['surrogate pairs (four bytes, two UTF-16 units)', '😀'.repeat(1400), 4],
    ['three-byte characters', 'モデル'.repeat(700), 3],
    // JSON escapes count: `"` and a newline take two bytes each in the body.
    ['characters JSON escapes', '"\n'.repeat(1500), 2],
  ])('%s: cut by UTF-8 bytes at a code point boundary, as long as fits, with the note', (_, reason, widest) => {
    const full = `class 'l40s' artifacts rejected: ${reason}`;
    const body = customResourceResponseBody(response(full), NOTE);
    expect(bytes(body)).toBeLessThanOrEqual(4096);
    // The longest prefix that fits: one more code point would not.
    expect(bytes(body)).toBeGreaterThan(4096 - widest);
    const sent = JSON.parse(body) as { Reason: string; PhysicalResourceId: string };
    expect(sent.Reason.endsWith(NOTE)).toBe(true);
    expect(full.startsWith(sent.Reason.slice(0, -NOTE.length))).toBe(true);
    expect(wellFormed(sent.Reason)).toBe(true);
    expect(sent.PhysicalResourceId).toBe(response('').PhysicalResourceId);
  });

  test('when the other fields leave no room for the note, the Reason is what of the note fits', () => {
    const r = response('é'.repeat(100));
    const fixed = bytes(JSON.stringify({ ...r, Reason: '' }));
    expect(JSON.parse(customResourceResponseBody(r, NOTE, fixed + 5)).Reason).toBe('... (');
    expect(JSON.parse(customResourceResponseBody(r, NOTE, fixed)).Reason).toBe('');
  });
});
