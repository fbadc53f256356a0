/**
 * Reads what the revocation check needs from a Notary Project signature envelope (JWS or COSE) made by AWS Signer:
 * the signed target digest, the signing time, the signing profile version and job, and the certificate chain's
 * TBS hashes in the form Signer's `GetRevocationStatus` expects.
 *
 * This does not verify the envelope's cryptographic signature (Notation does that at pull time against the AWS
 * Signer root); it extracts identifiers so that Signer can say whether the job, profile or certificates are revoked.
 */
import { createHash } from 'node:crypto';

export const NOTATION_SIGNATURE_ARTIFACT_TYPE = 'application/vnd.cncf.notary.signature';
export const JWS_MEDIA_TYPE = 'application/jose+json';
export const COSE_MEDIA_TYPE = 'application/cose';

const ATTR_PROFILE_VERSION = 'com.amazonaws.signer.signingProfileVersion';
const ATTR_JOB = 'com.amazonaws.signer.signingJob';
const ATTR_AUTHENTIC_TIME = 'io.cncf.notary.authenticSigningTime';
const ATTR_SIGNING_TIME = 'io.cncf.notary.signingTime';
/**
 * The signer's optional "best by use" time (notaryproject/specifications@v1.1.0:specs/signature-envelope-jws.md:105,
 * an RFC 3339 string; specs/signature-envelope-cose.md:114, an RFC 8949 epoch-based date/time, which
 * notation-core-go@v1.3.0:signature/cose/envelope.go:693 accepts only as tag 1).
 */
const ATTR_EXPIRY = 'io.cncf.notary.expiry';
/** RFC 3339 section 5.6 date-time (time-secfrac allowed, though the spec says SHOULD NOT). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** What one signature says about itself. */
export interface NotationSignatureFacts {
  /** Digest of the image the signature covers (`sha256:...`). */
  readonly targetDigest: string;
  readonly signingTime: Date;
  readonly profileVersionArn: string;
  readonly jobArn: string;
  /** Per certificate of the chain (leaf first): hex SHA-384 of its TBS followed by that of its issuer (a root is its own issuer). */
  readonly certificateHashes: string[];
  /** `io.cncf.notary.expiry`, when the signature has one (it is optional). */
  readonly expiry?: Date;
}

/** Parses an envelope; throws with the reason when it is not a Notation envelope made by AWS Signer. */
export function parseNotationEnvelope(mediaType: string, bytes: Uint8Array): NotationSignatureFacts {
  if (mediaType === JWS_MEDIA_TYPE) return parseJws(bytes);
  if (mediaType === COSE_MEDIA_TYPE) return parseCose(bytes);
  throw new Error(`unsupported signature envelope media type '${mediaType}'`);
}

function parseJws(bytes: Uint8Array): NotationSignatureFacts {
  const envelope = JSON.parse(Buffer.from(bytes).toString('utf8')) as { payload?: string; protected?: string; header?: { x5c?: string[] } };
  if (!envelope.payload || !envelope.protected || !envelope.header?.x5c?.length) throw new Error('JWS envelope without payload, protected header or x5c');
  const headers = JSON.parse(Buffer.from(envelope.protected, 'base64url').toString('utf8')) as Record<string, unknown>;
  const time = headers[ATTR_AUTHENTIC_TIME] ?? headers[ATTR_SIGNING_TIME];
  return facts(
    Buffer.from(envelope.payload, 'base64url'),
    headers,
    typeof time === 'string' ? new Date(time) : undefined,
    envelope.header.x5c.map((c) => Buffer.from(c, 'base64')),
    jwsExpiry,
  );
}

/** A JWS expiry: an RFC 3339 string. */
export function jwsExpiry(value: unknown): Date {
  const date = typeof value === 'string' && RFC3339.test(value) ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new Error(`signature expiry is unreadable: ${JSON.stringify(value)} is not an RFC 3339 date-time`);
  return date;
}

/** A COSE expiry: a CBOR tag 1 (epoch-based date/time) over an integer number of seconds. */
export function coseExpiry(value: unknown): Date {
  if (!(value instanceof CborTag) || value.tag !== 1 || typeof value.value !== 'number' || !Number.isSafeInteger(value.value)) {
    throw new Error('signature expiry is unreadable: not a CBOR tag 1 epoch date/time in whole seconds');
  }
  return new Date(value.value * 1000);
}

function parseCose(bytes: Uint8Array): NotationSignatureFacts {
  let sign1 = decodeCbor(bytes);
  if (sign1 instanceof CborTag) {
    if (sign1.tag !== 18) throw new Error(`COSE envelope has tag ${sign1.tag}, expected 18 (COSE_Sign1)`);
    sign1 = sign1.value;
  }
  if (!Array.isArray(sign1) || sign1.length !== 4) throw new Error('COSE envelope is not a COSE_Sign1 array');
  const [protectedBytes, unprotected, payload] = sign1 as [unknown, unknown, unknown, unknown];
  if (!(protectedBytes instanceof Uint8Array) || !(unprotected instanceof Map) || !(payload instanceof Uint8Array)) {
    throw new Error('COSE_Sign1 fields have unexpected types');
  }
  const headerMap = decodeCbor(protectedBytes);
  if (!(headerMap instanceof Map)) throw new Error('COSE protected header is not a map');
  const headers: Record<string, unknown> = {};
  for (const [k, v] of headerMap) headers[String(k)] = v;
  const time = headers[ATTR_AUTHENTIC_TIME] ?? headers[ATTR_SIGNING_TIME];
  const epoch = time instanceof CborTag ? time.value : time;
  const chain = unprotected.get(33); // x5chain: one certificate as a byte string, or an array of them
  const certs = chain instanceof Uint8Array ? [chain] : Array.isArray(chain) ? chain : [];
  if (!certs.every((c): c is Uint8Array => c instanceof Uint8Array) || certs.length === 0) throw new Error('COSE envelope without x5chain');
  return facts(payload, headers, typeof epoch === 'number' ? new Date(epoch * 1000) : undefined, certs, coseExpiry);
}

/**
 * A well-formed Notation signature without AWS Signer's signing attributes: another signer's. Signer writes them on
 * every signature it makes, so such a signature is none of the approved profile's and cannot be a revoked one of it.
 */
export class NotSignerSignatureError extends Error {
  override readonly name = 'NotSignerSignatureError';
}

function facts(
  payload: Uint8Array,
  headers: Record<string, unknown>,
  signingTime: Date | undefined,
  certs: Uint8Array[],
  readExpiry: (value: unknown) => Date,
): NotationSignatureFacts {
  const body = JSON.parse(Buffer.from(payload).toString('utf8')) as { targetArtifact?: { digest?: string } };
  const targetDigest = body.targetArtifact?.digest;
  const profileVersionArn = headers[ATTR_PROFILE_VERSION];
  const jobArn = headers[ATTR_JOB];
  if (typeof targetDigest !== 'string') throw new Error('signature payload has no targetArtifact.digest');
  if (typeof profileVersionArn !== 'string' || typeof jobArn !== 'string') {
    throw new NotSignerSignatureError(`signature has no ${ATTR_PROFILE_VERSION} / ${ATTR_JOB}: it was not made by AWS Signer`);
  }
  if (!signingTime || Number.isNaN(signingTime.getTime())) throw new Error('signature has no signing time');
  // Absent: the signature does not expire (the header is optional). Present but unreadable: throws, and the signature
  // counts as unreadable, which fails the check (it may be an expired one).
  const expiry = ATTR_EXPIRY in headers ? readExpiry(headers[ATTR_EXPIRY]) : undefined;
  return { targetDigest, signingTime, profileVersionArn, jobArn, certificateHashes: certificateChainHashes(certs), ...(expiry ? { expiry } : {}) };
}

/** Signer's certificate identifiers for a chain, leaf first: `sha384(tbs(cert)) || sha384(tbs(issuer))`, hex. */
export function certificateChainHashes(chain: readonly Uint8Array[]): string[] {
  const hashes = chain.map((der) => createHash('sha384').update(tbsCertificate(der)).digest('hex'));
  return hashes.map((h, i) => h + (hashes[i + 1] ?? h));
}

/** The DER bytes of a certificate's `tbsCertificate` (the first element of the outer SEQUENCE). */
export function tbsCertificate(der: Uint8Array): Uint8Array {
  const outer = derHeader(der, 0);
  if (der[0] !== 0x30) throw new Error('certificate is not a DER SEQUENCE');
  const inner = derHeader(der, outer.contentStart);
  if (der[outer.contentStart] !== 0x30) throw new Error('certificate has no tbsCertificate SEQUENCE');
  const end = inner.contentStart + inner.length;
  if (end > der.length) throw new Error('certificate is truncated');
  return der.subarray(outer.contentStart, end);
}

function derHeader(der: Uint8Array, at: number): { contentStart: number; length: number } {
  const first = der[at + 1];
  if (first === undefined) throw new Error('DER element is truncated');
  if (first < 0x80) return { contentStart: at + 2, length: first };
  const octets = first & 0x7f;
  if (octets === 0 || octets > 4) throw new Error('DER length is indefinite or too long');
  let length = 0;
  for (let i = 0; i < octets; i++) length = length * 256 + (der[at + 2 + i] ?? 0);
  return { contentStart: at + 2 + octets, length };
}

// ---------------------------------------------------------------------------------------------------------------
// Minimal CBOR (RFC 8949) decoder: definite lengths only, which is what COSE_Sign1 envelopes use.
// ---------------------------------------------------------------------------------------------------------------

export class CborTag {
  constructor(
    readonly tag: number,
    readonly value: unknown,
  ) {}
}

export function decodeCbor(bytes: Uint8Array): unknown {
  const reader = { bytes, pos: 0 };
  const value = readItem(reader, 0);
  if (reader.pos !== bytes.length) throw new Error('trailing bytes after the CBOR item');
  return value;
}

function readItem(r: { bytes: Uint8Array; pos: number }, depth: number): unknown {
  if (depth > 32) throw new Error('CBOR nesting too deep');
  const initial = r.bytes[r.pos++];
  if (initial === undefined) throw new Error('CBOR item is truncated');
  const major = initial >> 5;
  const arg = readArgument(r, initial & 0x1f);
  switch (major) {
    case 0:
      return arg;
    case 1:
      return -1 - arg;
    case 2:
    case 3: {
      const end = r.pos + arg;
      if (end > r.bytes.length) throw new Error('CBOR string is truncated');
      const data = r.bytes.subarray(r.pos, end);
      r.pos = end;
      return major === 2 ? data : Buffer.from(data).toString('utf8');
    }
    case 4:
      return Array.from({ length: arg }, () => readItem(r, depth + 1));
    case 5: {
      const map = new Map<unknown, unknown>();
      for (let i = 0; i < arg; i++) map.set(readItem(r, depth + 1), readItem(r, depth + 1));
      return map;
    }
    case 6:
      return new CborTag(arg, readItem(r, depth + 1));
    default: {
      const simple = initial & 0x1f;
      if (simple === 20) return false;
      if (simple === 21) return true;
      if (simple === 22) return null;
      throw new Error(`unsupported CBOR simple value ${simple}`);
    }
  }
}

function readArgument(r: { bytes: Uint8Array; pos: number }, info: number): number {
  if (info < 24) return info;
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0) throw new Error('indefinite-length CBOR items are not supported');
  if (r.pos + size > r.bytes.length) throw new Error('CBOR argument is truncated');
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + r.bytes[r.pos + i];
  r.pos += size;
  return value;
}
