/**
 * What a model-data URI holds, read from the suffix of its key in any case: the one reading SageMaker's
 * ModelDataSource and EKS's init container both act on, and their refusals of what they would not unpack. Pure.
 *
 * Case does not matter to either unpacker: SageMaker untars whatever object it is given with CompressionType Gzip
 * ("S3Uri identifies an object that is a gzip-compressed TAR archive": S3ModelDataSource.CompressionType,
 * @aws-sdk/client-sagemaker 3.1142.0 dist-types/models/models_0.d.ts:226), and the EKS init script downloads the
 * object to a file of its own name and unpacks it by the mode chosen here (`tar -xf`, or `tar -xzf`: GNU tar's `-z`
 * filters the archive through gzip, whatever the file is called), so `.TAR.GZ` or `.Tgz` is as good as `.tar.gz`.
 */

/** `prefix`: `s3://<bucket>/<prefix>/`; `tar`, `tar.gz`: an archive either platform may unpack; `file`: one file. */
export type ModelDataShape = 'prefix' | 'tar' | 'tar.gz' | 'file' | 'other-archive';

const GZIP_TAR_SUFFIXES = ['.tar.gz', '.tgz'];

/**
 * Archives and compressed files neither platform unpacks: SageMaker knows only a gzip tar (CompressionType Gzip) and
 * the EKS init script only tar and gzip tar. Each would reach the engine as one file it cannot load.
 */
const OTHER_ARCHIVE_SUFFIXES = ['.zip', '.7z', '.rar', '.gz', '.bz2', '.tbz', '.tbz2', '.xz', '.txz', '.zst', '.tzst', '.lz4'];

export function modelDataShape(uri: string): ModelDataShape {
  if (uri.endsWith('/')) return 'prefix';
  const name = fileNameOf(uri).toLowerCase();
  if (GZIP_TAR_SUFFIXES.some((s) => name.endsWith(s))) return 'tar.gz';
  if (name.endsWith('.tar')) return 'tar';
  return otherArchiveSuffix(name) === undefined ? 'file' : 'other-archive';
}

/** How one platform lands model data in its model directory, for its refusal message. */
export interface ModelDataLanding {
  readonly platform: string;
  /** The shapes it serves: unpacked, placed as one file, or (a prefix) copied file by file. */
  readonly serves: readonly ModelDataShape[];
  /** Which archives it unpacks and how. */
  readonly unpacks: string;
  /** Where an object it does not unpack lands, as `<modelDirectory>/<last part of the key>`. */
  readonly modelDirectory: string;
  /** What a model directory without a model does there. */
  readonly consequence: string;
  readonly allowed: string;
}

const SHAPE_NAMES: Readonly<Record<ModelDataShape, string>> = {
  'prefix': 'a prefix',
  'tar': 'an uncompressed tar archive',
  'tar.gz': 'a gzip-compressed tar archive',
  'file': 'one file',
  'other-archive': 'an archive or compressed file',
};

/** Why `uri` would leave the engine without a model on this platform, or undefined when the platform serves its shape. */
export function modelDataLandingProblem(uri: string, landing: ModelDataLanding): string | undefined {
  const shape = modelDataShape(uri);
  if (landing.serves.includes(shape)) return undefined;
  const name = fileNameOf(uri);
  const what = shape === 'other-archive' ? `${SHAPE_NAMES[shape]} (${otherArchiveSuffix(name.toLowerCase())})` : SHAPE_NAMES[shape];
  return `'${uri}' is ${what}, which ${landing.platform} would not unpack (${landing.unpacks}; anything else it places as the one file ` +
    `${landing.modelDirectory}/${name}), so the engine would find no model and ${landing.consequence}; ` +
    `allowed (suffixes in any case): ${landing.allowed}`;
}

function fileNameOf(uri: string): string {
  return uri.slice(uri.lastIndexOf('/') + 1);
}

function otherArchiveSuffix(lowerCaseName: string): string | undefined {
  return OTHER_ARCHIVE_SUFFIXES.find((s) => lowerCaseName.endsWith(s));
}
