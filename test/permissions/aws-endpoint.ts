/**
 * A recording AWS endpoint on 127.0.0.1 for the permissions tests: the handlers run with the real AWS SDK (endpoint
 * override `AWS_ENDPOINT_URL`, fake static credentials), every request is decoded into the service, operation and
 * input the SDK sent, answered by the test's world in the wire protocol of that service, and recorded.
 *
 * Protocols, as the pinned clients use them (each client's dist-cjs names its protocol class): CloudWatch awsJson1_0,
 * SageMaker / Application Auto Scaling / ECR / KMS awsJson1_1 (operation in `X-Amz-Target`), ELBv2 awsQuery (form body, XML answer), Signer
 * restJson1 and S3 restXml (operation from method, path and query). The service is the signing name in the SigV4
 * credential scope. Nothing here listens on anything but the loopback address.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import dns from 'node:dns';
import { type AddressInfo } from 'node:net';

/** One decoded request. */
export interface CapturedCall {
  /** SigV4 signing name: monitoring, sagemaker, application-autoscaling, elasticloadbalancing, ecr, kms, signer, s3. */
  readonly service: string;
  readonly operation: string;
  readonly region: string;
  readonly input: Record<string, unknown>;
}

/** An AWS error answer. */
export interface AwsFault {
  readonly fault: { readonly code: string; readonly status: number; readonly message?: string };
}

/** What the world answers: the operation's output (a JSON-like object; S3 answers headers and an XML body). */
export type Reply =
  | AwsFault
  | { readonly output: Record<string, unknown> }
  | { readonly headers?: Record<string, string>; readonly xml?: string; readonly status?: number }
  | { readonly raw: Buffer; readonly contentType: string }
  /** No answer at all: the connection stays open until the client gives up (a hung socket). */
  | { readonly hang: true };

export type World = (call: CapturedCall) => Reply;

export const fault = (code: string, status: number, message = code): AwsFault => ({ fault: { code, status, message } });

const JSON_VERSION: Record<string, string> = { 'monitoring': '1.0', 'sagemaker': '1.1', 'ecr': '1.1', 'kms': '1.1', 'application-autoscaling': '1.1' };

/** Requests that are not AWS calls (the envelope blob ECR's download URL points to, the CloudFormation response). */
export interface PlainRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Buffer;
}

export class RecordingEndpoint {
  /** Every AWS call with the answer it got, in order. */
  public readonly exchanges: Array<{ readonly call: CapturedCall; readonly reply: Reply }> = [];
  public readonly plain: PlainRequest[] = [];
  private server?: Server;
  private restoreLookup?: () => void;

  constructor(
    private world: World,
    private readonly plainHandler: (req: PlainRequest) => { status: number; body?: Buffer | string; hang?: boolean } = () => ({ status: 404 }),
  ) {}

  /** Replaces the world (a scenario's next phase). */
  public answerWith(world: World): void {
    this.world = world;
  }

  public get calls(): CapturedCall[] {
    return this.exchanges.map((e) => e.call);
  }

  public get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  public async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    // Signer's GetRevocationStatus has the host prefix `data-` in its model: `data-127.0.0.1` must reach the loopback too.
    const original = dns.lookup;
    const patched = ((hostname: string, ...rest: unknown[]) =>
      (original as (...a: unknown[]) => unknown)(/^[a-z-]+-127\.0\.0\.1$/.test(hostname) ? '127.0.0.1' : hostname, ...rest)) as typeof dns.lookup;
    dns.lookup = patched;
    this.restoreLookup = () => {
      dns.lookup = original;
    };
  }

  public async stop(): Promise<void> {
    this.restoreLookup?.();
    // Hung requests hold their connections open: end them, or close() would wait for them.
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Environment for the SDK: endpoint override, fake static credentials, no instance metadata, no config files. */
  public sdkEnvironment(region = 'us-east-1'): Record<string, string> {
    return {
      AWS_ENDPOINT_URL: this.url,
      AWS_ACCESS_KEY_ID: 'AKIAFAKEFAKEFAKEFAKE',
      AWS_SECRET_ACCESS_KEY: 'fake-secret',
      AWS_REGION: region,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: '/nonexistent',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
    };
  }

  private handle(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(req.headers.authorization ?? '');
    if (!scope) {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const plain = { method: req.method ?? 'GET', path: url.pathname, body };
      this.plain.push(plain);
      const answer = this.plainHandler(plain);
      if (answer.hang) return;
      res.statusCode = answer.status;
      res.end(answer.body ?? '');
      return;
    }
    const [, region, service] = scope;
    const call = decode(service, region, req, body);
    const reply = this.world(call);
    this.exchanges.push({ call, reply });
    encode(service, call, reply, res);
  }
}

function decode(service: string, region: string, req: IncomingMessage, body: Buffer): CapturedCall {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') {
    return { service, region, operation: target.split('.').pop()!, input: body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {} };
  }
  if (service === 'elasticloadbalancing') {
    const params = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
    const { Action, Version: _, ...input } = params;
    return { service, region, operation: Action, input };
  }
  const query = Object.fromEntries(url.searchParams);
  const segments = url.pathname.split('/').filter((s) => s.length > 0).map(decodeURIComponent);
  if (service === 's3') {
    const [Bucket, ...key] = segments;
    const input = { Bucket, Key: key.join('/'), ...(query.versionId ? { VersionId: query.versionId } : {}) };
    const method = req.method ?? 'GET';
    if ('tagging' in query) {
      const tags = method === 'PUT' ? parseTagSet(body.toString('utf8')) : undefined;
      return { service, region, operation: method === 'PUT' ? 'PutObjectTagging' : 'GetObjectTagging', input: { ...input, ...(tags ? { TagSet: tags } : {}) } };
    }
    const op = method === 'HEAD' ? 'HeadObject' : method === 'GET' ? 'GetObject' : `${method} object`;
    return { service, region, operation: op, input: { ...input, ...(req.headers['x-amz-checksum-mode'] ? { ChecksumMode: req.headers['x-amz-checksum-mode'] } : {}) } };
  }
  if (service === 'signer') {
    if (segments[0] === 'signing-profiles' && segments.length === 2) {
      return { service, region, operation: 'GetSigningProfile', input: { profileName: segments[1], ...query } };
    }
    if (segments[0] === 'revocations') {
      const certificateHashes = url.searchParams.getAll('certificateHashes');
      return { service, region, operation: 'GetRevocationStatus', input: { ...query, certificateHashes } };
    }
  }
  throw new Error(`recording endpoint: cannot decode ${service} ${req.method} ${req.url}`);
}

function parseTagSet(xml: string): Array<{ Key: string; Value: string }> {
  return [...xml.matchAll(/<Tag><Key>([^<]*)<\/Key><Value>([^<]*)<\/Value><\/Tag>/g)].map((m) => ({ Key: m[1], Value: m[2] }));
}

function encode(service: string, call: CapturedCall, reply: Reply, res: ServerResponse): void {
  if ('hang' in reply) return;
  res.setHeader('x-amzn-requestid', 'recording-endpoint');
  if ('fault' in reply) return encodeFault(service, call, reply.fault, res);
  if ('raw' in reply) {
    res.setHeader('content-type', reply.contentType);
    res.end(reply.raw);
    return;
  }
  if ('output' in reply) {
    const version = JSON_VERSION[service];
    if (version) {
      res.setHeader('content-type', `application/x-amz-json-${version}`);
      res.end(JSON.stringify(reply.output));
    } else if (service === 'elasticloadbalancing') {
      res.setHeader('content-type', 'text/xml');
      const op = call.operation;
      res.end(`<${op}Response xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><${op}Result>${toXml(reply.output)}</${op}Result>`
        + `<ResponseMetadata><RequestId>recording-endpoint</RequestId></ResponseMetadata></${op}Response>`);
    } else {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(reply.output));
    }
    return;
  }
  res.statusCode = reply.status ?? 200;
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  if (reply.xml !== undefined && call.operation !== 'HeadObject') {
    res.setHeader('content-type', 'application/xml');
    res.end(reply.xml);
  } else {
    res.end();
  }
}

function encodeFault(service: string, call: CapturedCall, f: AwsFault['fault'], res: ServerResponse): void {
  res.statusCode = f.status;
  const message = f.message ?? f.code;
  if (JSON_VERSION[service]) {
    res.setHeader('content-type', `application/x-amz-json-${JSON_VERSION[service]}`);
    res.setHeader('x-amzn-errortype', f.code);
    res.end(JSON.stringify({ __type: f.code, message }));
  } else if (service === 'elasticloadbalancing') {
    res.setHeader('content-type', 'text/xml');
    res.end(`<ErrorResponse><Error><Type>${f.status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${f.code}</Code><Message>${message}</Message></Error>`
      + '<RequestId>recording-endpoint</RequestId></ErrorResponse>');
  } else if (service === 's3') {
    res.setHeader('content-type', 'application/xml');
    res.end(call.operation === 'HeadObject' ? undefined : `<Error><Code>${f.code}</Code><Message>${message}</Message></Error>`);
  } else {
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-amzn-errortype', f.code);
    res.end(JSON.stringify({ message }));
  }
}

/** awsQuery XML of an output object: arrays as `<member>` lists. */
function toXml(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => `<member>${toXml(v)}</member>`).join('');
  if (value !== null && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => `<${k}>${toXml(v)}</${k}>`).join('');
  }
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
