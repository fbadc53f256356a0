import { type EngineName } from '../runtime/engines';

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
 * the EKS init script only tar and gzip tar. Each lands as one file: one that no engine the library binds can load
 * (`modelDataLandingProblem`), but that an image of engine `custom` may unpack itself (`modelDataArchiveNote`).
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

/**
 * Why `uri` would leave `engine` without a model on this platform, or undefined when the platform serves its shape.
 * Every engine but `custom` (ENGINES, lib/core/runtime/engines.ts) is given the model directory as its model path
 * (binding.ts `resolveModelPath`), and loads the files in it: a `.zip` there is no model to any of them. A custom image
 * may unpack such a file itself, so for `custom` an archive neither platform unpacks is `modelDataArchiveNote`'s
 * warning, not a refusal; a shape the platform mishandles otherwise (a prefix on EKS, a `.tar` on SageMaker) is refused
 * for every engine.
 */
export function modelDataLandingProblem(uri: string, landing: ModelDataLanding, engine: string): string | undefined {
  const shape = modelDataShape(uri);
  if (landing.serves.includes(shape) || (shape === 'other-archive' && unpacksItself(engine))) return undefined;
  const name = fileNameOf(uri);
  const custom = shape === 'other-archive' ? "; or engine 'custom', whose image may unpack it itself" : '';
  return `'${uri}' is ${describe(shape, name)}, which ${landing.platform} would not unpack (${landing.unpacks}; anything else it places as the one file ` +
    `${landing.modelDirectory}/${name}), so the engine would find no model and ${landing.consequence}; ` +
    `allowed (suffixes in any case): ${landing.allowed}${custom}`;
}

/**
 * For an image of engine `custom`, an archive neither platform unpacks: what lands, and that the image must unpack it
 * (acknowledgeable: the library cannot see what the image does). Undefined for anything else.
 */
export function modelDataArchiveNote(uri: string, landing: ModelDataLanding, engine: string): string | undefined {
  if (modelDataShape(uri) !== 'other-archive' || !unpacksItself(engine)) return undefined;
  const name = fileNameOf(uri);
  return `'${uri}' is ${describe('other-archive', name)}, which ${landing.platform} does not unpack (${landing.unpacks}): it lands as-is, as the one ` +
    `file ${landing.modelDirectory}/${name}, and the custom image must unpack it itself (into a writable directory such as CAI_CACHE_DIR) ` +
    `before it serves, or ${landing.consequence}. Acknowledge this warning once the image does, or use an archive ${landing.platform} unpacks: ` +
    landing.allowed;
}

/** The engine of the user's own image: the only one that can take an archive no platform unpacks. */
const OWN_IMAGE: EngineName = 'custom';

function unpacksItself(engine: string): boolean {
  return engine === OWN_IMAGE;
}

function describe(shape: ModelDataShape, name: string): string {
  return shape === 'other-archive' ? `${SHAPE_NAMES[shape]} (${otherArchiveSuffix(name.toLowerCase())})` : SHAPE_NAMES[shape];
}

function fileNameOf(uri: string): string {
  return uri.slice(uri.lastIndexOf('/') + 1);
}

function otherArchiveSuffix(lowerCaseName: string): string | undefined {
  return OTHER_ARCHIVE_SUFFIXES.find((s) => lowerCaseName.endsWith(s));
}
