/**
 * Notation signature envelopes for tests: a JWS and a COSE_Sign1 envelope carrying AWS Signer's extended
 * attributes, over made-up (but well-formed DER) certificates.
 */
import { createHash } from 'node:crypto';

/** DER element: tag, definite length, content. */
function der(tag: number, content: Uint8Array): Buffer {
  const len = content.length;
  const header = len < 0x80 ? [tag, len] : len < 0x100 ? [tag, 0x81, len] : [tag, 0x82, len >> 8, len & 0xff];
  return Buffer.concat([Buffer.from(header), content]);
}

/** A certificate-shaped DER SEQUENCE { tbsCertificate, algorithm, signature } with recognizable contents. */
export function fakeCertificate(name: string): { der: Buffer; tbs: Buffer } {
  const tbs = der(0x30, der(0x0c, Buffer.from(`tbs of ${name} `.repeat(12))));
  const certificate = der(0x30, Buffer.concat([tbs, der(0x30, der(0x06, Buffer.from([0x2a, 0x86, 0x48]))), der(0x03, Buffer.from([0, 1, 2, 3]))]));
  return { der: certificate, tbs };
}

export const LEAF = fakeCertificate('leaf');
export const ROOT = fakeCertificate('root');
const sha384 = (b: Uint8Array) => createHash('sha384').update(b).digest('hex');
/** What the verifier must send to GetRevocationStatus for the chain [LEAF, ROOT]. */
export const CHAIN_HASHES = [sha384(LEAF.tbs) + sha384(ROOT.tbs), sha384(ROOT.tbs) + sha384(ROOT.tbs)];

export interface EnvelopeFacts {
  readonly targetDigest: string;
  readonly profileVersionArn: string;
  readonly jobArn: string;
  readonly signingTime: Date;
  /** The raw `io.cncf.notary.expiry` header value (a string for JWS, `coseTag(1, seconds)` for COSE); absent when not given. */
  readonly expiry?: unknown;
}

export function jwsEnvelope(f: EnvelopeFacts): Buffer {
  const protectedHeader = {
    alg: 'ES384',
    crit: ['io.cncf.notary.signingScheme', 'com.amazonaws.signer.signingProfileVersion', 'com.amazonaws.signer.signingJob'],
    cty: 'application/vnd.cncf.notary.payload.v1+json',
    'io.cncf.notary.signingScheme': 'notary.x509.signingAuthority',
    'io.cncf.notary.authenticSigningTime': f.signingTime.toISOString(),
    'com.amazonaws.signer.signingProfileVersion': f.profileVersionArn,
    'com.amazonaws.signer.signingJob': f.jobArn,
    ...('expiry' in f ? { 'io.cncf.notary.expiry': f.expiry } : {}),
  };
  if ('expiry' in f) protectedHeader.crit.push('io.cncf.notary.expiry');
  const payload = { targetArtifact: { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: f.targetDigest, size: 1234 } };
  return Buffer.from(
    JSON.stringify({
      payload: Buffer.from(JSON.stringify(payload)).toString('base64url'),
      protected: Buffer.from(JSON.stringify(protectedHeader)).toString('base64url'),
      header: { x5c: [LEAF.der.toString('base64'), ROOT.der.toString('base64')], 'io.cncf.notary.signingAgent': 'test' },
      signature: Buffer.from('not checked').toString('base64url'),
    }),
  );
}

// A small CBOR encoder, enough for COSE_Sign1.
class Tag {
  constructor(
    readonly tag: number,
    readonly value: unknown,
  ) {}
}
/** A CBOR tag for `cbor()` (tag 1 over epoch seconds is an epoch-based date/time). */
export const coseTag = (tag: number, value: unknown) => new Tag(tag, value);
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}
export function cbor(value: unknown): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  if (value instanceof Map) return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
  if (value instanceof Tag) return Buffer.concat([head(6, value.tag), cbor(value.value)]);
  throw new Error(`cannot encode ${String(value)}`);
}

export function coseEnvelope(f: EnvelopeFacts): Buffer {
  const protectedHeader = new Map<unknown, unknown>([
    [1, -35],
    [3, 'application/vnd.cncf.notary.payload.v1+json'],
    ['io.cncf.notary.signingScheme', 'notary.x509.signingAuthority'],
    ['io.cncf.notary.authenticSigningTime', new Tag(1, Math.floor(f.signingTime.getTime() / 1000))],
    ['com.amazonaws.signer.signingProfileVersion', f.profileVersionArn],
    ['com.amazonaws.signer.signingJob', f.jobArn],
    ...('expiry' in f ? [['io.cncf.notary.expiry', f.expiry] as [unknown, unknown]] : []),
  ]);
  const unprotected = new Map<unknown, unknown>([[33, [LEAF.der, ROOT.der]]]);
  const payload = Buffer.from(JSON.stringify({ targetArtifact: { digest: f.targetDigest } }));
  return cbor(new Tag(18, [cbor(protectedHeader), unprotected, payload, Buffer.from('sig')]));
}
