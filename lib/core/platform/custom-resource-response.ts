/**
 * The answer of a custom resource handler to CloudFormation, as the JSON body it PUTs to the response URL.
 */

/**
 * "The total size of the response body can't exceed 4096 bytes"
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html): bytes of the UTF-8 body,
 * not characters, so a reason in non-ASCII text (an S3 key) reaches it with fewer characters.
 */
export const CUSTOM_RESOURCE_RESPONSE_MAX_BYTES = 4096;

/** The fields of a custom resource response (crpg-ref-responses.html). */
export interface CustomResourceResponse {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly Reason: string;
  readonly PhysicalResourceId: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly Data?: Record<string, string>;
}

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;
/** Bytes `text` takes inside a JSON string: its UTF-8 bytes after JSON's escapes (`"`, `\`, control and lone surrogate characters). */
const jsonStringBytes = (text: string): number => utf8Bytes(JSON.stringify(text)) - 2;

/**
 * The response body, at most `maxBytes` of UTF-8: when it would be longer, the Reason (the only field of unbounded
 * length) is cut to the longest prefix that fits with `note` after it. The cut is at a code point boundary (a
 * surrogate pair is kept whole), so no character is split into bytes that are not UTF-8. When the other fields alone
 * do not leave room for `note`, the Reason is `note` cut the same way, or empty.
 */
export function customResourceResponseBody(
  response: CustomResourceResponse,
  note: string,
  maxBytes: number = CUSTOM_RESOURCE_RESPONSE_MAX_BYTES,
): string {
  const whole = JSON.stringify(response);
  if (utf8Bytes(whole) <= maxBytes) return whole;
  const room = maxBytes - utf8Bytes(JSON.stringify({ ...response, Reason: '' }));
  const noteBytes = jsonStringBytes(note);
  const reason = noteBytes <= room ? `${prefixWithin(response.Reason, room - noteBytes)}${note}` : prefixWithin(note, room);
  return JSON.stringify({ ...response, Reason: reason });
}

/** The longest prefix of `text`, whole code points only, that takes at most `bytes` inside a JSON string. */
function prefixWithin(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  // A string's iterator yields code points: a surrogate pair as one, a lone surrogate alone.
  for (const ch of text) {
    used += jsonStringBytes(ch);
    if (used > bytes) break;
    end += ch.length;
  }
  return text.slice(0, end);
}
