import { type EngineName } from '../runtime/engines';

/**
 * What a model server does at start with weights in a format it does not load: it converts them, in memory and on
 * disk beside them. One module for the fact; host-memory.ts says what the conversion holds in memory, and the
 * platforms warn where it cannot write (stop 61):
 * - TGI (huggingface/text-generation-inference@v3.3.7) loads safetensors only: every model asks
 *   `weight_files(..., extension=".safetensors")` (server/text_generation_server/models/flash_causal_lm.py:1258,
 *   causal_lm.py:559). Before it starts a shard, the launcher always runs `text-generation-server download-weights
 *   <model> --extension .safetensors` (launcher/src/main.rs:1446-1454, called unconditionally at 2232-2241; no launcher
 *   option turns the conversion off, and `auto_convert` defaults true: server/text_generation_server/cli.py:139).
 * - For a local directory with no .safetensors file (cli.py:160-171) it takes the .bin files, else the .pt files
 *   (cli.py:274-280), and writes each converted file beside its source, `p.parent / "<stem>.safetensors"`
 *   (cli.py:309-312,335; utils/convert.py:85-87). WEIGHTS_CACHE_OVERRIDE does not move it: `weight_files` returns a
 *   local directory's files before it reads the override (utils/hub.py:137-145, 161-170). The same at v2.0.0, the
 *   oldest release the library binds (cli.py:107,136,266-267; main.rs:834-837).
 * - In a read-only directory the write fails (`SafetensorError: Error while serializing: IoError(Os { code: 30, kind:
 *   ReadOnlyFilesystem, ... })`, huggingface/text-generation-inference#756, whose maintainer answers: mount a writable
 *   volume, or run download-weights elsewhere beforehand), the download process exits non-zero and the launcher
 *   exits with DownloadError (main.rs:1547-1567) before the server listens.
 * - In memory, `torch.load(pt_file, map_location="cpu")` reads each file whole and the written file is read back whole
 *   to compare (utils/convert.py:71,87-88): about twice the largest file.
 * The Hugging Face LLM DLC that SageMaker runs is TGI's image with TGI's sagemaker-entrypoint.sh
 * (awslabs/llm-hosting-container@421a60a huggingface/pytorch/tgi/docker/3.3.6/Dockerfile:2,30-33, built from TGI's tree
 * at the release tag: tgi.py:43-45), so the same launcher converts there. vLLM, DJL LMI, Triton: not read.
 */
interface Conversion {
  /** What the conversion holds in memory, as the host-memory warning says it. */
  readonly memory: string;
  /** What it writes where, as the read-only warning says it. */
  readonly writes: string;
}

const CONVERSION: Partial<Record<EngineName, Conversion>> = {
  tgi: {
    memory: 'it first converts .bin or .pt weights to safetensors, reading each file whole and then its copy (about twice the largest file)',
    writes: 'TGI loads safetensors only: at start it converts .bin or .pt weights into .safetensors files it writes beside them, ' +
      'and no setting moves that write',
  },
};

/** What `engine`'s conversion holds in memory, or undefined where the engine converts nothing the library knows of. */
export function conversionMemory(engine: string): string | undefined {
  return CONVERSION[engine as EngineName]?.memory;
}

/**
 * Why a class's server may not start from weights in a directory it cannot write, or undefined where its engine
 * converts nothing. `directory` names the directory and why it is read-only; `consequence` what the platform does with
 * a server that exits at start. Whether the artifact has .safetensors files is not known at synth: a warning.
 */
export function readOnlyWeightsNote(engine: string, directory: string, consequence: string): string | undefined {
  const conversion = CONVERSION[engine as EngineName];
  if (!conversion) return undefined;
  return `${conversion.writes}. Its weights are in ${directory}: without .safetensors files there the write fails ` +
    `("Read-only file system") and the server exits before it answers a health check, so ${consequence}. Ship the weights as ` +
    'safetensors (convert .bin or .pt beforehand, e.g. `text-generation-server download-weights <directory>` on a writable copy) ' +
    'and acknowledge this warning';
}
